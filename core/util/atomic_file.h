#pragma once
// Every file Kairos writes goes through here: the content is written to a temporary file
// in the target's folder and renamed over the target only when complete, so a failure
// never leaves a half-written file (and never destroys a previous good one).
//
// The temporary is created exclusively and never through a link: an unnamed file
// (O_TMPFILE) linked under a fresh random name only once it is whole, or, where the file
// system has no O_TMPFILE, a fresh random name opened with O_CREAT | O_EXCL | O_NOFOLLOW.
// A process killed while writing leaves nothing behind with O_TMPFILE (the unnamed file
// goes with it). A target that exists and is not a regular file is never replaced: a
// character device or a FIFO (/dev/null, a pipe) is written in place, anything else (a
// folder, a socket, a block device) is refused. A symbolic link as the target names the
// file it points to, which is then judged and written as above (the link stays; a link
// to nothing is refused): /dev/stdout is the pipe or terminal behind it, never a new file.
//
// The output rules (one place, for every command): an output may not be one of the
// command's inputs (a file read by readInputFile, a database, one the caller names) nor
// another output of the same command, compared by device and inode after following links,
// and by absolute path for a file not there yet (devices and pipes may be shared: two
// outputs to /dev/null lose nothing); a replaced file keeps its mode and, where this
// process may set them, its owner and group; a FIFO with no reader is refused rather than
// waited on; an empty path names nothing and is refused.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace kairos {

// Throws InputError naming `path` if it cannot be written; `fill` may throw too, in which
// case the temporary file is removed and the exception passes on.
void writeFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

// Several outputs of one command, all or nothing: each add() writes its file whole to a
// temporary (nothing at the target yet); commit() moves them all into place. If an add()
// throws, or the batch is destroyed before commit(), every temporary is removed and no
// target is touched. (A failure between two renames of commit() leaves the earlier ones
// in place: rename is the only step left, and it fails only on a vanished folder.)
class OutputBatch {
public:
    OutputBatch();
    ~OutputBatch();
    OutputBatch(const OutputBatch&) = delete;
    OutputBatch& operator=(const OutputBatch&) = delete;
    void add(const std::string& path, const std::function<void(std::ostream&)>& fill);
    void commit();
    // Also refuse to replace `path` (an input the reader did not note, e.g. a database).
    void protect(const std::string& path);

private:
    struct Staged;
    std::vector<std::unique_ptr<Staged>> staged_;
    std::vector<std::string> protected_;
};

// A one-command process (kairos-cli, kairos-live) turns this on: then every OutputBatch also
// refuses to replace a file this process read as input (util/input_file.h). Off in the
// workbench, whose commands are its actions (saving a session over the file it came from
// is what Save does).
void guardProcessInputs(bool on);

// The workbench turns this on: then an output that is a device or a pipe (after following a
// link) is refused rather than written in place. A window's Save dialog names files; a
// picture or a report written into /dev/full or a FIFO is a mistake, not a use.
void outputsFilesOnly(bool on);

// Paths no output of this process may replace, whatever the guard above (the workbench's
// current run inputs: its workload file, device profile file and database). Replaces the
// list given before; thread-safe.
void protectFromOutputs(std::vector<std::string> paths);

// The rules every write applies, checked before any work (a dialog's choice, a command
// line's --screenshot): an empty path, a folder, a link to nothing, a device or a pipe
// when outputsFilesOnly is on, a path protected above. Throws InputError naming the path.
void checkOutputTarget(const std::string& path);

// Throws InputError when `path` names a file this process read as an input (other than
// `except`, the file itself when it is read and then appended to, as a resumed journal) or
// a path protected above: for files written outside OutputBatch (a sweep's journal).
void refuseInputsOfThisProcess(const std::string& path, const std::string& except = "");

// What names the same file for the output rules: "file:DEV:INODE" for an existing file
// (links followed), "path:/ABSOLUTE" for a file not there yet, "" for a device, a FIFO or
// anything else that two outputs may share.
std::string fileIdentity(const std::string& path);

// A path with the label that named it ("--json", "the workload").
struct NamedPath {
    std::string label, path;
};
// The output rules over one command's paths, before anything runs: an empty path, an output
// that is an input, two outputs on one file. Throws InputError naming the labels.
void checkOutputRules(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);

// Where a file beside `target` may go (a journal, a temporary): beside it when it is a
// regular file or not there yet; otherwise (a device, /dev/stdout, a pipe) "" and the
// caller uses userStateDir().
bool besideIsFine(const std::string& target);
// The user's cache folder for Kairos ($XDG_CACHE_HOME/kairos, else $HOME/.cache/kairos),
// created 0700 if missing; "" when neither variable names an absolute folder (nothing is
// then written under the current folder by mistake).
std::string userStateDir();

// A file written a line at a time and kept (a sweep's journal): created or opened never
// through a symbolic link (O_NOFOLLOW), never a FIFO or device, each line written whole
// with one write(2) and flushed, so an interruption leaves at most the last line torn.
class AppendFile {
public:
    // `fresh`: start the file anew (an existing regular file is truncated); otherwise
    // append to it. Throws InputError naming the path.
    AppendFile(const std::string& path, bool fresh);
    ~AppendFile();
    AppendFile(const AppendFile&) = delete;
    AppendFile& operator=(const AppendFile&) = delete;
    void line(const std::string& text); // throws InputError when the write fails
    const std::string& path() const { return path_; }

private:
    std::string path_;
    int fd_ = -1;
};

} // namespace kairos
