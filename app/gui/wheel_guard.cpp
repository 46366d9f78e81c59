#include "wheel_guard.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QScrollBar>

namespace kairos::app {
namespace {

class WheelGuard final : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* o, QEvent* e) override {
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
