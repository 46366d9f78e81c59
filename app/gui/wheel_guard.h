#pragma once
// The mouse wheel never edits a setting it merely passes over. A slider, spin box or combo
// box takes a wheel event only while it has keyboard focus (clicked or tabbed to), as in Qt
// Creator and KDE; otherwise the event goes on to the widget under it, so the panel scrolls.
// Such widgets' focus policy is lowered from WheelFocus to StrongFocus as they are polished,
// so that the wheel itself never gives them focus. (Written here because Qt has no setting
// for it: an application-wide event filter is how Qt Creator and KDE do it.)

namespace kairos::app {

// Installs the guard on the application, once (later calls do nothing).
void installWheelGuard();

} // namespace kairos::app
