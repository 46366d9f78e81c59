#pragma once
// The Inspector: why the scheduler did what it did.
//  - "Scheduler at t": the waiting queue in the policy's order with each request's key,
//    the running batch with predicted and true remaining tokens, the suspended requests,
//    KV use and capacity, and the last decision at or before t with each action's reason
//    (the rule that fired and its numbers). It follows the cursor over the timeline or
//    the KV chart, or steps decision by decision (Ctrl+. forward, Ctrl+, back).
//  - The selected request: its predicted against true remaining tokens over time (Trail's
//    refinement converging; an oracle's lines coincide), its key over time where the key
//    is not the prediction (TimelyLLM's PUD priority, a deadline), TimeBill's budget
//    arithmetic, and its story: every event and every decision that touched it.
// Everything is read from the run's log (metrics/explain_view.h); the window's runs
// record their reasons (SimRunner), so the view needs no re-run.
#include "metrics/explain_view.h"
#include "sim_runner.h"

#include <QAbstractTableModel>
#include <QWidget>
#include <array>
#include <memory>

class QCheckBox;
class QCustomPlot;
class QCPItemStraightLine;
class QLabel;
class QListWidget;
class QTableView;
class QToolButton;

namespace kairos::app {

class WorkbenchState;

// The view at t as a table: running (admission order), waiting (policy order), suspended.
class SchedulerViewModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // What decides first, then the facts: a narrow dock shows the numbers that matter.
    enum Column {
        State,
        Pos,
        Req,
        Generated,
        Predicted,
        TrueRem,
        Key,
        Slack,
        Alpha,
        Wcet,
        Prompt,
        Arrival,
        Since,
        Replica, // a fleet's: the replica it was routed to (hidden for one engine)
        ColumnCount
    };
    explicit SchedulerViewModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    void setView(SchedulerView v, QString key_name);
    // The run's workload: the id column shows the trace's ids (rows without it).
    void setWorkload(const Workload* w) { w_ = w; }
    const SchedulerView& view() const { return v_; }
    // The row's request and the section it is in.
    const ViewRow* rowAt(int row, int* section = nullptr) const;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    SchedulerView v_;
    QString key_name_;
    const Workload* w_ = nullptr;
};

class InspectorPanel : public QWidget {
    Q_OBJECT
public:
    // The width the panel needs to show its table's first columns whole (state, id and the
    // most telling of the others; 0 before it is laid out): the window keeps the timeline
    // wide down to this (MainWindow::keepTimelineWide). A narrower table leaves out its less
    // telling columns rather than scrolling, and says which (narrowedColumns).
    int neededWidth() const;
    // The columns left out for width, least telling first; they return as the panel widens.
    const QList<int>& narrowedColumns() const { return narrowed_; }
    explicit InspectorPanel(QWidget* parent = nullptr);
    // Follows `state`'s run and selected request.
    void attach(WorkbenchState* state);
    // The run to inspect (null: none).
    void setRun(std::shared_ptr<const RunView> run);
    // The instant shown; the cursor calls this while "follow the cursor" is on.
    void setTime(double t);
    void followCursor(double t);
    // A click at t (the KV chart): shows t and stops following the cursor.
    void inspectAt(double t);
    // The scheduler table's columns (SchedulerViewModel::Column): by default those with
    // something to say in the view shown (a policy without deadlines has no slack), prompt,
    // arrival and since a right-click on the header away; a choice there is remembered.
    bool columnShown(int column) const;
    void showColumn(int column, bool shown);

    double time() const { return t_; }
    // One decision forward (+1) or back (-1) from the shown instant (decisions that acted).
    bool step(int direction);
    // The request whose story is shown (-1: none) and the time it was picked at.
    void showRequest(int id, double t);
    int request() const { return req_; }
    SchedulerViewModel* model() const {
        const_cast<InspectorPanel*>(this)->catchUp(); // what it would show now
        return model_;
    }
    // What the "last decision" list and the story show, as text (tests, screenshots).
    QStringList decisionLines() const;
    QStringList storyLines() const;
    QString budgetText() const;
    // The request's heading: its id in the trace, agent and class, row, lengths, arrival.
    QString requestTitle() const;
    // False while it still shows an earlier run (hidden, or the run's index being built).
    bool current() const { return !stale_; }
    // Milliseconds the last setTime took (view rebuilt and the table reset).
    double lastUpdateMs() const { return last_ms_; }

Q_SIGNALS:
    // Its table's columns no longer fit at their floors (neededWidth grew).
    void widthWanted();
    // The shown instant changed (the timeline and KV chart draw it).
    void timeChanged(double t);
    // A request picked in the table or a decision (the window selects it).
    void requestPicked(int id, double t);

protected:
    void showEvent(QShowEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    void applyColumns();
    // Hides what columnShown leaves out and what fitColumns left out for width.
    void syncHidden();
    // Sizes the shown columns to the table's width: each its preferred width while they
    // fit, all narrowed in proportion (never below a header's text) when they do not, so a
    // dock a few pixels narrower than planned does not scroll sideways; the last stretches.
    // Where even their floors do not fit, the least telling columns are left out.
    void fitColumns();
    // Applies the run and instant set while hidden or while the run's index was being built
    // (setRun, setTime); without `wait`, only once the index is ready (retried shortly).
    void catchUp(bool wait = true);
    void refreshView();
    void refreshRequest();

    std::shared_ptr<const RunView> run_;
    std::shared_ptr<const ExplainIndex> ix_;
    double t_ = 0;
    int req_ = -1;
    double req_t_ = 0;
    double last_ms_ = 0;
    QLabel* title_ = nullptr;
    QLabel* summary_ = nullptr;
    QToolButton *prev_ = nullptr, *next_ = nullptr;
    QCheckBox* follow_ = nullptr;
    QListWidget* decisions_ = nullptr;
    QTableView* table_ = nullptr;
    SchedulerViewModel* model_ = nullptr;
    QLabel* req_title_ = nullptr;
    bool stale_ = false; // run_ or t_ changed while hidden or before the run's index was built
    bool retry_ = false; // a catchUp is due once the index is ready
    QCustomPlot* chart_ = nullptr;
    QCPItemStraightLine* now_ = nullptr;
    QLabel* budget_ = nullptr;
    QLabel* waits_ = nullptr; // why it waited (metrics/waits.h)
    int floors_width_ = 0;    // the first columns' floors, summed (fitColumns)
    QList<int> narrowed_;     // left out for width (fitColumns)
    QLabel* narrowed_note_ = nullptr;
    QListWidget* story_ = nullptr;
    class QSplitter* split_ = nullptr; // the instant's part over the request's
    QList<int> hidden_;                // the user's choice of hidden columns
    bool columns_chosen_ = false;      // false: the defaults
    std::array<bool, SchedulerViewModel::ColumnCount> has_data_{}; // in the view shown
};

} // namespace kairos::app
