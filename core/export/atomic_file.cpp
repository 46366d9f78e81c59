#include "export/atomic_file.h"

#include "model/input_error.h"

#include <cstdio>
#include <fstream>

namespace kairos {

void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
    const std::string tmp = path + ".tmp";
    try {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw InputError(path, 0, "", "cannot write (does the folder exist?)");
        fill(out);
        out.flush();
        if (!out) throw InputError(path, 0, "", "write failed (disk full?)");
    } catch (...) {
        std::remove(tmp.c_str());
        throw;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw InputError(path, 0, "", "cannot move the finished file into place");
    }
}

} // namespace kairos
