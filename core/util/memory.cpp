#include "util/memory.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <sys/resource.h>

namespace kairos {

namespace {

constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

// A "Key:   123 kB" line of /proc/self/status or /proc/meminfo, in bytes (0: not there).
// These are small kernel files, never FIFOs or devices: an ifstream is safe here.
std::uint64_t procField(const char* file, const char* key) {
    std::ifstream in(file);
    std::string line;
    const std::size_t n = std::strlen(key);
    while (std::getline(in, line))
        if (line.compare(0, n, key) == 0 && line.size() > n && line[n] == ':') {
            unsigned long long v = 0;
            if (std::sscanf(line.c_str() + n + 1, "%llu", &v) == 1)
                return static_cast<std::uint64_t>(v) * 1024; // the kernel's "kB" is KiB
        }
    return 0;
}

// The first line of a cgroup file as a number; nullopt-like -1 for "max", missing or junk.
double cgroupNumber(const std::string& path) {
    std::ifstream in(path);
    std::string s;
    if (!(in >> s) || s == "max") return -1;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    return end && *end == '\0' && v >= 0 ? v : -1;
}

// This process's memory cgroup: its limit less its use (v2, then v1); infinity when none.
double cgroupRoom(std::string* what) {
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        // v2: "0::/path"; v1: "N:memory:/path" (or a list with memory in it).
        const auto a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        const std::string ctrl = line.substr(a + 1, b - a - 1), rel = line.substr(b + 1);
        std::string dir;
        if (ctrl.empty())
            dir = "/sys/fs/cgroup" + rel;
        else if (("," + ctrl + ",").find(",memory,") != std::string::npos)
            dir = "/sys/fs/cgroup/memory" + rel;
        else
            continue;
        const bool v2 = ctrl.empty();
        // The limit may be set on the cgroup or on one above it: the smallest room wins.
        double room = std::numeric_limits<double>::infinity();
        for (std::string d = dir; d.size() >= std::strlen("/sys/fs/cgroup");) {
            const double lim = cgroupNumber(d + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
            const double use =
                cgroupNumber(d + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
            // v1 reports "no limit" as a huge number (PAGE_COUNTER_MAX pages).
            if (lim > 0 && lim < 1e18) {
                const double r = lim - std::max(0.0, use);
                if (r < room) {
                    room = r;
                    *what = "the memory cgroup's limit (" + bytesText(lim) + ", " +
                            bytesText(std::max(0.0, use)) + " in use)";
                }
            }
            const auto slash = d.find_last_of('/');
            if (slash == std::string::npos || slash == 0) break;
            d = d.substr(0, slash);
        }
        return room;
    }
    return std::numeric_limits<double>::infinity();
}

} // namespace

MemoryUse memoryUse() {
    MemoryUse u;
    u.vm_now = procField("/proc/self/status", "VmSize");
    u.vm_peak = procField("/proc/self/status", "VmPeak");
    u.rss_peak = procField("/proc/self/status", "VmHWM");
    return u;
}

namespace {
std::atomic<double> g_max_memory{0};
} // namespace

void setMaxMemory(double bytes) {
    g_max_memory = bytes > 0 ? bytes : 0;
}

void checkMemoryNeed(double need, const std::string& what, const std::string& remedy) {
    const MemoryBudget b = memoryBudget();
    if (!(need > b.bytes)) return;
    // --max-memory can give more than the machine reports available (swap, memory other
    // programs will free), never more than a hard limit.
    const bool soft =
        b.source.rfind("the machine's", 0) == 0 || b.source.rfind("--max-memory", 0) == 0;
    throw std::invalid_argument(what + " needs about " + bytesText(need) + "; " +
                                bytesText(b.bytes) + " is available (" + b.source + "): " + remedy +
                                (soft ? ", or raise the budget with --max-memory" : ""));
}

MemoryBudget memoryBudget() {
    const double max_memory_bytes = g_max_memory;
    MemoryBudget b;
    b.bytes = std::numeric_limits<double>::infinity();
    auto consider = [&](double room, const std::string& what) {
        if (room < b.bytes) {
            b.bytes = std::max(0.0, room);
            b.source = what;
        }
    };
    struct rlimit rl;
    if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        const double used = double(procField("/proc/self/status", "VmSize"));
        consider(double(rl.rlim_cur) - used, "RLIMIT_AS (" + bytesText(double(rl.rlim_cur)) + ", " +
                                                 bytesText(used) + " mapped already)");
    }
    if (::getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        const double used = double(procField("/proc/self/status", "VmData"));
        consider(double(rl.rlim_cur) - used, "RLIMIT_DATA (" + bytesText(double(rl.rlim_cur)) +
                                                 ", " + bytesText(used) + " in use)");
    }
    std::string cg;
    const double room = cgroupRoom(&cg);
    if (std::isfinite(room)) consider(room, cg);
    if (max_memory_bytes > 0) {
        consider(max_memory_bytes, "--max-memory " + bytesText(max_memory_bytes));
    } else if (const std::uint64_t avail = procField("/proc/meminfo", "MemAvailable")) {
        consider(double(avail),
                 "the machine's available memory (MemAvailable " + bytesText(double(avail)) + ")");
    }
    return b;
}

std::string bytesText(double bytes) {
    if (!std::isfinite(bytes)) return "unlimited";
    char b[48];
    if (bytes >= kGiB)
        std::snprintf(b, sizeof b, "%.3g GiB", bytes / kGiB);
    else if (bytes >= kMiB)
        std::snprintf(b, sizeof b, "%.3g MiB", bytes / kMiB);
    else
        std::snprintf(b, sizeof b, "%.3g KiB", bytes / kKiB);
    return b;
}

double parseMemorySize(const std::string& text) {
    const auto bad = [&](const std::string& why) {
        return std::invalid_argument("'" + text + "': " + why +
                                     " (a size such as 4G, 512MiB or 2000000000 bytes)");
    };
    std::size_t i = 0;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
        ++i;
    if (i == 0) throw bad("not a size");
    double v = 0;
    {
        std::istringstream in(text.substr(0, i));
        in.imbue(std::locale::classic());
        if (!(in >> v) || !in.eof() || !std::isfinite(v)) throw bad("not a number");
    }
    std::string unit = text.substr(i);
    while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
    for (char& c : unit) c = char(std::toupper(static_cast<unsigned char>(c)));
    double scale = 1;
    if (!unit.empty()) {
        const char u = unit[0];
        scale = u == 'K' ? kKiB : u == 'M' ? kMiB : u == 'G' ? kGiB : u == 'T' ? kGiB * 1024 : 0;
        const std::string rest = scale == 0 ? unit : unit.substr(1);
        if (scale == 0 && unit == "B")
            scale = 1;
        else if (scale == 0 || !(rest.empty() || rest == "B" || rest == "IB"))
            throw bad("unknown unit '" + text.substr(i) + "'");
    }
    const double bytes = v * scale;
    if (!(bytes >= kMiB)) throw bad("below 1 MiB");
    if (bytes > kGiB * 1024 * 1024) throw bad("above 1 PiB");
    return bytes;
}

} // namespace kairos
