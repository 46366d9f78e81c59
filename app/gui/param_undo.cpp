#include "param_undo.h"

#include "param_slider.h"
#include "policy_panel.h"

#include <QDateTime>
#include <QUndoStack>

namespace kairos::app {

namespace {

// One parameter change, undoable; consecutive moves of one parameter merge.
class ParamChange : public QUndoCommand {
public:
    ParamChange(ParamUndo* u, QString name, QVariant before, QVariant after)
        : u_(u), name_(std::move(name)), before_(std::move(before)), after_(std::move(after)),
          at_(QDateTime::currentMSecsSinceEpoch()) {
        setText(QObject::tr("change %1").arg(name_));
    }
    void undo() override { u_->set(name_, before_); }
    void redo() override {
        if (first_) { // pushed after the change was made: nothing to do
            first_ = false;
            return;
        }
        u_->set(name_, after_);
    }
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = static_cast<const ParamChange*>(other);
        if (o->name_ != name_ || o->at_ - at_ > 800) return false;
        after_ = o->after_;
        at_ = o->at_;
        setObsolete(after_ == before_);
        return true;
    }

private:
    ParamUndo* u_;
    QString name_;
    QVariant before_, after_;
    qint64 at_;
    bool first_ = true;
};

} // namespace

ParamUndo::ParamUndo(PolicyPanel* panel, QObject* parent)
    : QObject(parent), panel_(panel), stack_(new QUndoStack(this)) {
    takePanelValues();
}

void ParamUndo::takePanelValues() {
    values_[QStringLiteral("policy")] = panel_->policy();
    values_[QStringLiteral("predictor")] = panel_->predictor();
    for (const auto& [name, w] : panel_->sliders()) values_[name] = w->value();
}

void ParamUndo::note(const QString& name, const QVariant& value) {
    QVariant& last = values_[name];
    if (applying_ || !last.isValid()) {
        last = value;
        return;
    }
    if (last == value) return;
    stack_->push(new ParamChange(this, name, last, value));
    last = value;
}

void ParamUndo::set(const QString& name, const QVariant& value) {
    applying_ = true;
    values_[name] = value;
    if (name == QStringLiteral("policy"))
        panel_->setPolicy(value.toString());
    else if (name == QStringLiteral("predictor"))
        panel_->setPredictor(value.toString());
    else if (views::ParamSlider* s = panel_->slider(name))
        s->setValue(value.toDouble());
    applying_ = false;
}

void ParamUndo::replaceAll(const std::function<void()>& change) {
    applying_ = true;
    change();
    applying_ = false;
    takePanelValues();
    stack_->clear();
}

} // namespace kairos::app
