#include "wheel_guard.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QKeyEvent>
#include <QLineEdit>
#include <QScrollBar>
#include <QSpinBox>

namespace kairos::app {
namespace {

class WheelGuard final : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* o, QEvent* e) override {
        if (e->type() == QEvent::ShortcutOverride) return undoGoesToWindow(o, e);
        if (e->type() != QEvent::Wheel && e->type() != QEvent::Polish) return false;
        auto* w = qobject_cast<QWidget*>(o);
        if (!w || !isSetting(w)) return false;
        if (e->type() == QEvent::Polish) {
            if ((w->focusPolicy() & Qt::WheelFocus) == Qt::WheelFocus)
                w->setFocusPolicy(Qt::StrongFocus);
            return false;
        }
        if (w->hasFocus()) return false;
        // Handled here but not accepted: QApplication offers a wheel event nobody accepted to
        // the parent, up to the scroll area, which scrolls.
        e->ignore();
        return true;
    }

private:
    // Ctrl+Z / Ctrl+Shift+Z in a setting's box whose value is entered (nothing typed and not
    // yet entered) are the window's Undo and Redo: the box's own line edit took them and did
    // nothing (a value typed and entered stayed, and Undo had to come from the menu).
    static bool undoGoesToWindow(QObject* o, QEvent* e) {
        // The box has the focus (its line edit's proxy) and hands the event to the edit.
        auto* box = qobject_cast<QAbstractSpinBox*>(o);
        if (auto* line = qobject_cast<QLineEdit*>(o); line && !box)
            box = qobject_cast<QAbstractSpinBox*>(line->parentWidget());
        if (!box) return false;
        const auto* k = static_cast<QKeyEvent*>(e);
        if (!k->matches(QKeySequence::Undo) && !k->matches(QKeySequence::Redo) &&
            k->keyCombination() != QKeyCombination(Qt::CTRL | Qt::SHIFT, Qt::Key_Z))
            return false;
        bool entered = false;
        if (const auto* d = qobject_cast<const QDoubleSpinBox*>(box))
            entered = d->cleanText() == d->textFromValue(d->value());
        else if (const auto* i = qobject_cast<const QSpinBox*>(box))
            entered =
                i->cleanText().remove(i->locale().groupSeparator()) == QString::number(i->value());
        if (!entered) return false; // an edit in progress (or another box): the box's own
        e->ignore(); // not the box's: the shortcut map offers it to the window's actions
        return true;
    }

    // A control that holds a setting (a scroll bar scrolls, it is not one).
    static bool isSetting(const QWidget* w) {
        return (qobject_cast<const QAbstractSlider*>(w) && !qobject_cast<const QScrollBar*>(w)) ||
               qobject_cast<const QAbstractSpinBox*>(w) || qobject_cast<const QComboBox*>(w);
    }
};

} // namespace

void installWheelGuard() {
    auto* app = qApp;
    if (!app || app->property("kairos.wheel_guard").toBool()) return;
    app->installEventFilter(new WheelGuard(app));
    app->setProperty("kairos.wheel_guard", true);
}

} // namespace kairos::app
