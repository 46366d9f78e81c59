#include "policy_panel.h"

#include "chart_tools.h"
#include "length_histogram.h"
#include "param_slider.h"
#include "predict/predictor.h"
#include "profiles.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>

namespace kairos::app {

// The sliders: parameter name, label, tooltip, range, default, decimals, log scale, and
// the policies it applies to (empty: every run). A policy's sliders come from the
// registry (the parameters it marks `slider`); the run's own (KV capacity, seats, rate,
// SLOs) are listed here.

const std::vector<SliderSpec>& sliderSpecs() {
    static const std::vector<SliderSpec> specs = [] {
        std::vector<SliderSpec> v;
        for (const PolicySpec& ps : policySpecs()) {
            if (!ps.general) continue;
            for (const ParamSpec& p : ps.params) {
                if (!p.slider) continue;
                auto it = std::find_if(v.begin(), v.end(),
                                       [&](const SliderSpec& s) { return s.name == p.name; });
                if (it != v.end()) {
                    it->policies.push_back(ps.name);
                    continue;
                }
                std::string tip = p.help;
                if (!p.unit.empty()) tip += " (" + p.unit + ")";
                tip += ". Accepted: " + p.domainText() +
                       "; kairos-cli policies lists every "
                       "parameter.";
                v.push_back({p.name,
                             p.label.empty() ? p.name : p.label,
                             tip,
                             p.explore_lo,
                             p.explore_hi,
                             p.dflt,
                             p.decimals,
                             p.log,
                             {ps.name}});
            }
        }
        const std::vector<SliderSpec> run{
            {"kv",
             "KV capacity ×",
             "KV cache capacity as a multiple of the profile's",
             0.1,
             2,
             1,
             2,
             true,
             {}},
            {"seqs",
             "max running",
             "most requests running at once (vLLM's max_num_seqs)",
             1,
             512,
             256,
             0,
             true,
             {}},
            {"rate",
             "arrival rate ×",
             "the workload's arrival rate scaled (its gaps divided by this)",
             0.25,
             4,
             1,
             2,
             true,
             {}},
            {"ttft_slo",
             "TTFT SLO (ms)",
             "time to first token a request must meet for goodput",
             50,
             20000,
             2000,
             0,
             true,
             {}},
            {"tpot_slo",
             "TPOT SLO (ms)",
             "time per output token a request must meet for goodput",
             5,
             2000,
             100,
             0,
             true,
             {}},
        };
        v.insert(v.end(), run.begin(), run.end());
        return v;
    }();
    return specs;
}

bool appliesTo(const SliderSpec& s, const std::string& policy) {
    return s.policies.empty() ||
           std::find(s.policies.begin(), s.policies.end(), policy) != s.policies.end();
}

PolicyPanel::PolicyPanel(const QString& policy, const QString& predictor, const QString& profile,
                         const PolicyParams& params, QWidget* parent)
    : QWidget(parent) {
    auto* v = new QVBoxLayout(this);
    workload_label_ = new QLabel(tr("No workload"));
    workload_label_->setWordWrap(true);
    auto* open = new QPushButton(tr("&Open workload…"));
    connect(open, &QPushButton::clicked, this, &PolicyPanel::openRequested);
    open->setToolTip(tr("Read a trace (Kairos JSONL, Azure CSV, Mooncake, BurstGPT, "
                        "TimelyLLM robot traces, length CSV; detected from its content)"));
    auto* gen = new QPushButton(tr("&Generate…"));
    gen->setToolTip(tr("Generate a workload: chat with length distributions and arrivals, or "
                       "robot plans (WID1-3)"));
    connect(gen, &QPushButton::clicked, this, &PolicyPanel::generateRequested);
    auto* wrow = new QHBoxLayout;
    wrow->addWidget(open);
    wrow->addWidget(gen);
    histogram_ = new views::LengthHistogram;
    views::addChartExport(histogram_, QStringLiteral("lengths"));
    v->addWidget(workload_label_);
    v->addLayout(wrow);
    v->addWidget(histogram_);
    auto* form = new QFormLayout;
    policy_ = new QComboBox;
    for (const auto& n : policyNames()) policy_->addItem(QString::fromStdString(n));
    policy_->setCurrentText(policy);
    predictor_ = new QComboBox;
    predictor_->setObjectName(QStringLiteral("predictor"));
    policy_->setObjectName(QStringLiteral("policy"));
    predictor_->addItems({"oracle", "lognormal:0.5", "exponential", "bucket:16", "trail"});
    predictor_->setEditable(true);
    predictor_->setCurrentText(predictor);
    // Tooltips from the registry (the policy's one-line summary and its paper) and the
    // predictor grammar: the same text kairos-cli --help gives.
    auto policyTip = [this] {
        const PolicySpec* ps = findPolicy(policy_->currentText().toStdString());
        policy_->setToolTip(
            ps ? tr("<b>%1</b>: %2<br>kairos-cli policies lists every policy and parameter.")
                     .arg(QString::fromStdString(ps->name).toHtmlEscaped(),
                          QString::fromStdString(ps->summary).toHtmlEscaped())
               : QString());
    };
    for (int i = 0; i < policy_->count(); ++i)
        if (const PolicySpec* ps = findPolicy(policy_->itemText(i).toStdString()))
            policy_->setItemData(i, QString::fromStdString(ps->summary), Qt::ToolTipRole);
    policyTip();
    connect(policy_, &QComboBox::currentTextChanged, this, policyTip);
    predictor_->setToolTip(tr("Response-length predictor of the predicting policies: %1")
                               .arg(QString::fromStdString(kPredictorGrammar).toHtmlEscaped()));
    // The device: a shipped profile (its execution model and KV capacity), or a fitted
    // ETE/ALA model from the Models panel ("Simulate with this model") on the profile's
    // KV capacity.
    device_ = new QComboBox;
    device_->setObjectName(QStringLiteral("device"));
    for (const std::string& n : shippedProfileNames()) device_->addItem(QString::fromStdString(n));
    if (device_->findText(profile) < 0) device_->addItem(profile);
    device_->setCurrentText(profile);
    device_->setToolTip(tr("The device profile: its execution model (iteration times) and KV "
                           "capacity. A fitted model from the Models panel replaces the "
                           "execution model (Simulate with this model)."));
    form->addRow(tr("&Policy"), policy_);
    form->addRow(tr("P&redictor"), predictor_);
    form->addRow(tr("&Device"), device_);
    v->addLayout(form);
    for (const SliderSpec& s : sliderSpecs()) {
        double value = s.value;
        if (auto it = params.find(s.name); it != params.end()) value = it->second;
        auto* w = new views::ParamSlider(QString::fromStdString(s.label), s.lo, s.hi, value,
                                         s.decimals, s.log);
        w->setToolTip(QString::fromStdString(s.tooltip));
        sliders_[QString::fromStdString(s.name)] = w;
        v->addWidget(w);
        // "Sweep this parameter": the slider's whole range in the Sweep panel.
        const QString name = QString::fromStdString(s.name);
        if (name != "ttft_slo" && name != "tpot_slo") {
            w->setContextMenuPolicy(Qt::CustomContextMenu);
            connect(w, &QWidget::customContextMenuRequested, this, [this, w, name](QPoint at) {
                QMenu menu;
                QAction* a = menu.addAction(tr("Sweep this parameter"));
                a->setEnabled(w->isEnabled());
                if (menu.exec(w->mapToGlobal(at)) == a) Q_EMIT sweepRequested(name);
            });
        }
    }
    tuf_box_ = new QGroupBox(tr("Time-utility per class"));
    tuf_box_->setLayout(new QVBoxLayout);
    tuf_box_->hide();
    v->addWidget(tuf_box_);
    details_ = new QLabel;
    details_->setObjectName(QStringLiteral("requestDetails"));
    details_->setWordWrap(true);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(details_);
    v->addStretch(1);
}

} // namespace kairos::app
