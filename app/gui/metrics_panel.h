#pragma once
// The Metrics panel: the shown run's metrics (vLLM's names) and, with a pinned run, its
// values and the change (green better, red worse, italic where only the requests both
// completed are compared); under the table, in words, what it leaves out or cannot judge.
// It follows the shared state (the shown and pinned runs, the pinned run's notes); Pin
// this run / Unpin are asked of the window.
#include "sim_runner.h"

#include <QStringList>
#include <QWidget>
#include <functional>

class QLabel;
class QTableView;

namespace kairos::views {
class MetricsModel;
}

namespace kairos::app {

class WorkbenchState;

class MetricsPanel : public QWidget {
    Q_OBJECT
public:
    explicit MetricsPanel(QWidget* parent = nullptr);
    // Shows `state`'s run and pinned run whenever either changes.
    // `pinned_name` names the pinned run in the table's heading.
    void attach(WorkbenchState* state, std::function<QString()> pinned_name = nullptr);
    // The run and the pinned one (either may be null); `notes` go above the table's own
    // note (a pinned stored run of another workload, one without overlays).
    void show(const RunView* run, const RunView* pinned, const QStringList& notes);
    views::MetricsModel* model() const { return model_; }
    // The width that shows every column whole (the window fits its dock to it, capped).
    int wantedWidth() const;
    int minimumTableWidth() const;
    QTableView* table() const { return table_; }
    // Beside a pinned run: the names' column wrapped at their longest word.
    int wrappedNameWidth() const;

    int columns() const { return columns_; } // metric, value (and pinned, change)

Q_SIGNALS:
    void pinRequested();
    void unpinRequested();
    // The table's columns changed (a pin came or went): its wanted width changed.
    void columnsChanged();

private:
    views::MetricsModel* model_ = nullptr;
    QTableView* table_ = nullptr;
    QLabel* note_ = nullptr;
    int columns_ = -1, rows_ = -1;
};

} // namespace kairos::app
