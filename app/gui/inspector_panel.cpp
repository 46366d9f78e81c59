#include "inspector_panel.h"

#include "chart_style.h"
#include "chart_tools.h"
#include "column_menu.h"
#include "metrics/waits.h"
#include "sched/timebill.h"
#include "scrolling.h"
#include "workbench_state.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QThreadPool>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <qcustomplot.h>
#include <utility>

namespace kairos::app {

namespace {

QString num(double v, int digits = 5) {
    if (std::isnan(v)) return QStringLiteral("–");
    if (std::isinf(v)) return v > 0 ? QStringLiteral("∞") : QStringLiteral("−∞");
    return QString::number(v, 'g', digits);
}

const char* const kSections[] = {"running", "waiting", "suspended"};

} // namespace

void SchedulerViewModel::setView(SchedulerView v, QString key_name) {
    beginResetModel();
    v_ = std::move(v);
    key_name_ = std::move(key_name);
    endResetModel();
}

const ViewRow* SchedulerViewModel::rowAt(int row, int* section) const {
    if (row < 0) return nullptr;
    std::size_t r = static_cast<std::size_t>(row);
    const std::vector<ViewRow>* parts[] = {&v_.running, &v_.waiting, &v_.suspended};
    for (int s = 0; s < 3; ++s) {
        if (r < parts[s]->size()) {
            if (section) *section = s;
            return &(*parts[s])[r];
        }
        r -= parts[s]->size();
    }
    return nullptr;
}

int SchedulerViewModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(v_.running.size() + v_.waiting.size() + v_.suspended.size());
}

int SchedulerViewModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SchedulerViewModel::data(const QModelIndex& index, int role) const {
    int section = 0;
    const ViewRow* r = rowAt(index.row(), &section);
    if (!r) return {};
    if (role == Qt::TextAlignmentRole)
        return index.column() == State ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                       : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && index.column() == TrueRem && r->output < 0)
        return QColor(0x80, 0x80, 0x80);
    if (role == Qt::ToolTipRole && index.column() == TrueRem && r->output < 0)
        return tr("it was killed: its true length is not known");
    if (role == Qt::ToolTipRole) // the columns a narrow dock hides, a hover away
        return tr("%1, row %2: prompt %3 tokens, arrived at %4 s, in this state since %5 s")
            .arg(w_ ? QString::fromStdString(w_->label(std::size_t(r->req)))
                    : tr("request %1").arg(r->req))
            .arg(r->req)
            .arg(r->prompt)
            .arg(r->arrival, 0, 'f', 3)
            .arg(r->since, 0, 'f', 3);
    if (role != Qt::DisplayRole) return {};
    // Position within its section (the queue's order is the policy's).
    int pos = index.row();
    if (section >= 1) pos -= int(v_.running.size());
    if (section >= 2) pos -= int(v_.waiting.size());
    switch (index.column()) {
    case State:
        return QString::fromLatin1(kSections[section]);
    case Pos:
        return pos + 1;
    case Req:
        return w_ ? QVariant::fromValue<qlonglong>(w_->idOf(std::size_t(r->req)))
                  : QVariant(r->req);
    case Arrival:
        return QString::number(r->arrival, 'f', 3);
    case Since:
        return QString::number(r->since, 'f', 3);
    case Prompt:
        return r->prompt;
    case Generated:
        return r->generated;
    case Predicted:
        return num(r->predicted);
    case TrueRem:
        return num(r->trueRemaining());
    case Key:
        return num(r->key, 6);
    case Slack:
        return std::isnan(r->deadline) ? QStringLiteral("–") : num(r->deadline - v_.t, 4);
    case Alpha:
        return num(r->alpha, 3);
    case Wcet:
        return num(r->wcet, 4);
    case Replica:
        return int(r->replica);
    default:
        return {};
    }
}

QVariant SchedulerViewModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal) return {};
    static const char* const names[] = {
        "state",     "#", "id",       "generated", "pred. rem.",  "true rem.", "key",
        "slack (s)", "α", "WCET (s)", "prompt",    "arrival (s)", "since (s)", "replica"};
    static const char* const tips[] = {
        "running: in the batch (admission order); waiting: queued, in the policy's order; "
        "suspended: paused with its KV kept",
        "position in its section (the queue's order is the policy's)",
        "the request's id in the trace (its row in the row's tooltip)",
        "tokens generated so far",
        "the policy's predicted remaining tokens (at its latest look, counted down since)",
        "true remaining tokens (from its finish; unknown if it was killed)",
        "the policy's key",
        "time to its deadline (negative: late)",
        "KV eviction ratio chosen (TimeBill)",
        "worst-case execution time planned (TimeBill)",
        "prompt tokens",
        "arrival time",
        "when it entered this state",
        "the replica the router sent it to (a fleet's run)"};
    if (section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) return QString::fromUtf8(names[section]);
    if (role == Qt::ToolTipRole)
        return section == Key && !key_name_.isEmpty() ? tr("the policy's key: %1").arg(key_name_)
                                                      : QString::fromUtf8(tips[section]);
    return {};
}

