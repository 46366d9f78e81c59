#include "request_table_model.h"

#include <cmath>

namespace kairos::views {

void RequestTableModel::setRun(std::shared_ptr<const RunLog> log,
                               std::shared_ptr<const std::vector<RequestMetrics>> metrics,
                               std::shared_ptr<const Workload> w) {
    beginResetModel();
    log_ = std::move(log);
    metrics_ = std::move(metrics);
    w_ = std::move(w);
    table_.reset();
    row_of_.clear();
    if (log_ && metrics_) {
        table_.emplace(*log_, *metrics_, w_.get());
        for (std::size_t i = 0; i < metrics_->size(); ++i) {
            const auto id = static_cast<std::size_t>((*metrics_)[i].id);
            if (id >= row_of_.size()) row_of_.resize(id + 1, -1);
            row_of_[id] = int(i);
        }
    }
    endResetModel();
}

void RequestTableModel::clear() {
    setRun(nullptr, nullptr, nullptr);
}

int RequestTableModel::rowOf(ReqId id) const {
    return id >= 0 && std::size_t(id) < row_of_.size() ? row_of_[std::size_t(id)] : -1;
}

int RequestTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !table_ ? 0 : int(table_->rows());
}

int RequestTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() || !table_ ? 0 : int(table_->columns().size());
}

QVariant RequestTableModel::data(const QModelIndex& index, int role) const {
    if (!table_ || !index.isValid()) return {};
    const auto i = std::size_t(index.row()), c = std::size_t(index.column());
    const RequestColumns::Column& col = table_->columns()[c];
    switch (role) {
    case Qt::DisplayRole: {
        if (col.kind == RequestColumns::Kind::Text)
            return QString::fromStdString(table_->text(i, c));
        return display(col, table_->number(i, c));
    }
    case SortRole:
        if (col.kind == RequestColumns::Kind::Text)
            return QString::fromStdString(table_->text(i, c));
        return table_->number(i, c);
    case RequestRole:
        return qint64(table_->request(i));
    case Qt::TextAlignmentRole:
        return col.kind == RequestColumns::Kind::Text ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                                      : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

QString RequestTableModel::display(const RequestColumns::Column& col, double v) {
    if (!std::isfinite(v)) return QString();
    if (col.kind == RequestColumns::Kind::Integer) return QString::number(qint64(v));
    // Milliseconds to a tenth, seconds to the millisecond: what a reader compares.
    return QString::number(v, 'f', col.name == "arrival_s" ? 3 : 1);
}

QVariant RequestTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || !table_ || section < 0 ||
        std::size_t(section) >= table_->columns().size())
        return QAbstractTableModel::headerData(section, o, role);
    const RequestColumns::Column& col = table_->columns()[std::size_t(section)];
    if (role == Qt::DisplayRole) return QString::fromStdString(col.name);
    if (role == Qt::ToolTipRole) return QString::fromStdString(col.help);
    return {};
}

RequestFilter::RequestFilter(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(RequestTableModel::SortRole);
}

void RequestFilter::setRequests(std::optional<std::vector<ReqId>> ids) {
    keep_.reset();
    if (ids) {
        keep_.emplace();
        for (ReqId id : *ids) {
            if (id < 0) continue;
            if (std::size_t(id) >= keep_->size()) keep_->resize(std::size_t(id) + 1, 0);
            (*keep_)[std::size_t(id)] = 1;
        }
    }
    invalidateRowsFilter();
}

bool RequestFilter::filterAcceptsRow(int row, const QModelIndex& parent) const {
    if (!keep_) return true;
    const qint64 id =
        sourceModel()->index(row, 0, parent).data(RequestTableModel::RequestRole).toLongLong();
    return id >= 0 && std::size_t(id) < keep_->size() && (*keep_)[std::size_t(id)];
}

bool RequestFilter::lessThan(const QModelIndex& a, const QModelIndex& b) const {
    const QVariant va = a.data(sortRole()), vb = b.data(sortRole());
    if (va.typeId() == QMetaType::Double) {
        const double x = va.toDouble(), y = vb.toDouble();
        // Undefined after every defined value, in either order: sort() flips lessThan's
        // answer for a descending sort, so an undefined value is "less" then.
        const bool desc = sortOrder() == Qt::DescendingOrder;
        if (std::isnan(x) || std::isnan(y)) {
            if (std::isnan(x) && std::isnan(y))
                return a.data(RequestTableModel::RequestRole).toLongLong() <
                       b.data(RequestTableModel::RequestRole).toLongLong();
            return std::isnan(x) ? desc : !desc;
        }
        if (x != y) return x < y;
        return a.data(RequestTableModel::RequestRole).toLongLong() <
               b.data(RequestTableModel::RequestRole).toLongLong();
    }
    const int c = QString::compare(va.toString(), vb.toString());
    if (c != 0) return c < 0;
    return a.data(RequestTableModel::RequestRole).toLongLong() <
           b.data(RequestTableModel::RequestRole).toLongLong();
}

} // namespace kairos::views
