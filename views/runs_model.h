#pragma once
// The runs browser's table: the runs of a Kairos database (core/store), newest first,
// one row each: id, policy, workload, requests, completed, mean TTFT, p99 E2EL, label,
// created. The numbers come from each run's stored summary.
#include "store/store.h"

#include <QAbstractTableModel>
#include <vector>

namespace kairos::views {

class RunsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Policy, Workload, Requests, Completed, MeanTtft, P99E2el, Label, Created };
    static constexpr int RunIdRole = Qt::UserRole + 1; // the run's id, on every column

    explicit RunsModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setRuns(std::vector<store::RunInfo> runs);
    const store::RunInfo* runAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    struct Row {
        store::RunInfo info;
        double completed = 0, mean_ttft = 0, p99_e2el = 0; // from the summary (NaN if absent)
    };
    std::vector<Row> rows_;
};

} // namespace kairos::views
