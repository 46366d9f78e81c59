#pragma once
// Workload readers with format auto-detection, and the native writer.
// Every reader either returns a whole Workload or throws InputError naming the file,
// line and field; none returns a partial result.
#include "model/workload.h"
#include "workload/generators.h"

#include <istream>
#include <ostream>
#include <string>

namespace kairos {

enum class TraceFormat { Auto, Kairos, Azure, Mooncake, Lengths, BurstGpt };

const char* formatName(TraceFormat f);
bool formatFromName(const std::string& s, TraceFormat* out);

struct ReadOptions {
    TraceFormat format = TraceFormat::Auto;
    // Arrivals for formats without timestamps (length-only CSV). Also applied to any
    // format when `override_arrivals` is set.
    ArrivalSpec arrivals;
    bool override_arrivals = false;
    std::size_t limit = 0; // read at most this many requests (0: all)
};

// Decides the format from the first non-empty line (and the file name as a tie-breaker).
TraceFormat detectFormat(const std::string& first_line, const std::string& path);

Workload readWorkload(const std::string& path, const ReadOptions& opt = {});
// The same from a stream; `name` stands for the file in error messages.
Workload readWorkload(std::istream& in, const std::string& name, const ReadOptions& opt = {});

// Individual readers (used by the fuzz targets and tests).
Workload readKairos(std::istream& in, const std::string& name, std::size_t limit = 0);
Workload readAzure(std::istream& in, const std::string& name, std::size_t limit = 0);
Workload readMooncake(std::istream& in, const std::string& name, std::size_t limit = 0);
Workload readLengths(std::istream& in, const std::string& name, std::size_t limit = 0);
Workload readBurstGpt(std::istream& in, const std::string& name, std::size_t limit = 0);

// Native format: a header line, then one request per line (sample_traces/README.md).
void writeKairos(const Workload& w, std::ostream& out);
// Writes to `path` through a temporary file renamed into place: never half-written.
void writeKairosFile(const Workload& w, const std::string& path);

} // namespace kairos
