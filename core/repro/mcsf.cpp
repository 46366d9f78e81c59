// MC-SF (seeds/003, section 7) against the alpha-protection greedy and beta-clearing
// benchmarks, and against the exact optimum in the paper's discrete model.
#include "repro/common.h"
#include "sched/discrete_model.h"
#include "workload/random.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>

namespace kairos::repro {
namespace {

constexpr std::int64_t kPaperM = 16492; // Llama2-70B on 2x A100 (the paper's figure)

Workload prefix(const Workload& w, std::size_t n) {
    Workload p = w;
    p.requests.resize(std::min(n, w.size()));
    return p;
}

EngineLimits paperLimits() {
    EngineLimits lim;
    lim.kv_capacity_tokens = kPaperM;
    lim.chunked_prefill = true; // a batch mixes prompts and output tokens (the paper's model)
    lim.max_num_batched_tokens = 8192;
    lim.max_num_seqs = 1024;
    return lim;
}

PolicyConfig greedy(double alpha) {
    PolicyConfig p;
    p.name = "protect_greedy";
    p.params = {{"alpha", alpha}, {"reset", 1}};
    return p;
}

PolicyConfig clearing(double alpha, double beta, std::uint64_t seed) {
    PolicyConfig p;
    p.name = "protect_clearing";
    p.params = {{"alpha", alpha}, {"beta", beta}, {"reset", 1}};
    p.seed = seed;
    return p;
}

std::string policyLabel(const PolicyConfig& p) {
    if (p.name == "mcsf") return "MC-SF";
    if (p.name == "fcfs") return "FCFS (null model)";
    if (p.name == "sjf") return "SJF (null model)";
    std::string s = p.name == "protect_greedy" ? "greedy a=" : "clearing a=";
    s += fmt(p.params.at("alpha"), 3);
    if (p.name == "protect_clearing") s += " b=" + fmt(p.params.at("beta"), 3);
    return s;
}

// The smallest alpha on a 0.01 grid for which greedy (reset) does not loop on `w`.
double smallestLoopFreeAlpha(const Workload& w, const ExecutionModel& model, const Options& opt,
                             double step) {
    // Scan the grid in parallel blocks; the answer is the first loop-free alpha.
    const int per_block = std::max(2, opt.threads > 0 ? opt.threads : 4);
    for (int base = 0; base * step < 1.0; base += per_block) {
        std::vector<Job> jobs;
        for (int i = base; i < base + per_block && i * step < 1.0; ++i)
            jobs.push_back({&w, greedy(i * step), paperLimits(), {}});
        const auto res = runAll(jobs, model, opt);
        for (std::size_t i = 0; i < res.size(); ++i)
            if (!res[i].looped) return (base + static_cast<int>(i)) * step;
    }
    return 1.0;
}

} // namespace

Report reproduceMcsf(const Options& opt) {
    Report rep;
    // Vidur's batch times, as the paper took them (7): Vidur's operator profiles of
    // Llama2-70B at TP 2 on A100s, composed as Vidur composes them (derive-profile vidur).
    const DeviceProfile prof = opt.profile("llama2-70b-tp2-vidur");
    rep.prefix_caching = paperLimits().prefix_caching;
    const auto model = makeExecutionModel(prof);
    const std::size_t n_max = opt.quick ? 600 : 5000;
    const std::vector<std::size_t> ns =
        opt.quick ? std::vector<std::size_t>{200, 400, 600}
                  : std::vector<std::size_t>{1000, 2000, 3000, 4000, 5000};
    const std::string base_setting =
        "Llama2-70B on 2x A100 with Vidur's batch times (profile llama2-70b-tp2-vidur: Vidur's "
        "operator profiles composed as Vidur does) and the paper's M = 16,492 tokens; lengths "
        "of ShareGPT single questions of at most 256 tokens (LMSYS-Chat-1M is not available "
        "here; of the substitutes, the closest to its short prompts), Poisson arrivals";

    // Demand relative to what MC-SF can serve here. The paper's low demand is a "near-stable
    // state" (7.2) in which MC-SF's mean latency "increases at a remarkably slow rate" (1/800 s
    // per arrival in PAPERS.md's notes; the rates, 10 and 50 req/s there, are lost from the
    // seed's text) and the best benchmark's eight times as fast or more; high demand is five
    // times that rate. Its rates are not stated relative to its capacity, so low demand here
    // is the lowest multiple of MC-SF's flood rate (its throughput with every request queued
    // at 0, which the drain tail holds below what it sustains under Poisson arrivals) on a
    // 0.1 grid at which MC-SF's mean latency grows at a tenth of 1/800 or more: the paper's
    // regime, where MC-SF's latency grows slowly, rather than a load below capacity where
    // every order ties (an outside audit: the previous fixed 95 % of the flood rate was such
    // a load, and the only agreement rested on it). The high-demand ratio at other anchors
    // is reported beside it.
    say(opt, "mcsf: measuring MC-SF's service rate on this setting");
    PolicyConfig mcsf;
    mcsf.name = "mcsf";
    // MC-SF's throughput with every request queued at 0 on a workload's first n_max requests.
    auto serviceRate = [&](const Workload& flood) {
        return runAll({{&flood, mcsf, paperLimits(), {}}}, *model, opt)[0]
            .summary.request_throughput;
    };
    const double mu = serviceRate(shortPromptConversations(opt, INFINITY, n_max));
    // A workload's first n requests for each n of `ns`: a slope's x axis.
    auto prefixesOf = [&](const Workload& w) {
        std::vector<Workload> out;
        out.reserve(ns.size());
        for (std::size_t n : ns) out.push_back(prefix(w, n));
        return out;
    };
    // MC-SF's mean latency against the number of arrivals: its slope, s per arrival.
    auto mcsfSlope = [&](const Workload& w) {
        const std::vector<Workload> prefixes = prefixesOf(w);
        std::vector<Job> jobs;
        for (const auto& pw : prefixes) jobs.push_back({&pw, mcsf, paperLimits(), {}});
        const auto res = runAll(jobs, *model, opt);
        std::vector<double> x(ns.begin(), ns.end()), y;
        for (const Outcome& o : res) y.push_back(o.summary.e2el_ms.mean / 1e3);
        return slope(x, y);
    };
    auto rateAt = [&](double multiple) { return std::round(multiple * mu * 100) / 100; };
    constexpr double kPaperLowSlope = 1.0 / 800, kGrowth = kPaperLowSlope / 10;
    constexpr int kMaxAnchorTenths = 30;
    say(opt, "mcsf: the lowest load at which MC-SF's latency grows (low demand)");
    double anchor = kMaxAnchorTenths / 10.0;
    std::string anchor_scan;
    for (int tenth = 10; tenth <= kMaxAnchorTenths; ++tenth) {
        const double s = mcsfSlope(shortPromptConversations(opt, rateAt(tenth / 10.0), n_max));
        anchor_scan +=
            (anchor_scan.empty() ? "" : ", ") + fixed(tenth / 10.0, 1) + "x: " + fmt(s, 3);
        if (s >= kGrowth) {
            anchor = tenth / 10.0;
            break;
        }
    }
    const double low = rateAt(anchor), high = 5 * low;
    rep.details += "MC-SF vs alpha-protection benchmarks (" + base_setting + ")\n";
    rep.details += "  MC-SF serves " + fixed(mu, 2) +
                   " req/s with every request queued at 0 (its flood rate); its latency slope "
                   "(s per arrival) by multiple of that rate: " +
                   anchor_scan + ". Low demand " + fixed(low, 2) + " req/s (" + fixed(anchor, 1) +
                   "x, the first whose slope reaches " + fmt(kGrowth, 3) + "), high demand " +
                   fixed(high, 2) + " req/s\n";
    // The other substitute beside it: the Azure conversation trace's lengths (long prompts),
    // at the same demand relative to MC-SF's flood rate there.
    say(opt, "mcsf: the same on the Azure conversation trace (the other substitute)");
    const double mu_azure = serviceRate(conversationTrace(opt, 1000.0, n_max));

    struct Demand {
        std::string name;
        double rate, paper_alpha, paper_mcsf_slope, paper_bench_slope;
    };
    const Demand demands[] = {{"high", high, 0.21, 1.0 / 6, 1.0 / 2},
                              {"low", low, 0.24, kPaperLowSlope, 1.0 / 100}};
    double mcsf_peak = 0;
    std::int64_t mcsf_preemptions = 0;
    // The seven algorithms of the paper's Figure 5 on `w`: MC-SF, greedy at the smallest
    // loop-free alpha and above it, beta-clearing below it (the text lost the paper's four
    // (alpha, beta) cases; these are ours); each one's mean latency against the number of
    // arrivals and its slope.
    struct Slopes {
        double mcsf = 0, best = INFINITY, best_level = INFINITY;
        double fcfs = NAN; // the null models' slopes: FCFS in MC-SF's place,
        double sjf = NAN;  // and SJF (shortest-first without the look-ahead)
        std::string best_name, table;
        double peak = 0;              // MC-SF's peak KV over M
        std::int64_t preemptions = 0; // MC-SF's clears
    };
    auto slopesOn = [&](const Workload& w, double a_min, const std::string& what) {
        std::vector<PolicyConfig> pols{mcsf, greedy(a_min), greedy(std::min(0.95, a_min + 0.1))};
        for (double da : {0.1, 0.05})
            for (double b : {0.2, 0.5})
                pols.push_back(clearing(std::max(0.0, a_min - da), b, opt.seed));
        // Last: the null models, not benchmarks. FCFS (vLLM's order: admission by arrival
        // while the KV fits, the latest arrival preempted when it runs out), and shortest-first
        // without MC-SF's look-ahead at future memory (SJF by exact length, the same admission
        // and preemption): an outside audit asked whether the ratio needs the look-ahead.
        PolicyConfig fcfs, sjf;
        fcfs.name = "fcfs";
        sjf.name = "sjf";
        pols.push_back(fcfs);
        pols.push_back(sjf);
        const std::vector<Workload> prefixes = prefixesOf(w);
        std::vector<Job> jobs;
        for (const auto& p : pols)
            for (const auto& pw : prefixes) jobs.push_back({&pw, p, paperLimits(), {}});
        say(opt, "mcsf: " + what + ", " + std::to_string(jobs.size()) + " runs");
        const auto res = runAll(jobs, *model, opt);
        std::vector<std::string> head{"algorithm"};
        for (std::size_t n : ns) head.push_back("n=" + std::to_string(n));
        head.insert(head.end(), {"slope s/arrival", "clears"});
        Table t(head);
        std::vector<double> x(ns.begin(), ns.end());
        // The best benchmark is the one with the lowest mean latency at the most arrivals,
        // not the one with the smallest slope: a benchmark congested from the first
        // thousand arrivals on (clearing a=0.05 b=0.5 at low demand: 105-117 s flat, four
        // times MC-SF's level) has a near-zero slope and would read as the best.
        Slopes out;
        for (std::size_t p = 0; p < pols.size(); ++p) {
            std::vector<double> y;
            std::vector<std::string> row{policyLabel(pols[p])};
            std::int64_t clears = 0;
            bool looped = false;
            for (std::size_t k = 0; k < ns.size(); ++k) {
                const Outcome& o = res[p * ns.size() + k];
                looped |= o.looped;
                y.push_back(o.summary.e2el_ms.mean / 1e3);
                row.push_back(o.looped ? "loop" : fixed(y.back(), 1));
                clears += o.summary.preemptions;
                if (p == 0) {
                    out.peak = std::max(out.peak, double(o.summary.kv_peak_tokens) / kPaperM);
                    out.preemptions += o.summary.preemptions;
                }
            }
            const double sl = looped ? INFINITY : slope(x, y);
            row.push_back(fmt(sl, 3));
            row.push_back(std::to_string(clears));
            t.add(row);
            if (p + 2 == pols.size())
                out.fcfs = sl;
            else if (p + 1 == pols.size())
                out.sjf = sl;
            else if (p == 0)
                out.mcsf = sl;
            else if (!looped && y.back() < out.best_level)
                out.best_level = y.back(), out.best = sl, out.best_name = row[0];
        }
        out.table = t.str();
        return out;
    };
    // The loop-free alpha's scan step, and its band: the paper's two decimals (+-0.005) and
    // the step (the smallest loop-free alpha lies within one step below the point found).
    const double alpha_step = opt.quick ? 0.05 : 0.01;
    const Band alpha_band = Band::measured(0.005 + alpha_step);
    for (const Demand& d : demands) {
        const std::string setting =
            base_setting + " at " + fixed(d.rate, 2) + " req/s (" + d.name +
            " demand: " + (d.name == "high" ? "50" : "10") +
            "/s in PAPERS.md's notes, lost from the seed's text; low demand here is the lowest "
            "multiple of MC-SF's flood rate, " +
            fixed(anchor, 1) +
            "x, at which its latency grows at a tenth of PAPERS.md's 1/800 s per arrival or "
            "more, the paper's 'near-stable state' (7.2); high demand five times that); " +
            std::to_string(ns.front()) + "-" + std::to_string(ns.back()) +
            " arrivals (the paper: 10,000)";
        const Workload w = shortPromptConversations(opt, d.rate, n_max);
        say(opt, "mcsf: " + d.name + " demand, grid search for the smallest loop-free alpha");
        const double a_min = smallestLoopFreeAlpha(w, *model, opt, alpha_step);
        rep.claims.push_back(makeClaim("mcsf", "smallest loop-free alpha, " + d.name + " demand",
                                       d.paper_alpha, a_min, "fraction of M", setting));
        rep.claims.back().band = alpha_band;
        rep.claims.back().paper_value_source =
            "PAPERS.md's notes (0.21 high, 0.24 low: the values are lost in the seed's text "
            "conversion)";
        rep.claims.back().quote =
            d.name == "high"
                ? "seeds/003 (MC-SF), 7.1: \"Through a grid search with a step size of [ ], we "
                  "identify [alpha = ] as the smallest value that avoids an infinite processing "
                  "loop\" (the values are lost in the seed's text conversion; PAPERS.md: 0.21 "
                  "high)"
                : "seeds/003 (MC-SF), 7.2: \"Using a grid search with a [ ] step size, we "
                  "identified [alpha = ] as the smallest value that prevents infinite processing "
                  "loops\" (the values are lost in the seed's text conversion; PAPERS.md: 0.24 "
                  "low)";
        rep.claims.back().band_origin =
            precisionOrigin("two decimals, +-0.005, plus Kairos's scan's grid step, " +
                            fmt(alpha_step) + " (the paper's step is lost in the seed's text)");
        // The same multiple of MC-SF's flood rate on the Azure trace: the other
        // substitute, reported beside the row.
        const double rate_azure = d.rate / mu * mu_azure;
        const Workload wa = conversationTrace(opt, rate_azure, n_max);
        const double a_azure = smallestLoopFreeAlpha(wa, *model, opt, alpha_step);
        {
            // The protection must hold the KV the admitted requests still grow by: the share
            // of a request's final KV written while it runs. Measured: the scan again on
            // short prompts, whose share is larger.
            auto outputShare = [](const Workload& x) {
                double out_tokens = 0, all_tokens = 0;
                for (const Request& q : x.requests)
                    out_tokens += q.output_tokens, all_tokens += q.prompt_tokens + q.output_tokens;
                return out_tokens / all_tokens;
            };

            rep.claims.back().compared["alpha_azure_conversations"] = a_azure;
            rep.claims.back().cause =
                "the loop-free alpha follows the share of a request's final KV it writes while "
                "running, output / (prompt + output): " +
                fixed(outputShare(w), 3) +
                " over these short-prompt requests. On the other substitute, the Azure "
                "conversation trace (mean prompt 1,155 tokens; share " +
                fixed(outputShare(wa), 3) + ") at the same multiple of MC-SF's flood rate there (" +
                fixed(rate_azure, 2) + " req/s), seed " + std::to_string(opt.seed) +
                ": alpha = " + fixed(a_azure, 2) + readsInBand(alpha_band, d.paper_alpha, a_azure) +
                " (the mean over the seeds is in `compared`)";
        }

        const Slopes sl = slopesOn(w, a_min, d.name + " demand");
        mcsf_peak = std::max(mcsf_peak, sl.peak);
        mcsf_preemptions += sl.preemptions;
        const double mcsf_slope = sl.mcsf, best_bench = sl.best;
        const std::string& best_name = sl.best_name;
        rep.details += "\n  " + d.name + " demand, " + fixed(d.rate, 2) +
                       " req/s: mean end-to-end latency (s) against the number of arrivals\n" +
                       sl.table;
        const std::string slopes_differ =
            "a slope in seconds per arrival depends on the absolute load and on the requests' "
            "service times (the paper's 10 and 50 req/s are not stated relative to its "
            "capacity, and its LMSYS answers are not these); low demand here is placed where "
            "MC-SF's slope reaches a tenth of the paper's, so that slope is set, not measured; "
            "the ratio of the slopes below is the comparable figure";
        const std::string slope_quote =
            d.name == "high"
                ? "seeds/003 (MC-SF), 7.1: \"Algorithm 2 shows a slope of approximately [1/6], "
                  "while the best-performing benchmark algorithm has a slope of around [1/2]\" "
                  "(bracketed values from PAPERS.md: lost in the seed's text conversion)"
                : "seeds/003 (MC-SF), 7.2: \"The best-performing benchmark algorithms in this "
                  "setting ... have a slope of about [1/100], at least eight times that of "
                  "Algorithm 2\" (bracketed value from PAPERS.md)";
        const std::string mcsf_slope_quote =
            d.name == "high"
                ? slope_quote
                : "seeds/003 (MC-SF), 7.2: \"under low demand, the average latency of "
                  "Algorithm 2 increases at a remarkably slow rate, with an estimated slope of "
                  "approximately [1/800]\" (bracketed value from PAPERS.md: lost in the seed's "
                  "text conversion)";
        const std::string slope_source = "PAPERS.md's notes (the slopes are lost in the seed's "
                                         "text conversion)";
        rep.claims.push_back(makeClaim("mcsf", "MC-SF average-latency slope, " + d.name + " demand",
                                       d.paper_mcsf_slope, mcsf_slope, "s per arrival", setting));
        rep.claims.back().not_comparable = slopes_differ;
        rep.claims.back().quote = mcsf_slope_quote;
        rep.claims.back().paper_value_source = slope_source;
        // At low demand the load is placed where this slope first reaches a tenth of the
        // paper's: set, not found (an outside audit).
        rep.claims.back().calibrated = d.name == "low";
        rep.claims.push_back(makeClaim("mcsf", "best benchmark's slope, " + d.name + " demand",
                                       d.paper_bench_slope, best_bench, "s per arrival",
                                       setting + "; best benchmark (seed " +
                                           std::to_string(opt.seed) + "): " + best_name +
                                           ", the lowest mean latency at the most arrivals"));
        rep.claims.back().not_comparable = slopes_differ;
        rep.claims.back().quote = slope_quote;
        rep.claims.back().paper_value_source = slope_source;
        rep.claims.push_back(
            makeClaim("mcsf", "best benchmark slope / MC-SF slope, " + d.name + " demand",
                      d.paper_bench_slope / d.paper_mcsf_slope, best_bench / mcsf_slope, "x",
                      setting + "; best benchmark: the lowest mean latency at the most "
                                "arrivals"));
        // The paper's words give the ratio (8), but the demands it is measured at rest on
        // PAPERS.md's rates and slope (lost from the seed's text): not tallied (rule 10).
        rep.claims.back().paper_value_source =
            "the paper's text (8: 'approximately three times', 'eight times greater'), at "
            "demands placed from PAPERS.md's notes (50 and 10 req/s, MC-SF's 1/800 s per "
            "arrival), lost from the seed's text";
        // The null model: shortest-first without the look-ahead, the stronger of the two (it
        // reaches the paper's band at high demand where FCFS does not); FCFS beside it.
        rep.claims.back().null_model =
            "SJF by exact length in MC-SF's place, without its look-ahead at future memory "
            "(the best benchmark's slope over SJF's: does shortest-first alone reach the "
            "ratio?)";
        rep.claims.back().null_value = best_bench / sl.sjf;
        rep.claims.back().compared["null_fcfs_in_mcsf_place"] = best_bench / sl.fcfs;
        const std::string nulls =
            "; seed " + std::to_string(opt.seed) + ": MC-SF's slope " + fmt(mcsf_slope, 3) +
            ", SJF's in its place " + fmt(sl.sjf, 3) + ", FCFS's " + fmt(sl.fcfs, 3) +
            " s per arrival (the best benchmark over FCFS: " + fmt(best_bench / sl.fcfs, 3) + "x)";
        // A ratio of slopes says something only where MC-SF's latency grows: below its
        // capacity both slopes are noise around zero.
        rep.claims.back().premises.push_back(
            {"MC-SF's average latency growth, s per arrival (a tenth of the paper's at this "
             "demand at least)",
             mcsf_slope, d.paper_mcsf_slope / 10,
             "a ratio of two slopes that do not grow is the ratio of two noises"});
        // The paper's words: "approximately three times" (high demand, a whole number) and
        // "at least eight times" (low demand, one-sided).
        if (d.name == "high") {
            rep.claims.back().band = Band::measured(0.5, 1);
            rep.claims.back().band_origin =
                precisionOrigin("'approximately three times', a whole number: +-0.5");
        } else {
            rep.claims.back().band = Band::atLeast();
            rep.claims.back().band_origin = "the paper's words: 'at least eight times'";
        }
        rep.claims.back().quote =
            slope_quote + "; 8: \"the latency slope of the best benchmark algorithm is "
                          "approximately three times that of Algorithm 2 under high demand and "
                          "eight times greater under low demand\"";
        // How much the ratio rests on where low demand is placed: high demand again at five
        // times other multiples of the flood rate (the former fixed 95 %, below the load where
        // MC-SF's latency grows, and half a flood rate above the anchor), the alpha scan at
        // 0.05 there.
        std::string elsewhere;
        if (d.name == "high")
            for (const auto& [key, multiple] :
                 {std::pair<std::string, double>{"ratio_low_demand_at_0.95x_flood_rate", 0.95},
                  {"ratio_low_demand_at_anchor_plus_0.5", anchor + 0.5}}) {
                const Workload wm = shortPromptConversations(opt, 5 * rateAt(multiple), n_max);
                const double am = smallestLoopFreeAlpha(wm, *model, opt, 0.05);
                const Slopes so = slopesOn(wm, am,
                                           "high demand, low demand at " + fixed(multiple, 2) +
                                               "x the flood rate");
                const double r_m = so.best / so.mcsf;
                rep.claims.back().compared[key] = r_m;
                elsewhere +=
                    (elsewhere.empty() ? "" : "; ") + fixed(multiple, 2) + "x: " + fmt(r_m, 3) +
                    "x" + readsInBand(rep.claims.back().band, rep.claims.back().paper_value, r_m);
            }
        if (!elsewhere.empty())
            elsewhere = ". With low demand at other multiples of the flood rate (high demand "
                        "five times each), seed " +
                        std::to_string(opt.seed) + ": " + elsewhere;
        {
            const Slopes ss = slopesOn(wa, a_azure, d.name + " demand, Azure conversations");
            const double r_azure = ss.best / ss.mcsf;
            rep.claims.back().compared["ratio_azure_conversations"] = r_azure;
            rep.claims.back().cause =
                "on the other substitute, the Azure conversation trace's lengths (long prompts), "
                "at the same multiple of MC-SF's flood rate there, seed " +
                std::to_string(opt.seed) + ": the best benchmark (" + ss.best_name + ") grows " +
                fmt(r_azure, 3) + "x as fast as MC-SF" +
                readsInBand(rep.claims.back().band, rep.claims.back().paper_value, r_azure) +
                "; the paper's 10 and 50 req/s (PAPERS.md's) are not stated relative to its "
                "capacity, so the demands here are multiples of MC-SF's flood rate" +
                elsewhere + nulls + " (the means over the seeds are in `compared`)";
        }
        // Low demand is placed where MC-SF's slope first reaches the premise's floor, so the
        // ratio's denominator is set by the placement (its size by where the grid step lands:
        // an outside audit), and the premise repeats the placement's test.
        if (d.name == "low")
            rep.claims.back().not_comparable =
                "low demand is placed where MC-SF's slope first reaches a tenth of PAPERS.md's "
                "1/800 s per arrival, so the ratio's denominator is set by that placement (its "
                "size by where the 0.1 grid step lands), not measured: the row cannot test "
                "'at least eight times'";
        // A finding of Kairos's (no paper figure): shortest-first without MC-SF's look-ahead
        // at future memory against MC-SF, whose gain the paper credits to preventing overflow.
        if (d.name == "high") {
            rep.claims.push_back(makeClaim(
                "mcsf",
                "SJF by exact length (no look-ahead at future memory) slope / MC-SF slope, high "
                "demand",
                nullptr, sl.sjf / mcsf_slope, "x", setting));
            rep.claims.back().cause =
                "below 1: shortest-first alone, admitting while the KV fits and preempting the "
                "latest arrival when it runs out, lets latency grow more slowly than MC-SF's "
                "look-ahead does here (seed " +
                std::to_string(opt.seed) + ": " + fmt(sl.sjf, 3) + " against " +
                fmt(mcsf_slope, 3) +
                " s per arrival); the paper compares MC-SF with the "
                "alpha-protection benchmarks only";
        }
    }
    // With exact lengths MC-SF admits only what fits at every future completion, so its KV
    // never exceeds M and it never clears: true by construction, so not a claim. A test
    // checks it (tst_mcsf neverOverflowsWithExactPredictions); here it is only reported.
    rep.details += "\n  Properties of the construction (tests, not claims: tst_mcsf): over every "
                   "run above MC-SF's peak KV is " +
                   fixed(100 * mcsf_peak, 1) + " % of M and it cleared " +
                   std::to_string(mcsf_preemptions) + " time(s)" +
                   (mcsf_peak <= 1.0 && mcsf_preemptions == 0 ? " (as constructed)\n"
                                                              : " (VIOLATED: a bug)\n");

    // The rows above rest on a substitute for the paper's dataset; the optimum rows below
    // are the paper's own discrete model.
    restOn(rep.claims, 0,
           {{"LMSYS-Chat-1M, the paper's 10,000 conversations (prompt and answer word counts)",
             "ShareGPT single questions of at most 256 tokens (median prompt 55), the closest "
             "here to its short prompts; the Azure LLM conversation trace's lengths (mean prompt "
             "1,155) beside each row, in `compared` and its cause"}});
    // Ratio to the hindsight optimum on random tiny instances of the discrete model.
    say(opt, "mcsf: ratio to the exact optimum on random tiny instances");
    const int count = opt.quick ? 60 : 400;
    Rng r(opt.seed * 7919 + 1);
    double at_once = 0, online = 0, worst = 1;
    int missed = 0; // instances, all at 0, where MC-SF is above the optimum
    auto ratio = [](const discrete::Instance& in) {
        return double(discrete::totalLatency(in, discrete::mcsf(in))) /
               double(discrete::totalLatency(in, discrete::optimal(in)));
    };
    for (int k = 0; k < count; ++k) {
        const auto a = discrete::randomInstance(r, 3, 6, 3, 6, 20, 0, discrete::Occupancy::Paper);
        const double ra = ratio(a);
        missed += ra > 1;
        const auto o = discrete::randomInstance(r, 3, 6, 3, 6, 20, 4, discrete::Occupancy::Paper);
        const double ro = ratio(o);
        at_once += ra;
        online += ro;
        worst = std::max({worst, ra, ro});
    }
    // Theorem 4.2 is stated for prompts negligible against M (section 3): the row is judged on
    // instances whose every prompt is one token (M at least ten times the largest prompt is
    // its premise), and as M grows further.
    struct Roomy {
        double mean = 0, room = 0;
        int above = 0;
    };
    auto roomy = [&](int extra) {
        Roomy x;
        for (int k = 0; k < count; ++k) {
            const auto in =
                discrete::randomInstance(r, 3, 6, 1, 6, extra, 0, discrete::Occupancy::Paper);
            const double v = ratio(in);
            x.mean += v / count;
            x.above += v > 1;
            int largest_prompt = 1;
            for (const auto& j : in.jobs) largest_prompt = std::max(largest_prompt, j.prompt);
            x.room += double(in.capacity) / largest_prompt / count;
        }
        return x;
    };
    const Roomy one_token = roomy(20), more_room = roomy(60);
    const std::string tiny =
        std::to_string(count) +
        " random instances of the paper's discrete model (3-6 requests, prompt 1-3, output 1-6, "
        "M = largest need + U(0, 20); online: arrivals U(0, 4)); the paper does not state its "
        "instance distribution. Optimum by exhaustive search (checked against a brute force)";
    // The paper's text claims exact optimality (Theorem 4.2); the ratios 1.005 and 1.047
    // are PAPERS.md's notes, not the paper's words, so they are not what a row is judged by.
    rep.claims.push_back(makeClaim(
        "mcsf",
        "MC-SF / optimum, all arrive at 0, one-token prompts (Algorithm 1; Theorem 4.2: optimal)",
        1.0, one_token.mean, "ratio",
        std::to_string(count) +
            " random instances of the paper's discrete model with every prompt one token, as "
            "the theorem's assumption that prompts are negligible against M (3-6 requests, "
            "output 1-6, M = largest need + U(0, 20), all at 0); the paper does not state its "
            "instance distribution. Optimum by exhaustive search (checked against a brute "
            "force)"));
    rep.claims.back().band = Band::absolute(0);
    rep.claims.back().quote = "seeds/003 (MC-SF), 4, Theorem 4.2: \"Algorithm 1 is optimal in "
                              "terms of average end-to-end latency\"";
    rep.claims.back().premises.push_back(
        {"M over the largest prompt, mean over the instances", one_token.room, 10,
         "the theorem assumes prompts negligible against M; on tight instances a prompt's "
         "own KV decides which order fits"});
    rep.claims.back().band_origin = "exact: the theorem says optimal (PAPERS.md's 1.005 for a "
                                    "synthetic check is not in the paper's text)";
    rep.claims.back().cause =
        "MC-SF is above the exhaustive optimum on " + std::to_string(one_token.above) + " of " +
        std::to_string(count) + " one-token-prompt instances (seed " + std::to_string(opt.seed) +
        "; an outside audit's brute force: prompts of 1, outputs 3, 3, 6, 6, M = 10, MC-SF's "
        "start rounds sum to 8, the optimum's to 7): filling each round with the shortest "
        "requests that fit is not optimal when a long request started now would end with the "
        "short ones. With more room (M slack U(0, 60)) it is " +
        fixed(more_room.mean, 4) + ", above on " + std::to_string(more_room.above) + " of " +
        std::to_string(count) + "; with prompts of 1-3 tokens (M slack U(0, 20)) " +
        fixed(at_once / count, 4) + ", above on " + std::to_string(missed) +
        " (e.g. M = 10, four "
        "prompts of 2 with outputs 3, 4, 5, 6: MC-SF's start rounds sum to 12, the optimum's to "
        "10, tst_mcsf)";
    rep.claims.push_back(makeClaim("mcsf", "MC-SF / optimum, online arrivals (Algorithm 2)",
                                   nullptr, online / count, "ratio", tiny));
    rep.claims.back().quote =
        "none: seeds/003 claims constant regret for Algorithm 2 (5.1), not a ratio; 1.047 is "
        "PAPERS.md's note of a synthetic check, not in the paper's text";
    {
        // How much the online ratio depends on the instances: wider arrival spreads.
        std::string spread;
        for (const auto& [max_arrival, extra] : {std::pair{8, 20}, std::pair{4, 5}}) {
            double sum = 0;
            for (int k = 0; k < count; ++k) {
                const auto o = discrete::randomInstance(r, 3, 6, 3, 6, extra, max_arrival,
                                                        discrete::Occupancy::Paper);
                sum += ratio(o);
            }
            spread += "; arrivals U(0, " + std::to_string(max_arrival) + "), M slack U(0, " +
                      std::to_string(extra) + "): " + fixed(sum / count, 4);
        }
        rep.claims.back().cause =
            "the ratio is a property of the instance distribution, which the paper does not "
            "state: arrivals U(0, 4), M slack U(0, 20): " +
            fixed(online / count, 4) + spread;
    }
    rep.details += "\n  ratio to the optimum over " + std::to_string(count) +
                   " tiny instances each: all at 0 " + fixed(at_once / count, 4) + ", online " +
                   fixed(online / count, 4) + ", worst single instance " + fixed(worst, 3) + "\n\n";
    return rep;
}

} // namespace kairos::repro
