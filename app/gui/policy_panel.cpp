#include "policy_panel.h"

#include "chart_tools.h"
#include "length_histogram.h"
#include "model/router.h"
#include "param_slider.h"
#include "predict/predictor.h"
#include "profiles.h"
#include "run/knobs.h"
#include "sim/prefix_cache.h"
#include "timeline_view.h"
#include "util/text.h"
#include "workbench_state.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QFontMetrics>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace kairos::app {

// The sliders: parameter name, label, tooltip, range, default, decimals, log scale, and
// the policies it applies to (empty: every run). A policy's sliders come from the
// registry (the parameters it marks `slider`); the run's own (KV capacity, seats, rate,
// SLOs) from the run knobs (run/knobs.h).

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
                // The box takes the domain, an open end one shown unit inside, an unbounded
                // one at 1e9 (a spin box needs a number).
                const double unit = std::pow(10.0, -p.decimals);
                v.push_back({p.name,
                             p.label.empty() ? p.name : p.label,
                             tip,
                             p.explore_lo,
                             p.explore_hi,
                             p.dflt,
                             p.decimals,
                             p.log,
                             {ps.name},
                             p.lo_open ? p.lo + unit : p.lo,
                             std::min(p.hi, 1e9)});
            }
        }
        // The run's own knobs (run/knobs.h), after the policies'.
        for (const RunKnob& k : runKnobs())
            v.push_back(
                {k.name, k.label, k.help, k.lo, k.hi, k.dflt, k.decimals, k.log, {}, k.lo, k.hi});
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
    connect(policy_, &QComboBox::currentTextChanged, this, [this](const QString& p) {
        enableParams();
        Q_EMIT policyChanged(p);
    });
    connect(predictor_, &QComboBox::currentTextChanged, this, &PolicyPanel::predictorChanged);
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
    connect(device_, &QComboBox::activated, this, [this](int i) {
        const QString name = device_->itemText(i);
        if (!name.startsWith(QStringLiteral("stored "))) Q_EMIT deviceChosen(name);
    });
    form->addRow(tr("&Policy"), policy_);
    form->addRow(tr("P&redictor"), predictor_);
    form->addRow(tr("&Device"), device_);
    // Serving: prefix caching and replicas behind a router (sim/prefix_cache.h, sim/fleet.h).
    caching_ = new QCheckBox(tr("prefixes"));
    caching_->setObjectName(QStringLiteral("prefix_caching"));
    caching_->setToolTip(tr("Automatic prefix caching (vLLM's): KV blocks of 16 tokens keyed by "
                            "their prefix, kept after use and reused by later requests with "
                            "the same prefix (a system prompt, a conversation's earlier "
                            "turns); evicted least recently used. kairos-cli: --prefix-caching "
                            "on"));
    replicas_ = new QSpinBox;
    replicas_->setObjectName(QStringLiteral("replicas"));
    replicas_->setRange(1, kMaxReplicas); // RunSpec::validate's range, not a second list
    replicas_->setToolTip(tr("Identical replicas of the device behind a router, each with its "
                             "own scheduler and KV cache (1 to %1)")
                              .arg(kMaxReplicas));
    router_ = new QComboBox;
    router_->setObjectName(QStringLiteral("router"));
    // As narrow as the other boxes: the longest name would widen the whole panel.
    router_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    router_->setMinimumContentsLength(8);
    for (const auto& r : kRouterNames) router_->addItem(QString::fromLatin1(r.name));
    router_->setToolTip(tr("Where each request goes when it arrives: round_robin, "
                           "least_outstanding (fewest requests), least_kv (least KV in use "
                           "and queued), prefix_aware (SGLang's router: the replica its tree "
                           "of the prompts it sent says holds most of this one, else the "
                           "least loaded), prefix_oracle (the same on the real caches); the "
                           "last two need prefix caching"));
    router_->setEnabled(false);
    form->addRow(tr("&Caching"), caching_); // prefix caching (the tooltip says)
    form->addRow(tr("Replic&as"), replicas_);
    form->addRow(tr("Ro&uter"), router_);
    // prefix_aware reads the replicas' caches: offered only with caching on. Turning caching
    // off under it falls back to what prefix_aware does without a hit (the least loaded).
    // Quietly: an item's flags changed make the box re-announce its current text, a change
    // of router with caching already off (a refused spec) before the caller's own signal.
    const auto offerPrefixAware = [this](bool on) {
        const QSignalBlocker quiet(router_);
        for (const Router r : {Router::PrefixAware, Router::PrefixOracle}) {
            const int i = router_->findText(QString::fromLatin1(routerName(r)));
            if (auto* m = qobject_cast<QStandardItemModel*>(router_->model()); m && i >= 0) {
                m->item(i)->setEnabled(on);
                m->item(i)->setToolTip(on ? QString() : tr("needs Caching"));
            }
            if (!on && router_->currentIndex() == i)
                router_->setCurrentText(QString::fromLatin1(routerName(Router::LeastOutstanding)));
        }
    };
    offerPrefixAware(false);
    // A click is the user's (setChecked, the window's preset, does not click).
    connect(caching_, &QCheckBox::clicked, this, [this] { caching_chosen_ = true; });
    connect(policy_, &QComboBox::activated, this, [this] { policy_chosen_ = true; });
    connect(caching_, &QCheckBox::toggled, this, [this, offerPrefixAware](bool on) {
        offerPrefixAware(on);
        Q_EMIT servingChanged(tr("caching"));
    });
    connect(replicas_, &QSpinBox::valueChanged, this, [this](int n) {
        router_->setEnabled(n > 1);
        Q_EMIT servingChanged(tr("replicas"));
    });
    connect(router_, &QComboBox::currentTextChanged, this, [this] {
        if (replicas_->value() > 1) Q_EMIT servingChanged(tr("router"));
    });
    v->addLayout(form);
    for (const SliderSpec& s : sliderSpecs()) {
        double value = s.value;
        if (auto it = params.find(s.name); it != params.end()) value = it->second;
        auto* w = new views::ParamSlider(QString::fromStdString(s.label), s.lo, s.hi, value,
                                         s.decimals, s.log);
        w->setBoxRange(s.box_lo, s.box_hi);
        w->setValue(value); // a --param beyond the slider's range kept (C=5 became 1)
        w->setToolTip(QString::fromStdString(s.tooltip));
        w->setProperty("baseTip", QString::fromStdString(s.tooltip));
        sliders_[QString::fromStdString(s.name)] = w;
        v->addWidget(w);
        // "Sweep this parameter": the slider's whole range in the Sweep panel.
        const QString name = QString::fromStdString(s.name);
        connect(w, &views::ParamSlider::valueChanged, this,
                [this, name](double moved) { Q_EMIT paramMoved(name, moved); });
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
    // Every registered parameter of the policy without a slider, from the registry: what
    // --param sets, reachable here too (showOtherParams).
    params_box_ = new QGroupBox(tr("Other parameters"));
    params_box_->setObjectName(QStringLiteral("otherParams"));
    auto* pl = new QVBoxLayout(params_box_);
    pl->setContentsMargins(2, 2, 2, 2);
    params_ = new QTableWidget(0, 4);
    params_->setObjectName(QStringLiteral("paramTable"));
    params_->setHorizontalHeaderLabels({tr("parameter"), tr("value"), tr("unit"), tr("range")});
    params_->verticalHeader()->hide();
    params_->horizontalHeader()->setStretchLastSection(true);
    params_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    params_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    params_->setTextElideMode(Qt::ElideRight);     // a cell's whole text is its tooltip
    params_->installEventFilter(this);             // refitted to the dock's width
    params_->viewport()->installEventFilter(this); // its wheel scrolls the panel
    params_->setSelectionMode(QAbstractItemView::SingleSelection);
    params_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                             QAbstractItemView::AnyKeyPressed);
    params_->setToolTip(tr("The policy's parameters without a slider (kairos-cli policies lists "
                           "them): double-click a value to change it"));
    pl->addWidget(params_);
    v->addWidget(params_box_);
    connect(params_, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
        if (filling_params_ || item->column() != 1) return;
        const QString name = params_->item(item->row(), 0)->text();
        const PolicySpec* ps = findPolicy(this->policy().toStdString());
        const ParamSpec* spec = nullptr;
        if (ps)
            for (const ParamSpec& p : ps->params)
                if (p.name == name.toStdString()) spec = &p;
        bool ok = false;
        const double edited = item->text().trimmed().toDouble(&ok);
        QString error;
        if (!ok)
            error = tr("%1: \"%2\" is not a number").arg(name, item->text());
        else if (spec)
            try {
                spec->check(this->policy().toStdString(), edited);
            } catch (const std::exception& e) {
                error = QString::fromStdString(e.what());
            }
        if (!error.isEmpty()) {
            // The value it had, and why not, naming the control.
            const QSignalBlocker block(params_);
            item->setText(item->data(Qt::UserRole).toString());
            Q_EMIT message(tr("Other parameters, %1: %2").arg(name, error));
            return;
        }
        item->setData(Qt::UserRole, item->text());
        Q_EMIT paramEdited(name, edited);
    });

    tuf_box_ = new QGroupBox(tr("Time-utility per class"));
    tuf_box_->setLayout(new QVBoxLayout);
    tuf_box_->hide();
    v->addWidget(tuf_box_);
    details_ = new QLabel;
    details_->setObjectName(QStringLiteral("requestDetails"));
    details_->setWordWrap(true);
    details_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    details_->installEventFilter(this); // kept in view while it settles after a pick
    v->addWidget(details_);
    v->addStretch(1);
    enableParams();
}