InspectorPanel::InspectorPanel(QWidget* parent) : QWidget(parent) {
    has_data_.fill(true); // until a view says otherwise
    auto* top = new QWidget;
    auto* tv = new QVBoxLayout(top);
    // Narrow side margins: the instant, its arrows and Follow are the panel's least width
    // (223 px with 4 px margins, over the 220 the timeline's 60 % leaves at 1366x768).
    tv->setContentsMargins(2, 4, 2, 0);
    auto* bar = new QHBoxLayout;
    prev_ = new QToolButton;
    prev_->setArrowType(Qt::LeftArrow);
    prev_->setToolTip(tr("The decision before (Ctrl+,)"));
    next_ = new QToolButton;
    next_->setArrowType(Qt::RightArrow);
    next_->setToolTip(tr("The next decision (Ctrl+.)"));
    title_ = new QLabel(tr("No run"));
    title_->setObjectName(QStringLiteral("inspectorTitle"));
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Elided by the layout rather than widening the panel: the timeline keeps 60 % of the
    // window (MainWindow::keepTimelineWide); the whole line is its tooltip.
    title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    title_->setMinimumWidth(60);
    follow_ = new QCheckBox(tr("Follow"));
    follow_->setObjectName(QStringLiteral("inspectorFollow"));
    follow_->setChecked(true);
    follow_->setToolTip(tr("Show the scheduler at the time under the mouse on the timeline or "
                           "the KV chart; stepping turns it off"));
    bar->addWidget(prev_);
    bar->addWidget(next_);
    bar->addWidget(title_, 1);
    bar->addWidget(follow_);
    tv->addLayout(bar);
    summary_ = new QLabel;
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    tv->addWidget(summary_);
    decisions_ = new QListWidget;
    decisions_->setObjectName(QStringLiteral("inspectorDecisions"));
    decisions_->setToolTip(tr("The last decision at or before t that acted: each action with "
                              "the rule that fired and its numbers (double-click: its request)"));
    decisions_->setMaximumHeight(120);
    decisions_->setWordWrap(true);
    tv->addWidget(decisions_);
    model_ = new SchedulerViewModel(this);
    table_ = new QTableView;
    table_->setObjectName(QStringLiteral("inspectorTable"));
    table_->setModel(model_);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 4);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    // Not setStretchLastSection: a stretched last section does not shrink below its width
    // when the table narrows (it scrolled sideways); fitColumns sizes it.
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setWordWrap(false);
    table_->viewport()->installEventFilter(this); // fitColumns on every resize
    // A fleet's replica column shows beside the request's id (hidden for one engine).
    table_->horizontalHeader()->moveSection(SchedulerViewModel::Replica,
                                            SchedulerViewModel::Req + 1);
    {
        std::vector<int> columns;
        for (int c = SchedulerViewModel::Pos; c < SchedulerViewModel::Replica; ++c)
            if (c != SchedulerViewModel::Req) columns.push_back(c); // the id always shows
        addColumnMenu(
            table_, columns, [this](int c) { return columnShown(c); },
            [this](int c, bool on) { showColumn(c, on); });
        hidden_ = rememberedHiddenColumns(QStringLiteral("inspector/hiddenColumns"),
                                          SchedulerViewModel::Req + 1,
                                          SchedulerViewModel::Replica - 1, &columns_chosen_);
    }
    applyColumns();
    tv->addWidget(table_, 1);
    narrowed_note_ = new QLabel;
    narrowed_note_->setObjectName(QStringLiteral("inspectorNarrowed"));
    narrowed_note_->setWordWrap(true);
    narrowed_note_->setEnabled(false); // a quiet line under the table
    narrowed_note_->hide();
    tv->addWidget(narrowed_note_);

    auto* bottom = new QWidget;
    auto* bv = new QVBoxLayout(bottom);
    bv->setContentsMargins(4, 0, 4, 4);
    req_title_ = new QLabel(tr("Click a request on the timeline, or one here, for its story"));
    req_title_->setWordWrap(true);
    req_title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    bv->addWidget(req_title_);
    waits_ = new QLabel;
    waits_->setObjectName(QStringLiteral("inspectorWaits"));
    waits_->setWordWrap(true);
    waits_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    waits_->setToolTip(tr("Its whole time not running, by cause: seats, KV, token budget, the "
                          "policy's order, the router, suspension (kairos-cli explain --req)"));
    waits_->setVisible(false);
    bv->addWidget(waits_);
    chart_ = new QCustomPlot;
    chart_->setObjectName(QStringLiteral("inspectorChart"));
    chart_->setMinimumHeight(170); // a plot, and a legend of two rows below it at 1366x768
    views::applyPalette(chart_, QPalette::Base);
    chart_->xAxis->setLabel(tr("time (s)"));
    // Short axis labels: the chart is little more than 100 px tall at 1366x768 (a longer
    // label was cut), and the legend names each line, the key's unit included.
    chart_->yAxis->setLabel(tr("tokens"));
    // Three ticks a side: at 100 px tall the key axis stacked seven labels with no gaps.
    chart_->yAxis->ticker()->setTickCount(3);
    chart_->yAxis2->ticker()->setTickCount(3);
    // And three along time: in a 220-pixel dock five read as one number ("120140160180200").
    chart_->xAxis->ticker()->setTickCount(3);
    chart_->legend->setVisible(true);
    chart_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    auto* predicted = chart_->addGraph();
    predicted->setName(tr("predicted remaining"));
    predicted->setLineStyle(QCPGraph::lsLine);
    predicted->setPen(QPen(QColor(0x2f, 0x80, 0xed), 1.6));
    auto* truth = chart_->addGraph();
    truth->setName(tr("true remaining"));
    truth->setPen(QPen(QColor(0x27, 0xae, 0x60), 1.6, Qt::DashLine));
    auto* key = chart_->addGraph(chart_->xAxis, chart_->yAxis2);
    key->setName(tr("key"));
    key->setLineStyle(QCPGraph::lsStepLeft);
    key->setPen(QPen(QColor(0xe6, 0x7e, 0x22), 1.4));
    now_ = new QCPItemStraightLine(chart_);
    now_->setProperty(views::kTransientItem, true);
    now_->setPen(QPen(palette().color(QPalette::Text), 1, Qt::DotLine));
    views::keepLegendOffData(chart_);
    views::sayWhenEmpty(chart_, tr("Click a request on the timeline, or a decision above: its "
                                   "predicted and true remaining tokens over its life are "
                                   "drawn here."));
    budget_ = new QLabel;
    budget_->setWordWrap(true);
    budget_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    budget_->setVisible(false);
    story_ = new QListWidget;
    story_->setObjectName(QStringLiteral("inspectorStory"));
    story_->setWordWrap(true);
    story_->setToolTip(tr("Every event of the request and every decision that touched it "
                          "(click: show the scheduler at that time)"));
    // A few events at least (at 1366x768 the list was squeezed to nothing under the chart:
    // the "why" of a picked request hidden behind a splitter handle); the request's part
    // scrolls to it.
    story_->setMinimumHeight(story_->fontMetrics().lineSpacing() * 6 + 8);
    bv->addWidget(story_, 2);
    bv->addWidget(budget_); // TimeBill's plan for it, after its story (it left the list two lines)
    // The chart after the story: the "why" first, in view at 1366x768 (under the chart it
    // was below the request part's fold, and opened at its last line).
    bv->addWidget(chart_, 2);

    auto* split = new QSplitter(Qt::Vertical);
    split_ = split;
    split->addWidget(top);
    // The request's part scrolls when the splitter gives it less than its wrapped lines and
    // chart need (a narrow dock wraps the budget line to five: it was drawn over the chart).
    QScrollArea* bottom_scroll = scrolling(bottom);
    bottom_scroll->setObjectName(QStringLiteral("inspectorRequestScroll"));
    bottom_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    split->addWidget(bottom_scroll);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    v->addWidget(split);

    connect(prev_, &QToolButton::clicked, this, [this] { step(-1); });
    connect(next_, &QToolButton::clicked, this, [this] { step(+1); });
    connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
        if (const ViewRow* r = model_->rowAt(i.row())) Q_EMIT requestPicked(r->req, t_);
    });
    connect(decisions_, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem* it) {
        Q_EMIT requestPicked(it->data(Qt::UserRole).toInt(), t_);
    });
    connect(story_, &QListWidget::itemClicked, this, [this](QListWidgetItem* it) {
        follow_->setChecked(false);
        setTime(it->data(Qt::UserRole).toDouble());
    });
}

