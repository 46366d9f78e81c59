// Trail (seeds/002) in its setting: Llama3-8B on one A100-80GB (a profile derived for it,
// core/repro/derived.cpp), vLLM 0.5 with chunked prefill (512 tokens per iteration),
// recompute on out-of-memory, short single-question prompts; the paper's four systems:
// vLLM-FCFS, vLLM-SJF on prompt-only predictions, Trail (SPRPT with limited preemption,
// C = 0.8) with refined predictions, and Trail with prompt-only predictions (Trail-BERT).
// Figure 5 (C at 14 req/s), Figure 6 (mean latency and TTFT against the rate), Figure 7
// (a burst).
#include "predict/trail_predictor.h"
#include "repro/common.h"
#include "repro/derived.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>

namespace kairos::repro {
namespace {

PolicyConfig policy(const std::string& name, double C, std::uint64_t seed,
                    const std::string& predictor) {
    PolicyConfig p;
    p.name = name;
    if (name == "sprpt_lp") p.params["C"] = C;
    if (name != "fcfs") p.predictor = predictor;
    p.seed = seed;
    return p;
}

} // namespace

Report reproduceTrail(const Options& opt) {
    Report rep;
    const DeviceProfile prof = llama3_8bA100(opt);
    const auto model = makeExecutionModel(prof);
    EngineLimits lim;
    lim.kv_capacity_tokens = prof.kvCapacityTokens();
    lim.block_size = 16;
    lim.chunked_prefill = true;       // as in both the paper's systems
    lim.max_num_batched_tokens = 512; // vLLM 0.5's default with chunked prefill
    rep.prefix_caching = lim.prefix_caching;
    const std::size_t n = opt.quick ? 800 : 4000;
    const std::string setting =
        "Llama3-8B on one A100-80GB as the paper, by a derived profile (" + prof.provenance + "; " +
        std::to_string(lim.kv_capacity_tokens) +
        " KV tokens), chunked prefill of 512 tokens per iteration, 256 seats, recompute on "
        "out-of-memory; " +
        std::to_string(n) +
        " ShareGPT conversations with prompts of at most 256 tokens (Alpaca is not here: "
        "median prompt 55 tokens like Alpaca's instructions, median answer 430 tokens, "
        "ShareGPT's own), Poisson arrivals; rates are fractions of FCFS's service rate. "
        "Predictions: Trail's model (prompt classifier, then a per-token classifier with "
        "Bayesian smoothing; 10 bins over [0, 512)); 'prompt-only' keeps the first estimate "
        "and counts down, as the paper's BERT";

    // Prediction quality as the paper's: the per-token classifier's noise is set so that
    // refined predictions have 2.66x lower MAE than prompt-only ones on this workload.
    say(opt, "trail: calibrating the prediction model to the paper's MAE ratio");
    const Workload sample = shortPromptConversations(opt, 1.0, n);
    const TrailOptions to = calibrateTrail(sample, TrailOptions{}, 2.66, opt.seed);
    const TrailMae mae = trailMae(sample, to, opt.seed);
    const std::string refined = "trail:" + fmt(to.prompt_noise, 6) + "," + fmt(to.token_noise, 6);
    const std::string prompt_only = refined + ",1000000"; // no classifier call after the prompt
    say(opt, "trail: measuring FCFS's service rate");
    const Workload flood = shortPromptConversations(opt, INFINITY, n);
    const double mu =
        runAll({{&flood, policy("fcfs", 0, opt.seed, refined), lim, {}}}, *model, opt)[0]
            .summary.request_throughput;

    // Figure 6: the four systems against the rate; Figure 7: the burst (every request at 0).
    // Rates: fractions of FCFS's service rate up to overload, and the paper's 14 req/s.
    const double paper_rate = 14;
    const std::vector<double> fractions{0.8, 0.9, 1.0, 1.1, paper_rate / mu};
    std::vector<Workload> ws;
    for (double f : fractions) ws.push_back(shortPromptConversations(opt, f * mu, n));
    struct System {
        std::string label;
        PolicyConfig p;
    };
    const std::vector<System> systems{
        {"vLLM-FCFS", policy("fcfs", 0, opt.seed, refined)},
        {"vLLM-SJF (prompt-only)", policy("sjf", 0, opt.seed, prompt_only)},
        {"Trail C=0.8", policy("sprpt_lp", 0.8, opt.seed, refined)},
        {"Trail-BERT C=0.8 (prompt-only)", policy("sprpt_lp", 0.8, opt.seed, prompt_only)}};
    std::vector<Job> jobs;
    for (const auto& w : ws)
        for (const auto& s : systems) jobs.push_back({&w, s.p, lim, {}});
    const std::size_t burst_at = jobs.size();
    const Workload burst = shortPromptConversations(opt, INFINITY, opt.quick ? 400 : 1000);
    for (const auto& s : systems) jobs.push_back({&burst, s.p, lim, {}});
    jobs.push_back({&burst, policy("sprpt_lp", 1.0, opt.seed, refined), lim, {}});
    // Figure 5: C at the paper's 14 req/s (the last rate above).
    const Workload& w14 = ws.back();
    const std::vector<double> Cs{0, 0.2, 0.5, 0.8, 1};
    const std::size_t c_at = jobs.size();
    for (double C : Cs) jobs.push_back({&w14, policy("sprpt_lp", C, opt.seed, refined), lim, {}});
    say(opt, "trail: " + std::to_string(jobs.size()) + " runs");
    const auto res = runAll(jobs, *model, opt);
    // Requests a better-ranked one pushed out of the batch: suspended with their KV kept,
    // or preempted (KV dropped, recomputed).
    auto displaced = [](const Summary& x) { return x.suspensions + x.preemptions; };
    auto at = [&](std::size_t r, std::size_t s) -> const Summary& {
        return res[r * systems.size() + s].summary;
    };

    Table t({"rate req/s", "load", "system", "mean E2E s", "mean TTFT s", "E2E vs fcfs",
             "TTFT vs fcfs", "queue s", "displaced"});
    for (std::size_t r = 0; r < fractions.size(); ++r)
        for (std::size_t s = 0; s < systems.size(); ++s) {
            const Summary &f = at(r, 0), &x = at(r, s);
            t.add({fixed(fractions[r] * mu, 2), fixed(fractions[r], 2), systems[s].label,
                   fixed(x.e2el_ms.mean / 1e3, 2), fixed(x.ttft_ms.mean / 1e3, 2),
                   fixed(f.e2el_ms.mean / x.e2el_ms.mean, 2) + "x",
                   fixed(f.ttft_ms.mean / x.ttft_ms.mean, 2) + "x", fixed(x.queue_ms.mean / 1e3, 2),
                   std::to_string(displaced(x))});
        }
    rep.details += "Trail (" + setting + ")\n  FCFS serves " + fixed(mu, 2) +
                   " req/s under overload\n" + t.str();

    // Trail's gain over FCFS, lowest and highest over the rates, with the rate it is at.
    struct Range {
        double lo = INFINITY, hi = -INFINITY;
        std::size_t r_lo = 0, r_hi = 0;
    };
    auto over = [&](std::size_t s, bool ttft) {
        Range g;
        for (std::size_t r = 0; r < fractions.size(); ++r) {
            const Stats& f = ttft ? at(r, 0).ttft_ms : at(r, 0).e2el_ms;
            const Stats& x = ttft ? at(r, s).ttft_ms : at(r, s).e2el_ms;
            const double v = f.mean / x.mean;
            if (v < g.lo) g.lo = v, g.r_lo = r;
            if (v > g.hi) g.hi = v, g.r_hi = r;
        }
        return g;
    };
    // What reordering can win at most: FCFS's mean latency over it without its queueing
    // (the service part stays; a size-based order only shortens the waits).
    auto queueCause = [&](std::size_t r) {
        const Summary& f = at(r, 0);
        const double bound = f.e2el_ms.mean / (f.e2el_ms.mean - f.queue_ms.mean);
        return "at " + fixed(fractions[r], 2) + " of FCFS's service rate FCFS's requests queue " +
               fixed(f.queue_ms.mean / 1e3, 2) + " s of their " + fixed(f.e2el_ms.mean / 1e3, 2) +
               " s mean latency: removing every wait would give at most " + fixed(bound, 2) +
               "x lower latency" +
               (bound < 1.66 ? ", below the paper's 1.66x" : " (not the limit here)");
    };
    const nlohmann::json lat_paper = {1.66, 2.01}, ttft_paper = {1.76, 24.07};
    const Range lat = over(2, false), ttft = over(2, true);
    const std::string f6 = setting + "; Figure 6";
    auto ttftCause = [&](std::size_t r) {
        const Summary &f = at(r, 0), &x = at(r, 2);
        return "at " + fixed(fractions[r], 2) + " of FCFS's service rate Trail's mean TTFT is " +
               fixed(x.ttft_ms.mean / 1e3, 2) + " s against FCFS's " +
               fixed(f.ttft_ms.mean / 1e3, 2) + " s (FCFS queues " +
               fixed(f.queue_ms.mean / 1e3, 2) + " s; Trail displaced " +
               std::to_string(displaced(x)) +
               " running requests, their KV kept, so a new request waits only for its prefill)";
    };
    // Each gain names its load and how much FCFS queues there (judge(): no gain is judged
    // where the baseline barely queues).
    auto gainRow = [&](const std::string& what, double value, const nlohmann::json& paper,
                       std::string cause, std::size_t r) {
        rep.claims.push_back(makeClaim("trail", what, paper, value, "x lower", f6));
        Claim& c = rep.claims.back();
        c.band = Band::relative(0.25);
        c.cause = std::move(cause);
        c.load = fractions[r];
        c.baseline_queue_share = at(r, 0).queue_ms.mean / at(r, 0).e2el_ms.mean;
        c.quote = "seeds/002 (Trail), abstract: \"Trail achieves 1.66x to 2.01x lower mean latency "
                  "on the Alpaca dataset and 1.76x to 24.07x lower mean time to the first token "
                  "compared to the state-of-the-art serving system\"";
        c.band_origin = "Kairos's choice (+-25 % around the paper's range): the paper states "
                        "no precision";
    };
    gainRow("Trail (C=0.8) mean latency vs vLLM-FCFS, lowest over rates", lat.lo, lat_paper,
            queueCause(lat.r_lo), lat.r_lo);
    gainRow("Trail (C=0.8) mean latency vs vLLM-FCFS, highest over rates", lat.hi, lat_paper,
            queueCause(lat.r_hi), lat.r_hi);
    gainRow("Trail (C=0.8) mean TTFT vs vLLM-FCFS, lowest over rates", ttft.lo, ttft_paper,
            ttftCause(ttft.r_lo), ttft.r_lo);
    gainRow("Trail (C=0.8) mean TTFT vs vLLM-FCFS, highest over rates", ttft.hi, ttft_paper,
            ttftCause(ttft.r_hi), ttft.r_hi);
    {
        const Range sjf = over(1, false);
        const Summary &f = at(sjf.r_hi, 0), &j = at(sjf.r_hi, 1);
        rep.claims.push_back(makeClaim("trail",
                                       "vLLM-SJF (prompt-only) mean latency vs vLLM-FCFS, highest "
                                       "over rates (paper: 'minimal benefit', read as 1.0 +- 0.15)",
                                       1.0, sjf.hi, "x lower", f6));
        rep.claims.back().band = Band::absolute(0.15);
        rep.claims.back().quote =
            "seeds/002 (Trail), 5 (Fig. 6): \"SJF based on BERT predictions provides minimal "
            "benefits over vLLM-FCFS\"";
        rep.claims.back().band_origin =
            "Kairos's reading of 'minimal' (+-0.15x): the paper gives no figure";
        rep.claims.back().load = fractions[sjf.r_hi];
        rep.claims.back().baseline_queue_share = f.queue_ms.mean / f.e2el_ms.mean;
        rep.claims.back().cause =
            "at " + fixed(fractions[sjf.r_hi], 2) + " load SJF cuts FCFS's mean queueing from " +
            fixed(f.queue_ms.mean / 1e3, 2) + " s to " + fixed(j.queue_ms.mean / 1e3, 2) + " s";
        int better = 0, ties = 0;
        double tie_queue = 0; // the longest FCFS queueing where the two tie
        for (std::size_t r = 0; r < fractions.size(); ++r) {
            const double a = at(r, 2).e2el_ms.mean, b = at(r, 3).e2el_ms.mean;
            better += a < b;
            if (std::abs(a / b - 1) < 0.005)
                ++ties, tie_queue = std::max(tie_queue, at(r, 0).queue_ms.mean / 1e3);
        }
        rep.claims.push_back(makeClaim(
            "trail",
            "share of rates where Trail's mean latency is below Trail-BERT's (Fig. 6: all)", 1.0,
            double(better) / double(fractions.size()), "fraction", f6));
        if (ties > 0)
            rep.claims.back().cause =
                "at " + std::to_string(ties) + " of " + std::to_string(fractions.size()) +
                " rates the two are within 0.5 %: FCFS's requests queue at most " +
                fixed(tie_queue, 2) +
                " s there, so there is next to nothing for better predictions to reorder";
        rep.claims.back().band = Band::absolute(0);
        rep.claims.back().quote =
            "seeds/002 (Trail), 5 (Fig. 6): \"with Trail using refined embedding predictions "
            "showing the lowest latency and TTFT due to more accurate predictions\"";
        rep.claims.back().band_origin = "exact: the paper says at every rate of the figure";
    }

    // Figure 7: the burst.
    {
        const Summary& f = res[burst_at].summary;
        const Summary& tr = res[burst_at + 2].summary;
        const Summary& c1 = res[burst_at + systems.size()].summary;
        Table bt({"system", "mean E2E s", "mean TTFT s", "displaced"});
        for (std::size_t s = 0; s <= systems.size(); ++s) {
            const Summary& x = res[burst_at + s].summary;
            bt.add({s < systems.size() ? systems[s].label : "Trail C=1",
                    fixed(x.e2el_ms.mean / 1e3, 2), fixed(x.ttft_ms.mean / 1e3, 2),
                    std::to_string(displaced(x))});
        }
        rep.details += "\n  Fig. 7: a burst of " + std::to_string(burst.size()) +
                       " requests at t = 0\n" + bt.str();
        const std::string f7 =
            setting + "; Figure 7: " + std::to_string(burst.size()) + " requests all at t = 0";
        rep.claims.push_back(makeClaim(
            "trail", "burst: vLLM-FCFS mean latency / Trail's (paper: lower, read as >= 1)", 1.0,
            f.e2el_ms.mean / tr.e2el_ms.mean, "ratio", f7));
        rep.claims.back().band = Band::atLeast();
        rep.claims.push_back(
            makeClaim("trail", "burst: vLLM-FCFS mean TTFT / Trail's (paper: lower, read as >= 1)",
                      1.0, f.ttft_ms.mean / tr.ttft_ms.mean, "ratio", f7));
        rep.claims.back().band = Band::atLeast();
        rep.claims.push_back(makeClaim(
            "trail", "burst: Trail mean latency at C=1 / at C=0.8 (paper: similar, within 5 %)",
            1.0, c1.e2el_ms.mean / tr.e2el_ms.mean, "ratio", f7));
        rep.claims.back().band = Band::absolute(0.05);
        // The three burst rows quote Figure 7's text.
        for (std::size_t k = rep.claims.size() - 3; k < rep.claims.size(); ++k) {
            rep.claims[k].quote =
                "seeds/002 (Trail), 5 (Fig. 7): \"Trail continues to offer benefits with lower "
                "latency and TTFT ... preemption has no advantage, leading to similar "
                "performance between Trail with [C = 1] and [C = 0.8]\"";
            rep.claims[k].band_origin = k + 1 == rep.claims.size()
                                            ? "Kairos's reading of 'similar' (within 5 %)"
                                            : "Kairos's reading of 'lower' (at least 1x)";
        }
    }

    // Figure 5: C at 14 req/s.
    {
        Table ct({"C", "mean E2E s", "mean TTFT s", "peak KV tokens", "displaced"});
        double best_c = 0, best = INFINITY, lo = INFINITY, hi = 0;
        for (std::size_t i = 0; i < Cs.size(); ++i) {
            const Summary& s = res[c_at + i].summary;
            ct.add({fmt(Cs[i]), fixed(s.e2el_ms.mean / 1e3, 2), fixed(s.ttft_ms.mean / 1e3, 2),
                    std::to_string(s.kv_peak_tokens), std::to_string(displaced(s))});
            if (s.e2el_ms.mean < best) best = s.e2el_ms.mean, best_c = Cs[i];
            lo = std::min(lo, s.e2el_ms.mean), hi = std::max(hi, s.e2el_ms.mean);
        }
        rep.details += "\n  Fig. 5: C at the paper's 14 req/s (" + fixed(paper_rate / mu, 2) +
                       " of FCFS's service rate here)\n" + ct.str();
        const std::string cset = setting + "; Figure 5: C at the paper's 14 req/s (" +
                                 fixed(paper_rate / mu, 2) + " of FCFS's service rate here)";
        rep.claims.push_back(makeClaim("trail",
                                       "C with the lowest mean latency at 14 req/s (Fig. 5)", 0.8,
                                       best_c, "C", cset));
        rep.claims.back().band = Band::absolute(0.2);
        const Summary& c1 = res[c_at + 4].summary;
        rep.claims.back().cause =
            "mean latency varies by only " + fixed(100 * (hi / lo - 1), 1) +
            " % over C in {0, 0.2, 0.5, 0.8, 1}: even at C = 1 (" + std::to_string(displaced(c1)) +
            " requests displaced, their KV kept) the KV in use "
            "peaks at " +
            std::to_string(c1.kv_peak_tokens) + " of " + std::to_string(lim.kv_capacity_tokens) +
            " tokens, so the memory that limiting preemption saves is never short here";
        const std::string fig5_quote =
            "seeds/002 (Trail), 5.2: \"Figure 5 shows that when [C = 1], Trail exhibits higher "
            "mean latency and TTFT, while [C = 0.8] results in the lowest values ... while "
            "preemption in scheduling benefits LLM systems, it should be limited due to the "
            "additional memory overhead it introduces\" (the values of C were lost in the seed's "
            "conversion; PAPERS.md gives C = 0.8 as Trail's default)";
        // Limiting preemption pays only where the KV a displaced request keeps runs memory
        // short; where the peak stays well inside capacity C has nothing to trade, and the
        // paper's Figure 5 cannot be reproduced in this setting (issue 31: a memory-bound
        // configuration is still to come).
        const Premise memory_binds{
            "the KV in use at its peak at C = 1, a share of the capacity",
            double(c1.kv_peak_tokens) / double(lim.kv_capacity_tokens), 0.9,
            "the paper's reason for C < 1 is preemption's memory overhead, which costs nothing "
            "where memory never runs short"};
        rep.claims.back().quote = fig5_quote;
        rep.claims.back().band_origin = "one step of the paper's C grid either side (0.2)";
        rep.claims.back().premises.push_back(memory_binds);
        rep.claims.push_back(makeClaim(
            "trail", "mean latency at C=1 / at C=0.8, 14 req/s (Fig. 5: higher, read as >= 1)", 1.0,
            res[c_at + 4].summary.e2el_ms.mean / res[c_at + 3].summary.e2el_ms.mean, "ratio",
            cset));
        rep.claims.back().band = Band::atLeast();
        rep.claims.back().quote = fig5_quote;
        rep.claims.back().band_origin = "Kairos's reading of 'higher' (at least 1)";
        rep.claims.back().premises.push_back(memory_binds);
        rep.claims.push_back(makeClaim(
            "trail", "peak KV at C=1 / at C=0 (memory grows with preemption)", nullptr,
            double(res[c_at + 4].summary.kv_peak_tokens) / double(res[c_at].summary.kv_peak_tokens),
            "ratio", cset));
    }

    rep.details += "\n  remaining-length MAE over every token: prompt-only " +
                   fixed(mae.prompt_only, 1) + ", refined " + fixed(mae.refined, 1) + " tokens (" +
                   refined + ")\n\n";
    rep.claims.push_back(
        makeClaim("trail", "prompt-only MAE / refined MAE", 2.66, mae.ratio(), "x",
                  "set, not found: the per-token classifier's noise of Trail's prediction model "
                  "is calibrated on this workload to the paper's ratio, so that the scheduling "
                  "results above use predictions as good as the paper's"));
    rep.claims.back().calibrated = true;
    rep.claims.back().quote = "seeds/002 (Trail), abstract: \"Our refined predictions from layer "
                              "embeddings achieve 2.66x lower mean absolute error compared to "
                              "BERT predictions from sequence prompts\"";
    return rep;
}

} // namespace kairos::repro