void PolicyPanel::attach(WorkbenchState* state) {
    state_ = state;
    connect(state, &WorkbenchState::workloadChanged, this, &PolicyPanel::showWorkload);
    for (auto sig : {&WorkbenchState::runChanged, &WorkbenchState::pinnedChanged,
                     &WorkbenchState::selectionChanged})
        connect(state, sig, this, &PolicyPanel::showCard);
    // A request picked (on the timeline, in Find, the Requests table) brings its card into
    // view: it is the panel's last part, below the fold at 1366x768. A re-run keeps the
    // panel where the user scrolled it.
    connect(state, &WorkbenchState::selectionChanged, this, [this] {
        const int id = state_->selectedRequest();
        if (id < 0 || id == card_shown_for_) {
            card_shown_for_ = id;
            return;
        }
        card_shown_for_ = id;
        // Now, and again whenever the card or the panel's range changes in the next half
        // second (the card's height and the scroll area's range settle over a few layout
        // passes: a single reveal showed its first line only).
        reveal_until_.start();
        revealCard();
    });
    connect(state, &WorkbenchState::runFailed, this, [this](const QString& error) {
        details_->setText(tr("<b>The run failed:</b> %1").arg(error.toHtmlEscaped()));
    });
}

bool PolicyPanel::prefixCaching() const {
    return caching_->isChecked();
}

