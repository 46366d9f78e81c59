#include "workload/generators.h"

#include "model/domains.h"
#include "util/hash.h"
#include "util/text.h"
#include "workload/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace kairos {

void ArrivalSpec::validate() const {
    if (!domains::inDomain(domains::kRate, rate))
        throw std::invalid_argument("arrival rate must be in " + domains::describe(domains::kRate) +
                                    " (inf: all at once)");
    if (!domains::inDomain(domains::kBurstiness, burstiness))
        throw std::invalid_argument("burstiness must be in " +
                                    domains::describe(domains::kBurstiness) +
                                    " (model/domains.h says why)");
    if (!std::isfinite(start)) throw std::invalid_argument("start time must be finite");
}

std::vector<double> generateArrivals(const ArrivalSpec& spec, std::size_t n) {
    spec.validate();
    std::vector<double> t(n, spec.start);
    if (std::isinf(spec.rate)) return t;
    Rng rng(spec.seed);
    const double shape = spec.burstiness;
    const double scale = 1.0 / (spec.rate * spec.burstiness);
    double now = spec.start;
    for (std::size_t i = 0; i < n; ++i) {
        // The first request arrives after one gap too, as in vLLM's benchmark.
        now += shape == 1.0 ? rng.exponential(spec.rate) : rng.gamma(shape, scale);
        t[i] = now;
    }
    if (n > 0 && !(t.back() <= kMaxSeconds))
        throw std::invalid_argument("arrivals at " + std::to_string(spec.rate) +
                                    " req/s run past 1e9 s (31.7 years): a rate too low for " +
                                    std::to_string(n) + " requests");
    return t;
}

LengthDist LengthDist::parse(const std::string& text) {
    LengthDist d;
    const auto colon = text.find(':');
    if (colon == std::string::npos)
        throw std::invalid_argument("length distribution '" + text +
                                    "': expected KIND:PARAMS (const:N, uniform:LO,HI, "
                                    "lognormal:MEDIAN,SIGMA[,max=M])");
    const std::string kind = text.substr(0, colon);
    std::vector<std::string_view> f;
    text::split(std::string_view(text).substr(colon + 1), ',', f);
    std::vector<double> nums;
    for (auto s : f) {
        if (s.substr(0, 4) == "max=") {
            std::int64_t m;
            if (!text::parseInt64(s.substr(4), &m) || m < 1 || m > (1 << 24))
                throw std::invalid_argument("length distribution '" + text + "': bad max");
            d.max = static_cast<int>(m);
            continue;
        }
        double v;
        if (!text::parseDouble(s, &v))
            throw std::invalid_argument("length distribution '" + text + "': bad number '" +
                                        std::string(s) + "'");
        nums.push_back(v);
    }
    auto want = [&](std::size_t k) {
        if (nums.size() != k)
            throw std::invalid_argument("length distribution '" + text + "': expected " +
                                        std::to_string(k) + " parameter(s)");
    };
    if (kind == "const") {
        want(1);
        d.kind = Kind::Const;
        if (nums[0] < 1) throw std::invalid_argument("const length must be >= 1");
    } else if (kind == "uniform") {
        want(2);
        d.kind = Kind::Uniform;
        if (nums[0] < 1 || nums[1] < nums[0])
            throw std::invalid_argument("uniform lengths need 1 <= LO <= HI");
    } else if (kind == "lognormal") {
        want(2);
        d.kind = Kind::LogNormal;
        if (nums[0] < 1 || nums[1] < 0)
            throw std::invalid_argument("lognormal lengths need MEDIAN >= 1 and SIGMA >= 0");
    } else {
        throw std::invalid_argument("length distribution '" + text + "': unknown kind '" + kind +
                                    "'");
    }
    // Lengths are tokens of one request: at most 2^24 (16.7 M), as max= allows; a uniform's
    // bounds are whole; a lognormal's sigma at most 10 (e^10 = 22,000 times the median).
    constexpr double kMaxLen = 1 << 24;
    const bool len2 = d.kind == Kind::Uniform;
    for (std::size_t i = 0; i < nums.size(); ++i) {
        if (i == 1 && !len2) continue;
        if (nums[i] > kMaxLen)
            throw std::invalid_argument("length distribution '" + text +
                                        "': a length above 2^24 (16777216) tokens");
        if (d.kind == Kind::Uniform && nums[i] != std::floor(nums[i]))
            throw std::invalid_argument("length distribution '" + text +
                                        "': uniform bounds are whole numbers of tokens");
    }
    if (d.kind == Kind::LogNormal && nums[1] > 10)
        throw std::invalid_argument("length distribution '" + text + "': sigma above 10");
    d.p1 = nums[0];
    d.p2 = nums.size() > 1 ? nums[1] : 0.0;
    return d;
}

