#pragma once
// Small text helpers for the readers: split lines and fields without copying, parse
// numbers strictly (the whole field, nothing else), and fail with InputError naming the
// file, line and field. Hand-written because the formats are comma-separated lines whose
// fields need at most RFC 4180's quoting within a line (no field Kairos reads spans lines),
// and a CSV library would add a dependency for no gain.
#include "util/input_error.h"

#include <algorithm>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace kairos::text {

std::string_view trim(std::string_view s);
// Splits on `sep`; fields are trimmed. Reuses `out`.
void split(std::string_view line, char sep, std::vector<std::string_view>& out);

// Strict parsers: the trimmed field must be exactly one number.
bool parseInt64(std::string_view s, std::int64_t* out);
bool parseDouble(std::string_view s, double* out); // finite values only
// A number as an option or a parameter gives it: exactly a decimal number (no blanks
// around it, no hexadecimal, no "inf"), finite, and not so small that it reads as 0
// ("1e-400"). parseDouble is for fields of files, which may be padded.
bool parseNumberStrict(std::string_view s, double* out);

// Parsers that throw InputError(file, line, field, ...) with the offending text.
std::int64_t needInt(std::string_view s, const std::string& file, long line, const char* field);
double needDouble(std::string_view s, const std::string& file, long line, const char* field);
// A whole number >= lo (token counts).
int needCount(std::string_view s, const std::string& file, long line, const char* field, int lo);
// A token count in [lo, kMaxRequestTokens].
int needTokens(std::string_view s, const std::string& file, long line, const char* field, int lo);
// A time in seconds in [0, kMaxSeconds].
double needSeconds(std::string_view s, const std::string& file, long line, const char* field);

// Reads the next line (without '\n' or a trailing '\r'); false at end of input.
bool nextLine(std::istream& in, std::string& line);

// "2023-11-16 18:17:03.9799600" -> whole seconds since 1970-01-01 (UTC, no leap seconds)
// and the fraction apart, so that differences keep the 100 ns resolution of the traces.
bool parseTimestamp(std::string_view s, std::int64_t* whole, double* fraction);

// `s` made safe to print to a terminal in one line: valid UTF-8 text is kept; control
// characters (C0, DEL and C1, so no escape sequence passes), newlines included, and bytes
// that are not valid UTF-8 are written as \xNN; a backslash is doubled.
std::string printable(std::string_view s);
// printf into a string (reports built in one place and printed or written elsewhere).
std::string formatted(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// A duration (or a time on a run's clock) for people, with one rule everywhere: the
// largest unit of µs, ms, s, min and h in which it is at least 1, three significant
// digits ("850 µs", "12.3 ms", "1.50 s", "2.25 min", "1.73 h"); 0 is "0 s"; negative
// values carry their sign; NaN and infinities are "–".
std::string duration(double seconds);

// The same for an axis tick: a round number of the largest unit it is one of exactly
// ("10 ms", "1 s", "100 s", "10 min"), else as duration() chooses, so a log axis reads
// 100 ms, 1 s, 10 s, 100 s, not 100, 1000, 10⁴ (nor "1.67 min").
std::string durationTick(double seconds);

// One CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or
// a line break; as it is otherwise.
std::string csvField(const std::string& s);

// One CSV row (RFC 4180 within a line): fields split on commas and trimmed; a field in
// double quotes may hold commas, and "" stands for one quote. The quoted text is unescaped
// in place in `line`, which the views in `out` then point into. Throws InputError naming
// the file and line for a quote left open at the line's end (a field may not span lines),
// text after a closing quote, or a quote inside an unquoted field.
void splitCsvRow(std::string& line, std::vector<std::string_view>& out, const std::string& file,
                 long lineno);

// Header of a CSV file: finds columns by name so that column order does not matter. A
// name given twice is refused (which of the two would be read?).
class CsvHeader {
public:
    CsvHeader(std::istream& in, const std::string& file) : file_(file) {
        std::string line;
        while (text::nextLine(in, line)) {
            ++lineno_;
            if (!text::trim(line).empty()) break;
        }
        if (text::trim(line).empty()) throw InputError(file, 0, "", "empty file: no header line");
        // Strip a UTF-8 byte-order mark.
        if (line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
        text_ = line;
        splitCsvRow(text_, cols_, file, lineno_);
        for (std::size_t i = 0; i < cols_.size(); ++i)
            for (std::size_t k = 0; k < i; ++k)
                if (!cols_[i].empty() && cols_[i] == cols_[k])
                    throw InputError(file, lineno_, std::string(cols_[i]),
                                     "the column is named twice in the header (columns " +
                                         std::to_string(k + 1) + " and " + std::to_string(i + 1) +
                                         ")");
    }
    std::size_t column(const char* name) const {
        for (std::size_t i = 0; i < cols_.size(); ++i)
            if (cols_[i] == name) return i;
        throw InputError(file_, lineno_, name, "missing column in the header");
    }
    bool has(const char* name) const {
        return std::find(cols_.begin(), cols_.end(), name) != cols_.end();
    }
    std::size_t count() const { return cols_.size(); }
    long lines() const { return lineno_; }

private:
    const std::string& file_;
    long lineno_ = 0;
    std::string text_;
    std::vector<std::string_view> cols_;
};

// How many fields a row may have: exactly the header's (a longer row has a field no column
// names: a comma too many, or columns shifted), or at least as many where the last column
// is free text that takes the rest of the line, commas included (a source note).
enum class CsvRowWidth { Exact, LastTakesRest };

// Iterates the data rows, checking each one's width.
template <class Fn>
void forCsvRows(std::istream& in, const std::string& file, const CsvHeader& h, std::size_t limit,
                Fn&& fn, CsvRowWidth width = CsvRowWidth::Exact) {
    std::string line;
    std::vector<std::string_view> f;
    long lineno = h.lines();
    std::size_t rows = 0;
    while (text::nextLine(in, line)) {
        ++lineno;
        if (text::trim(line).empty()) continue;
        splitCsvRow(line, f, file, lineno);
        if (width == CsvRowWidth::Exact ? f.size() != h.count() : f.size() < h.count())
            throw InputError(file, lineno, "",
                             "expected " + std::to_string(h.count()) + " fields, found " +
                                 std::to_string(f.size()) +
                                 (f.size() > h.count() ? " (more than the header names)" : ""));
        fn(f, lineno);
        if (limit && ++rows >= limit) break;
    }
}

} // namespace kairos::text