void PolicyPanel::setPrefixCaching(bool on) {
    caching_->setChecked(on);
}

int PolicyPanel::replicas() const {
    return replicas_->value();
}

void PolicyPanel::setReplicas(int n) {
    replicas_->setValue(n);
}

QString PolicyPanel::router() const {
    return router_->currentText();
}

void PolicyPanel::setRouter(const QString& name) {
    router_->setCurrentText(name);
}

void PolicyPanel::servingInto(bool* prefix_caching, std::int32_t* block_size,
                              RunSpec::FleetPart* fleet) const {
    *prefix_caching = prefixCaching();
    if (*prefix_caching) *block_size = kPrefixCacheBlockSize;
    fleet->replicas = replicas();
    fleet->router = router().toStdString();
}

void PolicyPanel::specInto(RunSpec* spec, std::int64_t profile_kv) const {
    spec->policy.name = policy().toStdString();
    spec->policy.predictor = predictor().toStdString();
    for (const SliderSpec& sp : sliderSpecs())
        if (!sp.policies.empty() && appliesTo(sp, spec->policy.name))
            spec->policy.params[sp.name] = slider(QString::fromStdString(sp.name))->value();
    for (const RunKnob& k : runKnobs())
        k.set(*spec, slider(QString::fromStdString(k.name))->value(), profile_kv);
    servingInto(&spec->limits.prefix_caching, &spec->limits.block_size, &spec->fleet);
    // A class's utility function as its sliders draw it, once they were moved from the
    // workload's own (unmoved, the trace's functions run as they are).
    spec->workload.tuf.clear();
    for (const auto& [cls, pair] : tuf_sliders_) {
        const double ert = pair.first->value(), zero = pair.second->value();
        const auto initial = tuf_initial_.find(cls);
        if (initial != tuf_initial_.end() && initial->second == std::make_pair(ert, zero)) continue;
        spec->workload.tuf[cls] = RunSpec::WorkloadPart::TufOverride::drawn(ert, zero);
    }
}