void InspectorPanel::attach(WorkbenchState* state) {
    connect(state, &WorkbenchState::runChanged, this, [this, state] { setRun(state->run()); });
    connect(state, &WorkbenchState::selectionChanged, this,
            [this, state] { showRequest(state->selectedRequest(), state->selectedTime()); });
    setRun(state->run());
}

void InspectorPanel::setRun(std::shared_ptr<const RunView> run) {
    // Another workload: its start, not the last one's instant (t = 2984 s stayed on a run of
    // 330 s); a re-run of the same workload keeps the instant.
    if (run && (!run_ || run_->workload != run->workload)) t_ = 0;
    run_ = std::move(run);
    // Hidden (a tab behind another panel), it catches up when shown or asked: a slider's
    // re-run then neither waits for the run's index nor rebuilds a table nobody sees.
    stale_ = true;
    if (isVisible()) catchUp(false);
}

void InspectorPanel::catchUp(bool wait) {
    if (!stale_) return;
    // The run's index is built after the run is shown (RunView::explain): shown, the panel
    // follows it a few milliseconds after the timeline rather than holding the window's
    // repaint; asked (a getter, a step, a click), it waits.
    if (!wait && run_ && run_->explain_index.valid() &&
        run_->explain_index.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        if (!retry_) {
            retry_ = true;
            QTimer::singleShot(2, this, [this] {
                retry_ = false;
                if (isVisible()) catchUp(false);
            });
        }
        return;
    }
    stale_ = false;
    // The last run's index (and the log it keeps, when nothing else does) is freed on a pool
    // thread: 3 ms of the GUI thread at 20,000 requests, before the next slider move.
    // (After the panel has let go of what it read from it.)
    std::shared_ptr<const ExplainIndex> old = std::exchange(ix_, run_ ? run_->explain() : nullptr);
    if (req_ >= 0 && (!run_ || !run_->log || req_ >= run_->log->num_requests)) req_ = -1;
    refreshView();
    refreshRequest();
    now_->point1->setCoords(t_, 0);
    now_->point2->setCoords(t_, 1);
    chart_->replot(QCustomPlot::rpQueuedReplot);
    if (old && old.use_count() == 1)
        QThreadPool::globalInstance()->start([o = std::move(old)]() mutable { o.reset(); });
}

void InspectorPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    catchUp(false);
}

void InspectorPanel::followCursor(double t) {
    if (follow_->isChecked()) setTime(t);
}

void InspectorPanel::inspectAt(double t) {
    follow_->setChecked(false);
    setTime(t);
}

void InspectorPanel::setTime(double t) {
    if (!std::isfinite(t)) return;
    t_ = t;
    if (!isVisible()) { // shown later at this instant (catchUp)
        stale_ = true;
        Q_EMIT timeChanged(t);
        return;
    }
    catchUp();
    refreshView();
    now_->point1->setCoords(t, 0);
    now_->point2->setCoords(t, 1);
    chart_->replot(QCustomPlot::rpQueuedReplot);
    Q_EMIT timeChanged(t);
}

bool InspectorPanel::step(int direction) {
    catchUp();
    if (!ix_ || !ix_->explained()) return false;
    const std::int64_t call = ix_->actingCall(t_, direction > 0 ? +1 : -1);
    if (call < 0) return false;
    const double to = ix_->log().explain.calls[std::size_t(call)].t;
    follow_->setChecked(false);
    setTime(to);
    return true;
}

void InspectorPanel::showRequest(int id, double t) {
    const bool picked = id >= 0 && id != req_;
    req_ = id;
    req_t_ = t;
    catchUp();
    refreshRequest();
    // A request picked is what the user looks at now: its part gets the larger share of the
    // panel (three fifths) if it had less.
    if (picked && split_ && split_->count() == 2) {
        const QList<int> s = split_->sizes();
        const int all = s[0] + s[1];
        if (all > 0 && s[1] < all * 3 / 5) split_->setSizes({all - all * 3 / 5, all * 3 / 5});
    }
    if (id >= 0 && std::isfinite(t)) {
        follow_->setChecked(false); // a click shows that instant until the cursor is followed
        setTime(t);
    }
}

QStringList InspectorPanel::decisionLines() const {
    const_cast<InspectorPanel*>(this)->catchUp(); // what it would show now
    QStringList out;
    for (int i = 0; i < decisions_->count(); ++i) out << decisions_->item(i)->text();
    return out;
}

QStringList InspectorPanel::storyLines() const {
    const_cast<InspectorPanel*>(this)->catchUp(); // what it would show now
    QStringList out;
    for (int i = 0; i < story_->count(); ++i) out << story_->item(i)->text();
    return out;
}

QString InspectorPanel::budgetText() const {
    const_cast<InspectorPanel*>(this)->catchUp(); // what it would show now
    return budget_->isVisible() ? budget_->text() : QString();
}

bool InspectorPanel::columnShown(int column) const {
    using M = SchedulerViewModel;
    if (column == M::State || column == M::Req) return true;
    if (column == M::Replica) return false; // a fleet's: refreshView shows it
    if (columns_chosen_) return !hidden_.contains(column);
    if (column == M::Prompt || column == M::Arrival || column == M::Since) return false;
    return has_data_[std::size_t(column)];
}

void InspectorPanel::showColumn(int column, bool shown) {
    using M = SchedulerViewModel;
    if (!columns_chosen_) // the defaults become the choice, then this change
        for (int c = M::Pos; c < M::Replica; ++c)
            if (!columnShown(c)) hidden_ << c;
    columns_chosen_ = true;
    hidden_.removeAll(column);
    if (!shown && column != M::State && column != M::Req) hidden_ << column;
    rememberHiddenColumns(QStringLiteral("inspector/hiddenColumns"), hidden_);
    applyColumns();
}

