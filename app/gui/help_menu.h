#pragma once
// Help: the keyboard and mouse (from the menus' own actions, never stale), what the metrics
// mean, the workload formats (the readers' table), the policies and papers (the registry),
// and About.
#include <QString>

class QMainWindow;
class QMenuBar;

namespace kairos::app {

// Adds the Help menu to `window`'s menu bar (last: its shortcut list reads the others).
void addHelpMenu(QMainWindow* window);
// Every shortcut of `bar`'s menus, then what the mouse does, as an HTML table.
QString shortcutsHelp(const QMenuBar* bar);

} // namespace kairos::app