void PolicyPanel::applySpec(const RunSpec& spec, std::int64_t profile_kv) {
    setPolicy(QString::fromStdString(spec.policy.name));
    setPredictor(QString::fromStdString(spec.policy.predictor));
    for (const auto& [name, v] : spec.policy.params)
        if (sliderSets(spec.policy.name, name)) slider(QString::fromStdString(name))->setValue(v);
    for (const RunKnob& k : runKnobs())
        slider(QString::fromStdString(k.name))->setValue(k.get(spec, profile_kv));
    setPrefixCaching(spec.limits.prefix_caching);
    caching_chosen_ = true; // a session's or a stored run's setting is a choice
    policy_chosen_ = true;
    setReplicas(spec.fleet.replicas);
    setRouter(QString::fromStdString(spec.fleet.router));
    // Each class's utility function: the spec's where it redraws one, else the workload's.
    for (const auto& [cls, pair] : tuf_sliders_) {
        const auto it = spec.workload.tuf.find(cls);
        const auto initial = tuf_initial_.find(cls);
        if (it == spec.workload.tuf.end() && initial == tuf_initial_.end()) continue;
        const auto [ert, zero] = it != spec.workload.tuf.end()
                                     ? std::make_pair(it->second.ert, it->second.zero)
                                     : initial->second;
        pair.second->setValue(std::max(zero, pair.second->value())); // zero stays after ERT
        pair.first->setValue(ert);
        pair.second->setValue(zero);
    }
}

QString PolicyPanel::policy() const {
    return policy_->currentText();
}

void PolicyPanel::setPolicy(const QString& name) {
    policy_->setCurrentText(name);
}

bool PolicyPanel::knowsPolicy(const QString& name) const {
    return policy_->findText(name) >= 0;
}

QString PolicyPanel::predictor() const {
    return predictor_->currentText();
}

void PolicyPanel::setPredictor(const QString& spec) {
    predictor_->setCurrentText(spec);
}

views::ParamSlider* PolicyPanel::slider(const QString& name) const {
    auto it = sliders_.find(name);
    return it == sliders_.end() ? nullptr : it->second;
}

std::pair<views::ParamSlider*, views::ParamSlider*>
PolicyPanel::tufSliders(const std::string& cls) const {
    auto it = tuf_sliders_.find(cls);
    return it == tuf_sliders_.end() ? std::pair<views::ParamSlider*, views::ParamSlider*>{}
                                    : it->second;
}

void PolicyPanel::enableParams() {
    const std::string p = policy_->currentText().toStdString();
    // The predictor only where the policy predicts (it stood enabled under fcfs, whose run
    // names no predictor); greyed, it says so, and keeps its choice for the next policy.
    const PolicySpec* ps = findPolicy(p);
    const bool predicts = !ps || ps->predicts;
    predictor_->setEnabled(predicts);
    predictor_->setToolTip((predicts
                                ? QString()
                                : tr("Not used by %1: it does not predict response lengths.<br>")
                                      .arg(QString::fromStdString(p).toHtmlEscaped())) +
                           tr("Response-length predictor of the predicting policies: %1")
                               .arg(QString::fromStdString(kPredictorGrammar).toHtmlEscaped()));
    for (const SliderSpec& s : sliderSpecs()) {
        const bool on = appliesTo(s, p);
        const QString name = QString::fromStdString(s.name);
        sliders_.at(name)->setEnabled(on);
        // A greyed slider says whose it is (a disabled widget shows its tooltip too).
        QStringList whose;
        for (const std::string& q : s.policies) whose << QString::fromStdString(q);
        setSliderNote(name,
                      on ? QString()
                         : tr("Not used by %1: a parameter of %2.")
                               .arg(QString::fromStdString(p), whose.join(QStringLiteral(", "))));
    }
}

bool PolicyPanel::sliderSets(const std::string& policy, const std::string& name) const {
    for (const SliderSpec& s : sliderSpecs())
        if (s.name == name) return appliesTo(s, policy);
    return false;
}

