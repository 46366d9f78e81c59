#include "model/explain.h"

#include "util/enum_names.h"
#include "util/input_error.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace kairos {

namespace {
// The engine's rules, in RuleId order up to FirstRegistered.
const Rule kEngineRules[] = {
    {"unexplained", "unexplained", RuleVars{}, "an action its policy gave no reason for", false,
     [](const double*) { return false; }},
    {"overflow.latest", "overflow: used + growth > M, the latest arrival preempted",
     RuleVars{"used", "growth", "M", "arrival"},
     "the next iteration's KV growth does not fit; vLLM's victim is the most recently "
     "arrived running request (it will recompute)",
     true, [](const double* x) { return x[0] + x[1] > x[2]; }},
    {"overflow.rank", "overflow: used + growth > M, the worst-ranked preempted",
     RuleVars{"used", "growth", "M", "key"},
     "the next iteration's KV growth does not fit; the policy gives up the request it "
     "ranks last (kept KV of suspended requests first)",
     true, [](const double* x) { return x[0] + x[1] > x[2]; }},
    {"cannot_grow", "cannot_grow: alone, used + growth > M", RuleVars{"used", "growth", "M"},
     "the only request in the engine cannot add its next token to the KV cache: it can "
     "never finish",
     true, [](const double* x) { return x[0] + x[1] > x[2]; }},
    {"prefix_cache.hit",
     "prefix cache: the longest cached run of leading blocks, at most context - 1 tokens",
     RuleVars{"hit", "context", "block", "shared"},
     "at admission the request takes its longest run of leading 16-token blocks (by the "
     "chained hash of their prefix) found cached, neither computed nor allocated again; "
     "at least one token is always computed (vLLM's max_cache_hit_length); shared: of "
     "them, tokens in blocks running requests already hold",
     true,
     [](const double* x) {
         return x[2] >= 2 && x[0] > 0 && std::fmod(x[0], x[2]) == 0 && x[0] <= x[1] - 1 &&
                x[3] >= 0 && x[3] <= x[0] && std::fmod(x[3], x[2]) == 0;
     }},
    {"prefix_cache.evict",
     "prefix cache: cached blocks nobody references taken back for this request's KV",
     RuleVars{"evicted", "idle cached before", "never used"},
     "every block was in use once and the request needed more: the allocator took the "
     "least recently released cached blocks (a chain's tail first), which nobody "
     "referenced; their prefixes are no longer cached",
     true, [](const double* x) { return x[0] >= 1 && x[0] <= x[1] && x[2] == 0; }},
};
static_assert(sizeof kEngineRules / sizeof kEngineRules[0] ==
                  static_cast<std::size_t>(RuleId::FirstRegistered),
              "one rule per fixed RuleId");

// Written while the program starts (registerRule), read without a lock after.
struct RuleBook {
    std::vector<Rule> rules{std::begin(kEngineRules), std::end(kEngineRules)};
    std::atomic<bool> read{false};
};
RuleBook& book() {
    static RuleBook b;
    return b;
}
const std::vector<Rule>& readBook() {
    RuleBook& b = book();
    if (!b.read.load(std::memory_order_relaxed)) b.read.store(true, std::memory_order_relaxed);
    return b.rules;
}
} // namespace

constexpr EnumName<Act> kActNames[] = {
    {Act::Admit, "admit"},       {Act::Preempt, "preempt"}, {Act::Suspend, "suspend"},
    {Act::Resume, "resume"},     {Act::Kill, "kill"},       {Act::Evict, "evict"},
    {Act::Dispatch, "dispatch"}, {Act::Reuse, "reuse"},     {Act::Uncache, "uncache"}};

const char* actName(Act a) {
    return enumName(kActNames, a);
}

bool actFromName(const std::string& s, Act* out) {
    return enumFromName(kActNames, s, out);
}

RuleId registerRule(const Rule& rule) {
    RuleBook& b = book();
    if (b.read.load())
        throw std::logic_error(std::string("registerRule: the rule book was read before ") +
                               rule.code);
    for (const Rule& r : b.rules)
        if (std::string(r.code) == rule.code)
            throw std::logic_error(std::string("registerRule: two rules named ") + rule.code);
    if (b.rules.size() >= std::numeric_limits<std::uint16_t>::max())
        throw std::logic_error("registerRule: the rule book is full");
    b.rules.push_back(rule);
    return static_cast<RuleId>(b.rules.size() - 1);
}