int LengthDist::sample(Rng& rng) const {
    double v = p1;
    switch (kind) {
    case Kind::Const:
        break;
    case Kind::Uniform:
        v = static_cast<double>(
            rng.uniformInt(static_cast<std::int64_t>(p1), static_cast<std::int64_t>(p2)));
        break;
    case Kind::LogNormal:
        v = std::round(rng.lognormal(std::log(p1), p2));
        break;
    }
    return static_cast<int>(std::clamp(v, 1.0, static_cast<double>(max)));
}

std::string LengthDist::describe() const {
    std::ostringstream s;
    switch (kind) {
    case Kind::Const:
        s << "const:" << p1;
        break;
    case Kind::Uniform:
        s << "uniform:" << p1 << "," << p2;
        break;
    case Kind::LogNormal:
        s << "lognormal:" << p1 << "," << p2;
        break;
    }
    s << ",max=" << max;
    return s.str();
}

namespace {

// Prefix-span ids of generated messages: distinct per seed, conversation, turn and kind.
std::uint64_t spanId(std::uint64_t seed, std::uint64_t conversation, std::uint64_t turn,
                     std::uint64_t kind) {
    return splitmix64(splitmix64(splitmix64(seed ^ 0x47454e5350414e53ULL) ^ conversation) ^
                      (turn << 2 | kind));
}

void checkPrefixSpec(const GenerateSpec& spec) {
    if (spec.system_prompt_tokens < 0 || spec.system_prompt_tokens > (1 << 24))
        throw std::invalid_argument("system prompt tokens must be in [0, 16777216]");
    if (spec.system_prompts < 1 || spec.system_prompts > 1000000)
        throw std::invalid_argument("system prompts must be in [1, 1000000]");
    if (!(spec.turns >= 1 && spec.turns <= 1000))
        throw std::invalid_argument("mean turns per conversation must be in [1, 1000]");
    if (!(spec.think_s > 0 && spec.think_s <= 1e6))
        throw std::invalid_argument("think time must be in (0, 1e6] s");
    if (spec.max_context < 2) throw std::invalid_argument("max context must be >= 2 tokens");
}

// Multi-turn conversations (GenerateSpec's comment says how).
Workload generateConversations(const GenerateSpec& spec) {
    Workload w;
    w.name = spec.name;
    Rng rng(spec.length_seed);
    Rng turns_rng(spec.length_seed ^ 0x5455524e53ULL);
    ArrivalSpec starts = spec.arrivals;
    if (std::isfinite(starts.rate)) starts.rate = starts.rate / spec.turns;
    // At most `count` conversations are needed (each has at least one turn).
    const auto t0 = generateArrivals(starts, spec.count);
    auto draw = [&](bool prompt) {
        if (!spec.length_pairs.empty()) {
            const auto k =
                rng.uniformInt(0, static_cast<std::int64_t>(spec.length_pairs.size()) - 1);
            const auto& p = spec.length_pairs[static_cast<std::size_t>(k)];
            return prompt ? p.first : p.second;
        }
        return prompt ? spec.prompt.sample(rng) : spec.output.sample(rng);
    };
    const double p_more = 1.0 - 1.0 / spec.turns;
    std::size_t conversations = 0;
    for (std::size_t c = 0; c < spec.count && w.requests.size() < spec.count; ++c) {
        ++conversations;
        std::vector<PrefixSpan> spans;
        std::int64_t context = 0;
        if (spec.system_prompt_tokens > 0) {
            const auto k = std::uint64_t(turns_rng.uniformInt(0, spec.system_prompts - 1));
            spans.push_back({spanId(spec.length_seed, ~0ULL, k, 3), spec.system_prompt_tokens});
            context = spec.system_prompt_tokens;
        }
        double at = t0[c];
        for (std::uint64_t turn = 0; w.requests.size() < spec.count; ++turn) {
            const int user = draw(true), answer = draw(false);
            if (turn > 0 && context + user + answer > spec.max_context) break;
            Request r;
            r.arrival = at;
            r.prompt_tokens = static_cast<std::int32_t>(
                std::min<std::int64_t>(context + user, std::numeric_limits<std::int32_t>::max()));
            r.output_tokens = answer;
            spans.push_back({spanId(spec.length_seed, c, turn, 1), user});
            spans.push_back({spanId(spec.length_seed, c, turn, 2), answer});
            r.prefix = spans; // the prompt's messages and this turn's answer
            w.requests.push_back(std::move(r));
            context += user + answer;
            if (!turns_rng.bernoulli(p_more)) break;
            at += turns_rng.exponential(1.0 / spec.think_s);
        }
    }
    std::stable_sort(w.requests.begin(), w.requests.end(),
                     [](const Request& a, const Request& b) { return a.arrival < b.arrival; });
    for (std::size_t i = 0; i < w.requests.size(); ++i)
        w.requests[i].id = static_cast<std::int64_t>(i);
    w.meta["conversations"] = std::to_string(conversations);
    w.meta["mean_turns"] = std::to_string(spec.turns);
    w.meta["think_s"] = std::to_string(spec.think_s);
    return w;
}

} // namespace

