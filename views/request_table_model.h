#pragma once
// The Requests panel's table as an item model: one row per request of the shown run, the
// columns core's RequestColumns names (the requests CSV's: id, class, arrival, lengths,
// status, TTFT, TPOT, E2EL, queue, preemptions, ...). Sorting is by SortRole (the number;
// undefined values after every defined one, whichever way the column is sorted, as
// spreadsheets do); RequestFilter keeps the rows of a set of requests (Find's matches).
#include "export/request_columns.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <memory>
#include <optional>
#include <vector>

namespace kairos::views {

class RequestTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int SortRole = Qt::UserRole + 1;
    static constexpr int RequestRole = Qt::UserRole + 2; // the run-log row (request number)

    explicit RequestTableModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    // The run's requests; the pointers keep what the table reads alive (`w` may be null).
    void setRun(std::shared_ptr<const RunLog> log,
                std::shared_ptr<const std::vector<RequestMetrics>> metrics,
                std::shared_ptr<const Workload> w);
    void clear();
    const RequestColumns* columns() const { return table_ ? &*table_ : nullptr; }
    // The model row of request `id` (-1: none).
    int rowOf(ReqId id) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    // A number of column `col` as a cell shows it ("" where undefined).
    static QString display(const RequestColumns::Column& col, double v);

private:
    std::shared_ptr<const RunLog> log_;
    std::shared_ptr<const std::vector<RequestMetrics>> metrics_;
    std::shared_ptr<const Workload> w_;
    std::optional<RequestColumns> table_;
    std::vector<int> row_of_; // by request id
};

// Keeps the rows of the requests given (all when none is given); sorts as the model says.
class RequestFilter : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit RequestFilter(QObject* parent = nullptr);
    // Only these requests' rows (run-log rows); nullopt: every row.
    void setRequests(std::optional<std::vector<ReqId>> ids);
    bool filtered() const { return keep_.has_value(); }

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override;
    bool lessThan(const QModelIndex& a, const QModelIndex& b) const override;

private:
    std::optional<std::vector<char>> keep_; // by request id
};

} // namespace kairos::views
