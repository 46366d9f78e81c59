#pragma once
// Small text helpers for the readers: split lines and fields without copying, parse
// numbers strictly (the whole field, nothing else), and fail with InputError naming the
// file, line and field. Hand-written because the formats are plain comma-separated
// lines without quoting, and a CSV library would add a dependency for no gain.
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

// Parsers that throw InputError(file, line, field, ...) with the offending text.
std::int64_t needInt(std::string_view s, const std::string& file, long line, const char* field);
double needDouble(std::string_view s, const std::string& file, long line, const char* field);
// A whole number >= lo (token counts).
int needCount(std::string_view s, const std::string& file, long line, const char* field, int lo);

// Reads the next line (without '\n' or a trailing '\r'); false at end of input.
bool nextLine(std::istream& in, std::string& line);

// "2023-11-16 18:17:03.9799600" -> whole seconds since 1970-01-01 (UTC, no leap seconds)
// and the fraction apart, so that differences keep the 100 ns resolution of the traces.
bool parseTimestamp(std::string_view s, std::int64_t* whole, double* fraction);

} // namespace kairos::text
