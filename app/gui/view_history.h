#pragma once
// Back / Forward through the views the user settled on, as KDAB Hotspot's
// FilterAndZoomStack: a view is the time window, the search and "only matches". A time
// window kept 600 ms (not each wheel notch), or a search applied, is a step; a new step
// drops the forward ones; at most 100 are kept.
#include <QObject>
#include <QString>
#include <functional>
#include <vector>

class QTimer;
class QToolButton;

namespace kairos::views {
class TimeRange;
}

namespace kairos::app {

class FindBar;
class WorkbenchState;

class ViewHistory : public QObject {
    Q_OBJECT
public:
    struct View {
        double from = 0, to = 0;
        QString filter;
        bool only_matches = false;
        bool operator==(const View& o) const {
            return from == o.from && to == o.to && filter == o.filter &&
                   only_matches == o.only_matches;
        }
    };
    // Follows `range` and `find` (the steps); records nothing before the state has a run.
    ViewHistory(WorkbenchState* state, views::TimeRange* range, FindBar* find,
                QObject* parent = nullptr);
    // The Back and Forward buttons (enabled when there is a step to go to).
    QToolButton* backButton() const { return back_; }
    QToolButton* forwardButton() const { return forward_; }

    View current() const;
    int size() const { return int(steps_.size()); }
    int position() const { return pos_; }
    void back();
    void forward();
    // The view now as a step (unless it is the current one).
    void record();
    // Forgets every step (another workload).
    void clear();
    // Runs `change` without it becoming a step (a new run's extent, a re-run's search).
    void quietly(const std::function<void()>& change);

private:
    void restore(int pos);
    void enableButtons();

    WorkbenchState* state_;
    views::TimeRange* range_;
    FindBar* find_;
    std::vector<View> steps_;
    int pos_ = -1;
    bool restoring_ = false;
    QTimer* settle_;
    QToolButton *back_, *forward_;
};

} // namespace kairos::app
