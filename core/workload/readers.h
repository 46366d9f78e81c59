#pragma once
// Workload readers with format auto-detection, and the native writer.
// Every reader either returns a whole Workload or throws InputError naming the file,
// line and field; none returns a partial result. The formats themselves: workload/formats.h.
#include "model/workload.h"
#include "workload/formats.h"
#include "workload/generators.h"

#include <atomic>
#include <istream>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>

namespace kairos {

struct ReadOptions {
    const TraceFormat* format = nullptr; // null: detected from the file (workload/formats.h)
    // Arrivals for formats without timestamps (length-only CSV). Also applied to any
    // format when `override_arrivals` is set.
    ArrivalSpec arrivals;
    bool override_arrivals = false;
    std::size_t limit = 0; // read at most this many requests (0: all)
    // For long reads (the workbench reads off its GUI thread): the fraction of the input
    // parsed so far, and a flag that stops the read with ReadCancelled. Either may be null.
    std::atomic<double>* progress = nullptr;
    const std::atomic<bool>* cancel = nullptr;
};

// Thrown when ReadOptions::cancel was set during a read.
struct ReadCancelled : std::runtime_error {
    ReadCancelled() : std::runtime_error("reading cancelled") {}
};

// --format's value: "auto" (*out null: detect it) or a format's name. False for any other.
bool parseTraceFormat(std::string_view name, const TraceFormat** out);

Workload readWorkload(const std::string& path, const ReadOptions& opt = {});
// The same from a stream; `name` stands for the file in error messages.
Workload readWorkload(std::istream& in, const std::string& name, const ReadOptions& opt = {});

// Individual readers (used by the fuzz targets and tests).
Workload readKairos(std::istream& in, const std::string& name, std::size_t limit = 0);
// The same reader with every line through nlohmann's DOM (no simdjson fast path): what
// the fast path must equal, field for field and error for error (tst_readers).
Workload readKairosReference(std::istream& in, const std::string& name, std::size_t limit = 0);
Workload readAzure(std::istream& in, const std::string& name, std::size_t limit = 0);
Workload readMooncake(std::istream& in, const std::string& name, std::size_t limit = 0);
Workload readLengths(std::istream& in, const std::string& name, std::size_t limit = 0);
Workload readBurstGpt(std::istream& in, const std::string& name, std::size_t limit = 0);
// TimelyLLM's job list; plan texts by trace id (see workload/timelyllm.cpp).
Workload readTimelyLlm(std::istream& in, const std::string& name,
                       const std::map<int, std::string>& plans, std::size_t limit = 0);
// The same, with the plans read from a "*trace_set*.json" beside `path`; and, where none
// beside it has a job's trace, from `trace_set` for the traces whose task text every such
// job repeats.
Workload readTimelyLlmFile(std::istream& in, const std::string& path, std::size_t limit = 0);
Workload readTimelyLlmFile(std::istream& in, const std::string& path, std::size_t limit,
                           const std::string& trace_set);

// Native format: a header line, then one request per line (sample_traces/README.md).
void writeKairos(const Workload& w, std::ostream& out);
// Writes to `path` through a temporary file renamed into place: never half-written.
void writeKairosFile(const Workload& w, const std::string& path);

} // namespace kairos
