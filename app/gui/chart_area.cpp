#include "chart_area.h"

#include "chart_tools.h"
#include "find_bar.h"
#include "inspector_panel.h"
#include "kv_chart.h"
#include "latency_chart.h"
#include "lod/timeline.h"
#include "metrics/range_summary.h"
#include "sim_runner.h"
#include "time_range.h"
#include "timeline_view.h"
#include "tuf_chart.h"
#include "workbench_state.h"

#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QTextEdit>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace kairos::app {

namespace {
// A one-line label's whole text (its "fullText" property), elided to the label's width less
// `margins` (its padding).
void elideToWidth(QLabel* label, int margins) {
    label->setText(label->fontMetrics().elidedText(label->property("fullText").toString(),
                                                   Qt::ElideRight,
                                                   std::max(50, label->width() - margins)));
}
} // namespace

ChartArea::ChartArea(WorkbenchState* state, QWidget* parent) : QWidget(parent), state_(state) {
    timeline_ = new views::TimelineView(state_->range());
    kv_ = new views::KvChart(state_->range());
    latency_ = new views::LatencyChart;
    tuf_ = new views::TufChart;
    tabs_ = new QTabWidget;
    tabs_->setObjectName(QStringLiteral("charts"));
    tabs_->addTab(kv_, tr("&KV memory"));
    tabs_->addTab(latency_, tr("&Latency CDFs"));
    tabs_->addTab(tuf_, tr("&Utility (TUF)"));
    find_ = new FindBar(state_, timeline_);
    connect(find_, &FindBar::rowsWanted, this, &ChartArea::applyRows);
    // Another workload opened: the rows shown are the last one's until its first run.
    connect(state_, &WorkbenchState::workloadChanged, this, [this] {
        if (state_->run() && state_->run()->workload != state_->workload())
            timeline_->setStale(tr("simulating %1…").arg(state_->workloadName()));
    });
    connect(state_, &WorkbenchState::runFailed, this, [this] {
        if (!timeline_->staleNote().isEmpty())
            timeline_->setStale(tr("%1 could not be simulated (the status bar says why); the "
                                   "rows are the last workload's")
                                    .arg(state_->workloadName()));
    });
    auto* top = new QWidget;
    auto* tv = new QVBoxLayout(top);
    tv->setContentsMargins(0, 0, 0, 0);
    tv->setSpacing(0);
    tv->addWidget(find_);
    // The ruler selection's summary (drag on the timeline's ruler; Esc or a click there
    // clears it), as Perfetto's area selection: one line above the tracks, so they keep
    // their height, and every figure in the Selection tab below.
    range_bar_ = new QWidget;
    range_bar_->setObjectName(QStringLiteral("rangeBar"));
    auto* rb = new QHBoxLayout(range_bar_);
    rb->setContentsMargins(6, 2, 6, 2);
    range_info_ = new QLabel;
    range_info_->setObjectName(QStringLiteral("rangeSummary"));
    range_info_->setTextFormat(Qt::PlainText);
    range_info_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    range_info_->installEventFilter(this); // elided again on every resize
    rb->addWidget(range_info_, 1);
    auto* more = new QLabel(tr("<a href=\"details\">details</a> · Esc clears"));
    more->setObjectName(QStringLiteral("rangeDetailsLink"));
    more->setToolTip(tr("Every figure of the selection, in the Selection tab below"));
    connect(more, &QLabel::linkActivated, this, &ChartArea::showSelectionDetails);
    rb->addWidget(more);
    range_bar_->setVisible(false);
    tv->addWidget(range_bar_);
    tv->addWidget(timeline_, 1);
    details_ = new QTreeWidget;
    details_->setObjectName(QStringLiteral("selectionDetails"));
    details_->setColumnCount(2);
    details_->setHeaderLabels({tr("in the selection"), tr("value")});
    details_->setRootIsDecorated(false);
    details_->setUniformRowHeights(true);
    details_->header()->setStretchLastSection(false);
    details_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    details_->setParent(this); // owned here while it is not a tab
    details_->hide();
    connect(state_->range(), &views::TimeRange::selectionChanged, this,
            &ChartArea::refreshRangeSummary);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(top);
    split->addWidget(tabs_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({600, 230});
    // Above the charts, the load the run was under (core/metrics/load.h decides): overloaded
    // (its numbers describe a queue that grows without bound, not a service level), near
    // saturation, or keeping up. One line, always there once a run is shown, so the
    // timeline does not jump when a slider moves a run across the threshold; the whole
    // verdict is its tooltip.
    banner_ = new QLabel;
    banner_->setObjectName(QStringLiteral("loadBanner"));
    banner_->setWordWrap(false);
    banner_->setTextFormat(Qt::PlainText);
    banner_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    banner_->setVisible(false);
    auto* cv = new QVBoxLayout(this);
    cv->setContentsMargins(0, 0, 0, 0);
    cv->setSpacing(2);
    cv->addWidget(banner_);
    hint_ = new QLabel;
    hint_->setObjectName(QStringLiteral("sliderHint"));
    hint_->setWordWrap(false);
    hint_->setTextFormat(Qt::PlainText);
    hint_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    hint_->setStyleSheet(QStringLiteral("QLabel { color: palette(dark); padding: 0px 9px; }"));
    hint_->setVisible(false);
    hint_->installEventFilter(this);
    cv->addWidget(hint_);
    cv->addWidget(split, 1);
    kv_->setPlotMargins(views::TimelineView::kGutter,
                        timeline_->style()->pixelMetric(QStyle::PM_ScrollBarExtent));
    connect(timeline_, &views::TimelineView::plotGeometryChanged, this, &ChartArea::alignTimeAxes);
    kv_->installEventFilter(this);
    banner_->installEventFilter(this);
    tabs_->installEventFilter(this);
    // Every chart: right click > Export chart as SVG or PNG (exportChart).
    savers_[QStringLiteral("timeline")] = [this](const QString& path) {
        views::saveDrawing(
            path, timeline_->viewport()->size(), [this](QPainter& p, const QRect& r) {
                p.fillRect(r, timeline_->palette().color(QPalette::Base));
                timeline_->render(p, r, timeline_->verticalScrollBar()->value(), false);
            });
    };
    auto plot = [](QCustomPlot* c) {
        return [c](const QString& path) { views::saveChart(c, path); };
    };
    savers_[QStringLiteral("kv_memory")] = plot(kv_);
    savers_[QStringLiteral("latency_cdfs")] = plot(latency_);
    savers_[QStringLiteral("utility")] = plot(tuf_);
    views::addChartExport(timeline_, QStringLiteral("timeline"), savers_["timeline"]);
    views::addChartExport(kv_, QStringLiteral("kv_memory"));
    views::addChartExport(latency_, QStringLiteral("latency_cdfs"));
    views::addChartExport(tuf_, QStringLiteral("utility"));
    agent_action_ = new QAction(tr("Rows per &agent"), this);
    agent_action_->setCheckable(true);
    agent_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    agent_action_->setToolTip(
        tr("One row per agent (robot workloads): its requests packed into lanes"));
    agent_action_->setEnabled(false);
    connect(agent_action_, &QAction::toggled, this, &ChartArea::setAgentRows);
}

void ChartArea::alignTimeAxes() {
    if (!kv_->isVisible() || !timeline_->isVisible()) return;
    const QRect plot = timeline_->plotRect();
    const int tl_left = timeline_->viewport()->mapTo(this, plot.topLeft()).x();
    const int tl_right = timeline_->viewport()->mapTo(this, plot.topRight()).x() + 1;
    const int kv_left = kv_->mapTo(this, QPoint(0, 0)).x();
    kv_->setPlotMargins(std::max(0, tl_left - kv_left),
                        std::max(0, kv_left + kv_->width() - tl_right));
    kv_->replot(QCustomPlot::rpQueuedReplot);
}

bool ChartArea::eventFilter(QObject* watched, QEvent* e) {
    if (e->type() == QEvent::KeyPress && routeTrackKey(watched, static_cast<QKeyEvent*>(e)))
        return true;
    if (watched == banner_ && e->type() == QEvent::Resize) elideBanner(); // to its new width
    if (watched == hint_ && e->type() == QEvent::Resize) elideToWidth(hint_, 18);
    if (watched == range_info_ && e->type() == QEvent::Resize) elideRangeLine();
    if ((watched == kv_ || watched == tabs_) &&
        (e->type() == QEvent::Resize || e->type() == QEvent::Show || e->type() == QEvent::Move))
        alignTimeAxes();
    return QWidget::eventFilter(watched, e);
}

QString ChartArea::loadStripText() const {
    return banner_->isVisible() ? banner_->property("fullText").toString() : QString();
}

void ChartArea::setHint(const QString& text) {
    hint_->setProperty("fullText", text);
    hint_->setToolTip(text);
    hint_->setVisible(!text.isEmpty());
    elideToWidth(hint_, 18);
}

QString ChartArea::hintText() const {
    return hint_->property("fullText").toString();
}

QString ChartArea::rangeSummaryText() const {
    return state_->range()->hasSelection() ? range_info_->toolTip() : QString();
}

QString ChartArea::rangeSummaryLine() const {
    return state_->range()->hasSelection() ? range_info_->text() : QString();
}

QWidget* ChartArea::selectionTab() const {
    return tabs_->indexOf(details_) >= 0 ? details_ : nullptr;
}

void ChartArea::showSelectionDetails() {
    if (selectionTab()) tabs_->setCurrentWidget(details_);
}

void ChartArea::elideRangeLine() {
    elideToWidth(range_info_, 4);
}

void ChartArea::refreshRangeSummary() {
    const views::TimeRange* range = state_->range();
    const RunView* r = state_->run().get();
    if (!range->hasSelection() || !r || !r->rows || !r->requests) {
        range_bar_->setVisible(false);
        range_info_->clear();
        range_info_->setToolTip({});
        if (const int i = tabs_->indexOf(details_); i >= 0) {
            // Back to the chart it was opened from, not to whichever tab follows it.
            if (tabs_->currentIndex() == i) tabs_->setCurrentIndex(0);
            tabs_->removeTab(i);
            details_->setParent(this);
            details_->hide();
        }
        details_->clear();
        return;
    }
    const RangeSummary s = summarizeRange(*r->log, *r->rows, *r->requests,
                                          r->kv ? *r->kv : std::vector<std::pair<double, double>>{},
                                          range->selectionFrom(), range->selectionTo());
    range_info_->setProperty("fullText", QString::fromStdString(kairos::rangeSummaryLine(s)));
    range_info_->setToolTip(QString::fromStdString(kairos::rangeSummaryText(s)));
    elideRangeLine();
    range_bar_->setVisible(true);
    details_->clear();
    QTreeWidgetItem* group = nullptr;
    for (const RangeDetail& d : rangeSummaryDetails(s)) {
        const QString name = QString::fromStdString(d.group);
        if (!group || group->text(0) != name) {
            group = new QTreeWidgetItem(details_, {name});
            QFont bold = group->font(0);
            bold.setBold(true);
            group->setFont(0, bold);
            group->setFirstColumnSpanned(true);
        }
        auto* row = new QTreeWidgetItem(
            group, {QString::fromStdString(d.name), QString::fromStdString(d.value)});
        row->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    }
    details_->expandAll();
    // Each value beside its name (a stretched value column put them 500 px apart).
    details_->resizeColumnToContents(0);
    details_->resizeColumnToContents(1);
    if (tabs_->indexOf(details_) < 0) tabs_->addTab(details_, tr("&Selection"));
}

QString ChartArea::loadText(const RunView& r) {
    const LoadReport& load = r.summary.load;
    // Served over the whole run, its decode tail included, which the offered rate's span
    // is not: "Keeps up: 1.78 req/s offered, 1.3 req/s served" read as a contradiction.
    const QString rates =
        tr("%1 req/s offered, %2 req/s served over the whole run, its tail included")
            .arg(load.offered_rate, 0, 'g', 3)
            .arg(r.summary.request_throughput, 0, 'g', 3);
    // The core's verdict without its leading word, which the strip says in its own.
    const QString verdict = QString::fromStdString(loadEvidence(load));
    // Requests killed or dropped lead, whatever the band: "Keeps up" with 168 of 540 killed
    // read as a run that served its load (an outside new-user test's item). Most killed is
    // the band of its own (sheds load).
    const std::string killed = killedPhrase(load);
    const QString kills =
        killed.empty() ? QString() : QStringLiteral(", but ") + QString::fromStdString(killed);
    switch (loadBand(load)) {
    case LoadBand::NoVerdict:
        // (The evidence may say it has none itself: "No load verdict: No verdict: ...".)
        return verdict.startsWith(QLatin1String("No verdict"), Qt::CaseInsensitive)
                   ? verdict + kills
                   : tr("No load verdict%1: %2").arg(kills, verdict);
    case LoadBand::Overloaded:
        return tr("Overloaded: %1. %2. Latencies of a run like this grow with its length; "
                  "lower the rate or add capacity to measure a service level.")
            .arg(rates, verdict);
    case LoadBand::NearSaturation:
        // The band's own bounds (load.h): "overloaded above 1" read as a contradiction of
        // a score of 1.10 called near.
        return tr("Near saturation (the queue's largest rise is %1 of its noise threshold; "
                  "near from %2, overloaded above %3)%6: %4. %5.")
            .arg(load.score, 0, 'f', 2)
            .arg(kNearSaturation.first, 0, 'g', 3)
            .arg(kNearSaturation.second, 0, 'g', 3)
            .arg(rates, verdict, kills);
    case LoadBand::ShedsLoad:
        return tr("Sheds load: %1 of %2 requests were killed or dropped before finishing; the "
                  "latencies describe the rest. %3. The queue alone: %4.")
            .arg(load.killed)
            .arg(load.arrivals)
            .arg(rates, verdict.isEmpty() ? tr("no verdict") : verdict);
    case LoadBand::KeepsUp:
        break;
    }
    return tr("Keeps up%3: %1. %2.").arg(rates, verdict, kills);
}

QString ChartArea::bannerText(const RunView& r) {
    // The load's words, and what requests got beside it: the finished ones that missed an
    // SLO of the window's goodput (the TTFT and TPOT sliders).
    QString text = loadText(r);
    const LoadReport& load = r.summary.load;
    if (load.slo_missed > 0)
        text += tr(" %1 of %2 finished requests missed an SLO.")
                    .arg(load.slo_missed)
                    .arg(load.finished);
    return text;
}

void ChartArea::elideBanner() {
    elideToWidth(banner_, 20);
}

void ChartArea::showRun(const RunView& r) {
    const QString text = bannerText(r);
    const LoadBand band = loadBand(r.summary.load);
    const bool over = band == LoadBand::Overloaded || band == LoadBand::ShedsLoad,
               near = band == LoadBand::NearSaturation || r.summary.load.killed > 0;
    banner_->setStyleSheet(
        over   ? QStringLiteral("QLabel { background: #fff1d6; color: #6b4300; border: 1px solid "
                                  "#e0a040; padding: 2px 8px; }")
        : near ? QStringLiteral("QLabel { background: #fffbe6; color: #5c4a00; border: 1px solid "
                                "#e8d27a; padding: 2px 8px; }")
               : QStringLiteral("QLabel { color: palette(text); border: 1px solid palette(mid); "
                                "padding: 2px 8px; }"));
    banner_->setToolTip(text);
    banner_->setProperty("fullText", text);
    elideBanner();
    banner_->setVisible(true);
    // A fleet's KV is its replicas' together, against their capacity together (with the
    // decode pool on other hardware, each pool's replicas at its own capacity).
    double capacity = double(r.limits.kv_capacity_tokens) *
                      std::max(1, r.log ? int(r.log->replicas) : r.spec.fleet.replicas);
    if (r.log && r.log->disaggregated() && r.log->decode_kv_capacity_tokens > 0)
        capacity =
            double(r.limits.kv_capacity_tokens) * r.log->prefill_replicas +
            double(r.log->decode_kv_capacity_tokens) * (r.log->replicas - r.log->prefill_replicas);
    kv_->setRun(r.kv, capacity, r.preemptions, r.kv_held, r.kv_prefill);
    tuf_->setClasses(r.tufs);
    refreshComparison();
    refreshRangeSummary(); // the same stretch, in the new run
}

void ChartArea::followInspector(InspectorPanel* inspector) {
    connect(timeline_, &views::TimelineView::cursorMoved, inspector, &InspectorPanel::followCursor);
    connect(kv_, &views::KvChart::cursorMoved, inspector, &InspectorPanel::followCursor);
    connect(kv_, &views::KvChart::timeClicked, this, [this, inspector](double t) {
        inspector->inspectAt(t);
        Q_EMIT inspectorWanted();
    });
    connect(inspector, &InspectorPanel::timeChanged, this, [this](double t) {
        timeline_->setInspectedTime(t);
        kv_->setInspectedTime(t);
    });
    connect(inspector, &InspectorPanel::requestPicked, this, [this](int id, double t) {
        if (id < 0) return;
        state_->setSelection(id, t);
        timeline_->scrollToRequest(id);
    });
    connect(timeline_, &views::TimelineView::requestClicked, this, &ChartArea::inspectorWanted);
    connect(timeline_, &views::TimelineView::requestClicked, state_, &WorkbenchState::setSelection);
    // A match stepped to is a request picked, as a click on its row: its story shows (the
    // Policy panel scrolled to its card instead, the sliders out of view).
    connect(find_, &FindBar::stepped, this, &ChartArea::inspectorWanted);
    // M with no stretch selected zooms to the selected request's life (arrival to end).
    connect(state_, &WorkbenchState::selectionChanged, this, [this] {
        const auto& r = state_->run();
        const int id = state_->selectedRequest();
        double a = 0, b = 0;
        if (r && r->rows && id >= 0 && std::size_t(id) < r->rows->size()) {
            const lod::Row& row = (*r->rows)[std::size_t(id)];
            if (!row.spans.empty()) {
                a = row.spans.front().t0;
                b = row.spans.back().t1;
            }
        }
        state_->range()->setFocusSpan(a, b);
        // The request picked is outlined across its row, as Find's current match is: with
        // rows a pixel tall nothing showed which one a click had picked.
        if (timeline_->currentMark() != id) timeline_->setMarked(timeline_->marked(), id);
    });
    // W/A/S/D and M over the timeline or the KV chart without clicking it first (as in
    // Perfetto): a key meant for the time tracks reaches them while the pointer is over
    // them, unless the focus is somewhere that types.
    qApp->installEventFilter(this);
}

bool ChartArea::routeTrackKey(QObject* watched, QKeyEvent* e) {
    QWidget* focus = QApplication::focusWidget();
    if (watched != (focus ? static_cast<QObject*>(focus) : window())) return false;
    if (!isVisible() || (focus && focus->window() != window())) return false;
    if (focus == timeline_ || focus == timeline_->viewport() || focus == kv_) return false;
    if (qobject_cast<QLineEdit*>(focus) || qobject_cast<QAbstractSpinBox*>(focus) ||
        qobject_cast<QTextEdit*>(focus) || qobject_cast<QPlainTextEdit*>(focus))
        return false;
    if (auto* combo = qobject_cast<QComboBox*>(focus); combo && combo->isEditable()) return false;
    if (auto* view = qobject_cast<QAbstractItemView*>(focus);
        view && (view->editTriggers() & QAbstractItemView::AnyKeyPressed))
        return false;
    const QPoint g = QCursor::pos();
    double anchor = std::nan("");
    if (const QPoint at = timeline_->viewport()->mapFromGlobal(g);
        timeline_->viewport()->rect().contains(at) && timeline_->isVisible())
        anchor = timeline_->timeAtX(at.x());
    else if (const QPoint k = kv_->mapFromGlobal(g); kv_->rect().contains(k) && kv_->isVisible())
        anchor = kv_->xAxis->pixelToCoord(k.x());
    else
        return false;
    return state_->range()->handleKey(e, anchor);
}

void ChartArea::setAgentRows(bool on) {
    agent_rows_ = on;
    if (agent_action_->isChecked() != on) agent_action_->setChecked(on);
    applyRows();
}

views::TimelineView::FramePlan ChartArea::framePlan() const {
    if (find_->showsOnlyMatches()) return {}; // (agent lanes: planFrame says none)
    return timeline_->planFrame();
}

void ChartArea::applyRows() {
    agent_action_->setEnabled(state_->run() && state_->run()->agent_rows);
    if (!state_->run()) return;
    const bool lanes = agent_rows_ && state_->run()->agent_rows;
    if (find_->showsOnlyMatches() && !lanes) {
        // The matching requests' rows only (and the pinned run's same requests).
        auto rows = std::make_shared<std::vector<lod::Row>>();
        const bool pin = state_->pinnedComparable() && state_->pinned()->rows &&
                         state_->pinned()->rows->size() == state_->run()->rows->size();
        auto pinned = pin ? std::make_shared<std::vector<lod::Row>>() : nullptr;
        for (ReqId id : find_->filterMatches()) {
            rows->push_back((*state_->run()->rows)[std::size_t(id)]);
            if (pin) pinned->push_back((*state_->pinned()->rows)[std::size_t(id)]);
        }
        timeline_->setRows(std::move(rows), state_->run()->rows);
        timeline_->setPinnedRows(std::move(pinned));
        return;
    }
    timeline_->setRows(lanes ? state_->run()->agent_rows : state_->run()->rows,
                       state_->run()->rows);
    timeline_->setPinnedRows(state_->pinnedComparable() ? state_->pinned()->rows : nullptr);
}

namespace {
// "sprpt_lp(C=0.8, predictor=oracle)" as its name and its settings.
std::pair<QString, QStringList> policyParts(const std::string& policy) {
    const QString s = QString::fromStdString(policy);
    const int open = s.indexOf('(');
    if (open < 0 || !s.endsWith(')')) return {s, {}};
    QStringList items = s.mid(open + 1, s.size() - open - 2).split(QStringLiteral(", "));
    items.removeAll(QString());
    return {s.left(open), items};
}
} // namespace

QString ChartArea::pinnedName() const {
    const RunView* pinned = state_->pinned().get();
    if (!pinned) return {};
    // The policy, and where the shown run is the same policy, what sets the pinned one
    // apart: its parameters that differ, its KV capacity, seats and offered rate (two
    // sprpt_lp runs read "sprpt_lp C=0.163" and the shown one's C=0.8, not both "sprpt_lp").
    const auto [name, items] = policyParts(pinned->summary.policy);
    QStringList differ;
    if (const RunView* run = state_->run().get()) {
        const auto [run_name, run_items] = policyParts(run->summary.policy);
        if (run_name == name)
            for (const QString& item : items)
                if (!run_items.contains(item)) differ << item;
        if (pinned->limits.kv_capacity_tokens != run->limits.kv_capacity_tokens)
            differ << tr("KV %L1").arg(qlonglong(pinned->limits.kv_capacity_tokens));
        if (pinned->limits.max_num_seqs != run->limits.max_num_seqs)
            differ << tr("seats %1").arg(pinned->limits.max_num_seqs);
        const double a = pinned->summary.load.offered_rate, b = run->summary.load.offered_rate;
        if (std::isfinite(a) && std::isfinite(b) && std::abs(a - b) > 1e-3 * std::max(a, b))
            differ << tr("%1 req/s").arg(a, 0, 'g', 3);
    }
    const QString who = differ.isEmpty() ? name : name + QLatin1Char(' ') + differ.join(", ");
    return state_->pinnedStoredId() >= 0 ? tr("run %1 %2").arg(state_->pinnedStoredId()).arg(who)
                                         : tr("pinned %1").arg(who);
}

nlohmann::json ChartArea::viewJson() const {
    return {{"tab", tabs_->currentIndex()},         {"agent_rows", agent_rows_},
            {"from", state_->range()->from()},      {"to", state_->range()->to()},
            {"row_height", timeline_->rowHeight()}, {"filter", find_->text().toStdString()},
            {"only_matches", find_->onlyMatches()}};
}

void ChartArea::restoreView(const nlohmann::json& v) {
    try {
        tabs_->setCurrentIndex(v.value("tab", 0));
        setAgentRows(v.value("agent_rows", false));
        if (v.contains("from") && v.contains("to"))
            state_->range()->setRange(v.at("from").get<double>(), v.at("to").get<double>());
        if (v.contains("row_height")) timeline_->setRowHeight(v.at("row_height").get<double>());
        find_->setOnlyMatches(v.value("only_matches", false));
        find_->setFilter(QString::fromStdString(v.value("filter", std::string())));
    } catch (const std::exception&) {
        // A view field of the wrong type: the view stays as it is.
    }
}

void ChartArea::addChart(const QString& name, std::function<void(const QString&)> save) {
    savers_[name] = std::move(save);
}

QStringList ChartArea::chartNames() const {
    QStringList names;
    for (const auto& [name, save] : savers_) names << name;
    return names;
}

bool ChartArea::exportChart(const QString& chart, const QString& path, QString* error) const {
    const auto it = savers_.find(chart);
    if (it == savers_.end()) {
        if (error) *error = tr("no chart named %1").arg(chart);
        return false;
    }
    try {
        it->second(path);
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
    return true;
}

void ChartArea::refreshComparison() {
    // (A pinned run of another workload was dropped by the state when the run came.)
    // The lower lane compares request by request: only for a run of the same workload
    // (applyRows; with "only matches", the pinned run's same requests).
    applyRows();
    kv_->setPinned(state_->pinned() ? state_->pinned()->kv : nullptr);
    if (!state_->run()) return;
    std::vector<views::CdfSeries> cdfs{
        {tr("TTFT"), QColor(0xf5, 0xa6, 0x23), state_->run()->cdf_ttft},
        {tr("TPOT"), QColor(0x9b, 0x59, 0xb6), state_->run()->cdf_tpot},
        {tr("E2EL"), QColor(0x2f, 0x80, 0xed), state_->run()->cdf_e2el}};
    if (state_->pinned()) { // dashed, named by the pinned run's policy
        const QString who = pinnedName();
        cdfs.push_back(
            {tr("TTFT, %1").arg(who), QColor(0xf5, 0xa6, 0x23), state_->pinned()->cdf_ttft, true});
        cdfs.push_back(
            {tr("TPOT, %1").arg(who), QColor(0x9b, 0x59, 0xb6), state_->pinned()->cdf_tpot, true});
        cdfs.push_back(
            {tr("E2EL, %1").arg(who), QColor(0x2f, 0x80, 0xed), state_->pinned()->cdf_e2el, true});
    }
    latency_->setSeries(cdfs);
    // The goodput SLOs the shown run was measured against, on the CDFs they judge.
    std::vector<views::LatencyChart::Slo> slos;
    if (const auto& g = state_->run()->summary_options.goodput; g.ttft_ms)
        slos.push_back({tr("TTFT SLO"), QColor(0xf5, 0xa6, 0x23), *g.ttft_ms});
    if (const auto& g = state_->run()->summary_options.goodput; g.tpot_ms)
        slos.push_back({tr("TPOT SLO"), QColor(0x9b, 0x59, 0xb6), *g.tpot_ms});
    if (const auto& g = state_->run()->summary_options.goodput; g.e2el_ms)
        slos.push_back({tr("E2EL SLO"), QColor(0x2f, 0x80, 0xed), *g.e2el_ms});
    latency_->setSlos(slos);
}

} // namespace kairos::app
