#pragma once
// What the workbench's panels share, in one place: the RunSpec the window runs, the shown
// workload, the shown run, the pinned run (this window's, or a stored one by id), the
// selected request and the time window. The window and its panels read it and change it through it;
// each change is a signal, so a panel follows the others without knowing them.
#include "run_view.h"
#include "time_range.h"

#include <QObject>
#include <cmath>
#include <memory>

namespace kairos::app {

// Why the spec changed: the user moved a control (Edit), Undo or Redo took it back or forth
// (Undo: the panels are to show it), or it was replaced by a workload, session or run log
// opened (Reset).
enum class SpecChange { Edit, Undo, Reset };

class WorkbenchState : public QObject {
    Q_OBJECT
public:
    explicit WorkbenchState(QObject* parent = nullptr)
        : QObject(parent), range_(new views::TimeRange(this)) {}

    // The workload as read or generated (the runs use it rate-scaled and TUF-edited), and
    // its name as shown (a file's name, or the generator's).
    const std::shared_ptr<const Workload>& workload() const { return workload_; }
    const QString& workloadName() const { return workload_name_; }
    // The shown run (null before the first), and the run it is compared with (null: none).
    const std::shared_ptr<const RunView>& run() const { return run_; }
    const std::shared_ptr<const RunView>& pinned() const { return pinned_; }
    // The stored run pinned (-1: none, or this window's run is pinned).
    qint64 pinnedStoredId() const { return pinned_stored_; }
    // About a pinned stored run: why it is of another workload ("" if it is not), and what
    // it has no overlay for and why ("" if it has them all).
    const QString& pinnedOther() const { return pinned_other_; }
    const QString& pinnedNote() const { return pinned_note_; }
    // The pinned run is compared request by request (timeline lane, the card): a run of
    // the shown workload.
    bool pinnedComparable() const { return pinned_ && pinned_other_.isEmpty(); }
    // The request whose card is shown (-1: none) and the time it was picked at.
    int selectedRequest() const { return selected_; }
    double selectedTime() const { return selected_t_; }
    views::TimeRange* range() const { return range_; }
    // The run the window's settings say: what a run is submitted from, a sweep starts from
    // and a session keeps. Its workload part names the shown workload (a file's path, or
    // kMemoryWorkload). Changed through SpecUndo (undoable) or by what opens a workload.
    const RunSpec& spec() const { return spec_; }
    void setSpec(const RunSpec& s, SpecChange why) {
        spec_ = s;
        Q_EMIT specChanged(why);
    }

    // A new workload: the pinned run and the selection no longer apply.
    void setWorkload(std::shared_ptr<const Workload> w, const QString& name) {
        workload_ = std::move(w);
        workload_name_ = name;
        setPinned(nullptr);
        setSelection(-1, 0.0);
        Q_EMIT workloadChanged();
    }
    // A new run. A pinned run of this window's that was of another workload (another file
    // opened since) is not comparable and is dropped first; a stored run the user picked
    // stays (with its warning).
    void setRun(std::shared_ptr<const RunView> r) {
        run_ = std::move(r);
        if (pinned_ && pinned_stored_ < 0 && run_ && pinned_->workload != run_->workload &&
            pinned_->summary.num_requests != run_->summary.num_requests) {
            pinned_.reset();
            pinned_other_.clear();
            pinned_note_.clear();
            Q_EMIT pinnedChanged();
        }
        Q_EMIT runChanged();
    }
    void setPinned(std::shared_ptr<const RunView> r, qint64 stored_id = -1,
                   const QString& note = {}, const QString& other = {}) {
        pinned_ = std::move(r);
        pinned_stored_ = pinned_ ? stored_id : -1;
        pinned_note_ = pinned_ ? note : QString();
        pinned_other_ = pinned_ ? other : QString();
        Q_EMIT pinnedChanged();
    }
    // A run that failed: panels say so (the shown run stays the last good one).
    void reportFailure(const QString& error) { Q_EMIT runFailed(error); }
    void setSelection(int request, double t) {
        // Only a request of the workload shown (a row past its end, or any row before a
        // workload is open, selects nothing).
        if (request < -1 ||
            (request >= 0 && (!workload_ || std::size_t(request) >= workload_->requests.size())))
            request = -1;
        if (!std::isfinite(t)) t = 0.0;
        if (request == selected_ && t == selected_t_) return;
        selected_ = request;
        selected_t_ = t;
        Q_EMIT selectionChanged();
    }

Q_SIGNALS:
    void specChanged(kairos::app::SpecChange why);
    void workloadChanged();
    void runChanged();
    void pinnedChanged();
    void selectionChanged();
    void runFailed(const QString& error);

private:
    views::TimeRange* range_;
    RunSpec spec_;
    std::shared_ptr<const Workload> workload_;
    QString workload_name_, pinned_other_, pinned_note_;
    std::shared_ptr<const RunView> run_, pinned_;
    qint64 pinned_stored_ = -1;
    int selected_ = -1;
    double selected_t_ = 0;
};

} // namespace kairos::app
