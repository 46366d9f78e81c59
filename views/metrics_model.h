#pragma once
// The metrics table as an item model: one row per headline metric (core's keyMetrics),
// columns metric | value, and with a pinned run also | pinned | change, the change
// coloured by whether it is an improvement (core's compare decides; rows it could not
// judge, such as latency of runs that completed different requests, stay uncoloured).
#include "metrics/compare.h"

#include <QAbstractTableModel>
#include <optional>
#include <vector>

namespace kairos::views {

class MetricsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Metric, Value, Pinned, Change };
    // Rows carry the metric key here, for tests and exports.
    static constexpr int KeyRole = Qt::UserRole + 1;

    explicit MetricsModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    // `pinned` may be null (no comparison). The per-request results (either may be null)
    // let the comparison recompute latency over the requests both runs completed.
    void setRuns(const Summary* current, const Summary* pinned,
                 const std::vector<RequestMetrics>* current_requests = nullptr,
                 const std::vector<RequestMetrics>* pinned_requests = nullptr);
    bool comparing() const { return comparing_; }
    // What the table leaves out or could not judge, in a sentence (empty when nothing):
    // the comparison's note, else the run's coverage when it did not complete everything.
    const QString& note() const { return note_; }
    // The pinned column's heading (the pinned run's name; "pinned" until one is set).
    void setPinnedName(const QString& name);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    static QString formatValue(double v);
    // A metric's value as people read it: durations (keys ending in _ms) in readable units
    // (text::duration: "397 ms", "1.73 h", not "6216993.2"), other numbers by formatValue.
    static QString formatMetric(const std::string& key, double v);
    // A comparison's change as the table and the reports show it: "+12.3 %", "-4 ms" (a
    // signed difference where no relative one is defined), "=" unchanged, "–" unknown, "n/c"
    // not comparable.
    static QString formatChange(const MetricDelta& d);
    // Its label without the unit a readable duration carries itself ("Mean TTFT").
    static QString metricLabel(const std::string& key, const std::string& label);

private:
    std::vector<MetricDelta> rows_; // before = pinned (NaN when not comparing)
    bool comparing_ = false;
    QString note_;
    QString pinned_name_;
};

} // namespace kairos::views
