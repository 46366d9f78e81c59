#pragma once
// Whether a widget is in the user's view: shown, and not behind another tab of its dock
// group (Qt counts a dock behind a tab visible, and its panel too). The window's docks and
// the panels that do work only while seen (the Requests table) ask the same question.
#include <QWidget>

namespace kairos::app {

inline bool inView(const QWidget* w) {
    return w->isVisible() && !w->visibleRegion().isEmpty();
}

} // namespace kairos::app
