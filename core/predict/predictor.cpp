#include "predict/predictor.h"

#include "predict/simple_predictors.h"
#include "predict/trail_predictor.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace kairos {

int LengthPredictor::firstAbove(ReqId, int generated, int limit, double) const {
    // No refinement: the prediction falls by one per token and cannot rise above a
    // threshold it is not above now.
    const int k = refreshEvery();
    if (k <= 0 || generated >= limit) return limit + 1;
    const long long next = (static_cast<long long>(generated) / k + 1) * k;
    return next <= limit ? static_cast<int>(next) : limit + 1;
}

double LengthPredictor::remaining(ReqId id, int generated) const {
    return std::max(1.0, initial(id) - generated);
}

double initialMae(const LengthPredictor& p, const Workload& w) {
    double s = 0;
    for (std::size_t i = 0; i < w.size(); ++i)
        s += std::fabs(p.initial(static_cast<ReqId>(i)) - w.requests[i].output_tokens);
    return w.empty() ? 0.0 : s / static_cast<double>(w.size());
}

std::unique_ptr<LengthPredictor> makePredictor(const std::string& spec, std::uint64_t seed) {
    const auto colon = spec.find(':');
    const std::string kind = spec.substr(0, colon);
    std::vector<double> args;
    if (colon != std::string::npos) {
        std::vector<std::string_view> f;
        text::split(std::string_view(spec).substr(colon + 1), ',', f);
        for (auto s : f) {
            double v;
            if (!text::parseDouble(s, &v))
                throw std::invalid_argument("predictor '" + spec + "': bad number '" +
                                            std::string(s) + "'");
            args.push_back(v);
        }
    }
    auto arg = [&](std::size_t i, double dflt) { return i < args.size() ? args[i] : dflt; };
    // Each kind's parameters, their count and domains, as the grammar states them: junk
    // after a kind that takes none ("oracle:1"), a sigma of 1e300 or a fractional bucket
    // count is an error, not silently read.
    auto most = [&](std::size_t n) {
        if (args.size() > n || (colon != std::string::npos && args.empty()))
            throw std::invalid_argument(
                "predictor '" + spec + "': " + kind + " takes " +
                (n == 0 ? std::string("no parameters")
                        : "at most " + std::to_string(n) + " parameter" + (n == 1 ? "" : "s")) +
                " (" + kPredictorGrammar + ")");
    };
    auto within = [&](std::size_t i, const char* what, double lo, double hi, bool whole) {
        if (i >= args.size()) return;
        const double v = args[i];
        if (!(v >= lo && v <= hi) || (whole && v != std::floor(v))) {
            char b[160];
            std::snprintf(b, sizeof b, "%s must be %s in [%g, %g]", what,
                          whole ? "a whole number" : "a number", lo, hi);
            throw std::invalid_argument("predictor '" + spec + "': " + b);
        }
    };
    if (kind == "oracle" || kind == "exponential") most(0);
    if (kind == "lognormal") {
        most(1);
        within(0, "SIGMA", 0, 10, false);
    }
    if (kind == "bucket") {
        most(3);
        within(0, "B (buckets)", 1, 4096, true);
        within(1, "ACC (accuracy)", 0, 1, false);
        within(2, "NMAX (tokens)", 1, 1 << 24, true);
    }
    if (kind == "trail") {
        most(5);
        within(0, "PROMPT_NOISE (bins)", 0, 100, false);
        within(1, "TOKEN_NOISE (bins)", 0, 100, false);
        within(2, "EVERY (tokens)", 1, 1 << 20, true);
        within(3, "BINS", 2, 4096, true);
        within(4, "L_MAX (tokens)", 1, 1 << 24, false);
    }
    if (kind == "oracle") return std::make_unique<OraclePredictor>();
    if (kind == "lognormal") return std::make_unique<LogNormalPredictor>(arg(0, 0.5), seed);
    if (kind == "exponential") return std::make_unique<ExponentialPredictor>(seed);
    if (kind == "bucket")
        return std::make_unique<BucketPredictor>(static_cast<int>(arg(0, 16)), arg(1, 1.0),
                                                 static_cast<int>(arg(2, 8192)), seed);
    if (kind == "trail") {
        // trail[:PROMPT_NOISE,TOKEN_NOISE[,EVERY[,BINS[,L_MAX]]]]
        TrailOptions o;
        o.prompt_noise = arg(0, o.prompt_noise);
        o.token_noise = arg(1, o.token_noise);
        o.every = static_cast<int>(arg(2, o.every));
        o.bins = static_cast<int>(arg(3, o.bins));
        o.l_max = arg(4, o.l_max);
        return std::make_unique<TrailPredictor>(o, seed);
    }
    throw std::invalid_argument("unknown predictor '" + spec + "' (" + kPredictorGrammar + ")");
}

} // namespace kairos
