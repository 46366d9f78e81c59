#pragma once
// Undo and redo of parameter changes (the Edit menu): the Policy panel's sliders, policy and
// predictor. Moves of one parameter less than 0.8 s apart merge, so a drag is one step, not
// a hundred.
#include <QObject>
#include <QString>
#include <QVariant>
#include <functional>
#include <map>

class QUndoStack;

namespace kairos::app {

class PolicyPanel;

class ParamUndo : public QObject {
    Q_OBJECT
public:
    // Starts from the panel's values now.
    explicit ParamUndo(PolicyPanel* panel, QObject* parent = nullptr);
    QUndoStack* stack() const { return stack_; }
    // The user moved parameter `name` ("policy", "predictor" or a slider's name) to `value`.
    void note(const QString& name, const QVariant& value);
    // Sets a parameter as undo does, without recording it.
    void set(const QString& name, const QVariant& value);
    // Runs `change` (the panel set from a session) unrecorded; its values are then what undo
    // goes back to, and the earlier steps are gone.
    void replaceAll(const std::function<void()>& change);

private:
    void takePanelValues();

    PolicyPanel* panel_;
    QUndoStack* stack_;
    std::map<QString, QVariant> values_; // each parameter's value as undo knows it
    bool applying_ = false;
};

} // namespace kairos::app
