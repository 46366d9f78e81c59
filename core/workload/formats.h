#pragma once
// The trace formats Kairos reads, in one table: each row names the format, says what the
// reader wants, carries a small file in the format, tells the format from a file's first
// bytes and reads it. Everything that lists formats reads this table: --format's values and
// help, auto-detection and its error message, `kairos-cli formats`, the workbench's file
// filters and Help, the fuzzer's seeds, and tst_readers, which reads every row's sample back
// through detection. Adding a format is a reader and one row here (ARCHITECTURE.md).
#include "model/workload.h"

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace kairos {

struct TraceFormat {
    // How a file of the format starts; detection tries a row only on files of its shape.
    enum class Shape { JsonLines, JsonList, Csv };
    std::string_view name;       // the --format value
    std::string_view title;      // for people: "Azure LLM inference trace"
    std::string_view extensions; // file-dialog patterns, space-separated: "*.csv"
    std::string_view fields;     // what the reader reads, as the file spells it
    std::string_view sample;     // a small file in the format, which the reader accepts
    Shape shape;
    // Whether a file of this shape is in this format: `first` is its first non-empty line
    // (trimmed), `head` up to its first 4 KiB.
    bool (*detect)(std::string_view first, std::string_view head);
    Workload (*read)(std::istream& in, const std::string& name, std::size_t limit);
    // Lengths only, no arrival times: the reader's caller draws the arrivals (--rate).
    bool needs_arrivals = false;
};

// The rows, in detection order.
const std::vector<TraceFormat>& traceFormats();
// The row named `name`, or null ("auto" is not a row: it asks for detection).
const TraceFormat* findTraceFormat(std::string_view name);
// The row whose format the start of a file is in, or null when none is.
const TraceFormat* detectTraceFormat(std::string_view head);
// The names joined by `sep`: "kairos, azure, ...".
std::string traceFormatNames(std::string_view sep = ", ");

} // namespace kairos
