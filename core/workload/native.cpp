// The native Kairos workload format (JSONL), documented in sample_traces/README.md.
#include "util/atomic_file.h"
#include "util/hash.h"
#include "util/huge_pages.h"
#include "util/input_error.h"
#include "util/json_line.h"
#include "util/text.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>

#if KAIROS_HAVE_SIMDJSON
#include <simdjson.h>
#endif

namespace kairos {
namespace {

using nlohmann::json;
constexpr int kVersion = 1;

struct Ctx {
    const std::string& file;
    long line;
};

double getNum(const json& j, const char* key, const Ctx& c, const std::string& prefix = "") {
    const auto it = j.find(key);
    if (it == j.end()) throw InputError(c.file, c.line, prefix + key, "missing");
    if (!it->is_number()) throw InputError(c.file, c.line, prefix + key, "not a number");
    const double v = it->get<double>();
    if (!std::isfinite(v)) throw InputError(c.file, c.line, prefix + key, "not finite");
    return v;
}

// The bounds the reference reader and the fast path share.
constexpr double kMaxId = 9.0e15; // a request id: whole, |id| at most this (exact in a double)
constexpr double kMaxCount = 1e9; // a count's default upper bound

int getCount(const json& j, const char* key, const Ctx& c, int lo, const std::string& prefix = "",
             double hi = kMaxCount) {
    const double v = getNum(j, key, c, prefix);
    if (v != std::floor(v)) throw InputError(c.file, c.line, prefix + key, "not a whole number");
    if (v < lo)
        throw InputError(c.file, c.line, prefix + key, "must be at least " + std::to_string(lo));
    if (v > hi)
        throw InputError(c.file, c.line, prefix + key,
                         "too large (at most " + std::to_string(static_cast<long long>(hi)) + ")");
    return static_cast<int>(v);
}

// A time in seconds: in [0, kMaxSeconds].
double getSeconds(const json& j, const char* key, const Ctx& c, const std::string& prefix = "") {
    const double v = getNum(j, key, c, prefix);
    if (v < 0) throw InputError(c.file, c.line, prefix + key, "must be >= 0");
    if (v > kMaxSeconds)
        throw InputError(c.file, c.line, prefix + key, "more than 1e9 s (31.7 years)");
    return v;
}

// "prefix": [[ID, TOKENS], ...]: the spans of the context that other requests may share
// (model/request.h). ID: a whole number in [0, 2^53], a name ("system-prompt": its
// FNV-1a hash with the top bit set, apart from any number), or "#" and 16 hex digits (an
// id as written back by writeKairos).
std::vector<PrefixSpan> parsePrefix(const json& p, const Ctx& c, const Request& r) {
    if (!p.is_array()) throw InputError(c.file, c.line, "prefix", "must be a list");
    std::vector<PrefixSpan> out;
    out.reserve(p.size());
    std::int64_t sum = 0;
    for (std::size_t k = 0; k < p.size(); ++k) {
        const std::string f = "prefix[" + std::to_string(k) + "]";
        const json& e = p[k];
        if (!e.is_array() || e.size() != 2 || !e[1].is_number())
            throw InputError(c.file, c.line, f, "must be [id, tokens]");
        PrefixSpan sp;
        if (e[0].is_number_unsigned() && e[0].get<std::uint64_t>() <= (1ULL << 53)) {
            sp.id = e[0].get<std::uint64_t>();
        } else if (e[0].is_string()) {
            const std::string name = e[0].get<std::string>();
            if (name.empty()) throw InputError(c.file, c.line, f, "an empty id");
            if (name[0] == '#') {
                const bool hex = name.size() == 17 &&
                                 name.find_first_not_of("0123456789abcdef", 1) == std::string::npos;
                if (!hex)
                    throw InputError(c.file, c.line, f,
                                     "an id written as '#' takes 16 lower-case hex digits");
                sp.id = std::stoull(name.substr(1), nullptr, 16);
            } else {
                sp.id = fnv1a64(name) | (1ULL << 63);
            }
        } else {
            throw InputError(c.file, c.line, f,
                             "the id must be a whole number in [0, 2^53] or a string");
        }
        const double tok = e[1].get<double>();
        if (tok < 1 || tok != std::floor(tok) || tok > kMaxRequestTokens)
            throw InputError(c.file, c.line, f, "tokens must be a whole number in [1, 1e8]");
        sp.tokens = static_cast<std::int32_t>(tok);
        sum += sp.tokens;
        out.push_back(sp);
    }
    if (sum > std::int64_t(r.prompt_tokens) + r.output_tokens)
        throw InputError(c.file, c.line, "prefix",
                         "spans cover " + std::to_string(sum) +
                             " tokens, more than prompt + output (" +
                             std::to_string(std::int64_t(r.prompt_tokens) + r.output_tokens) + ")");
    return out;
}

Request parseRequest(const json& j, const Ctx& c, std::int64_t default_id) {
    if (!j.is_object())
        throw InputError(c.file, c.line, "", "a request line must be a JSON object");
    static const std::set<std::string> known = {"id",  "arrival", "prompt",   "output", "class",
                                                "tuf", "budget",  "segments", "agent",  "prefix"};
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!known.count(it.key())) throw InputError(c.file, c.line, it.key(), "unknown field");
    Request r;
    r.id = default_id;
    if (j.contains("id")) {
        const double id = getNum(j, "id", c);
        if (id != std::floor(id) || std::fabs(id) > kMaxId)
            throw InputError(c.file, c.line, "id", "must be a whole number");
        r.id = static_cast<std::int64_t>(id);
    }
    r.arrival = getSeconds(j, "arrival", c);
    r.prompt_tokens = getCount(j, "prompt", c, 1, "", kMaxRequestTokens);
    r.output_tokens = getCount(j, "output", c, 1, "", kMaxRequestTokens);
    if (j.contains("class")) {
        if (!j["class"].is_string()) throw InputError(c.file, c.line, "class", "not a string");
        r.cls = j["class"].get<std::string>();
    }
    if (j.contains("agent")) r.agent = getCount(j, "agent", c, 0, "", kMaxCount);
    if (j.contains("budget")) {
        const double b = getSeconds(j, "budget", c);
        if (!(b > 0)) throw InputError(c.file, c.line, "budget", "must be > 0 seconds");
        r.budget_s = b;
    }
    if (j.contains("tuf")) {
        const json& t = j["tuf"];
        if (!t.is_object()) throw InputError(c.file, c.line, "tuf", "must be an object");
        Tuf tuf;
        tuf.ert = getSeconds(t, "ert", c, "tuf.");
        tuf.slope = getNum(t, "slope", c, "tuf.");
        tuf.beta = getNum(t, "beta", c, "tuf.");
        if (tuf.slope > 0 || tuf.slope < -1e9)
            throw InputError(c.file, c.line, "tuf.slope", "must be in [-1e9, 0]");
        if (tuf.beta < 0 || tuf.beta > 1e9)
            throw InputError(c.file, c.line, "tuf.beta", "must be in [0, 1e9]");
        r.tuf = tuf;
    }
    if (j.contains("segments")) {
        const json& s = j["segments"];
        if (!s.is_array()) throw InputError(c.file, c.line, "segments", "must be a list");
        long sum = 0;
        for (std::size_t k = 0; k < s.size(); ++k) {
            const std::string f = "segments[" + std::to_string(k) + "]";
            const json& e = s[k];
            if (!e.is_array() || e.size() < 2 || e.size() > 3 || !e[0].is_number() ||
                !e[1].is_number() || (e.size() == 3 && !e[2].is_number()))
                throw InputError(c.file, c.line, f,
                                 "must be [tokens, exec_seconds] or [tokens, exec_seconds, "
                                 "predicted_seconds]");
            const double tok = e[0].get<double>(), ex = e[1].get<double>();
            const double wc = e.size() == 3 ? e[2].get<double>() : -1.0;
            if (e.size() == 3 && (!(wc >= 0) || !(wc <= kMaxSeconds)))
                throw InputError(c.file, c.line, f, "predicted seconds must be in [0, 1e9]");
            if (tok < 1 || tok != std::floor(tok) || tok > kMaxRequestTokens)
                throw InputError(c.file, c.line, f, "tokens must be a whole number in [1, 1e8]");
            if (!(ex >= 0) || !(ex <= kMaxSeconds))
                throw InputError(c.file, c.line, f, "exec seconds must be in [0, 1e9]");
            r.segments.push_back({static_cast<int>(tok), ex, wc});
            sum += static_cast<long>(tok);
        }
        if (!r.segments.empty() && sum != r.output_tokens)
            throw InputError(c.file, c.line, "segments",
                             "tokens sum to " + std::to_string(sum) + " but output is " +
                                 std::to_string(r.output_tokens));
    }
    if (j.contains("prefix")) r.prefix = parsePrefix(j["prefix"], c, r);
    return r;
}

#if KAIROS_HAVE_SIMDJSON
// The common request line ({"id", "arrival", "prompt", "output", "class", "agent"}, each
// at most once, every value valid) read by simdjson's DOM parser (it validates the whole
// line, trailing text included, unlike its on-demand one in Debian's 3.0): a million-request
// file was two thirds of a whole run's time through nlohmann's DOM. Anything else (another
// field, a value out of its domain, malformed JSON) returns false and the line goes through
// parseRequest, which reads it the same way or names the file, line and field; so this
// path changes nothing but the time (tst_readers compares both on every sample trace).
// Numbers: simdjson rounds decimal text to the nearest double, as nlohmann's strtod does.
class FastLines {
public:
    bool parse(const std::string& line, std::int64_t default_id, Request& r) {
        buf_.assign(line.data(), line.size());
        buf_.append(simdjson::SIMDJSON_PADDING, ' ');
        simdjson::dom::element doc;
        if (parser_.parse(buf_.data(), line.size(), false).get(doc)) return false;
        simdjson::dom::object obj;
        if (doc.get_object().get(obj)) return false;
        r = Request{};
        r.id = default_id;
        unsigned seen = 0;
        bool ok = true;
        auto whole = [](double v, double lo, double hi) {
            return v == std::floor(v) && v >= lo && v <= hi;
        };
        for (const auto field : obj) {
            const std::string_view key = field.key;
            const simdjson::dom::element value = field.value;
            double v = 0;
            unsigned bit = 0;
            if (key == "class") {
                bit = 1u << 5;
                std::string_view s;
                if (value.get_string().get(s)) return false;
                for (const char ch : s) // control characters: nlohmann's rules decide
                    if (static_cast<unsigned char>(ch) < 0x20) return false;
                r.cls.assign(s);
            } else {
                if (!value.is_number() || value.get_double().get(v) || !std::isfinite(v))
                    return false;
                // Each value is cast to its field only once it is in the field's domain.
                if (key == "id") {
                    bit = 1u << 0;
                    ok = v == std::floor(v) && std::fabs(v) <= kMaxId;
                    if (ok) r.id = static_cast<std::int64_t>(v);
                } else if (key == "arrival") {
                    bit = 1u << 1;
                    ok = v >= 0 && v <= kMaxSeconds;
                    r.arrival = v;
                } else if (key == "prompt") {
                    bit = 1u << 2;
                    ok = whole(v, 1, kMaxRequestTokens);
                    if (ok) r.prompt_tokens = static_cast<int>(v);
                } else if (key == "output") {
                    bit = 1u << 3;
                    ok = whole(v, 1, kMaxRequestTokens);
                    if (ok) r.output_tokens = static_cast<int>(v);
                } else if (key == "agent") {
                    bit = 1u << 4;
                    ok = whole(v, 0, kMaxCount);
                    if (ok) r.agent = static_cast<std::int32_t>(v);
                } else {
                    return false; // another field: parseRequest reads it
                }
            }
            if (!ok || (seen & bit)) return false; // out of domain, or given twice
            seen |= bit;
        }
        const unsigned required = (1u << 1) | (1u << 2) | (1u << 3);
        return (seen & required) == required;
    }

private:
    simdjson::dom::parser parser_;
    std::string buf_;
};
#endif

} // namespace

