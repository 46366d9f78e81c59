#pragma once
// The Requests panel: every request of the shown run in a table (the requests CSV's columns:
// core's RequestColumns), sortable by any column, showing Find's matches only while a search
// is on. Linked both ways: picking a row selects the request (its card, its story in the
// Inspector) and brings the timeline to it; a request selected elsewhere (the timeline,
// Find, the Inspector) is the table's current row. Double-click opens the Inspector on it.
// Hidden or behind another tab, it does no work: a run shown meanwhile is read when it
// comes into view (reading 20,000 requests took 3 ms of every slider move's repaint).
#include "model/request.h"

#include <QSet>
#include <QWidget>
#include <functional>

class QLabel;
class QTableView;

namespace kairos::views {
class RequestTableModel;
class RequestFilter;
} // namespace kairos::views

namespace kairos::app {

class WorkbenchState;
class FindBar;

class RequestsPanel : public QWidget {
    Q_OBJECT
public:
    // `reveal` brings the timeline to a request (it scrolls to its row).
    RequestsPanel(WorkbenchState* state, FindBar* find, std::function<void(int)> reveal,
                  QWidget* parent = nullptr);
    QTableView* table() const { return table_; }
    views::RequestTableModel* model() const { return model_; }
    views::RequestFilter* filter() const { return filter_; }
    // The request of table row `row` as shown (sorted, filtered); -1 if none.
    int requestAt(int row) const;
    QString summaryText() const;
    // Its dock's tab raised (QDockWidget::visibilityChanged): a run shown meanwhile is read
    // now. Behind another tab the panel is "visible" to Qt, but in nobody's view.
    void catchUp();

Q_SIGNALS:
    void inspectRequested(); // a row double-clicked

protected:
    void showEvent(QShowEvent* e) override;

private:
    void readRun();     // the shown run into the model (when in view)
    void readMatches(); // Find's matches as the filter
    void showSelection();
    void fitColumns(); // widths from the run's values; empty columns hidden
    void orderColumns();
    void updateSummary();

    WorkbenchState* state_;
    FindBar* find_;
    std::function<void(int)> reveal_;
    QLabel* summary_;
    QTableView* table_;
    views::RequestTableModel* model_;
    views::RequestFilter* filter_;
    bool stale_ = true;        // a run was shown while hidden
    bool syncing_ = false;     // the table follows the state: no selection back
    bool fitting_ = false;     // widths being set by fitColumns, not by the user
    QSet<QString> user_sized_; // columns the user resized keep their width
};

} // namespace kairos::app