void InspectorPanel::applyColumns() {
    syncHidden();
    fitColumns();
}

void InspectorPanel::syncHidden() {
    for (int c = 0; c < SchedulerViewModel::Replica; ++c) {
        const bool hide = !columnShown(c) || narrowed_.contains(c);
        if (table_->isColumnHidden(c) != hide) table_->setColumnHidden(c, hide);
    }
}

bool InspectorPanel::eventFilter(QObject* watched, QEvent* e) {
    if (watched == table_->viewport() && e->type() == QEvent::Resize) fitColumns();
    return QWidget::eventFilter(watched, e);
}

void InspectorPanel::fitColumns() {
    using M = SchedulerViewModel;
    auto preferred = [](int c) {
        return c == M::State ? 84 : c == M::Pos || c == M::Alpha ? 40 : c == M::Key ? 96 : 70;
    };
    QHeaderView* header = table_->horizontalHeader();
    // Every column the table would show with room for all (the replica's as refreshView set
    // it), in the order the header shows them.
    std::vector<int> shown;
    for (int v = 0; v < header->count(); ++v) {
        const int c = header->logicalIndex(v);
        if (c == M::Replica ? !table_->isColumnHidden(c) : columnShown(c)) shown.push_back(c);
    }
    if (shown.empty()) return;
    const QFontMetrics fm = header->fontMetrics();
    // Each column's floor: its header's text or the widest of its cells in view (with the
    // margins), whichever is wider, unless its preferred width is narrower; never under the
    // header's minimum. (QTableView::sizeHintForColumn is protected.)
    const int top = std::max(0, table_->rowAt(0));
    const int bottom = table_->rowAt(table_->viewport()->height() - 1);
    const int end = std::min(model_->rowCount(), (bottom < 0 ? top + 50 : bottom + 1));
    const QFontMetrics cell = table_->fontMetrics();
    std::map<int, int> floor_of;
    for (int c : shown) {
        int text =
            fm.horizontalAdvance(model_->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
        for (int r = top; r < end; ++r)
            text =
                std::max(text, cell.horizontalAdvance(
                                   model_->data(model_->index(r, c), Qt::DisplayRole).toString()));
        floor_of[c] = std::max(header->minimumSectionSize(), std::min(preferred(c), text + 12));
    }
    // Where their floors do not fit the table, the least telling columns are left out, in
    // this order (a 1366-pixel window's right column is a quarter of it when the timeline
    // keeps 60 %): state, id and a fleet's replica always stay, and the most telling of the
    // rest (the last of them here that the table has).
    static constexpr int kLeaveOut[] = {M::Pos,       M::Since,     M::Arrival, M::Prompt,
                                        M::Wcet,      M::TrueRem,   M::Alpha,   M::Slack,
                                        M::Generated, M::Predicted, M::Key};
    const int room = table_->viewport()->width();
    std::vector<int> rest; // shown, in kLeaveOut's order
    for (int c : kLeaveOut)
        if (std::find(shown.begin(), shown.end(), c) != shown.end()) rest.push_back(c);
    int floors = 0;
    for (int c : shown) floors += floor_of[c];
    QList<int> narrowed;
    for (std::size_t i = 0; i + 1 < rest.size() && floors > room; ++i) {
        narrowed << rest[i];
        floors -= floor_of[rest[i]];
    }
    if (narrowed != narrowed_) {
        narrowed_ = narrowed;
        syncHidden();
        QStringList names;
        for (int c : narrowed_)
            names << model_->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
        narrowed_note_->setText(
            tr("Left out for width: %1 (widen the panel, or right-click the header)")
                .arg(names.join(QStringLiteral(", "))));
        narrowed_note_->setVisible(!narrowed_.isEmpty());
    }
    shown.erase(
        std::remove_if(shown.begin(), shown.end(), [&](int c) { return narrowed_.contains(c); }),
        shown.end());
    // What the panel needs to show its first columns at their floors (keepTimelineWide's
    // bound): the rest's most telling with those that always stay.
    const int had = floors_width_;
    floors_width_ = floors;
    for (std::size_t i = narrowed_.size(); i + 1 < rest.size(); ++i)
        floors_width_ -= floor_of[rest[i]];
    // Asked whenever the floors grew past what the dock gives with its spare (the floors
    // alone against the table were met at 356 px of a needed 411, and a dock a pixel
    // narrower then scrolled).
    const int dock = parentWidget() ? parentWidget()->width() : width();
    if (floors_width_ > had && neededWidth() > dock)
        QTimer::singleShot(0, this, [this] { Q_EMIT widthWanted(); });
    // Narrowed in proportion; a column its floor stops takes its floor, and the others share
    // what is left (so a few wide headers do not push the table into scrolling).
    std::map<int, int> width;
    std::vector<int> free = shown;
    int fixed = 0;
    for (bool again = true; again;) {
        again = false;
        int want = 0;
        for (int c : free) want += preferred(c);
        const double scale =
            want > room - fixed && want > 0 ? std::max(0.0, double(room - fixed) / want) : 1.0;
        for (auto it = free.begin(); it != free.end();) {
            width[*it] = int(std::floor(preferred(*it) * scale));
            if (width[*it] < floor_of[*it]) {
                width[*it] = floor_of[*it];
                fixed += width[*it];
                it = free.erase(it);
                again = true;
            } else {
                ++it;
            }
        }
    }
    int used = 0;
    for (int c : shown) {
        // The last takes what is left too (the stretch the header would give it).
        table_->setColumnWidth(c, c == shown.back() ? std::max(width[c], room - used) : width[c]);
        used += width[c];
    }
}

int InspectorPanel::neededWidth() const {
    // The table's columns at their floors, its frame and vertical scroll bar, the panel's
    // margins and the dock's frame, and 40 px spare: a dock a little narrower than planned
    // (another font, another style) narrows the columns rather than scrolling.
    if (floors_width_ <= 0) return 0;
    const int bar = table_->verticalScrollBar()->sizeHint().width();
    return floors_width_ + bar + 2 * table_->frameWidth() + 8 + 12 + 40;
}

void InspectorPanel::refreshView() {
    const auto t0 = std::chrono::steady_clock::now();
    prev_->setEnabled(ix_ && ix_->explained());
    next_->setEnabled(ix_ && ix_->explained());
    decisions_->clear();
    if (!ix_) {
        title_->setText(run_ ? tr("This run was not recorded with its reasons") : tr("No run"));
        title_->setToolTip(title_->text());
        title_->setMinimumWidth(60); // elided, whole in its tooltip
        summary_->clear();
        model_->setView({}, {});
        return;
    }
    const RunLog& log = ix_->log();
    SchedulerView v = viewAt(*ix_, t_);
    if (table_->isColumnHidden(SchedulerViewModel::Replica) == log.fleet()) {
        table_->setColumnHidden(SchedulerViewModel::Replica, !log.fleet());
        fitColumns();
    }
    model_->setWorkload(run_ ? run_->workload.get() : nullptr);
    // Which columns have something to say here (an empty view keeps the last choice).
    if (!v.running.empty() || !v.waiting.empty() || !v.suspended.empty()) {
        using M = SchedulerViewModel;
        has_data_.fill(true);
        bool pred = false, true_rem = false, key = false, slack = false, alpha = false,
             wcet = false;
        for (const auto* rows : {&v.running, &v.waiting, &v.suspended})
            for (const ViewRow& r : *rows) {
                pred = pred || !std::isnan(r.predicted);
                true_rem = true_rem || r.output >= 0;
                // The key says something the predicted column does not (SPRPT's key is
                // its prediction).
                key = key || (!std::isnan(r.key) && !(r.key == r.predicted));
                slack = slack || !std::isnan(r.deadline);
                alpha = alpha || !std::isnan(r.alpha);
                wcet = wcet || !std::isnan(r.wcet);
            }
        has_data_[M::Predicted] = pred;
        has_data_[M::TrueRem] = true_rem;
        has_data_[M::Key] = key;
        has_data_[M::Slack] = slack;
        has_data_[M::Alpha] = alpha;
        has_data_[M::Wcet] = wcet;
        applyColumns();
    }
    // The instant, whole: in a 236-pixel dock (1366x768) "Scheduler at t = 1" was all of it,
    // a wrong number that looked right. Its width is the label's least.
    title_->setText(tr("t = %1 s").arg(t_, 0, 'f', 4));
    title_->setToolTip(tr("The scheduler at t = %1 s").arg(t_, 0, 'f', 4));
    title_->setMinimumWidth(title_->fontMetrics().horizontalAdvance(title_->text()) + 4);
    const QString order = log.explain.key_name.empty()
                              ? QString()
                              : tr("; the queue by %1, %2 first")
                                    .arg(QString::fromStdString(log.explain.key_name),
                                         log.explain.key_descending ? tr("highest") : tr("lowest"));
    summary_->setText(
        tr("KV %1 of %2 tokens (%3 %); %4 running, %5 waiting, %6 suspended; %7 finished, %8 "
           "killed, %9 not arrived")
            .arg(v.kv_used)
            .arg(v.kv_capacity)
            .arg(v.kv_capacity > 0 ? 100.0 * double(v.kv_used) / double(v.kv_capacity) : 0.0, 0,
                 'f', 1)
            .arg(v.running.size())
            .arg(v.waiting.size())
            .arg(v.suspended.size())
            .arg(v.finished)
            .arg(v.killed)
            .arg(v.not_arrived) +
        order);
    // The last decision that acted, at or before t.
    const auto& calls = log.explain.calls;
    if (const std::int64_t call = ix_->actingCall(t_); call >= 0) {
        const auto [first, last] = ix_->reasonsOfCall(call);
        const auto& on = log.explain.call_replica; // a fleet's: each call's replica
        QString text = (on.empty() ? tr("decision at %1 s (%2 action(s)):")
                                   : tr("decision at %1 s on replica %3 (%2 action(s)):"))
                           .arg(calls[std::size_t(call)].t, 0, 'f', 4)
                           .arg(last - first);
        if (!on.empty()) text = text.arg(int(on[std::size_t(call)]));
        auto* head = new QListWidgetItem(text);
        QFont f = head->font();
        f.setBold(true);
        head->setFont(f);
        head->setData(Qt::UserRole, -1);
        decisions_->addItem(head);
        for (std::size_t i = first; i < last; ++i) {
            const Reason& r = log.explain.reasons[i];
            auto* item = new QListWidgetItem(
                QString::fromStdString(describeReason(r, run_->workload.get())));
            item->setData(Qt::UserRole, r.req);
            item->setToolTip(QString::fromUtf8(ruleOf(r.rule).text));
            decisions_->addItem(item);
        }
    } else if (log.explain.on) {
        decisions_->addItem(tr("no decision has acted yet"));
    }
    model_->setView(std::move(v), QString::fromStdString(log.explain.key_name));
    last_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

QString InspectorPanel::requestTitle() const {
    const_cast<InspectorPanel*>(this)->catchUp(); // what it would show now
    return req_title_->text();
}

void InspectorPanel::refreshRequest() {
    story_->clear();
    budget_->setVisible(false);
    waits_->setVisible(false);
    for (int g = 0; g < chart_->graphCount(); ++g) chart_->graph(g)->data()->clear();
    if (!ix_ || req_ < 0) {
        req_title_->setText(run_ && !ix_ ? tr("This run was not recorded with its reasons")
                                         : tr("Click a request on the timeline, or one here, "
                                              "for its story"));
        chart_->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const RunLog& log = ix_->log();
    const auto& ex = log.explain;
    const ReqId id = req_;
    // The trace's identity: its id, agent and class (Workload::label); the row in the run.
    const Workload* wl = run_->workload.get();
    QString who =
        wl ? QString::fromStdString(wl->label(std::size_t(id))) : tr("request %1").arg(id);
    who[0] = who[0].toUpper();
    req_title_->setText(tr("%1, row %2: prompt %3 tokens, %4; arrived at %5 s")
                            .arg(who)
                            .arg(id)
                            .arg(ix_->promptOf(id))
                            .arg(ix_->outputOf(id) < 0
                                     ? tr("did not finish")
                                     : tr("output %1 tokens").arg(ix_->outputOf(id)))
                            .arg(ix_->arrivalOf(id), 0, 'f', 4));
    // Predicted against true remaining tokens at each of its events and samples (the
    // prediction as the policy last saw it, counted down since), and the key where it is
    // neither the prediction nor constant (TimelyLLM's PUD priority).
    QVector<double> pt, pv, tt, tv, kt, kv;
    std::vector<double> times;
    for (std::uint32_t i : ix_->eventsOf(id)) times.push_back(log.events[i].t);
    for (std::uint32_t i : ix_->insightsOf(id)) times.push_back(ex.insights[i].t);
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    bool key_is_prediction = true, key_constant = true;
    double first_key = std::nan("");
    for (double t : times) {
        Insight in;
        if (ix_->stateAt(id, t, &in)) {
            if (std::isfinite(in.predicted)) {
                pt << t;
                pv << in.predicted;
            }
            if (std::isfinite(in.key)) {
                kt << t;
                kv << in.key;
                if (!(in.key == in.predicted)) key_is_prediction = false;
                if (std::isnan(first_key)) first_key = in.key;
                if (in.key != first_key) key_constant = false;
            }
        }
        if (ix_->outputOf(id) >= 0) {
            tt << t;
            tv << double(ix_->outputOf(id) - ix_->generatedAt(id, t));
        }
    }
    chart_->graph(0)->setData(pt, pv, true);
    chart_->graph(1)->setData(tt, tv, true);
    const bool show_key = !key_is_prediction && !key_constant && !kt.isEmpty();
    chart_->graph(2)->setData(show_key ? kt : QVector<double>(), show_key ? kv : QVector<double>(),
                              true);
    chart_->graph(2)->setName(tr("key: %1").arg(QString::fromStdString(ex.key_name)));
    chart_->graph(2)->setVisible(show_key);
    if (show_key)
        chart_->graph(2)->addToLegend();
    else
        chart_->graph(2)->removeFromLegend();
    chart_->yAxis2->setVisible(show_key);
    chart_->yAxis2->setLabel(QString()); // named in the legend ("key: PUD priority (1/s^2)")
    chart_->rescaleAxes();
    chart_->yAxis->setRangeLower(0);
    chart_->replot(QCustomPlot::rpQueuedReplot);
    // TimeBill's budget arithmetic, from its admission's reason.
    for (std::uint32_t i : ix_->reasonsOf(id)) {
        const Reason& r = ex.reasons[i];
        if (r.req != id) continue;
        if (r.rule == rules::kTimeBillAdmit) {
            const double wcet = r.x[4] + r.x[5];
            const Insight* in = ix_->insightAt(id, r.t + 1e-12);
            budget_->setText(
                tr("<b>Budget</b> at admission (%1 s): %2 s left. WCET planned %3 s = prefill "
                   "%4 s + decode %5 s of N<sub>W</sub> = %6 tokens (k = %7 × the predicted "
                   "length, capped at N<sub>max</sub>)%8; slack %9 s.")
                    .arg(r.t, 0, 'f', 3)
                    .arg(num(r.x[3], 4))
                    .arg(num(wcet, 4))
                    .arg(num(r.x[4], 4))
                    .arg(num(r.x[5], 4))
                    .arg(num(r.x[7]))
                    .arg(num(r.x[6], 3))
                    .arg(in && !std::isnan(in->alpha) && in->alpha > 0
                             ? tr(" at KV eviction α* = %1").arg(num(in->alpha, 3))
                             : tr(", no KV evicted"))
                    .arg(num(r.x[3] - wcet, 4)));
            budget_->setVisible(true);
        }
    }
    // Why it waited, in one line, and each wait in the story at its start.
    const std::vector<Wait> waits = waitsOf(*ix_, id);
    const std::string told = waitStory(waits);
    waits_->setText(told.empty() ? tr("It never waited: taken in at its arrival.")
                                 : QString::fromStdString(told));
    waits_->setVisible(true);
    std::size_t next_wait = 0;
    auto addWaitsBefore = [&](double t) {
        for (; next_wait < waits.size() && waits[next_wait].from < t; ++next_wait) {
            const Wait& w = waits[next_wait];
            if (!w.told()) continue; // not "wait: 0 ms"
            auto* item = new QListWidgetItem(QStringLiteral("%1 s   wait: %2")
                                                 .arg(w.from, 0, 'f', 4)
                                                 .arg(QString::fromStdString(describeWait(
                                                     w, run_ ? run_->workload.get() : nullptr))));
            item->setData(Qt::UserRole, w.from);
            QFont f = item->font();
            f.setItalic(true);
            item->setFont(f);
            item->setToolTip(tr("Why it was not running from %1 s to %2 s: the limit that "
                                "bound at the decisions it stood through, and who went ahead")
                                 .arg(w.from, 0, 'f', 4)
                                 .arg(w.to, 0, 'f', 4));
            story_->addItem(item);
        }
    };
    // Its story: events and decisions (state changes are the chart's).
    for (const StoryLine& l : storyOf(*ix_, id)) {
        // A wait starts with its event (arrival, preemption, suspension): listed after it.
        addWaitsBefore(l.t);
        QString text;
        switch (l.kind) {
        case StoryLine::Kind::Event: {
            const Event& e = log.events[l.index];
            const std::string what = eventValueText(e);
            text = QStringLiteral("%1 s   %2")
                       .arg(e.t, 0, 'f', 4)
                       .arg(QString::fromLatin1(evName(e.ev)));
            if (!what.empty()) text += QStringLiteral(" (%1)").arg(QString::fromStdString(what));
            break;
        }
        case StoryLine::Kind::Reason: {
            const Reason& r = ex.reasons[l.index];
            text = QStringLiteral("%1 s   why: %2%3")
                       .arg(r.t, 0, 'f', 4)
                       .arg(QString::fromStdString(describeReason(r, run_->workload.get())))
                       .arg(r.req != id ? tr("  [another request's decision]") : QString());
            break;
        }
        case StoryLine::Kind::State:
            continue;
        }
        auto* item = new QListWidgetItem(text);
        item->setData(Qt::UserRole, l.t);
        if (l.kind == StoryLine::Kind::Reason) {
            QFont f = item->font();
            f.setBold(true);
            item->setFont(f);
            item->setToolTip(QString::fromUtf8(ruleOf(ex.reasons[l.index].rule).text));
        }
        story_->addItem(item);
    }
    addWaitsBefore(std::numeric_limits<double>::infinity());
    // The line at or just before the time it was picked at, shown from the first line of
    // that instant down: its "why" comes before what it did, and a why wraps to several
    // lines (centred on the last line of the instant, the why was above the view at 1366).
    for (int i = story_->count() - 1; i >= 0; --i) {
        const double t = story_->item(i)->data(Qt::UserRole).toDouble();
        if (t > req_t_ + 1e-9) continue;
        int first = i;
        while (first > 0 && story_->item(first - 1)->data(Qt::UserRole).toDouble() >= t - 1e-9)
            --first;
        story_->setCurrentRow(i);
        story_->scrollToItem(story_->item(first), QAbstractItemView::PositionAtTop);
        break;
    }
}

} // namespace kairos::app
