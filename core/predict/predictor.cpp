#include "predict/predictor.h"

#include "predict/simple_predictors.h"
#include "predict/trail_predictor.h"
#include "workload/text.h"

#include <algorithm>
#include <cmath>
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
