#include "util/json_line.h"

#include "util/input_error.h"
#include "util/memory.h"
#include "util/text.h"

#include <algorithm>
#include <functional>
#include <set>
#include <utility>
#include <vector>

namespace kairos {

namespace {
// nlohmann's message without its own prefix ("[json.exception.parse_error.101] parse error
// at line 1, column 59: "), which counted lines within the record, not the file's; the
// column is given by the caller, counted in the file's line.
// `line` (the file's line holding the error, when known) quotes what was read up to the
// column, and a value met where a ',' or the closing bracket belongs is named as the comma
// it nearly always is: nlohmann says only "expected '}'" (an outside test read it as a
// brace to add, on `{"arrival":1.5 "prompt":300}`).
std::string jsonWhat(const nlohmann::json::exception& e, long column, std::string_view line = {}) {
    std::string what = e.what();
    if (const auto bracket = what.find("] ");
        what.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos)
        what.erase(0, bracket + 2);
    if (what.rfind("parse error", 0) == 0)
        if (const auto colon = what.find(": "); colon != std::string::npos)
            what.erase(0, colon + 2);
    const bool missing_comma = what.find(" - unexpected ") != std::string::npos &&
                               what.find("end of input") == std::string::npos &&
                               (what.find("expected '}'") != std::string::npos ||
                                what.find("expected ']'") != std::string::npos);
    if (missing_comma) what += " (a ',' missing before the last value read?)";
    if (column > 0 && !line.empty()) {
        // What was read up to where it stopped: the last 32 characters of it.
        const auto end = std::min<std::size_t>(std::size_t(column), line.size());
        const auto from = end > 32 ? end - 32 : 0;
        what += "; read up to there: " + std::string(from > 0 ? "..." : "") +
                text::printable(line.substr(from, end - from));
    }
    return "not valid JSON" +
           (column > 0 ? " (column " + std::to_string(column) + ")" : std::string()) + ": " + what;
}

// The deepest nesting of arrays and objects outside strings, and the offset of the
// bracket that first went past `limit` (the scan stops there; npos when none did).
std::pair<int, std::size_t> scanDepth(std::string_view text, int limit) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (ch == '\\')
                escaped = true;
            else if (ch == '"')
                in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '[' || ch == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > limit) return {deepest, i};
        } else if (ch == ']' || ch == '}') {
            --depth;
        }
    }
    return {deepest, std::string_view::npos};
}

// Every object's keys, checked as nlohmann's parser reports them: JSON (RFC 8259) leaves a
// repeated name's meaning to the reader, and nlohmann keeps the last silently, so a file
// that says two things at once would be read as one of them. A repeated key throws
// Duplicate with the key's path ("policy.params.C", "[3].tuf").
struct Duplicate {
    std::string path;
};
class KeyWatch {
public:
    bool operator()(int /*depth*/, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
        using E = nlohmann::json::parse_event_t;
        switch (ev) {
        case E::object_start:
        case E::array_start:
            frames_.push_back({childPath(), ev == E::array_start, 0, {}, {}});
            break;
        case E::key: {
            Frame& f = frames_.back();
            f.key = parsed.get<std::string>();
            if (!f.keys.insert(f.key).second)
                throw Duplicate{f.path.empty() ? f.key : f.path + "." + f.key};
            break;
        }
        case E::object_end:
        case E::array_end:
            frames_.pop_back();
            break;
        case E::value:
            if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
            break;
        }
        return true;
    }

private:
    struct Frame {
        std::string path;
        bool array;
        long index;
        std::string key;
        std::set<std::string> keys;
    };
    // The path of the value that starts now (an array's element takes the next index).
    std::string childPath() {
        if (frames_.empty()) return "";
        Frame& f = frames_.back();
        if (f.array) return f.path + "[" + std::to_string(f.index++) + "]";
        return f.path.empty() ? f.key : f.path + "." + f.key;
    }
    std::vector<Frame> frames_;
};

nlohmann::json parseChecked(std::string_view text) {
    KeyWatch watch;
    return nlohmann::json::parse(text.begin(), text.end(), std::ref(watch));
}
} // namespace

int jsonDepth(std::string_view text, int limit) {
    return scanDepth(text, limit).first;
}

