#include "runs_model.h"

#include "metrics_model.h"
#include "util/json_line.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace kairos::views {

void RunsModel::setRuns(std::vector<store::RunInfo> runs) {
    beginResetModel();
    rows_.clear();
    for (auto& r : runs) {
        Row row;
        const auto j = parseJsonLenient(r.summary_json);
        auto num = [&](const char* k) {
            if (!j.is_object()) return std::nan("");
            const auto it = j.find(k);
            return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
        };
        row.completed = num("completed");
        row.mean_ttft = num("mean_ttft_ms");
        row.p99_e2el = num("p99_e2el_ms");
        row.info = std::move(r);
        rows_.push_back(std::move(row));
    }
    endResetModel();
}

const store::RunInfo* RunsModel::runAt(int row) const {
    return row >= 0 && row < rowCount() ? &rows_[std::size_t(row)].info : nullptr;
}

int RunsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int RunsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 9;
}

QVariant RunsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
    const Row& r = rows_[std::size_t(index.row())];
    if (role == RunIdRole) return QVariant::fromValue<qlonglong>(r.info.id);
    const bool numeric = index.column() == Id || index.column() == Requests ||
                         (index.column() >= Completed && index.column() <= P99E2el);
    if (role == Qt::TextAlignmentRole)
        return QVariant::fromValue(numeric ? Qt::AlignRight | Qt::AlignVCenter
                                           : Qt::AlignLeft | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) // every column, shown or hidden, and the rest of the run
        return tr("run %1: %2\n%3: %4 requests, %5 completed\n%6\nparams %7\nlimits %8\n"
                  "stored %9%10, Kairos %11")
            .arg(r.info.id)
            .arg(QString::fromStdString(r.info.policy),
                 QString::fromStdString(r.info.workload_name))
            .arg(r.info.num_requests)
            .arg(MetricsModel::formatValue(r.completed), QString::fromStdString(r.info.exec_model),
                 QString::fromStdString(r.info.params_json),
                 QString::fromStdString(r.info.limits_json),
                 data(index.siblingAtColumn(Created), Qt::DisplayRole).toString(),
                 r.info.label.empty() ? QString()
                                      : tr(", label %1").arg(QString::fromStdString(r.info.label)),
                 QString::fromStdString(r.info.kairos_version));
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case Id:
        return QVariant::fromValue<qlonglong>(r.info.id);
    case Created: // "2026-11-22T08:45:38.471Z" -> "2026-11-22 08:45:38"
        return QString::fromStdString(r.info.created_at.substr(0, 19))
            .replace(QLatin1Char('T'), QLatin1Char(' '));
    case Workload:
        return QString::fromStdString(r.info.workload_name);
    case Requests:
        return QVariant::fromValue<qlonglong>(r.info.num_requests);
    case Policy:
        return QString::fromStdString(r.info.policy);
    case Completed:
        return MetricsModel::formatValue(r.completed);
    case MeanTtft:
        return MetricsModel::formatMetric("mean_ttft_ms", r.mean_ttft);
    case P99E2el:
        return MetricsModel::formatMetric("p99_e2el_ms", r.p99_e2el);
    case Label:
        return QString::fromStdString(r.info.label);
    }
    return {};
}

QVariant RunsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"id",        "policy",   "workload", "requests",     "completed",
                                  "mean TTFT", "p99 E2EL", "label",    "created (UTC)"};
    return section >= 0 && section < 9 ? tr(names[section]) : QVariant();
}

} // namespace kairos::views
