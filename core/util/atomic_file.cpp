#include "util/atomic_file.h"

#include "util/input_error.h"
#include "util/input_file.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <mutex>
#include <random>
#include <sstream>
#include <streambuf>
#include <sys/stat.h>
#include <unistd.h>

// Written against POSIX and Linux's open(2), linkat(2) and rename(2) by hand: no library
// at hand in the core offers an exclusive, link-safe temporary in a chosen folder (Qt's
// QSaveFile does, but the core has no Qt).

namespace kairos {

// Named, not in the anonymous namespace: OutputBatch::Staged has a field of it.
namespace atomic_file_detail {
enum class Target { Absent, Regular, InPlace };
} // namespace atomic_file_detail
using atomic_file_detail::Target;

namespace {

std::atomic<bool> g_guard_inputs{false};
std::atomic<bool> g_files_only{false};
std::mutex g_protected_mutex;
std::vector<std::string>& protectedPaths() {
    static std::vector<std::string> v;
    return v;
}

// An output may not be a path the workbench protects (its run's inputs).
void refuseProtected(const std::string& path, const std::string& id) {
    std::lock_guard<std::mutex> lock(g_protected_mutex);
    for (const auto& in : protectedPaths())
        if (fileIdentity(in) == id)
            throw InputError(path, 0, "",
                             "is also an input of this run (" + in +
                                 "): writing it would replace what was read; choose another "
                                 "file");
}

void refuseNamelessPath(const std::string& path) {
    if (path.empty()) throw InputError("<output>", 0, "", "an empty path names no file to write");
    if (path.find('\0') != std::string::npos)
        throw InputError(path.c_str(), 0, "", "a path with a NUL byte names no file");
}

[[noreturn]] void refuseInPlace(const std::string& path) {
    throw InputError(path, 0, "",
                     "is a device or a pipe, not a regular file: the workbench writes only files "
                     "(choose a file name)");
}

// close(2) checked: on a network or quota-limited file system the last write's error may
// only be reported here.
void closeChecked(int fd, const std::string& path) {
    if (::close(fd) != 0 && errno != EINTR)
        throw InputError(path, 0, "",
                         std::string("write failed at close: ") + std::strerror(errno) +
                             " (disk full?)");
}

// An ostream's buffer over a file descriptor; a failed write marks the stream bad.
class FdBuf : public std::streambuf {
public:
    explicit FdBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
    bool failed() const { return failed_; }
    int error() const { return error_; }

protected:
    int_type overflow(int_type ch) override {
        if (!flush()) return traits_type::eof();
        if (!traits_type::eq_int_type(ch, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(ch);
            pbump(1);
        }
        return traits_type::not_eof(ch);
    }
    int sync() override { return flush() ? 0 : -1; }

private:
    bool flush() {
        const char* p = pbase();
        std::size_t left = static_cast<std::size_t>(pptr() - pbase());
        while (left > 0) {
            const ssize_t n = ::write(fd_, p, left);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                failed_ = true;
                error_ = n < 0 ? errno : ENOSPC;
                return false;
            }
            p += n;
            left -= static_cast<std::size_t>(n);
        }
        setp(buf_, buf_ + sizeof buf_);
        return true;
    }
    int fd_;
    bool failed_ = false;
    int error_ = 0;
    char buf_[1 << 16];
};

std::string folderOf(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string baseOf(const std::string& path) {
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string randomSuffix() {
    static std::atomic<unsigned> counter{0};
    std::random_device rd;
    char b[32];
    std::snprintf(b, sizeof b, "%08x%04x", rd(), counter++ & 0xffffu);
    return b;
}

// Tries `make(name)` on fresh random names beside `path` until it succeeds (true) or
// fails for another reason than the name being taken (false, errno set).
template <class Make> bool freshName(const std::string& path, std::string* name, Make&& make) {
    const std::string dir = folderOf(path);
    for (int tries = 0; tries < 100; ++tries) {
        *name = dir + "/." + baseOf(path) + ".kairos-" + randomSuffix();
        if (make(*name)) return true;
        if (errno != EEXIST) return false;
    }
    return false;
}

// What is at `path` now, and whether it may be replaced. A symbolic link is the user's
// way of naming another file: what it points to is judged, and written (`*resolved`).
Target targetKind(const std::string& path, std::string* resolved, bool* via_link = nullptr) {
    *resolved = path;
    if (via_link) *via_link = false;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return Target::Absent;
        throw InputError(path, 0, "", std::string("cannot write: ") + std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
        if (::stat(path.c_str(), &st) != 0) { // a dangling link: not followed into a place
            if (errno == ENOENT)              // nobody chose
                throw InputError(path, 0, "", "is a link to nothing: not written through");
            throw InputError(path, 0, "", std::string("cannot write: ") + std::strerror(errno));
        }
        // /dev/stdout links to /proc/self/fd/1, which links to "pipe:[N]", a name realpath
        // cannot resolve: a device or pipe is written in place through the link itself.
        if (via_link) *via_link = true;
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return Target::InPlace;
        char* real = ::realpath(path.c_str(), nullptr);
        if (!real)
            throw InputError(path, 0, "", std::string("cannot write: ") + std::strerror(errno));
        *resolved = real;
        std::free(real);
        // One of this process's own descriptors (/dev/stdout redirected to a file): the
        // shell's file is appended to in place, never replaced behind the shell's back.
        if (resolved->rfind("/proc/", 0) == 0 && S_ISREG(st.st_mode)) {
            *resolved = path;
            return Target::InPlace;
        }
    }
    if (S_ISREG(st.st_mode)) return Target::Regular;
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return Target::InPlace;
    if (S_ISDIR(st.st_mode)) throw InputError(path, 0, "", "is a folder, not a file to write");
    throw InputError(path, 0, "", "exists and is not a regular file: not replaced");
}

void writeAll(int fd, const std::string& data, const std::string& path) {
    const char* p = data.data();
    std::size_t left = data.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw InputError(path, 0, "", std::string("write failed: ") + std::strerror(errno));
        p += n;
        left -= static_cast<std::size_t>(n);
    }
}

} // namespace

// One output: its content written to an unnamed or exclusively created temporary, or
// kept in memory for a target written in place.
struct OutputBatch::Staged {
    std::string path; // where it is written (a link's target)
    Target kind = Target::Absent;
    int fd = -1;
    bool unnamed = false;  // O_TMPFILE: no name until commit
    bool via_link = false; // an in-place target named through a symbolic link
    std::string tmp;       // the temporary's name (named temporaries, or after linking)
    std::string data;      // in-place targets
    std::string identity;  // fileIdentity() of the path as given