namespace {
void checkDepth(std::string_view text, const std::string& file, long lineno) {
    if (jsonDepth(text) > kMaxJsonDepth)
        throw InputError(file, lineno, "",
                         "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
}
} // namespace

nlohmann::json parseJsonObjectLine(const std::string& line, const std::string& file, long lineno) {
    checkDepth(line, file, lineno);
    nlohmann::json j;
    try {
        j = parseChecked(line);
    } catch (const Duplicate& d) {
        throw InputError(file, lineno, d.path,
                         "given twice in one object (JSON names each key once)");
    } catch (const nlohmann::json::parse_error& e) {
        throw InputError(file, lineno, "", jsonWhat(e, long(e.byte), line));
    } catch (const nlohmann::json::exception& e) {
        throw InputError(file, lineno, "", jsonWhat(e, 0));
    }
    if (!j.is_object()) throw InputError(file, lineno, "", "expected a JSON object");
    return j;
}

nlohmann::json parseJsonDocument(std::string_view text, const std::string& file, long first_line) {
    auto lineAt = [&](std::size_t byte) {
        long n = first_line;
        for (std::size_t i = 0; i < byte && i < text.size(); ++i) n += text[i] == '\n';
        return n;
    };
    // Its values as nlohmann holds them (16 B each, a few bytes of text apiece) and as much
    // again to free them: an allocation that fails while nlohmann frees a document aborts
    // the process, so a large document is judged before it is parsed.
    if (text.size() > (1u << 20))
        checkMemoryNeed(5.0 * double(text.size()), "parsing the JSON of " + file,
                        "give a smaller file");
    if (const auto [deepest, at] = scanDepth(text, kMaxJsonDepth); deepest > kMaxJsonDepth)
        throw InputError(file, lineAt(at), "",
                         "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    try {
        return parseChecked(text);
    } catch (const Duplicate& d) {
        throw InputError(file, JsonLines(text, first_line).line(d.path), d.path,
                         "given twice in one object (JSON names each key once)");
    } catch (const nlohmann::json::parse_error& e) {
        // The column within the file's line of the byte nlohmann stopped at (1-based).
        const std::size_t at = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
        const std::size_t nl = at == 0 ? std::string_view::npos : text.rfind('\n', at - 1);
        const long column = long(at - (nl == std::string_view::npos ? 0 : nl + 1)) + 1;
        const std::size_t line_start = nl == std::string_view::npos ? 0 : nl + 1;
        const std::size_t line_end = text.find('\n', line_start);
        const std::string_view line = text.substr(
            line_start, line_end == std::string_view::npos ? line_end : line_end - line_start);
        throw InputError(file, lineAt(at), "", jsonWhat(e, column, line));
    } catch (const nlohmann::json::exception& e) {
        throw InputError(file, 0, "", jsonWhat(e, 0));
    }
}

nlohmann::json parseJsonLenient(std::string_view text) {
    if (jsonDepth(text) > kMaxJsonDepth) return nlohmann::json(nlohmann::json::value_t::discarded);
    try {
        return parseChecked(text);
    } catch (const Duplicate&) {
    } catch (const nlohmann::json::exception&) {
    }
    return nlohmann::json(nlohmann::json::value_t::discarded);
}

JsonLines::JsonLines(std::string_view text, long first_line) {
    // A scan that follows the structure: a stack of containers, each with its path and,
    // for arrays, the next element's index; a key seen in an object names the path of the
    // value after it.
    struct Frame {
        std::string path;
        bool array;
        long index;
    };
    std::vector<Frame> stack;
    long line = first_line;
    std::string pending_key; // the last key read in the innermost object
    bool have_key = false;
    auto child = [&](const Frame& f, const std::string& key) {
        if (f.array) return f.path + "[" + std::to_string(f.index) + "]";
        return f.path.empty() ? key : f.path + "." + key;
    };
    auto valueStarts = [&]() -> std::string {
        if (stack.empty()) return "";
        Frame& f = stack.back();
        const std::string p = child(f, pending_key);
        if (!f.array) have_key = false;
        lines_.emplace(p, line);
        return p;
    };
    std::size_t i = 0;
    while (i < text.size()) {
        const char ch = text[i];
        if (ch == '\n') {
            ++line;
            ++i;
            continue;
        }
        if (ch == '"') {
            // A string: a key when the innermost container is an object expecting one.
            std::string s;
            ++i;
            while (i < text.size() && text[i] != '"') {
                if (text[i] == '\\' && i + 1 < text.size()) {
                    s += text[i + 1];
                    i += 2;
                    continue;
                }
                if (text[i] == '\n') ++line;
                s += text[i++];
            }
            ++i;
            if (!stack.empty() && !stack.back().array && !have_key) {
                pending_key = s;
                have_key = true;
            } else {
                valueStarts();
            }
            continue;
        }
        if (ch == '{' || ch == '[') {
            const std::string p = valueStarts();
            stack.push_back({p, ch == '[', 0});
            have_key = false;
            ++i;
            continue;
        }
        if (ch == '}' || ch == ']') {
            if (!stack.empty()) stack.pop_back();
            have_key = false;
            ++i;
            continue;
        }
        if (ch == ',') {
            if (!stack.empty() && stack.back().array) ++stack.back().index;
            have_key = false;
            ++i;
            continue;
        }
        if (ch == ':' || ch == ' ' || ch == '\t' || ch == '\r') {
            ++i;
            continue;
        }
        // A scalar (number, true, false, null).
        valueStarts();
        while (i < text.size() && text[i] != ',' && text[i] != '}' && text[i] != ']' &&
               text[i] != '\n')
            ++i;
    }
}

long JsonLines::line(const std::string& path) const {
    std::string p = path;
    while (true) {
        const auto it = lines_.find(p);
        if (it != lines_.end()) return it->second;
        const auto cut = p.find_last_of(".[");
        if (cut == std::string::npos) return p.empty() ? 0 : line("");
        p.erase(cut);
    }
}

} // namespace kairos
