#include "spec_undo.h"

#include "workbench_state.h"

#include <QDateTime>
#include <QUndoStack>

namespace kairos::app {

namespace {

// One change of the run, undoable: the spec before and after; consecutive changes by one
// control merge.
class SpecStep : public QUndoCommand {
public:
    SpecStep(WorkbenchState* state, QString what, RunSpec before, RunSpec after)
        : state_(state), what_(std::move(what)), before_(std::move(before)),
          after_(std::move(after)), at_(QDateTime::currentMSecsSinceEpoch()) {
        setText(QObject::tr("change %1").arg(what_));
    }
    void undo() override { state_->setSpec(before_, SpecChange::Undo); }
    void redo() override {
        if (first_) { // pushed as the change is made: edit() sets the spec itself
            first_ = false;
            return;
        }
        state_->setSpec(after_, SpecChange::Undo);
    }
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = static_cast<const SpecStep*>(other);
        if (o->what_ != what_ || o->at_ - at_ > 800) return false;
        after_ = o->after_;
        at_ = o->at_;
        setObsolete(after_ == before_);
        return true;
    }

private:
    WorkbenchState* state_;
    QString what_;
    RunSpec before_, after_;
    qint64 at_;
    bool first_ = true;
};

} // namespace

SpecUndo::SpecUndo(WorkbenchState* state, QObject* parent)
    : QObject(parent), state_(state), stack_(new QUndoStack(this)) {}

void SpecUndo::edit(const RunSpec& next, const QString& what) {
    if (next == state_->spec()) return;
    const RunSpec before = state_->spec();
    state_->setSpec(next, SpecChange::Edit);
    stack_->push(new SpecStep(state_, what, before, next));
}

void SpecUndo::reset(const RunSpec& spec) {
    stack_->clear();
    state_->setSpec(spec, SpecChange::Reset);
}

} // namespace kairos::app
