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

private:
    struct Staged;
    std::vector<std::unique_ptr<Staged>> staged_;
};

} // namespace kairos
