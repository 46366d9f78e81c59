#pragma once
// Every file Kairos reads whole comes in through here, with a stated limit, so that no
// input can make a command read or allocate without end or wait for ever:
//   - a regular file larger than the limit, or than the memory this process may still
//     use (util/memory.h), is refused before a byte is read; one that would block when read
//     (a kernel file such as /proc/kmsg) is refused;
//   - a FIFO is opened and read without blocking (O_NONBLOCK): with no writer it reads as
//     empty; a character device (/dev/zero, /dev/urandom) or a FIFO with a writer is read
//     up to the limit (and half the memory available) and refused past it, and refused
//     when nothing comes from it for 10 s (a terminal, /dev/kmsg);
//   - a folder, a socket or a block device is refused;
//   - a text file is refused at its first NUL byte (no text format Kairos reads has one:
//     a binary file given by mistake, /dev/zero) and at a line longer than the line limit,
//     naming the line.
// Each error is an InputError naming the file (and the line), which the programs turn into
// exit 2. The limits are documented beside each kind of input below and in README
// ("Limits on input").
//
// Every path read this way is also remembered as an input of this process: an output of
// the same command may not replace it (util/atomic_file.h).
#include <cstdint>
#include <string>
#include <vector>

namespace kairos {

struct InputLimits {
    std::uint64_t max_bytes;      // the whole file
    std::uint64_t max_line_bytes; // one line (text only; 0: no line limit)
    bool text = true;             // refuse NUL bytes and over-long lines
    const char* what = "input";   // named in the errors: "a workload", "a run spec"
};

// The kinds of input and their limits (one place; README "Limits on input" lists them).
namespace limits {
constexpr std::uint64_t MiB = 1024ull * 1024;
constexpr std::uint64_t GiB = 1024ull * MiB;
// Workload traces: a million-request native workload is ~70 MB; TimelyLLM's traces are one
// JSON document with line breaks.
constexpr InputLimits kWorkload{4 * GiB, 64 * MiB, true, "a workload"};
// Run logs (explain): the largest a run of a million requests with reasons writes.
constexpr InputLimits kRunLog{16 * GiB, 256 * MiB, true, "a run log"};
// RunSpecs, TOML configurations, quality curves, device profiles, sweep definitions.
constexpr InputLimits kSettings{64 * MiB, 16 * MiB, true, "a settings file"};
// Measurement tables (CSV) and benchmark tables.
constexpr InputLimits kTable{1 * GiB, 16 * MiB, true, "a table"};
// A sweep's journal.
constexpr InputLimits kJournal{4 * GiB, 64 * MiB, true, "a sweep journal"};
} // namespace limits

// The whole content of `path` within `lim`; throws InputError naming the file.
std::string readInputFile(const std::string& path, const InputLimits& lim);

// The bytes of `data` (already read from `name`) checked as text within `lim`: the first
// NUL byte or over-long line is an InputError naming its line.
void checkText(const std::string& data, const std::string& name, const InputLimits& lim);

// A file a command finds by itself (in a data folder it was given, beside a trace, in a
// profile folder) must be a regular file: checked here without opening it, so that a FIFO
// is never waited on and a link to /dev/zero never read; the file is then remembered as an
// input (noteInput) so that no output of the same command replaces it. Throws InputError
// naming the file: "no such file" followed by `missing_hint`, or what it is instead.
// The readers then read it with readInputFile (bounded, NUL-checked).
void requireRegularFile(const std::string& path, const std::string& missing_hint = "");

// Remembers `path` as an input of this process (readInputFile does it itself; readers that
// open a file their own way, the store, the weights, call it).
void noteInput(const std::string& path);

// Forgets `path` as an input (the workbench's session, which Save may write over as the
// file it came from).
void forgetInput(const std::string& path);

// What this process has read or opened as input, in order (paths as given).
std::vector<std::string> inputsOfThisProcess();

} // namespace kairos
