#pragma once
// The window's words for what the core says in the command line's: the core names the
// option that sets a value (`--rate-scale`, `--format`), which a user of the window has
// no way to pass; shown in the window, each becomes the control that sets it (or, where no
// control does, where the window says what it accepts). Applied to every error and note
// the window shows from the core.
#include <QString>

namespace kairos::views {

QString windowWords(const QString& text);

} // namespace kairos::views
