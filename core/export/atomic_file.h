#pragma once
// Every file Kairos writes goes through here: the content is written to PATH.tmp and
// renamed over PATH only when complete, so a failure never leaves a half-written file
// (and never destroys a previous good one).
#include <functional>
#include <ostream>
#include <string>

namespace kairos {

// Throws InputError naming `path` if it cannot be written; `fill` may throw too, in which
// case the temporary file is removed and the exception passes on.
void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

} // namespace kairos