Workload generateWorkload(const GenerateSpec& spec) {
    checkPrefixSpec(spec);
    if (spec.turns > 1) {
        Workload w = generateConversations(spec);
        std::ostringstream src;
        src << "generated: n=" << spec.count << " conversations (mean turns " << spec.turns
            << ") rate=" << spec.arrivals.rate << " burstiness=" << spec.arrivals.burstiness
            << " seed=" << spec.arrivals.seed;
        w.source = src.str();
        w.meta["arrival_rate"] = std::to_string(spec.arrivals.rate);
        w.meta["burstiness"] = std::to_string(spec.arrivals.burstiness);
        w.meta["arrival_seed"] = std::to_string(spec.arrivals.seed);
        w.meta["length_seed"] = std::to_string(spec.length_seed);
        if (spec.system_prompt_tokens > 0)
            w.meta["system_prompt"] = std::to_string(spec.system_prompt_tokens) + " tokens x " +
                                      std::to_string(spec.system_prompts);
        return w;
    }
    Workload w;
    w.name = spec.name;
    const auto arrivals = generateArrivals(spec.arrivals, spec.count);
    Rng rng(spec.length_seed);
    w.requests.resize(spec.count);
    for (std::size_t i = 0; i < spec.count; ++i) {
        Request& r = w.requests[i];
        r.id = static_cast<std::int64_t>(i);
        r.arrival = arrivals[i];
        if (!spec.length_pairs.empty()) {
            const auto k =
                rng.uniformInt(0, static_cast<std::int64_t>(spec.length_pairs.size()) - 1);
            r.prompt_tokens = spec.length_pairs[static_cast<std::size_t>(k)].first;
            r.output_tokens = spec.length_pairs[static_cast<std::size_t>(k)].second;
        } else {
            r.prompt_tokens = spec.prompt.sample(rng);
            r.output_tokens = spec.output.sample(rng);
        }
    }
    if (spec.system_prompt_tokens > 0) { // drawn apart, so the lengths stay as without it
        Rng sys_rng(spec.length_seed ^ 0x535953ULL);
        for (Request& r : w.requests) {
            const auto k = std::uint64_t(sys_rng.uniformInt(0, spec.system_prompts - 1));
            r.prompt_tokens = static_cast<std::int32_t>(
                std::min<std::int64_t>(std::int64_t(r.prompt_tokens) + spec.system_prompt_tokens,
                                       std::numeric_limits<std::int32_t>::max()));
            r.prefix = {{spanId(spec.length_seed, ~0ULL, k, 3), spec.system_prompt_tokens}};
        }
        w.meta["system_prompt"] = std::to_string(spec.system_prompt_tokens) + " tokens x " +
                                  std::to_string(spec.system_prompts);
    }
    std::ostringstream src;
    src << "generated: n=" << spec.count << " rate=" << spec.arrivals.rate
        << " burstiness=" << spec.arrivals.burstiness << " seed=" << spec.arrivals.seed;
    w.source = src.str();
    w.meta["arrival_rate"] = std::to_string(spec.arrivals.rate);
    w.meta["burstiness"] = std::to_string(spec.arrivals.burstiness);
    w.meta["arrival_seed"] = std::to_string(spec.arrivals.seed);
    w.meta["length_seed"] = std::to_string(spec.length_seed);
    if (spec.length_pairs.empty()) {
        w.meta["prompt_dist"] = spec.prompt.describe();
        w.meta["output_dist"] = spec.output.describe();
    }
    return w;
}

void assignArrivals(Workload& w, const ArrivalSpec& spec) {
    const auto t = generateArrivals(spec, w.requests.size());
    for (std::size_t i = 0; i < t.size(); ++i) w.requests[i].arrival = t[i];
}

void scaleArrivalRate(Workload& w, double factor) {
    if (!(factor > 0) || !std::isfinite(factor))
        throw std::invalid_argument("arrival rate scale must be a finite number > 0");
    if (w.requests.empty() || factor == 1) return;
    const double t0 = w.requests.front().arrival;
    for (auto& r : w.requests) {
        r.arrival = t0 + (r.arrival - t0) / factor;
        if (!(r.arrival <= kMaxSeconds))
            throw std::invalid_argument("scaling the arrival rate by " + [&] {
                char b[32];
                std::snprintf(b, sizeof b, "%g", factor);
                return std::string(b);
            }() + " puts arrivals past 1e9 s (31.7 years)");
    }
}

} // namespace kairos
