#include "requests_panel.h"

#include "find_bar.h"
#include "in_view.h"
#include "request_table_model.h"
#include "workbench_state.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QScopedValueRollback>
#include <QStyleOptionHeader>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace kairos::app {

RequestsPanel::RequestsPanel(WorkbenchState* state, FindBar* find, std::function<void(int)> reveal,
                             QWidget* parent)
    : QWidget(parent), state_(state), find_(find), reveal_(std::move(reveal)), summary_(new QLabel),
      table_(new QTableView), model_(new views::RequestTableModel(this)),
      filter_(new views::RequestFilter(this)) {
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(4, 4, 4, 4);
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::PlainText); // a search such as ttft>2000 as typed
    v->addWidget(summary_);
    filter_->setSourceModel(model_);
    table_->setModel(filter_);
    table_->setObjectName(QStringLiteral("requestTable"));
    table_->setSortingEnabled(true);
    table_->sortByColumn(-1, Qt::AscendingOrder); // the run log's order until a header is clicked
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    // Widths from each run's values (fitColumns), not Qt's ResizeToContents, which laid out
    // the text of a thousand rows per column on every re-run.
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table_->horizontalHeader()->setHighlightSections(false);
    table_->setToolTip(tr("Every request of the shown run; click a header to sort, pick a row "
                          "to select the request on the timeline, double-click for its "
                          "story in the Inspector. A search in Find shows its matches only."));
    v->addWidget(table_, 1);

    connect(state_, &WorkbenchState::runChanged, this, [this] {
        stale_ = true;
        if (inView(this)) readRun();
    });
    connect(state_, &WorkbenchState::workloadChanged, this, [this] {
        model_->clear();
        stale_ = true;
        updateSummary();
    });
    connect(state_, &WorkbenchState::selectionChanged, this, &RequestsPanel::showSelection);
    connect(find_, &FindBar::applied, this, [this] {
        if (!stale_ && inView(this)) readMatches();
    });
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& now) {
                if (syncing_ || !now.isValid()) return;
                const int id = requestAt(now.row());
                const auto& run = state_->run();
                if (id < 0 || !run) return;
                if (reveal_) reveal_(id);
                state_->setSelection(id, (*run->rows)[std::size_t(id)].arrival); // as Find does
            });
    connect(table_->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int c) {
        if (fitting_ || !model_->columns()) return;
        user_sized_.insert(model_->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
    });
    connect(table_, &QTableView::doubleClicked, this, [this] { Q_EMIT inspectRequested(); });
    updateSummary();
}

int RequestsPanel::requestAt(int row) const {
    const QModelIndex i = filter_->index(row, 0);
    return i.isValid() ? int(i.data(views::RequestTableModel::RequestRole).toLongLong()) : -1;
}

void RequestsPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    if (stale_) readRun();
}

void RequestsPanel::catchUp() {
    if (!isVisible()) return;
    if (stale_)
        readRun();
    else
        readMatches(); // Find applied and a request selected meanwhile (it shows the selection)
}

void RequestsPanel::readRun() {
    const auto& run = state_->run();
    stale_ = false;
    const bool was = syncing_;
    syncing_ = true;
    if (run && run->log && run->requests)
        model_->setRun(run->log, run->requests, run->workload);
    else
        model_->clear();
    syncing_ = was;
    fitColumns();
    orderColumns();
    readMatches();
}

void RequestsPanel::orderColumns() {
    // The latencies first, where a narrow dock shows them; the CSV's order is the model's.
    const RequestColumns* cols = model_->columns();
    if (!cols) return;
    QHeaderView* h = table_->horizontalHeader();
    int at = 0;
    for (const char* name : {"id", "class", "agent", "status", "ttft_ms", "tpot_ms", "e2el_ms",
                             "queue_ms", "arrival_s", "prompt_tokens", "output_tokens"})
        if (const int c = cols->find(name); c >= 0) h->moveSection(h->visualIndex(c), at++);
}