namespace {
Workload readKairosLines(std::istream& in, const std::string& name, std::size_t limit,
                         bool use_fast) {
    (void)use_fast; // without simdjson every line takes the reference path
    Workload w;
    w.source = name;
    std::string line;
    long lineno = 0;
    bool header = false;
    long declared = -1;
#if KAIROS_HAVE_SIMDJSON
    FastLines fast;
    Request fast_request;
#endif
    std::vector<long> line_of; // each request's line, for a duplicate id's error
    while (text::nextLine(in, line)) {
        ++lineno;
        if (text::trim(line).empty()) continue;
        const Ctx c{name, lineno};
#if KAIROS_HAVE_SIMDJSON
        if (header && use_fast &&
            fast.parse(line, static_cast<std::int64_t>(w.requests.size()), fast_request)) {
            w.requests.push_back(std::move(fast_request));
            line_of.push_back(lineno);
            if (limit && w.requests.size() >= limit) break;
            continue;
        }
#endif
        json j = parseJsonObjectLine(line, name, lineno);
        if (!header) {
            if (!j.is_object() || !j.contains("kairos_workload"))
                throw InputError(name, lineno, "kairos_workload",
                                 "the first line must be the header {\"kairos_workload\": 1, ...}");
            const double v = getNum(j, "kairos_workload", c);
            if (v != kVersion)
                throw InputError(name, lineno, "kairos_workload",
                                 "unsupported version " + std::to_string(v));
            if (j.contains("requests")) declared = getCount(j, "requests", c, 0);
            // Room for what the header declares, up to a million requests (a header is
            // not trusted with more: a false count must not claim gigabytes), and --limit:
            // no copies while the vector grows.
            if (declared > 0)
                w.requests.reserve(
                    std::min<std::size_t>({static_cast<std::size_t>(declared), std::size_t(1) << 20,
                                           limit ? limit : std::size_t(1) << 20}));
            adviseHugePages(w.requests);
            if (j.contains("name") && j["name"].is_string()) w.name = j["name"].get<std::string>();
            if (j.contains("meta")) {
                if (!j["meta"].is_object())
                    throw InputError(name, lineno, "meta", "must be an object");
                for (auto it = j["meta"].begin(); it != j["meta"].end(); ++it)
                    w.meta[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
            }
            if (j.contains("source") && j["source"].is_string())
                w.meta["generated_by"] = j["source"].get<std::string>();
            header = true;
            continue;
        }
        w.requests.push_back(parseRequest(j, c, static_cast<std::int64_t>(w.requests.size())));
        line_of.push_back(lineno);
        if (limit && w.requests.size() >= limit) break;
    }
    // A request's id names it everywhere (Find's id=, --inspect T,ID, explain --req): two
    // lines with one id made both answer to it (an outside test's trace loaded silently).
    // A line without an id takes its row number, which may collide with one given.
    // Ids in increasing order (every trace written here, most others) cannot repeat: the
    // sort, a second on ten million requests, only for the rest.
    const bool increasing = std::adjacent_find(w.requests.begin(), w.requests.end(),
                                               [](const Request& a, const Request& b) {
                                                   return a.id >= b.id;
                                               }) == w.requests.end();
    if (!increasing) {
        std::vector<std::pair<std::int64_t, std::size_t>> ids(w.requests.size());
        for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = {w.requests[i].id, i};
        std::sort(ids.begin(), ids.end());
        for (std::size_t k = 1; k < ids.size(); ++k)
            if (ids[k].first == ids[k - 1].first) {
                const std::size_t a = std::min(ids[k].second, ids[k - 1].second),
                                  b = std::max(ids[k].second, ids[k - 1].second);
                throw InputError(name, line_of[b], "id",
                                 "request id " + std::to_string(ids[k].first) +
                                     " is also the id of line " + std::to_string(line_of[a]) +
                                     (w.requests[b].id == static_cast<std::int64_t>(b)
                                          ? " (a line without an id takes its row number)"
                                          : ""));
            }
    }
    if (!header) throw InputError(name, 0, "", "empty file: no header line");
    if (!limit && declared >= 0 && static_cast<std::size_t>(declared) != w.requests.size())
        throw InputError(name, lineno, "requests",
                         "the header declares " + std::to_string(declared) + " requests but " +
                             std::to_string(w.requests.size()) + " follow (truncated file?)");
    if (w.name.empty()) w.name = name;
    w.sortByArrival();
    return w;
}
} // namespace

Workload readKairos(std::istream& in, const std::string& name, std::size_t limit) {
    return readKairosLines(in, name, limit, true);
}

Workload readKairosReference(std::istream& in, const std::string& name, std::size_t limit) {
    return readKairosLines(in, name, limit, false);
}

void writeKairos(const Workload& w, std::ostream& out) {
    json h;
    h["kairos_workload"] = kVersion;
    h["name"] = w.name;
    if (!w.source.empty()) h["source"] = w.source;
    h["requests"] = w.requests.size();
    if (!w.meta.empty()) h["meta"] = w.meta;
    out << h.dump() << '\n';
    char buf[64];
    for (const auto& r : w.requests) {
        // Arrival with enough digits to round-trip a double exactly.
        std::snprintf(buf, sizeof buf, "%.17g", r.arrival);
        out << "{\"id\":" << r.id << ",\"arrival\":" << buf << ",\"prompt\":" << r.prompt_tokens
            << ",\"output\":" << r.output_tokens;
        if (!r.cls.empty()) out << ",\"class\":" << json(r.cls).dump();
        if (r.agent >= 0) out << ",\"agent\":" << r.agent;
        if (r.budget_s) {
            std::snprintf(buf, sizeof buf, "%.17g", *r.budget_s);
            out << ",\"budget\":" << buf;
        }
        if (r.tuf) {
            json t = {{"ert", r.tuf->ert}, {"slope", r.tuf->slope}, {"beta", r.tuf->beta}};
            out << ",\"tuf\":" << t.dump();
        }
        if (!r.segments.empty()) {
            out << ",\"segments\":[";
            for (std::size_t k = 0; k < r.segments.size(); ++k) {
                const Segment& sg = r.segments[k];
                std::snprintf(buf, sizeof buf, "%.17g", sg.exec_s);
                out << (k ? "," : "") << "[" << sg.tokens << "," << buf;
                if (sg.wcet_s >= 0) {
                    std::snprintf(buf, sizeof buf, "%.17g", sg.wcet_s);
                    out << "," << buf;
                }
                out << "]";
            }
            out << "]";
        }
        if (!r.prefix.empty()) {
            out << ",\"prefix\":[";
            for (std::size_t k = 0; k < r.prefix.size(); ++k) {
                const PrefixSpan& sp = r.prefix[k];
                out << (k ? "," : "") << "[";
                if (sp.id <= (1ULL << 53)) {
                    out << sp.id;
                } else {
                    std::snprintf(buf, sizeof buf, "\"#%016llx\"",
                                  static_cast<unsigned long long>(sp.id));
                    out << buf;
                }
                out << "," << sp.tokens << "]";
            }
            out << "]";
        }
        out << "}\n";
    }
}

void writeKairosFile(const Workload& w, const std::string& path) {
    writeFileAtomically(path, [&](std::ostream& out) { writeKairos(w, out); });
}

} // namespace kairos
