#include "util/input_file.h"

#include "util/huge_pages.h"
#include "util/input_error.h"
#include "util/memory.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

// Written against POSIX open(2), fstat(2) and read(2) by hand: an ifstream cannot open a
// FIFO without waiting for a writer, nor say what kind of file it opened.

namespace kairos {

namespace {

std::mutex g_inputs_mutex;
std::vector<std::string>& inputs() {
    static std::vector<std::string> v;
    return v;
}

std::string sizeText(std::uint64_t bytes) {
    char b[48];
    if (bytes >= limits::GiB)
        std::snprintf(b, sizeof b, "%.4g GiB", double(bytes) / double(limits::GiB));
    else if (bytes >= limits::MiB)
        std::snprintf(b, sizeof b, "%.4g MiB", double(bytes) / double(limits::MiB));
    else
        std::snprintf(b, sizeof b, "%llu bytes", static_cast<unsigned long long>(bytes));
    return b;
}

// Scans `data[from, to)` for what text may not hold; `line` and `line_bytes` carry the
// position across pieces.
void scanText(const char* data, std::size_t n, const std::string& name, const InputLimits& lim,
              long* line, std::uint64_t* line_bytes) {
    const char* p = data;
    const char* end = data + n;
    while (p < end) {
        const char* nl = static_cast<const char*>(std::memchr(p, '\n', std::size_t(end - p)));
        const char* stop = nl ? nl : end;
        if (std::memchr(p, '\0', std::size_t(stop - p)))
            throw InputError(name, *line, "",
                             std::string("a NUL byte: not a text file (") + lim.what +
                                 " is text: JSON, JSONL, CSV or TOML)");
        *line_bytes += std::uint64_t(stop - p);
        if (lim.max_line_bytes && *line_bytes > lim.max_line_bytes)
            throw InputError(name, *line, "",
                             "the line is longer than " + sizeText(lim.max_line_bytes) +
                                 ", the limit for a line of " + lim.what);
        if (!nl) break;
        ++*line;
        *line_bytes = 0;
        p = nl + 1;
    }
}

} // namespace

void noteInput(const std::string& path) {
    std::lock_guard<std::mutex> lock(g_inputs_mutex);
    auto& v = inputs();
    if (std::find(v.begin(), v.end(), path) == v.end()) v.push_back(path);
}

void forgetInput(const std::string& path) {
    std::lock_guard<std::mutex> lock(g_inputs_mutex);
    auto& v = inputs();
    v.erase(std::remove(v.begin(), v.end(), path), v.end());
}

std::vector<std::string> inputsOfThisProcess() {
    std::lock_guard<std::mutex> lock(g_inputs_mutex);
    return inputs();
}

void requireRegularFile(const std::string& path, const std::string& missing_hint) {
    if (path.empty()) throw InputError(path, 0, "", "an empty path names no file");
    if (path.find('\0') != std::string::npos)
        throw InputError(path.c_str(), 0, "", "a path with a NUL byte names no file");
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
        struct stat lst;
        if (errno == ENOENT && ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
            throw InputError(path, 0, "", "is a link to nothing");
        if (errno == ENOENT)
            throw InputError(path, 0, "",
                             "no such file" + (missing_hint.empty() ? "" : " " + missing_hint));
        throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) throw InputError(path, 0, "", "is a folder, not a file");
    if (!S_ISREG(st.st_mode))
        throw InputError(path, 0, "",
                         std::string("is ") +
                             (S_ISFIFO(st.st_mode)  ? "a FIFO"
                              : S_ISCHR(st.st_mode) ? "a character device"
                              : S_ISBLK(st.st_mode) ? "a block device"
                                                    : "a socket") +
                             ", not a regular file: files found in a folder are read only when "
                             "they are regular files");
    noteInput(path);
}

void checkText(const std::string& data, const std::string& name, const InputLimits& lim) {
    long line = 1;
    std::uint64_t line_bytes = 0;
    scanText(data.data(), data.size(), name, lim, &line, &line_bytes);
}

std::string readInputFile(const std::string& path, const InputLimits& lim) {
    if (path.empty()) throw InputError(path, 0, "", "an empty path names no file");
    if (path.find('\0') != std::string::npos)
        throw InputError(path.c_str(), 0, "",
                         "a path with a NUL byte names no file (the name ends at the NUL)");
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        if (errno == ENOENT) throw InputError(path, 0, "", "no such file");
        if (errno == EISDIR) throw InputError(path, 0, "", "is a folder, not a file");
        throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st;
    if (::fstat(fd, &st) != 0)
        throw InputError(path, 0, "", std::string("cannot open: ") + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw InputError(path, 0, "", "is a folder, not a file");
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
        throw InputError(path, 0, "", "is not a file that can be read (a socket or a disk)");
    if (S_ISREG(st.st_mode) && std::uint64_t(st.st_size) > lim.max_bytes)
        throw InputError(path, 0, "",
                         "is " + sizeText(std::uint64_t(st.st_size)) + ", larger than " +
                             sizeText(lim.max_bytes) + ", the limit for " + lim.what);
    // A file this process could not hold: refused before a byte is read (util/memory.h).
    if (S_ISREG(st.st_mode))
        checkMemoryNeed(double(st.st_size),
                        "reading " + path + " (" + sizeText(std::uint64_t(st.st_size)) + ")",
                        "give a smaller file");
    noteInput(path);
    // Never blocking: a regular file that would block (a kernel file such as /proc/kmsg) is
    // refused; a FIFO or a device is waited on for at most kStallSeconds without a byte
    // (a FIFO whose writer has gone reads as its end; a terminal or /dev/kmsg that never
    // ends is refused), and may not grow past the memory this process has (util/memory.h).
    constexpr int kStallSeconds = 10;
    const bool stream = !S_ISREG(st.st_mode);
    const double room = stream ? memoryBudget().bytes : 0;
    std::string data;
    if (S_ISREG(st.st_mode)) {
        data.reserve(std::size_t(st.st_size));
        adviseHugePages(data.data(), data.capacity()); // util/huge_pages.h
    }
    long line = 1;
    std::uint64_t line_bytes = 0;
    char buf[1 << 16];
    while (true) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!stream)
                throw InputError(path, 0, "",
                                 "blocks when read (a kernel file such as /proc/kmsg?): not a "
                                 "file to read");
            struct pollfd pfd = {fd, POLLIN, 0};
            int ready;
            do {
                ready = ::poll(&pfd, 1, kStallSeconds * 1000);
            } while (ready < 0 && errno == EINTR);
            if (ready == 0)
                throw InputError(path, 0, "",
                                 "nothing came from it for " + std::to_string(kStallSeconds) +
                                     " s (a terminal or a device that does not end?)");
            continue;
        }
        if (n < 0)
            throw InputError(path, 0, "", std::string("read failed: ") + std::strerror(errno));
        if (n == 0) break;
        if (lim.text) scanText(buf, std::size_t(n), path, lim, &line, &line_bytes);
        if (data.size() + std::size_t(n) > lim.max_bytes)
            throw InputError(path, 0, "",
                             "is larger than " + sizeText(lim.max_bytes) + ", the limit for " +
                                 lim.what);
        if (stream && double(data.size() + std::size_t(n)) > room / 2)
            throw InputError(path, 0, "",
                             "is more than half of the memory available to read it (" +
                                 sizeText(std::uint64_t(room)) + ": " + memoryBudget().source +
                                 "): give a smaller input");
        data.append(buf, std::size_t(n));
    }
    return data;
}

} // namespace kairos