void PolicyPanel::showOtherParams(const PolicyParams& values) {
    filling_params_ = true;
    params_->setRowCount(0);
    if (const PolicySpec* ps = findPolicy(policy().toStdString()))
        for (const ParamSpec& p : ps->params) {
            if (sliderSets(ps->name, p.name)) continue;
            const int row = params_->rowCount();
            params_->insertRow(row);
            auto it = values.find(p.name);
            const double v = it != values.end() ? it->second : p.dflt;
            auto cell = [&](int col, const QString& text, bool editable) {
                auto* item = new QTableWidgetItem(text);
                item->setToolTip(QString::fromStdString(p.help));
                if (!editable) item->setFlags(item->flags() & ~Qt::ItemIsEditable);
                params_->setItem(row, col, item);
                return item;
            };
            cell(0, QString::fromStdString(p.name), false);
            QTableWidgetItem* value = cell(1, QString::number(v, 'g', 10), true);
            value->setData(Qt::UserRole, value->text());
            value->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            cell(2, QString::fromStdString(p.unit), false);
            // "1..1048576" as "1 – 1048576": it may wrap after the dash where the dock is
            // narrow (the column's narrowest is then its longest number, not the range).
            cell(3,
                 QString::fromStdString(p.domainText())
                     .replace(QStringLiteral(".."), QStringLiteral("\u00A0– ")),
                 false);
        }
    params_box_->setVisible(params_->rowCount() > 0);
    fitParamTable();
    filling_params_ = false;
}

void PolicyPanel::fitParamTable() {
    // Every row and column in view (a policy has at most a handful): the panel scrolls, not
    // the table (nor does the wheel scroll it: nothing to scroll, the panel takes it). When
    // the columns are wider than the dock, the unit and accepted values wrap onto more
    // lines rather than being cut ("[0, 0.99]" read "[0, 0.9" at 1920x1080).
    params_->setWordWrap(false);
    params_->resizeColumnsToContents();
    // The table's own width (its viewport follows it only after this resize event), or what
    // the scrolling panel shows of it when the panel is wider than its dock.
    int avail = params_->width() - 2 * params_->frameWidth();
    int margin = -1; // what the scrolling panel's viewport has besides the columns
    if (QScrollArea* scroll = scrollArea()) {
        const int left = params_->mapTo(scroll->widget(), QPoint(0, 0)).x();
        avail = std::min(avail, scroll->viewport()->width() - left - 2 * params_->frameWidth() - 4);
        // Both sides' margins (the group box's and the panel's, the same on the right as on
        // the left) and the table's frame. Not from the table's width, which before the panel
        // is laid out is anything (it asked for a 662 px panel).
        const int right =
            std::clamp(scroll->widget()->width() - left - params_->width(), left, 2 * left + 8);
        margin = left + right + 2 * params_->frameWidth() + 4;
    }
    int total = 0;
    for (int c = 0; c < params_->columnCount(); ++c) total += params_->columnWidth(c);
    if (avail > 0 && total > avail) {
        params_->setWordWrap(true);
        const int fixed = params_->columnWidth(0) + params_->columnWidth(1);
        const int rest = std::max(80, avail - fixed);
        // Each wrapping column at least its longest word, the rest shared by content width.
        auto longestWord = [this](int col) {
            int w = 0;
            const QFontMetrics fm = params_->fontMetrics();
            for (int r = 0; r < params_->rowCount(); ++r)
                if (const QTableWidgetItem* it = params_->item(r, col))
                    for (const QString& word : it->text().split(QLatin1Char(' ')))
                        w = std::max(w, fm.horizontalAdvance(word));
            return w + 12;
        };
        const int unit_min = longestWord(2), domain_min = longestWord(3);
        // Narrower than that cuts a word: the window widens the panel (timely's names).
        if (margin >= 0 && params_->isVisible() && fixed + unit_min + domain_min > avail)
            Q_EMIT tableWidthNeeded(margin + fixed + unit_min + domain_min);
        const int unit = params_->columnWidth(2), domain = params_->columnWidth(3);
        // The spare beyond both floors shared by what each would take more (a content width
        // under its floor wants nothing more: counted negative, it gave the unit 8 px too
        // many and the table outgrew its dock by 4).
        const int spare = std::max(0, rest - unit_min - domain_min);
        const int more_unit = std::max(0, unit - unit_min),
                  more_domain = std::max(0, domain - domain_min);
        const int unit_w =
            std::min(unit, unit_min + spare * more_unit / std::max(1, more_unit + more_domain));
        params_->setColumnWidth(2, unit_w);
        params_->setColumnWidth(3, std::max(domain_min, rest - unit_w));
    }
    params_->resizeRowsToContents();
    int h = params_->horizontalHeader()->sizeHint().height() + 2 * params_->frameWidth() + 2;
    for (int r = 0; r < params_->rowCount(); ++r) h += params_->rowHeight(r);
    params_->setFixedHeight(h);
}

