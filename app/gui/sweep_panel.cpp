#include "sweep_panel.h"

#include "chart_tools.h"
#include "metrics/metric_table.h"
#include "policy_panel.h"
#include "run/knobs.h"
#include "run/pipeline.h"
#include "sched/registry.h"
#include "store/store.h"
#include "sweep_chart.h"
#include "util/json_line.h"

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

namespace kairos::app {

// A running sweep: what it needs to label the result. Shared with the worker, which may
// outlive the panel's interest in it (a newer sweep cancels this one through the tracker).
struct SweepPanel::Job {
    sweep::Definition def;
    std::vector<sweep::Point> points;
    std::shared_ptr<const Workload> workload;
    DeviceProfile profile;
    std::map<std::string, double> x_of; // the swept axis' value text -> the slider's value
    QString param;
    bool log = false;
};

namespace {

const char* kGuiWorkload = "kairos-workbench:shown-workload";

// A metric's name in the menus: the metric table's display name and unit.
QString metricLabel(const std::string& m) {
    static const std::vector<MetricDef> table = metricTable({50, 90, 99});
    const MetricDef* d = findMetric(table, m);
    return QString::fromStdString(d ? d->label() : m);
}

} // namespace

std::vector<SweepParam> sweepParams(const std::function<double(const QString&)>& value) {
    std::vector<SweepParam> out;
    for (const SliderSpec& sp : sliderSpecs()) {
        if (const RunKnob* k = findRunKnob(sp.name); k && !k->axis) continue; // an SLO
        SweepParam p;
        p.name = QString::fromStdString(sp.name);
        p.label = QString::fromStdString(sp.label);
        p.lo = sp.lo;
        p.hi = sp.hi;
        p.log = sp.log;
        p.whole = sp.decimals == 0;
        p.value = value(p.name);
        p.policies = sp.policies;
        out.push_back(p);
    }
    return out;
}

SweepPanel::SweepPanel(JobTracker* jobs, std::function<SweepBase()> base, QWidget* parent)
    : QWidget(parent), jobs_(jobs), base_(std::move(base)) {
    auto* v = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    param_ = new QComboBox;
    param_->setToolTip(tr("The slider whose range is swept"));
    metric_ = new QComboBox;
    for (const auto& m : summaryMetricNames({50, 90, 99}))
        metric_->addItem(metricLabel(m), QString::fromStdString(m));
    metric_->setCurrentIndex(metric_->findData(QStringLiteral("p99_ttft_ms")));
    metric_->setToolTip(
        tr("The metric drawn against the parameter (switching redraws; no re-run)"));
    against_ = new QComboBox;
    against_->addItem(tr("the parameter"), QString());
    for (const auto& m : summaryMetricNames({50, 90, 99}))
        against_->addItem(metricLabel(m), QString::fromStdString(m));
    against_->setToolTip(tr("Draw the metric against the parameter, or against a second "
                            "metric: the trade-off, one curve per policy in sweep order, and "
                            "the Pareto front (the points no other beats on both)"));
    points_ = new QSpinBox;
    points_->setRange(2, 201);
    points_->setValue(21);
    points_->setToolTip(tr("Points over the slider's range (log-spaced for a log slider)"));
    seeds_ = new QSpinBox;
    seeds_->setRange(1, 50);
    seeds_->setValue(3);
    seeds_->setToolTip(tr("Seeds per point: the band is the 95 % interval of the mean. Seeds "
                          "change noisy predictors and randomised policies; with exact "
                          "lengths on a trace every seed gives the same run"));
    compare_ = new QCheckBox(tr("every policy that has it"));
    compare_->setToolTip(tr("One curve per policy: for a policy parameter, the policies that "
                            "register it; for rate, KV or seats, the baselines (%1) "
                            "and the current policy")
                             .arg(QString::fromStdString(policyNameList(baselinePolicies()))));
    form->addRow(tr("Parameter"), param_);
    form->addRow(tr("Metric"), metric_);
    form->addRow(tr("Against"), against_);
    form->addRow(tr("Points"), points_);
    form->addRow(tr("Seeds"), seeds_);
    form->addRow(tr("Compare"), compare_);
    v->addLayout(form);
    auto* buttons = new QHBoxLayout;
    run_ = new QPushButton(tr("&Sweep"));
    run_->setToolTip(tr("Run the parameter's range in the background"));
    export_ = new QPushButton(tr("&Export"));
    export_->setEnabled(false);
    export_->setToolTip(tr("The table as CSV, or the chart as PNG or SVG"));
    auto* menu = new QMenu(export_);
    menu->addAction(tr("Table (CSV)…"), this, [this] { exportFile(tr("CSV (*.csv)")); });
    menu->addAction(tr("Chart (PNG)…"), this, [this] { exportFile(tr("PNG image (*.png)")); });
    menu->addAction(tr("Chart (SVG)…"), this, [this] { exportFile(tr("SVG image (*.svg)")); });
    menu->addAction(tr("Report (HTML)…"), this, [this] { exportFile(tr("HTML report (*.html)")); });
    export_->setMenu(menu);
    save_ = new QPushButton(tr("Sa&ve"));
    save_->setEnabled(false);
    save_->setToolTip(tr("Store the sweep in the Runs database (kairos-cli runs sweeps lists "
                         "it)"));
    open_ = new QPushButton(tr("&Open…"));
    open_->setToolTip(tr("Show a stored sweep: this panel's, or one kairos-cli sweep --db "
                         "stored"));
    buttons->addWidget(run_);
    buttons->addWidget(export_);
    buttons->addWidget(save_);
    buttons->addWidget(open_);
    v->addLayout(buttons);
    status_ = new QLabel;
    status_->setWordWrap(true);
    v->addWidget(status_);
    chart_ = new views::SweepChart;
    views::addChartExport(chart_, QStringLiteral("sweep"),
                          [this](const QString& path) { chart_->saveAs(path); });
    views::sayWhenEmpty(chart_,
                        tr("No sweep yet. Pick a parameter and a metric, then press Sweep (or "
                           "right-click a slider › Sweep this parameter): the metric at each "
                           "value, its mean and 95 % interval over the seeds, is drawn here."));
    v->addWidget(chart_, 1);
    connect(run_, &QPushButton::clicked, this, [this] {
        if (job_) {
            jobs_->cancel(kChannel);
            return;
        }
        start();
    });
    connect(save_, &QPushButton::clicked, this, [this] {
        bool ok = false;
        const QString name =
            QInputDialog::getText(this, tr("Save the sweep"), tr("Name:"), QLineEdit::Normal,
                                  tr("%1 sweep").arg(param_->currentText()), &ok);
        if (ok) save(name);
    });
    connect(open_, &QPushButton::clicked, this, &SweepPanel::chooseStored);
    connect(param_, &QComboBox::activated, this, [this] { param_chosen_ = true; });
    connect(metric_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    connect(against_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    refreshParams();
}

SweepPanel::~SweepPanel() {
    if (job_) jobs_->cancel(kChannel);
}

void SweepPanel::refreshParams() {
    const SweepBase b = base_();
    const std::string& policy = b.spec.policy.name;
    params_.clear();
    for (const auto& p : b.params)
        if (p.policies.empty() ||
            std::find(p.policies.begin(), p.policies.end(), policy) != p.policies.end())
            params_.push_back(p);
    const QString keep = param_->currentData().toString();
    const QSignalBlocker quiet(param_);
    param_->clear();
    int own = -1;
    for (const auto& p : params_) {
        if (own < 0 && !p.policies.empty()) own = param_->count();
        param_->addItem(p.label, p.name);
    }
    const int kept = param_chosen_ ? param_->findData(keep) : -1;
    param_->setCurrentIndex(kept >= 0 ? kept : own >= 0 ? own : 0);
}

void SweepPanel::sweep(const QString& param) {
    param_chosen_ = true;
    refreshParams();
    if (const int i = param_->findData(param); i >= 0) param_->setCurrentIndex(i);
    job_.reset(); // the tracker cancels it when the next one starts
    start();
}

void SweepPanel::sliderMoved(const QString& param, double value) {
    if (param == swept_) chart_->setMarker(value);
}

void SweepPanel::checkSettings() {
    if (!def_ || job_) return;
    const SweepBase b = base_();
    const RunSpec& was = def_->base;
    RunSpec now = b.spec;
    QStringList changed;
    if (b.workload != swept_workload_) changed << tr("the workload");
    const bool across = std::any_of(def_->axes.begin(), def_->axes.end(), [](const auto& a) {
        return a.kind == sweep::AxisKind::Policy;
    });
    if (!across && now.policy.name != was.policy.name) changed << tr("the policy");
    if (now.policy.predictor != was.policy.predictor) changed << tr("the predictor");
    // The policy's parameters set on either side, by name (unset differs from any value).
    auto param = [](const RunSpec& s, const std::string& k) {
        const auto it = s.policy.params.find(k);
        return it == s.policy.params.end() ? std::optional<double>() : it->second;
    };
    std::set<std::string> names;
    for (const auto& [k, v] : was.policy.params) names.insert(k);
    for (const auto& [k, v] : now.policy.params) names.insert(k);
    for (const std::string& k : names)
        if (QString::fromStdString(k) != swept_ && param(was, k) != param(now, k))
            changed << QString::fromStdString(k);
    // The run's knobs (rate, KV, seats, SLOs): each by the slider's label.
    const std::int64_t kv = b.profile.kvCapacityTokens();
    for (const RunKnob& k : runKnobs()) {
        if (QString::fromStdString(k.name) == swept_) continue;
        if (k.get(now, kv) != k.get(was, kv)) changed << QString::fromStdString(k.label);
    }
    // What is left, with all of the above made equal: the device, then anything else.
    now.workload.path = was.workload.path;
    now.workload.format = was.workload.format;
    now.workload.limit = was.workload.limit;
    now.policy = was.policy;
    for (const RunKnob& k : runKnobs()) k.set(now, k.get(was, kv), kv);
    RunSpec same_device = now;
    same_device.exec = was.exec;
    const nlohmann::json rest = same_device.toJson();
    if (rest != now.toJson()) changed << tr("the device");
    if (rest != was.toJson()) changed << tr("other settings");
    if (changed == stale_) return;
    stale_ = changed;
    placeShownRun();
    showStatus();
}

void SweepPanel::setShownRun(std::shared_ptr<const RunView> run) {
    shown_ = std::move(run);
    placeShownRun();
}

void SweepPanel::placeShownRun() {
    // Only where it compares: the sweep current, one curve (the window's policy), the
    // metric against the parameter.
    double y = NAN;
    if (shown_ && table_ && def_ && stale_.isEmpty() && chart_->curveCount() == 1 &&
        !chart_->tradeoff()) {
        const std::string key = metric_->currentData().toString().toStdString();
        for (const auto& [k, v] : summaryMetrics(shown_->summary))
            if (k == key) y = v;
    }
    const bool was = chart_->shownRunVisible();
    chart_->setShownRun(y, def_ && def_->seeds > 1
                               ? tr("the window's run (the first of the %1 seeds)").arg(def_->seeds)
                               : tr("the window's run"));
    if (chart_->shownRunVisible() != was && table_) showStatus(); // its line comes and goes
}

void SweepPanel::plainStatus(const QString& text) {
    status_->setTextFormat(Qt::PlainText);
    status_->setText(text);
}

void SweepPanel::showStatus() {
    QStringList lines{done_status_.toHtmlEscaped()};
    if (seeds_agree_)
        lines << tr("Every seed gave the same value at every point: seeds change noisy "
                    "predictions and randomised policies, and no run here depended on them "
                    "(exact lengths on a replayed trace, or a queue that never had to "
                    "choose). There is no interval to draw.")
                     .toHtmlEscaped();
    // The window's run beside a mean of seeds: which seed it is, and what a seed changes.
    if (def_ && def_->seeds > 1 && !seeds_agree_ && chart_->shownRunVisible())
        lines << tr("The curve: the mean of %1 seeds (a seed changes the predictor's noise and "
                    "a randomised policy's draws). The diamond: the window's run, the first.")
                     .arg(def_->seeds)
                     .toHtmlEscaped();
    if (!capacities_.empty()) {
        // Goodput by the SLOs it counted ("ttft:2000" as "TTFT 2000 ms").
        QStringList slos;
        if (def_)
            for (const std::string& g : def_->base.summary.goodput) {
                const auto colon = g.find(':');
                slos << QString::fromStdString(g.substr(0, colon)).toUpper() + QLatin1Char(' ') +
                            QString::fromStdString(
                                colon == std::string::npos ? "" : g.substr(colon + 1)) +
                            tr(" ms");
            }
        lines << tr("Capacity: where the share of requests meeting every SLO%1 falls below %2 %.")
                     .arg(slos.isEmpty() ? QString() : tr(" (%1)").arg(slos.join(tr(" and "))))
                     .arg(kCapacityTarget * 100, 0, 'f', 0)
                     .toHtmlEscaped();
    }
    if (!stale_.isEmpty())
        lines << QStringLiteral("<span style=\"color:#b35900\">%1</span>")
                     .arg(tr("Swept under earlier settings: %1 changed since. Sweep again to "
                             "see the window's run.")
                              .arg(stale_.join(QStringLiteral(", ")))
                              .toHtmlEscaped());
    status_->setTextFormat(Qt::RichText);
    status_->setText(lines.join(QStringLiteral("<br>")));
}

void SweepPanel::start() {
    const SweepBase b = base_();
    if (!b.workload) {
        plainStatus(tr("Open or generate a workload first."));
        return;
    }
    params_ = b.params;
    const QString name = param_->currentData().toString();
    auto pit = std::find_if(params_.begin(), params_.end(),
                            [&](const SweepParam& p) { return p.name == name; });
    if (pit == params_.end()) {
        plainStatus(tr("Choose a parameter to sweep."));
        return;
    }
    const SweepParam& p = *pit;
    if (!compare_->isChecked() && !p.policies.empty() &&
        std::find(p.policies.begin(), p.policies.end(), b.spec.policy.name) == p.policies.end()) {
        plainStatus(tr("%1 has no %2: choose a policy that has it, or compare every "
                       "policy that has it")
                        .arg(QString::fromStdString(b.spec.policy.name), p.label));
        return;
    }
    auto job = std::make_shared<Job>();
    job->param = p.name;
    job->log = p.log;
    job->workload = b.workload;
    job->profile = b.profile;
    sweep::Definition& d = job->def;
    d.base = b.spec; // its workload transforms (rate, utility functions) included
    d.base.workload.path = kGuiWorkload;
    d.base.workload.format = "auto";
    d.base.workload.limit = 0;
    d.seeds = seeds_->value();
    d.metrics = summaryMetricNames(d.base.summary.percentiles);
    // The slider's range as points (log-spaced for a log slider), as the slider shows them.
    std::vector<double> xs;
    const int n = points_->value();
    for (int i = 0; i < n; ++i) {
        const double t = n > 1 ? double(i) / (n - 1) : 0;
        double x = p.log ? p.lo * std::pow(p.hi / p.lo, t) : p.lo + t * (p.hi - p.lo);
        if (p.whole) x = std::round(x);
        if (xs.empty() || xs.back() != x) xs.push_back(x);
    }
    std::vector<std::string> policies = {d.base.policy.name};
    if (compare_->isChecked()) {
        if (!p.policies.empty()) {
            policies = p.policies;
        } else {
            policies = baselinePolicies();
            if (std::find(policies.begin(), policies.end(), d.base.policy.name) == policies.end())
                policies.push_back(d.base.policy.name);
        }
    }
    if (policies.size() > 1) {
        sweep::Axis ax;
        ax.kind = sweep::AxisKind::Policy;
        ax.name = "policy";
        ax.values = policies;
        d.axes.push_back(ax);
    }
    sweep::Axis ax;
    ax.name = p.name.toStdString();
    for (double x : xs) {
        std::string text;
        if (const RunKnob* k = findRunKnob(p.name.toStdString()); k && k->axis) {
            ax.kind = *k->axis; // the run's own knob, as run/knobs.h sweeps it
            text = k->axis_value(x, b.profile.kvCapacityTokens());
        } else {
            ax.kind = sweep::AxisKind::Param;
            text = sweep::formatValue(x);
        }
        if (std::find(ax.values.begin(), ax.values.end(), text) != ax.values.end()) continue;
        ax.values.push_back(text);
        job->x_of[text] = x;
    }
    d.axes.push_back(ax);
    try {
        job->points = sweep::expand(d);
        for (const auto& pt : job->points) pt.spec.validate("the sweep");
    } catch (const std::exception& e) {
        plainStatus(tr("Cannot sweep: %1").arg(QString::fromUtf8(e.what())));
        Q_EMIT finished();
        return;
    }
    job_ = job;
    run_->setText(tr("&Stop"));
    plainStatus(tr("sweeping %1: %2 points × %3…")
                    .arg(p.label)
                    .arg(job->points.size())
                    .arg(d.seeds == 1 ? tr("1 seed") : tr("%1 seeds").arg(d.seeds)));
    jobs_->start(kChannel, this, [this, job](JobTracker::Job& tracked) {
        QElapsedTimer t;
        t.start();
        auto table = std::make_shared<sweep::Table>();
        QString error;
        try {
            WorkloadCache cache;
            cache.put(kGuiWorkload, "auto", 0, job->workload);
            RunContext ctx;
            ctx.cache = &cache;
            const DeviceProfile prof = job->profile;
            ctx.resolve_profile = [prof](const std::string&, std::string* found) {
                if (found) *found = prof.name;
                return prof;
            };
            sweep::RunOptions ro;
            ro.cancel = &tracked.cancel;
            const auto out = sweep::runJobs(job->def, job->points, ctx, ro);
            if (tracked.cancel)
                error = QObject::tr("stopped");
            else
                *table = sweep::aggregate(job->def, job->points, out);
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        const double secs = double(t.elapsed()) / 1e3;
        return std::function<void()>([this, job, table, error, secs] {
            if (job_ != job) return; // superseded
            job_.reset();
            run_->setText(tr("&Sweep"));
            if (!error.isEmpty()) {
                plainStatus(tr("Sweep: %1").arg(error));
                Q_EMIT finished();
                return;
            }
            table_ = std::make_unique<sweep::Table>(*table);
            x_.clear();
            const std::size_t col = table_->axes.size() - 1;
            for (const auto& row : table_->rows) {
                const auto x = job->x_of.find(row.values[col]);
                x_.push_back(x == job->x_of.end() ? NAN : x->second);
            }
            swept_ = job->param;
            policy_ = job->def.base.policy.name;
            def_ = std::make_unique<sweep::Definition>(job->def);
            save_->setEnabled(!db_.isEmpty());
            swept_log_ = job->log;
            swept_workload_ = job->workload;
            last_seconds_ = secs;
            export_->setEnabled(true);
            done_status_ =
                tr("%1 points × %2 = %3 runs in %4 s")
                    .arg(job->points.size())
                    .arg(job->def.seeds == 1 ? tr("1 seed") : tr("%1 seeds").arg(job->def.seeds))
                    .arg(job->points.size() * std::size_t(job->def.seeds))
                    .arg(secs, 0, 'f', 2);
            stale_.clear();
            redraw();
            checkSettings(); // the settings may have moved while it ran
            showStatus();
            Q_EMIT finished();
        });
    });
}

void SweepPanel::redraw() {
    if (!table_) return;
    auto column = [&](const std::string& m) {
        const auto it = std::find(table_->metrics.begin(), table_->metrics.end(), m);
        return it == table_->metrics.end() ? std::optional<std::size_t>()
                                           : std::size_t(it - table_->metrics.begin());
    };
    const std::string metric = metric_->currentData().toString().toStdString();
    const auto c = column(metric);
    if (!c) return;
    const std::string against = against_->currentData().toString().toStdString();
    const auto ac = against.empty() ? std::nullopt : column(against);
    // One curve per policy (the axis before the swept one, when the sweep compares).
    const auto curves = views::sweepCurves(*table_, x_, *c, ac ? &*ac : nullptr);
    if (ac) { // the trade-off
        std::vector<std::pair<double, double>> pts;
        for (const auto& cv : curves)
            for (std::size_t i = 0; i < cv.x.size(); ++i) pts.emplace_back(cv.x[i], cv.mean[i]);
        std::vector<std::pair<double, double>> front;
        for (std::size_t i :
             sweep::paretoFront(pts, sweep::higherIsBetter(against), sweep::higherIsBetter(metric)))
            front.push_back(pts[i]);
        chart_->setCapacityMarks({});
        chart_->setTradeoff(against_->currentText(), metric_->currentText(), curves, front);
        return;
    }
    QString label = swept_;
    for (const auto& p : params_)
        if (p.name == swept_) label = p.label;
    chart_->setCurves(label, metric_->currentText(), swept_log_, curves);
    // Several seeds and not one point with a spread: say why there is no band.
    const bool agree = def_ && def_->seeds > 1 && !chart_->hasSpread();
    if (agree != seeds_agree_) {
        seeds_agree_ = agree;
        showStatus();
    }
    // A rate sweep marks each policy's capacity (SLO attainment >= the target, as
    // kairos-cli capacity: run/capacity.h).
    capacities_.clear();
    std::vector<views::SweepChart::CapacityMark> marks;
    QStringList named; // the policy of each mark
    const auto g = column("slo_attainment");
    if (swept_ == "rate" && g) {
        // The workload's own offered rate (x 1), from the window's run at its rate factor:
        // a capacity in req/s beside the factor the axis shows.
        double base_rate = NAN;
        if (const RunKnob* knob = findRunKnob("rate"); knob && shown_) {
            const SweepBase b = base_();
            const double now = knob->get(b.spec, b.profile.kvCapacityTokens());
            if (now > 0) base_rate = shown_->summary.load.offered_rate / now;
        }
        const auto goodput = views::sweepCurves(*table_, x_, *g);
        for (std::size_t k = 0; k < goodput.size(); ++k) {
            // The policy's points in rate order, and the first fall below the target after
            // a point at or above it.
            std::vector<std::pair<double, double>> pts;
            for (std::size_t i = 0; i < goodput[k].x.size(); ++i)
                pts.emplace_back(goodput[k].x[i], goodput[k].mean[i]);
            std::sort(pts.begin(), pts.end());
            double cap = NAN;
            bool met = false;
            for (std::size_t i = 0; i < pts.size(); ++i) {
                if (pts[i].second >= kCapacityTarget) {
                    met = true;
                    continue;
                }
                if (met && i > 0) {
                    const auto [x0, y0] = pts[i - 1];
                    const auto [x1, y1] = pts[i];
                    cap = y0 == y1 ? x0 : x0 + (x1 - x0) * (y0 - kCapacityTarget) / (y0 - y1);
                    break;
                }
            }
            const std::string who =
                table_->axes.size() > 1 ? goodput[k].name.toStdString() : policy_;
            capacities_.emplace_back(who, cap);
            if (std::isfinite(cap)) {
                marks.push_back({cap, curves[k].color, QString()});
                named.push_back(QString::fromStdString(who));
            }
        }
        // One legend entry per capacity, naming every policy at it: four policies at the
        // same rate read as four entries for one line (the others hidden under the last).
        for (std::size_t i = 0; i < marks.size(); ++i) {
            const QString value = QString::number(marks[i].x, 'g', 3);
            QStringList who;
            bool first = true;
            for (std::size_t j = 0; j < marks.size(); ++j)
                if (QString::number(marks[j].x, 'g', 3) == value) {
                    who << named[j];
                    first = first && j >= i;
                }
            if (!first) continue; // named with an earlier mark at the same value
            marks[i].label = tr("%1 capacity ≈ %2×%3")
                                 .arg(who.join(QStringLiteral(", ")), value,
                                      std::isfinite(base_rate)
                                          ? tr(", %1 req/s").arg(marks[i].x * base_rate, 0, 'g', 3)
                                          : QString());
        }
    }
    chart_->setCapacityMarks(marks);
    for (const auto& p : params_)
        if (p.name == swept_) chart_->setMarker(p.value);
    placeShownRun();
}

void SweepPanel::chooseStored() {
    const QString db = db_;
    jobs_->start(QStringLiteral("sweeps"), this, [this, db](JobTracker::Job&) {
        std::vector<store::SweepInfo> all;
        QString error;
        try {
            all = store::Store(db.toStdString(), store::Store::Open::Existing).listSweeps();
        } catch (const std::exception& e) {
            error = QString::fromUtf8(e.what());
        }
        return std::function<void()>([this, db, all, error] {
            if (!error.isEmpty()) {
                plainStatus(tr("No stored sweeps: %1").arg(error));
                return;
            }
            QStringList items;
            for (const auto& w : all)
                items << tr("%1: %2 (%3 runs, %4)")
                             .arg(w.id)
                             .arg(QString::fromStdString(w.name))
                             .arg(w.runs)
                             .arg(QString::fromStdString(w.created_at.substr(0, 16)));
            if (items.isEmpty()) {
                plainStatus(tr("No stored sweeps in %1").arg(db));
                return;
            }
            bool ok = false;
            const QString pick = QInputDialog::getItem(this, tr("Open a stored sweep"),
                                                       tr("Sweep:"), items, 0, false, &ok);
            if (ok) open(pick.section(':', 0, 0).toLongLong());
        });
    });
}

void SweepPanel::save(const QString& name) {
    if (!table_ || !def_ || db_.isEmpty()) {
        Q_EMIT saved(0);
        return;
    }
    // The definition, plus how the workbench draws it: the swept slider and each row's
    // value on it (a rate sweep's specs carry factors on the shown workload).
    nlohmann::json def = def_->toJson();
    def["workbench"] = {
        {"param", swept_.toStdString()}, {"log", swept_log_}, {"policy", policy_}, {"x", x_}};
    // The workload was the window's, in memory: say which, for whoever reads the store.
    def["base"]["workload"]["path"] = "workbench: " + def_->base.workload.path;
    const std::string def_json = def.dump(), table_json = table_->toJson().dump();
    const QString db = db_;
    jobs_->start(
        QStringLiteral("save sweep"), this,
        [this, db, name, def_json, table_json](JobTracker::Job&) {
            std::int64_t id = 0;
            QString error;
            try {
                store::Store st(db.toStdString());
                std::vector<store::SweepRun> none; // the table holds the numbers
                id = st.putSweep(name.toStdString(), def_json, table_json, none);
            } catch (const std::exception& e) {
                error = QString::fromUtf8(e.what());
            }
            return std::function<void()>([this, db, id, error] {
                plainStatus(id ? tr("Saved as sweep %1 in %2").arg(id).arg(db)
                               : tr("Cannot save: %1").arg(error));
                Q_EMIT saved(id);
            });
        },
        JobTracker::Keep::All);
}

void SweepPanel::open(std::int64_t id) {
    const QString db = db_;
    jobs_->start(QStringLiteral("open sweep"), this, [this, db, id](JobTracker::Job&) {
        // Read and parse here; shown on the GUI thread.
        struct Opened {
            std::unique_ptr<sweep::Table> table;
            std::vector<double> x;
            QString param, error, status;
            bool log = false;
            std::string policy;
        };
        auto o = std::make_shared<Opened>();
        try {
            const store::Store st(db.toStdString(), store::Store::Open::Existing);
            const auto w = st.sweep(id);
            if (!w)
                throw std::invalid_argument("no sweep " + std::to_string(id) + " in " +
                                            db.toStdString());
            const auto def = parseJsonDocument(w->definition_json, db.toStdString());
            o->table = std::make_unique<sweep::Table>(sweep::Table::fromJson(
                parseJsonDocument(w->results_json, db.toStdString()), db.toStdString()));
            if (def.contains("workbench")) {
                const auto& wb = def.at("workbench");
                o->param = QString::fromStdString(wb.at("param").get<std::string>());
                o->log = wb.at("log").get<bool>();
                o->policy = wb.at("policy").get<std::string>();
                for (const auto& v : wb.at("x"))
                    o->x.push_back(v.is_number() ? v.get<double>() : NAN);
            } else {
                // A sweep from kairos-cli: its last axis is the x axis (a policy or profile
                // axis by position).
                o->param =
                    QString::fromStdString(o->table->axes.empty() ? "" : o->table->axes.back());
                o->x = o->table->lastAxisNumbers();
                o->policy = def.at("base").at("policy").at("name").get<std::string>();
            }
            if (o->x.size() != o->table->rows.size())
                throw std::invalid_argument("the stored sweep's rows and values do not match");
            o->status = tr("Stored sweep %1: %2 (%3 runs, %4)")
                            .arg(w->id)
                            .arg(QString::fromStdString(w->name))
                            .arg(w->runs)
                            .arg(QString::fromStdString(w->created_at));
        } catch (const std::exception& e) {
            o->error = QString::fromUtf8(e.what());
        }
        return std::function<void()>([this, id, o] {
            if (!o->error.isEmpty()) {
                plainStatus(tr("Cannot open sweep %1: %2").arg(id).arg(o->error));
                Q_EMIT opened(id, false);
                return;
            }
            table_ = std::move(o->table);
            x_ = std::move(o->x);
            swept_ = o->param;
            swept_log_ = o->log;
            policy_ = o->policy;
            def_.reset(); // stored: the window's settings are not compared with it
            swept_workload_.reset();
            stale_.clear();
            save_->setEnabled(false);
            export_->setEnabled(true);
            done_status_ = o->status;
            redraw();
            showStatus();
            Q_EMIT opened(id, true);
        });
    });
}

bool SweepPanel::exportTo(const QString& path) {
    if (!table_) return false;
    if (path.endsWith(QStringLiteral(".html"), Qt::CaseInsensitive)) {
        // The report: every metric charted against the slider's values, and the table.
        std::vector<QString> settings;
        settings.push_back(tr("swept: %1").arg(swept_));
        if (def_) {
            settings.push_back(tr("policy: %1, predictor %2")
                                   .arg(QString::fromStdString(def_->base.policy.name),
                                        QString::fromStdString(def_->base.policy.predictor)));
            settings.push_back(tr("seeds per point: %1 (the band: the 95 % interval of the mean)")
                                   .arg(def_->seeds));
        }
        const std::vector<std::string> charted = {"goodput_fraction", "p99_ttft_ms", "mean_e2el_ms",
                                                  "request_throughput", "preemptions"};
        const QString html =
            views::sweepReportHtml(tr("Kairos sweep of %1").arg(swept_), settings, *table_, x_,
                                   swept_.toStdString(), swept_log_, charted);
        views::writeOutputFile(path, html.toUtf8());
        return true;
    }
    if (path.endsWith(QStringLiteral(".csv"), Qt::CaseInsensitive)) {
        // The swept column as the slider shows it (the rate slider's factor, the KV
        // slider's multiple), not as the run specs carry it.
        sweep::Table t = *table_;
        t.axes.back() = swept_.toStdString();
        for (std::size_t r = 0; r < t.rows.size(); ++r)
            t.rows[r].values.back() = sweep::formatValue(x_[r]);
        views::writeOutputFile(path, QByteArray::fromStdString(t.csv()));
        return true;
    }
    chart_->saveAs(path);
    return true;
}

void SweepPanel::exportFile(const QString& filter) {
    if (!table_) return;
    const QString ext = filter.contains("csv")    ? "csv"
                        : filter.contains("svg")  ? "svg"
                        : filter.contains("html") ? "html"
                                                  : "png";
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export the sweep"),
        views::dialogPath(QStringLiteral("export"), QStringLiteral("sweep_%1.%2").arg(swept_, ext)),
        filter);
    if (path.isEmpty()) return;
    views::rememberDialogChoice(QStringLiteral("export"), path);
    try {
        if (!exportTo(path)) return;
    } catch (const std::exception& e) {
        QMessageBox::warning(this, tr("Export"),
                             tr("Nothing was written: %1").arg(QString::fromStdString(e.what())));
        return;
    }
    plainStatus(tr("Exported to %1").arg(path));
}

} // namespace kairos::app