void RequestsPanel::fitColumns() {
    // One pass over the run per column: a column empty in every row (no agents, no classes)
    // is hidden, and the row when it is the id in every row (a trace numbered in arrival
    // order): room for the latencies. The requests CSV keeps them all. The rest are as wide
    // as their header and their widest cell: a number's widest text is its largest or its
    // most negative value; a text column's (class, agent, status) from up to 2,000 rows
    // spread over the run. Qt's ResizeToContents measured 1,000 rows' text per column on
    // every re-run: 20 ms of a 20,000-request slider move. A column the user resized keeps
    // the width they gave it.
    const RequestColumns* cols = model_->columns();
    if (!cols) return;
    QHeaderView* h = table_->horizontalHeader();
    const QFontMetrics fm(table_->font());
    const int margin =
        2 * (table_->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table_) + 1) + 4;
    const int id_col = cols->find("id"), row_col = cols->find("row");
    const std::size_t n = cols->rows(), step = std::max<std::size_t>(1, n / 2000);
    const QScopedValueRollback<bool> fitting(fitting_, true);
    for (std::size_t c = 0; c < cols->columns().size(); ++c) {
        const RequestColumns::Column& col = cols->columns()[c];
        bool empty = true, same_as_id = int(c) == row_col && id_col >= 0;
        int widest = 0;
        if (col.kind == RequestColumns::Kind::Text) {
            std::unordered_set<std::string> seen; // few values (classes, statuses): each once
            for (std::size_t i = 0; i < n; i += step) {
                std::string t = cols->text(i, c);
                if (t.empty() || !seen.insert(t).second) continue;
                empty = false;
                widest = std::max(widest, fm.horizontalAdvance(QString::fromStdString(t)));
            }
        } else {
            double lo = std::numeric_limits<double>::infinity(), hi = -lo;
            for (std::size_t i = 0; i < n; ++i) {
                const double v = cols->number(i, c);
                if (same_as_id && v != cols->number(i, std::size_t(id_col))) same_as_id = false;
                if (!std::isfinite(v)) continue;
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
            empty = !(lo <= hi);
            if (!empty)
                widest = std::max(fm.horizontalAdvance(views::RequestTableModel::display(col, lo)),
                                  fm.horizontalAdvance(views::RequestTableModel::display(col, hi)));
        }
        table_->setColumnHidden(int(c), empty || same_as_id);
        if (empty || same_as_id || user_sized_.contains(QString::fromStdString(col.name))) continue;
        QStyleOptionHeader head;
        head.initFrom(h);
        head.text = QString::fromStdString(col.name);
        head.section = int(c);
        head.sortIndicator = QStyleOptionHeader::SortDown; // room for the arrow when sorted
        const int header =
            h->style()->sizeFromContents(QStyle::CT_HeaderSection, &head, QSize(), h).width();
        h->resizeSection(int(c), std::max(header, widest + margin));
    }
}

void RequestsPanel::readMatches() {
    const bool was = syncing_;
    syncing_ = true;
    const bool searching = !find_->text().isEmpty() && find_->filterError().isEmpty();
    filter_->setRequests(searching ? std::optional<std::vector<ReqId>>(find_->filterMatches())
                                   : std::nullopt);
    syncing_ = was;
    updateSummary();
    showSelection();
}

void RequestsPanel::showSelection() {
    if (stale_ || !isVisible()) return;
    const int id = state_->selectedRequest();
    const int src = id >= 0 ? model_->rowOf(id) : -1;
    const QModelIndex at = src >= 0 ? filter_->mapFromSource(model_->index(src, 0)) : QModelIndex();
    const bool was = syncing_;
    syncing_ = true;
    if (at.isValid()) {
        table_->selectionModel()->setCurrentIndex(at, QItemSelectionModel::ClearAndSelect |
                                                          QItemSelectionModel::Rows);
        table_->scrollTo(at);
    } else {
        table_->selectionModel()->clearSelection();
    }
    syncing_ = was;
}

void RequestsPanel::updateSummary() {
    summary_->setText(summaryText());
}

QString RequestsPanel::summaryText() const {
    const int all = model_->rowCount();
    if (all == 0) return tr("No run shown.");
    if (!filter_->filtered())
        return tr("%L1 requests. Click a header to sort; a search in Find keeps its matches.")
            .arg(all);
    return tr("%L1 of %L2 requests match “%3” (Find).")
        .arg(filter_->rowCount())
        .arg(all)
        .arg(find_->text());
}

} // namespace kairos::app
