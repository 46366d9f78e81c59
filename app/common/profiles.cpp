#include "profiles.h"

#include "util/input_error.h"
#include "util/input_file.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

namespace kairos::app {

namespace {
// $ENV, <exe>/../share/kairos/SUB, then the source tree's copy.
std::vector<std::string> resourceDirs(const char* env_name, const char* sub, const char* source) {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv(env_name); env && *env) dirs.emplace_back(env);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share/kairos" / sub).string());
    // The source tree last (a build run in place); KAIROS_INSTALLED_ONLY=1 leaves it out,
    // which the install test uses to prove the installed copy is found.
    if (const char* only = std::getenv("KAIROS_INSTALLED_ONLY"); !only || std::string(only) != "1")
        dirs.emplace_back(source);
    return dirs;
}
} // namespace

std::vector<std::string> profileDirs() {
    return resourceDirs("KAIROS_PROFILE_DIR", "profiles", KAIROS_SOURCE_PROFILES);
}

std::string experimentsDir() {
    std::error_code ec;
    for (const auto& d :
         resourceDirs("KAIROS_EXPERIMENT_DIR", "experiments", KAIROS_SOURCE_EXPERIMENTS))
        if (fs::is_directory(d, ec)) return d;
    return "";
}

DeviceProfile resolveProfile(const std::string& name, std::string* found_at) {
    std::error_code ec;
    if (fs::is_regular_file(name, ec)) {
        if (found_at) *found_at = name;
        return DeviceProfile::load(name);
    }
    for (const auto& d : profileDirs()) {
        const fs::path p = fs::path(d) / (name + ".json");
        if (fs::is_regular_file(p, ec)) {
            if (found_at) *found_at = p.string();
            return DeviceProfile::load(p.string());
        }
        // Something else under the name (a FIFO, a folder, a link to nothing) is not a
        // profile: said with its path, never waited on or taken as "no such profile".
        if (fs::symlink_status(p, ec).type() != fs::file_type::not_found && !ec)
            requireRegularFile(p.string());
    }
    std::string known;
    for (const auto& n : shippedProfileNames()) known += (known.empty() ? "" : ", ") + n;
    throw InputError("--profile", 0, "",
                     "'" + name + "' is neither a file nor a shipped profile (shipped: " + known +
                         ")");
}

std::vector<std::string> shippedProfileNames() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& d : profileDirs()) {
        if (!fs::is_directory(d, ec)) continue;
        for (const auto& e : fs::directory_iterator(d, ec))
            if (e.path().extension() == ".json" && fs::is_regular_file(e.path(), ec))
                names.push_back(e.path().stem().string());
        if (!names.empty()) break;
    }
    std::sort(names.begin(), names.end());
    return names;
}

RunContext runContext() {
    RunContext ctx;
    ctx.resolve_profile = [](const std::string& name, std::string* found) {
        return resolveProfile(name, found);
    };
    return ctx;
}

} // namespace kairos::app
