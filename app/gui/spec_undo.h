#pragma once
// Undo and redo over the window's RunSpec (the Edit menu). Every change the user makes to the
// run (a slider, the policy, predictor, device, caching, replicas, router, a class's utility
// function, a value in the parameter table) is one step holding the spec before and after;
// changes by one control less than 0.8 s apart merge, so a drag is one step, not a hundred.
// Undo and redo set the state's spec (WorkbenchState::specChanged, SpecChange::Undo); the
// window then shows it in the panels and runs it. A new change drops what could be redone
// (QUndoStack's rule). Opening a workload, a session or a run log starts a new history.
#include "run/run_spec.h"

#include <QObject>
#include <QString>

class QUndoStack;

namespace kairos::app {

class WorkbenchState;

class SpecUndo : public QObject {
    Q_OBJECT
public:
    explicit SpecUndo(WorkbenchState* state, QObject* parent = nullptr);
    QUndoStack* stack() const { return stack_; }
    // The user changed the run to `next` with control `what` (its name as the Edit menu says
    // it: "C", "policy", "caching"...): the state's spec becomes `next` (SpecChange::Edit) and
    // the change is a step. Nothing happens when `next` is the spec already.
    void edit(const RunSpec& next, const QString& what);
    // The spec set without a step (a workload, a session or a run log opened; the settings
    // a workload brings): the steps before it are gone.
    void reset(const RunSpec& spec);

private:
    WorkbenchState* state_;
    QUndoStack* stack_;
};

} // namespace kairos::app