std::size_t ruleCount() {
    return readBook().size();
}

const Rule& ruleOf(RuleId id) {
    const std::vector<Rule>& rules = readBook();
    const auto i = static_cast<std::size_t>(id);
    return rules[i < rules.size() ? i : 0];
}

int ruleVarCount(RuleId id) {
    const Rule& r = ruleOf(id);
    int n = 0;
    while (n < int(kReasonNumbers) && r.vars[static_cast<std::size_t>(n)]) ++n;
    return n;
}

bool ruleFromCode(const std::string& code, RuleId* out) {
    const std::vector<Rule>& rules = readBook();
    for (std::size_t i = 0; i < rules.size(); ++i)
        if (code == rules[i].code) {
            *out = static_cast<RuleId>(i);
            return true;
        }
    return false;
}

bool Insight::sameAs(const Insight& o, bool key_counts_down) const {
    const auto eq = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    // Remaining counts as totals (remaining + generated), within max(1 token, 1 %).
    const auto total = [&](double a, double b) {
        if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) return eq(a, b);
        const double x = a + generated, y = b + o.generated;
        return std::fabs(x - y) <= std::max(1.0, 0.01 * std::fabs(y));
    };
    return (key_counts_down ? total(key, o.key) : eq(key, o.key)) &&
           total(predicted, o.predicted) && eq(deadline, o.deadline) && eq(alpha, o.alpha) &&
           eq(wcet, o.wcet);
}

Explanation replicaExplanation(const Explanation& ex, const std::vector<std::int16_t>& replica_of,
                               int replica) {
    if (ex.call_replica.size() != ex.calls.size())
        throw std::invalid_argument("replicaExplanation: not a fleet's explanation");
    Explanation out;
    out.on = ex.on;
    out.key_name = ex.key_name;
    out.key_descending = ex.key_descending;
    out.key_counts_down = ex.key_counts_down;
    out.limits = ex.limits;
    std::vector<std::uint32_t> local(ex.calls.size(), UINT32_MAX);
    for (std::size_t i = 0; i < ex.calls.size(); ++i)
        if (ex.call_replica[i] == replica) {
            local[i] = static_cast<std::uint32_t>(out.calls.size());
            out.calls.push_back(ex.calls[i]);
        }
    for (const Reason& r : ex.reasons)
        if (r.call < local.size() && local[r.call] != UINT32_MAX) {
            out.reasons.push_back(r);
            out.reasons.back().call = local[r.call];
        }
    for (const Insight& in : ex.insights)
        if (static_cast<std::size_t>(in.req) < replica_of.size() &&
            replica_of[static_cast<std::size_t>(in.req)] == replica)
            out.insights.push_back(in);
    return out;
}

nlohmann::json limitsJson(const ExplainLimits& l) {
    return {{"seats", l.seats},
            {"token_budget", l.token_budget},
            {"block_size", l.block_size},
            {"chunked", l.chunked},
            {"watermark", l.watermark}};
}

ExplainLimits limitsFromJson(const nlohmann::json& j, const std::string& file, long line) {
    if (!j.is_object()) throw InputError(file, line, "explain.limits", "not an object");
    auto whole = [&](const char* k, double lo, double hi) {
        const auto f = j.find(k);
        if (f == j.end() || !f->is_number() || !(f->get<double>() >= lo) ||
            !(f->get<double>() <= hi) || f->get<double>() != std::floor(f->get<double>()))
            throw InputError(file, line, std::string("explain.limits.") + k,
                             "must be a whole number in [" + std::to_string(std::int64_t(lo)) +
                                 ", " + std::to_string(std::int64_t(hi)) + "]");
        return static_cast<std::int32_t>(f->get<double>());
    };
    ExplainLimits l;
    l.seats = whole("seats", 1, 2147483647.0);
    l.token_budget = whole("token_budget", 1, 2147483647.0);
    l.block_size = whole("block_size", 1, 65536);
    const auto c = j.find("chunked");
    if (c == j.end() || !c->is_boolean())
        throw InputError(file, line, "explain.limits.chunked", "not true or false");
    l.chunked = c->get<bool>();
    const auto w = j.find("watermark");
    if (w == j.end() || !w->is_number() || !(w->get<double>() >= 0) || !(w->get<double>() < 1))
        throw InputError(file, line, "explain.limits.watermark", "must be a number in [0, 1)");
    l.watermark = w->get<double>();
    return l;
}

} // namespace kairos