QScrollArea* PolicyPanel::scrollArea() const {
    for (QWidget* p = parentWidget(); p; p = p->parentWidget())
        if (auto* scroll = qobject_cast<QScrollArea*>(p)) return scroll;
    return nullptr;
}

void PolicyPanel::revealCard() {
    if (!reveal_until_.isValid() || reveal_until_.elapsed() > 500) return;
    if (QScrollArea* scroll = scrollArea(); scroll && !range_watched_) {
        range_watched_ = true;
        connect(scroll->verticalScrollBar(), &QScrollBar::rangeChanged, this,
                [this] { revealCard(); });
    }
    QTimer::singleShot(0, this, [this] {
        QScrollArea* scroll = scrollArea();
        if (!scroll || details_->text().isEmpty() || state_->selectedRequest() != card_shown_for_)
            return;
        // Asked here, after the click that picked the request has raised what it raises.
        if (reveal_when_ && !reveal_when_()) return;
        scroll->ensureWidgetVisible(details_, 0, 8);
    });
}

bool PolicyPanel::eventFilter(QObject* o, QEvent* e) {
    if (o == details_ && (e->type() == QEvent::Resize || e->type() == QEvent::Move)) revealCard();
    // Refitted when shown too: a table filled before the window was shown (a first policy
    // with long values, TimeBill at 1366x768) could not ask for its width then, and kept
    // its width after (264 px of columns in a 240 px table).
    if (o == params_ && (e->type() == QEvent::Resize || e->type() == QEvent::Show) &&
        !filling_params_)
        fitParamTable();
    // The table shows every row (nothing of its own to scroll), yet its scroll area took the
    // wheel: the panel under the pointer did not move. Handed to the panel's scroll area.
    if (o == params_->viewport() && e->type() == QEvent::Wheel)
        if (QScrollArea* scroll = scrollArea()) {
            QCoreApplication::sendEvent(scroll->viewport(), e);
            return true;
        }
    return QWidget::eventFilter(o, e);
}

void PolicyPanel::setSliderNote(const QString& name, const QString& note) {
    views::ParamSlider* w = slider(name);
    if (!w) return;
    const QString base = w->property("baseTip").toString();
    w->setToolTip(note.isEmpty() ? base : base + QStringLiteral("\n\n") + note);
}

void PolicyPanel::showDevice(const QString& profile, qint64 stored_model) {
    const QSignalBlocker block(device_);
    for (int i = device_->count() - 1; i >= 0; --i) // the previous stored model's entry
        if (device_->itemText(i).startsWith(QStringLiteral("stored "))) device_->removeItem(i);
    if (stored_model > 0) {
        device_->addItem(tr("stored model %1 on %2").arg(stored_model).arg(profile));
        device_->setCurrentIndex(device_->count() - 1);
    } else {
        if (device_->findText(profile) < 0) device_->addItem(profile);
        device_->setCurrentText(profile);
    }
}

QString PolicyPanel::cardText() const {
    return details_->text();
}

void PolicyPanel::showWorkload() {
    const auto& w = state_->workload();
    if (!w) return;
    // A long file name (no spaces to wrap at) would widen the panel: elided in the middle
    // to the panel's width, whole in the tooltip.
    const QString name = state_->workloadName();
    const int room = std::max(120, workload_label_->width() > 0 ? workload_label_->width() : 240);
    QFont bold = workload_label_->font();
    bold.setBold(true);
    workload_label_->setToolTip(name);
    workload_label_->setText(
        tr("<b>%1</b><br>%L2 requests over %3; %L4 prompt + %L5 output tokens")
            .arg(QFontMetrics(bold).elidedText(name, Qt::ElideMiddle, room).toHtmlEscaped())
            .arg(w->size())
            .arg(QString::fromStdString(text::duration(w->span())))
            .arg(w->totalPromptTokens())
            .arg(w->totalOutputTokens()));
    histogram_->setWorkload(*w);
    rebuildTufSliders(*w);
}