    ~Staged() {
        if (fd >= 0) ::close(fd);
        if (!tmp.empty()) ::unlink(tmp.c_str());
    }

    void create() {
#ifdef O_TMPFILE
        fd = ::open(folderOf(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        if (fd >= 0) {
            unnamed = true;
            keepModeOf(path);
            return;
        }
#endif
        std::string name;
        if (freshName(path, &name, [&](const std::string& n) {
                fd = ::open(n.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
                return fd >= 0;
            })) {
            tmp = name;
            keepModeOf(path);
            return;
        }
        throw InputError(path, 0, "",
                         std::string("cannot write (does the folder exist?): ") +
                             std::strerror(errno));
    }

    // A file that replaces another keeps its permissions (a 600 file stays private, a 444
    // one read-only) and, where this process may set them, its owner and group.
    void keepModeOf(const std::string& target) {
        struct stat st;
        if (::stat(target.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
        if (::fchmod(fd, st.st_mode & 07777) != 0) return;
        if (st.st_uid != ::geteuid() || st.st_gid != ::getegid())
            (void)!::fchown(fd, st.st_uid, st.st_gid);
    }

    void fill(const std::function<void(std::ostream&)>& f) {
        std::string resolved;
        kind = targetKind(path, &resolved, &via_link);
        if (kind == Target::InPlace && g_files_only) refuseInPlace(path);
        path = resolved;
        if (kind == Target::InPlace) {
            std::ostringstream out;
            f(out);
            data = out.str();
            return;
        }
        create();
        FdBuf buf(fd);
        std::ostream out(&buf);
        f(out);
        out.flush();
        if (!out || buf.failed())
            throw InputError(path, 0, "",
                             std::string("write failed: ") +
                                 (buf.error() ? std::strerror(buf.error()) : "the stream failed") +
                                 " (disk full?); nothing was written");
    }

    // Gives the unnamed temporary a fresh name beside the target.
    void name() {
        if (!unnamed) return;
        const std::string proc = "/proc/self/fd/" + std::to_string(fd);
        std::string name;
        if (freshName(path, &name, [&](const std::string& n) {
                return ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, n.c_str(), AT_SYMLINK_FOLLOW) ==
                       0;
            })) {
            tmp = name;
            unnamed = false;
            return;
        }
        throw InputError(path, 0, "",
                         std::string("cannot move the finished file into place: ") +
                             std::strerror(errno));
    }

    void commit() {
        if (kind == Target::InPlace) {
            // Through a link only where the link was judged to name a device, a pipe or a
            // descriptor of ours (then appended to); otherwise never following one.
            // Without waiting: a FIFO nobody reads is refused (ENXIO), never waited on.
            const int out = ::open(path.c_str(), (via_link ? O_WRONLY | O_APPEND | O_CLOEXEC
                                                           : O_WRONLY | O_NOFOLLOW | O_CLOEXEC) |
                                                     O_NONBLOCK);
            if (out < 0 && errno == ENXIO)
                throw InputError(path, 0, "", "is a FIFO that nobody reads: nothing written");
            if (out < 0)
                throw InputError(path, 0, "", std::string("cannot write: ") + std::strerror(errno));
            if (const int fl = ::fcntl(out, F_GETFL); fl >= 0)
                ::fcntl(out, F_SETFL, fl & ~O_NONBLOCK);
            try {
                writeAll(out, data, path);
            } catch (...) {
                ::close(out);
                throw;
            }
            closeChecked(out, path);
            return;
        }
        // The target may have changed kind since the content was written.
        std::string again;
        if (targetKind(path, &again) == Target::InPlace || again != path)
            throw InputError(path, 0, "", "became a device or pipe while it was written");
        name();
        // Closed, and the close checked, before the file takes the target's place: a write
        // that fails only at close (NFS, a quota) leaves the previous file as it was.
        const int f = fd;
        fd = -1;
        closeChecked(f, path);
        if (::rename(tmp.c_str(), path.c_str()) != 0)
            throw InputError(path, 0, "",
                             std::string("cannot move the finished file into place: ") +
                                 std::strerror(errno));
        tmp.clear();
    }
};

OutputBatch::OutputBatch() = default;
OutputBatch::~OutputBatch() = default;

void OutputBatch::protect(const std::string& path) {
    protected_.push_back(path);
}

void OutputBatch::add(const std::string& path, const std::function<void(std::ostream&)>& fill) {
    refuseNamelessPath(path);
    const std::string id = fileIdentity(path);
    if (!id.empty()) {
        refuseProtected(path, id);
        std::vector<std::string> ins;
        if (g_guard_inputs) ins = inputsOfThisProcess();
        ins.insert(ins.end(), protected_.begin(), protected_.end());
        for (const auto& in : ins)
            if (fileIdentity(in) == id)
                throw InputError(path, 0, "",
                                 "is also an input of this command (" + in +
                                     "): writing it would replace what was read; choose "
                                     "another file");
        for (const auto& st : staged_)
            if (st->identity == id)
                throw InputError(path, 0, "",
                                 "is written twice by this command: one output would be lost");
    }
    auto s = std::make_unique<Staged>();
    s->identity = id;
    s->path = path;
    s->fill(fill);
    staged_.push_back(std::move(s));
}

void OutputBatch::commit() {
    for (auto& s : staged_) s->commit();
    staged_.clear();
}

void guardProcessInputs(bool on) {
    g_guard_inputs = on;
}

void outputsFilesOnly(bool on) {
    g_files_only = on;
}

void protectFromOutputs(std::vector<std::string> paths) {
    std::lock_guard<std::mutex> lock(g_protected_mutex);
    protectedPaths() = std::move(paths);
}

void refuseInputsOfThisProcess(const std::string& path, const std::string& except) {
    const std::string id = fileIdentity(path);
    if (id.empty()) return;
    const std::string skip = except.empty() ? "" : fileIdentity(except);
    for (const auto& in : inputsOfThisProcess())
        if (const std::string i = fileIdentity(in); i == id && i != skip)
            throw InputError(path, 0, "",
                             "is also an input of this command (" + in +
                                 "): writing it would replace what was read; choose another "
                                 "file");
    refuseProtected(path, id);
}

void checkOutputTarget(const std::string& path) {
    refuseNamelessPath(path);
    std::string resolved;
    if (targetKind(path, &resolved) == Target::InPlace && g_files_only) refuseInPlace(path);
    if (const std::string id = fileIdentity(path); !id.empty()) refuseProtected(path, id);
}

std::string fileIdentity(const std::string& path) {
    // This process's own streams (/dev/stdout, /proc/self/fd/N) are written in place and
    // may be shared, whatever the shell connected them to.
    if (path.empty() || path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0) return "";
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode)) return "";
        return "file:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    }
    // Not there (or a dangling link): the absolute path, its existing folders resolved.
    std::error_code ec;
    const auto abs = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
    return "path:" + (ec ? path : abs.string());
}

void checkOutputRules(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
    auto identities = [](const std::vector<NamedPath>& paths) {
        std::vector<std::string> ids;
        for (const auto& p : paths) {
            if (p.path.empty()) throw InputError(p.label, 0, "", "an empty path names no file");
            ids.push_back(fileIdentity(p.path));
        }
        return ids;
    };
    const auto in_ids = identities(inputs), out_ids = identities(outputs);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        if (out_ids[i].empty()) continue;
        for (std::size_t k = 0; k < inputs.size(); ++k)
            if (in_ids[k] == out_ids[i])
                throw InputError(outputs[i].label, 0, "",
                                 outputs[i].path + " is also the input of " + inputs[k].label +
                                     ": writing it would replace what is read; choose another "
                                     "file");
        for (std::size_t k = 0; k < i; ++k)
            if (out_ids[k] == out_ids[i])
                throw InputError(outputs[i].label, 0, "",
                                 outputs[i].path + " is also the file of " + outputs[k].label +
                                     ": one output would be lost; give each its own file");
    }
}

bool besideIsFine(const std::string& target) {
    struct stat st;
    if (::lstat(target.c_str(), &st) != 0) return errno == ENOENT;
    return S_ISREG(st.st_mode);
}

std::string userStateDir() {
    std::string base;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && x[0] == '/')
        base = x;
    else if (const char* h = std::getenv("HOME"); h && h[0] == '/')
        base = std::string(h) + "/.cache";
    else
        return "";
    const std::string dir = base + "/kairos";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return "";
    ::chmod(dir.c_str(), 0700);
    return dir;
}

AppendFile::AppendFile(const std::string& path, bool fresh) : path_(path) {
    if (path.empty()) throw InputError("<journal>", 0, "", "an empty path names no file");
    const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_APPEND;
    fd_ = ::open(path.c_str(), flags, 0666);
    if (fd_ < 0) {
        if (errno == ELOOP)
            throw InputError(path, 0, "",
                             "is a symbolic link: a journal is not written through one");
        throw InputError(path, 0, "", std::string("cannot write: ") + std::strerror(errno));
    }
    struct stat st;
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd_);
        fd_ = -1;
        throw InputError(path, 0, "", "is not a regular file: a journal is not written there");
    }
    if (st.st_nlink > 1) { // another name of the same file would be overwritten
        ::close(fd_);
        fd_ = -1;
        throw InputError(path, 0, "",
                         "has other names (hard links): a journal is not written into a file "
                         "that other paths name; remove it");
    }
    if (fresh && ::ftruncate(fd_, 0) != 0) {
        ::close(fd_);
        fd_ = -1;
        throw InputError(path, 0, "", std::string("cannot write: ") + std::strerror(errno));
    }
    if (const int fl = ::fcntl(fd_, F_GETFL); fl >= 0) ::fcntl(fd_, F_SETFL, fl & ~O_NONBLOCK);
}

AppendFile::~AppendFile() {
    if (fd_ >= 0) ::close(fd_);
}

void AppendFile::line(const std::string& text) {
    writeAll(fd_, text + "\n", path_);
}

void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill) {
    OutputBatch b;
    b.add(path, fill);
    b.commit();
}

} // namespace kairos
