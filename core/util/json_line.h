#pragma once
// JSON input, read so that a mistake is named by file, line and field:
//  - one line of a JSONL file as a JSON object (parseJsonObjectLine);
//  - a whole JSON document (parseJsonDocument), the syntax error's line named;
//  - where each key of a valid document is (JsonLines), to name the line of a field whose
//    value is wrong.
// A key given twice in one object is refused, naming its path: nlohmann keeps the last one
// silently, so {"C": 1, "C": 2} would be read as one of its two meanings. Every JSON file
// and line Kairos reads goes through these two functions.
// Nesting deeper than kMaxJsonDepth is refused before parsing: nlohmann's parser does not
// recurse, but its dump and comparisons do, so a document nested 100,000 deep would
// overflow the stack later. Every nlohmann error (syntax, a number out of range, bad
// UTF-8) becomes an InputError.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kairos {

constexpr int kMaxJsonDepth = 64;

nlohmann::json parseJsonObjectLine(const std::string& line, const std::string& file, long lineno);

// A whole document; `first_line` is the line number of its first character in `file`.
nlohmann::json parseJsonDocument(std::string_view text, const std::string& file,
                                 long first_line = 1);

// JSON stored by Kairos itself (a database's columns): the value, or a discarded value
// (is_discarded()) when the text is not valid JSON, repeats a key or nests too deep; the
// caller says what was wrong with the row.
nlohmann::json parseJsonLenient(std::string_view text);

// The deepest nesting of arrays and objects in `text` (outside strings), stopping early
// once it passes `limit`.
int jsonDepth(std::string_view text, int limit = kMaxJsonDepth);

// Each key's line in a JSON document, by path: object keys joined by '.', array elements
// as [i] ("ete.prefill.a", "tasks[3].trigger_time"); the root is "". Built by a scan of
// the text, which must be valid JSON (parse it first).
class JsonLines {
public:
    explicit JsonLines(std::string_view text, long first_line = 1);
    // The line of `path`, else of its longest known prefix, else 0.
    long line(const std::string& path) const;

private:
    std::map<std::string, long> lines_;
};

} // namespace kairos