void PolicyPanel::rebuildTufSliders(const Workload& w) {
    for (auto& [cls, pair] : tuf_sliders_) {
        delete pair.first;
        delete pair.second;
    }
    tuf_sliders_.clear();
    tuf_initial_.clear();
    for (QLabel* l : tuf_box_->findChildren<QLabel*>(QString(), Qt::FindDirectChildrenOnly))
        delete l;
    // One pair of sliders per class that has a TUF (its first request's), e.g. TimelyLLM's
    // normal [ERT 1 s, zero at 1.5 s] and urgent [0.2 s, 0.5 s].
    for (const Request& r : w.requests) {
        if (!r.tuf || tuf_sliders_.count(r.cls)) continue;
        const QString name = r.cls.empty() ? tr("(no class)") : QString::fromStdString(r.cls);
        auto* label =
            new QLabel(tr("<b>%1</b> (utility %2)").arg(name.toHtmlEscaped()).arg(r.tuf->beta));
        // Ranges around the class's own values (a tenth to ten times, log scale): over one
        // range for every class (0.02 to 60 s), a 25-pixel drag in a narrow dock moved an
        // urgent class's zero time from 0.5 s to 31 s. The spin box sets a value exactly.
        const double e = std::max(0.01, r.tuf->ert);
        auto* ert =
            new views::ParamSlider(tr("ERT (s)"), std::max(0.01, e / 10), e * 10, e, 2, true);
        const double z = std::isfinite(r.tuf->zeroTime()) ? r.tuf->zeroTime() : 60.0;
        auto* zero =
            new views::ParamSlider(tr("zero at (s)"), std::max(0.02, z / 10), z * 10, z, 2, true);
        ert->setToolTip(tr("Expected response time of class %1 (TimelyLLM): its utility is %2 "
                           "until a first response this late (s); a tenth to ten times the "
                           "workload's value")
                            .arg(name)
                            .arg(r.tuf->beta));
        zero->setToolTip(tr("When a first response of class %1 earns zero utility (s); later "
                            "ones earn less than zero, falling linearly")
                             .arg(name));
        tuf_box_->layout()->addWidget(label);
        tuf_box_->layout()->addWidget(ert);
        tuf_box_->layout()->addWidget(zero);
        // ERT stays below the zero-utility time (RunSpec::validate's rule), at the control:
        // a slider dragged past the other stops a box unit short of it, and the run is the
        // clamped value's, not a refusal.
        const QString clamp_note =
            tr("ERT stays below the zero-utility time of class %1").arg(name);
        connect(ert, &views::ParamSlider::valueChanged, this,
                [this, ert, zero, clamp_note, name](double v) {
                    const double top = zero->value() - 0.01;
                    if (v > top + 1e-9) {
                        Q_EMIT message(clamp_note);
                        ert->setValue(top); // emits again, with a valid value
                        return;
                    }
                    Q_EMIT tufMoved(tr("%1 ERT").arg(name));
                });
        connect(zero, &views::ParamSlider::valueChanged, this,
                [this, ert, zero, clamp_note, name](double v) {
                    const double bottom = ert->value() + 0.01;
                    if (v < bottom - 1e-9) {
                        Q_EMIT message(clamp_note);
                        zero->setValue(bottom);
                        return;
                    }
                    Q_EMIT tufMoved(tr("%1 zero time").arg(name));
                });
        tuf_sliders_[r.cls] = {ert, zero};
        tuf_initial_[r.cls] = {ert->value(), zero->value()};
    }
    tuf_box_->setVisible(!tuf_sliders_.empty());
}

void PolicyPanel::showCard() {
    // The clicked request as the shown run has it: it follows re-runs (a slider moved, the
    // policy changed) and is cleared when the workload changes.
    const int id = state_->selectedRequest();
    const auto& run = state_->run();
    if (!run || !run->rows || id < 0 || std::size_t(id) >= run->rows->size()) {
        details_->clear();
        return;
    }
    const auto i = static_cast<std::size_t>(id);
    const auto& pinned = state_->pinned();
    const bool pin =
        state_->pinnedComparable() && pinned->rows && pinned->rows->size() == run->rows->size();
    const QString text = views::TimelineView::describe((*run->rows)[i], state_->selectedTime(),
                                                       pin ? &(*pinned->rows)[i] : nullptr);
    details_->setText(
        QStringLiteral("<b>%1</b>")
            .arg(text.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("</b><br>"))));
}

} // namespace kairos::app
