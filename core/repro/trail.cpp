// Trail (seeds/002) in its setting: Llama3-8B on one A100-80GB (a profile derived for it,
// core/repro/derived.cpp), vLLM 0.5 with chunked prefill (512 tokens per iteration) and its
// scheduler's rules as coded (EngineRules::VllmV0), recompute on out-of-memory, short
// single-question prompts; the paper's four systems: vLLM-FCFS, vLLM-SJF on prompt-only
// predictions, Trail (SPRPT with limited preemption, C = 0.8) with refined predictions, and Trail
// with prompt-only predictions (Trail-BERT): Figure 6 (mean latency and TTFT against the rate)
// and the predictors' MAE ratio. Figure 5 (C at 14 req/s) and Figure 7 (a burst) are experiment
// files: resources/experiments/trail_fig5_preemption.toml and trail_fig7_burst.toml.
#include "predict/trail_predictor.h"
#include "repro/common.h"
#include "repro/derived.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

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

// The length of the paper's runs, in its words.
constexpr std::size_t kPaperRequestCount = 10000;
constexpr const char* kPaperRequests =
    "10k prompts: seeds/002, 4: \"We sample 10k unique prompts from the dataset for model "
    "serving\"";

TrailPredictors trailPredictors(const Options& opt, double mae_ratio, std::size_t n) {
    // Remembered for the process: Trail's experiments in code and its files calibrate the
    // same predictors at each seed (2.5 s each).
    return remembered(std::make_tuple(opt.data_dir, opt.seed, mae_ratio, n), [&] {
        const Workload sample = shortPromptConversations(opt, 1.0, n);
        const TrailOptions to = calibrateTrail(sample, TrailOptions{}, mae_ratio, opt.seed);
        TrailPredictors p;
        p.mae = trailMae(sample, to, opt.seed);
        p.refined = "trail:" + fmt(to.prompt_noise, 6) + "," + fmt(to.token_noise, 6);
        p.prompt_only = p.refined + ",1000000"; // no classifier call after the prompt
        return p;
    });
}

namespace {
// A run of the paper's length on the substitute: `count` requests (10,000; --quick: fewer)
// taken in turn from its short-prompt conversations (5,256 of them: the same lengths,
// repeated), Poisson arrivals.
Workload paperLength(const Options& opt, double rate, std::size_t count) {
    const Workload distinct = shortPromptConversations(opt, rate, count);
    Workload w = distinct;
    w.requests.clear();
    const auto t = generateArrivals({rate, 1.0, opt.seed, 0.0}, count);
    for (std::size_t i = 0; i < count; ++i) {
        Request q = distinct.requests[i % distinct.size()];
        q.id = static_cast<std::int64_t>(i);
        q.arrival = t[i];
        w.requests.push_back(q);
    }
    return w;
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
    lim.rules = EngineRules::VllmV0;  // vLLM 0.5.0's chunked-prefill scheduler as it runs
    rep.prefix_caching = lim.prefix_caching;
    const std::size_t n = opt.quick ? 800 : 4000;
    const std::string setting =
        "Llama3-8B on one A100-80GB as the paper, by a derived profile (" + prof.provenance + "; " +
        std::to_string(lim.kv_capacity_tokens) +
        " KV tokens), chunked prefill of 512 tokens per iteration, 256 seats, recompute on "
        "out-of-memory, vLLM 0.5.0's scheduler as its code runs (engine rules vllm-v0: "
        "admission within the iteration's token budget, the running requests served in arrival "
        "order, one free KV block per check); " +
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
    const TrailPredictors predictors = trailPredictors(opt, 2.66, n);
    const TrailMae& mae = predictors.mae;
    const std::string& refined = predictors.refined;
    const std::string& prompt_only = predictors.prompt_only;
    say(opt, "trail: measuring FCFS's service rate");
    const Workload flood = shortPromptConversations(opt, INFINITY, n);
    const double mu =
        runAll({{&flood, policy("fcfs", 0, opt.seed, refined), lim, {}}}, *model, opt)[0]
            .summary.request_throughput;

    // Figure 6: the four systems against the rate; Figure 7: the burst (every request at 0).
    // Rates: fractions of FCFS's service rate up to overload, and the paper's 14 req/s (the
    // only rate its text names, so the 'highest' rows are read there).
    const double paper_rate = 14;
    const std::vector<double> fractions{0.8, 0.9, 1.0, 1.1, 1.2, paper_rate / mu};
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
    // At 14 req/s FCFS is overloaded: its queue grows with every arrival, so its mean TTFT,
    // and any ratio over it, depends on how many requests the run has (the paper does not
    // say). The same rate with shorter runs measures that.
    const std::vector<std::size_t> horizons{n / 4, n / 2};
    std::vector<Workload> short_runs;
    short_runs.reserve(horizons.size());
    for (std::size_t h : horizons)
        short_runs.push_back(shortPromptConversations(opt, paper_rate, h));
    const std::size_t horizon_at = jobs.size();
    for (const auto& w : short_runs) {
        jobs.push_back({&w, systems[0].p, lim, {}});
        jobs.push_back({&w, systems[2].p, lim, {}});
    }
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
    // The paper's loads. Its rates are not stated relative to its system's capacity, but its
    // smallest gain is: reordering shortens only the waits, so a mean-latency gain g needs
    // the baseline to spend at least 1 - 1/g of its latency queueing, and the paper's lowest,
    // 1.66x, puts every rate of its Figure 6 where FCFS queues at least 40 % of its latency.
    // The range rows are read over Kairos's rates that meet that (where none does, at the
    // most loaded rate, and the premise below says the row is not at one of the paper's).
    const double paper_share = 1 - 1 / 1.66;
    auto queueShare = [&](std::size_t r) { return at(r, 0).queue_ms.mean / at(r, 0).e2el_ms.mean; };
    std::vector<std::size_t> judged;
    for (std::size_t r = 0; r < fractions.size(); ++r)
        if (queueShare(r) >= paper_share) judged.push_back(r);
    if (judged.empty()) // none of the paper's loads: the most loaded rate, its rows not judged
        judged.push_back(static_cast<std::size_t>(
            std::max_element(fractions.begin(), fractions.end()) - fractions.begin()));
    // Each Figure 6 row rests on being at one of the paper's loads (judge()'s rule 6).
    auto atPaperLoad = [&](Claim& c, double share) {
        c.premises.push_back(
            {"FCFS's queueing at the row's load, a share of its mean latency", share, paper_share,
             "the paper's lowest gain (1.66x) needs FCFS to queue at least 40 % of its latency "
             "at every rate of its Figure 6: a load where it queues less is not one of the "
             "paper's"});
    };
    std::string judged_loads;
    for (std::size_t r : judged)
        judged_loads += (judged_loads.empty() ? "" : ", ") + fixed(fractions[r], 2);
    auto over = [&](std::size_t s, bool ttft) {
        Range g;
        for (std::size_t r : judged) {
            const Stats& f = ttft ? at(r, 0).ttft_ms : at(r, 0).e2el_ms;
            const Stats& x = ttft ? at(r, s).ttft_ms : at(r, s).e2el_ms;
            const double v = f.mean / x.mean;
            if (v < g.lo) g.lo = v, g.r_lo = r;
            if (v > g.hi) g.hi = v, g.r_hi = r;
        }
        return g;
    };
    // FCFS / Trail at 14 req/s by the run's length: the shorter runs, then the full one.
    std::string by_length = "at 14 req/s, by the run's length (FCFS / Trail mean TTFT, mean "
                            "latency): ";
    for (std::size_t i = 0; i <= horizons.size(); ++i) {
        const bool full_run = i == horizons.size();
        const Summary& f = full_run ? at(fractions.size() - 1, 0) : res[horizon_at + 2 * i].summary;
        const Summary& x =
            full_run ? at(fractions.size() - 1, 2) : res[horizon_at + 2 * i + 1].summary;
        by_length += std::to_string(full_run ? n : horizons[i]) + " requests " +
                     fixed(f.ttft_ms.mean / x.ttft_ms.mean, 1) + "x, " +
                     fixed(f.e2el_ms.mean / x.e2el_ms.mean, 2) + "x" +
                     (full_run ? std::string(" (the paper served ") + kPaperRequests + ")"
                               : std::string("; "));
    }
    // What reordering can win at most: FCFS's mean latency over it without its queueing
    // (the service part stays; a size-based order only shortens the waits).
    auto queueCause = [&](std::size_t r) {
        const Summary& f = at(r, 0);
        const double bound = f.e2el_ms.mean / (f.e2el_ms.mean - f.queue_ms.mean);
        return "at " + fixed(fractions[r], 2) + " of FCFS's service rate FCFS's requests queue " +
               fixed(f.queue_ms.mean / 1e3, 2) + " s of their " + fixed(f.e2el_ms.mean / 1e3, 2) +
               " s mean latency: removing every wait would give at most " + fixed(bound, 2) +
               "x lower latency" +
               (bound < 1.66 ? ", below the paper's 1.66x" : " (not the limit here)") +
               (fractions[r] > 1 ? "; " + by_length : std::string());
    };
    // The paper's two ranges at one load: Trail's TTFT and mean-latency gains over FCFS at
    // every load where FCFS queues 1 % of its latency or more (below its service rate all
    // four systems run the same batches: nothing waits to be reordered).
    std::string pairing = "Trail's gains over FCFS by load (TTFT, mean latency): ";
    bool any_pair = false, paper_pair = false;
    for (std::size_t r = 0; r < fractions.size(); ++r) {
        const Summary &f = at(r, 0), &x = at(r, 2);
        if (f.queue_ms.mean < 0.01 * f.e2el_ms.mean) continue;
        const double gt = f.ttft_ms.mean / x.ttft_ms.mean, gl = f.e2el_ms.mean / x.e2el_ms.mean;
        paper_pair = paper_pair || (gt >= 1.76 && gt <= 24.07 && gl >= 1.66 && gl <= 2.01);
        pairing += std::string(any_pair ? "; " : "") + fixed(fractions[r], 2) + ": " +
                   fixed(gt, 1) + "x, " + fixed(gl, 2) + "x";
        any_pair = true;
    }
    pairing += paper_pair ? " (the paper's two ranges meet at a load here)"
                          : " (no load gives both of the paper's ranges, TTFT 1.76-24.07x "
                            "and latency 1.66-2.01x)";
    if (!any_pair) pairing.clear();
    const nlohmann::json lat_paper = {1.66, 2.01}, ttft_paper = {1.76, 24.07};
    const Range lat = over(2, false), ttft = over(2, true), sjf_range = over(1, false);
    // Above FCFS's service rate a gain moves with the run's length, and the paper's runs are
    // longer (10k prompts) than these: the rows judged there run again at its length, FCFS
    // and the row's system (an outside audit: a trend extrapolated from 1,000-4,000 requests
    // is no measurement). paper_length[{r, s}]: FCFS's and system s's summaries at load r.
    std::map<std::pair<std::size_t, std::size_t>, std::pair<Summary, Summary>> paper_length;
    const std::size_t paper_n = opt.quick ? 4 * n : kPaperRequestCount; // --quick: a first look
    {
        std::vector<std::pair<std::size_t, std::size_t>> wanted;
        for (const auto& [r, sys] : {std::pair{lat.r_lo, std::size_t(2)},
                                     {lat.r_hi, 2},
                                     {ttft.r_lo, 2},
                                     {ttft.r_hi, 2},
                                     {sjf_range.r_hi, 1}})
            if (fractions[r] > 1 &&
                std::find(wanted.begin(), wanted.end(), std::pair{r, sys}) == wanted.end())
                wanted.emplace_back(r, sys);
        std::map<std::size_t, Workload> long_runs;
        for (const auto& [r, sys] : wanted)
            if (!long_runs.count(r))
                long_runs.emplace(r, paperLength(opt, fractions[r] * mu, paper_n));
        std::vector<Job> long_jobs;
        for (const auto& [r, sys] : wanted) {
            long_jobs.push_back({&long_runs.at(r), systems[0].p, lim, {}});
            long_jobs.push_back({&long_runs.at(r), systems[sys].p, lim, {}});
        }
        say(opt, "trail: " + std::to_string(long_jobs.size()) + " runs of the paper's length");
        const auto long_res = runAll(long_jobs, *model, opt);
        for (std::size_t i = 0; i < wanted.size(); ++i)
            paper_length[wanted[i]] = {long_res[2 * i].summary, long_res[2 * i + 1].summary};
    }
    const std::string f6 = setting +
                           "; Figure 6; the paper's loads read as those where FCFS "
                           "queues at least 40 % of its latency (its lowest gain, "
                           "1.66x, needs that): here " +
                           judged_loads;
    auto ttftCause = [&](std::size_t r) {
        const Summary &f = at(r, 0), &x = at(r, 2);
        return "at " + fixed(fractions[r], 2) + " of FCFS's service rate Trail's mean TTFT is " +
               fixed(x.ttft_ms.mean / 1e3, 2) + " s against FCFS's " +
               fixed(f.ttft_ms.mean / 1e3, 2) + " s (FCFS queues " +
               fixed(f.queue_ms.mean / 1e3, 2) + " s; Trail displaced " +
               std::to_string(displaced(x)) +
               " running requests, their KV kept, so a new request waits only for its prefill); " +
               by_length + "; " + pairing;
    };
    // Above FCFS's service rate its queue grows with every arrival, so a gain there moves with
    // the run's length (an outsider's audit: 1.05x to 1.24x from 1,000 to 4,000 requests), and
    // the paper's runs (10k prompts) are longer than this one: a gain there is judged only if
    // at the paper's length it reads as here by the band (paperLength's runs).
    auto lengthPremise = [&](std::size_t r) {
        return "the gain on " + std::to_string(paper_n) + " requests (the paper's length; " +
               "fewer with --quick) reads as on " + std::to_string(n) +
               " by the band (1) or not (0), at load " + fixed(fractions[r], 2);
    };
    auto stableAt = [&](Claim& c, std::size_t r, std::size_t sys, bool of_ttft) {
        if (!(fractions[r] > 1)) { // below the service rate nothing grows with the run
            c.compared["gain_at_paper_length"] = NAN; // not run: nothing to measure
            c.premises.push_back({lengthPremise(r), 1.0, 0.95,
                                  "below the baseline's service rate nothing grows with the run"});
            return;
        }
        auto gain = [&](const Summary& f, const Summary& x) {
            return of_ttft ? f.ttft_ms.mean / x.ttft_ms.mean : f.e2el_ms.mean / x.e2el_ms.mean;
        };
        const double full_gain = gain(at(r, 0), at(r, sys));
        const auto& [lf, lx] = paper_length.at({r, sys});
        const double paper_gain = gain(lf, lx);
        // The paper served 10k prompts, more than this run: the gain at its length is
        // measured (paperLength), and the row is judged only where it reads as on this run
        // (inside the band, or outside it on the same side): then the length decides nothing
        // (a premise excludes a magnitude, never a direction). Where it reads otherwise, the
        // run's length, not the systems, decides the verdict.
        double lo = NAN, hi = NAN;
        paperRange(c.paper_value, lo, hi);
        const auto side = [&](double g) {
            return c.band.contains(c.paper_value, g) ? 0 : g < lo ? -1 : 1;
        };
        const bool same = side(paper_gain) == side(full_gain);
        const std::string moved = fixed(full_gain, 3) + "x on " + std::to_string(n) +
                                  " requests, " + fixed(paper_gain, 3) + "x on " +
                                  std::to_string(paper_n);
        c.compared["gain_at_paper_length"] = paper_gain;
        c.premises.push_back(
            {lengthPremise(r), same ? 1.0 : 0.0,
             0.95, // over seeds: the share of them (every one of 10)
             same ? "above the baseline's service rate the gain moves with the run's length (" +
                        moved + "), but on " + std::to_string(paper_n) + " requests (the paper: " +
                        kPaperRequests + ") it reads as here: the length decides nothing"
                  : "above the baseline's service rate the gain moves with the run's length (" +
                        moved + "), and on " + std::to_string(paper_n) +
                        " requests (the paper: " + kPaperRequests +
                        ") it reads otherwise: the length, not the systems, "
                        "decides"});
    };
    // Each gain names its load and how much FCFS queues there (judge(): no gain is judged
    // where the baseline barely queues).
    auto gainRow = [&](const std::string& what, double value, const nlohmann::json& paper,
                       std::string cause, std::size_t r, bool of_ttft) {
        rep.claims.push_back(makeClaim("trail", what, paper, value, "x lower", f6));
        Claim& c = rep.claims.back();
        c.band = Band::measured(0.005, 1);
        c.cause = std::move(cause);
        c.load = fractions[r];
        c.baseline_queue_share = queueShare(r);
        c.quote = "seeds/002 (Trail), abstract: \"Trail achieves 1.66x to 2.01x lower mean latency "
                  "on the Alpaca dataset and 1.76x to 24.07x lower mean time to the first token "
                  "compared to the state-of-the-art serving system\"";
        c.band_origin = precisionOrigin("two decimals: +-0.005");
        atPaperLoad(c, queueShare(r));
        stableAt(c, r, 2, of_ttft);
    };
    gainRow("Trail (C=0.8) mean latency vs vLLM-FCFS, lowest over the paper's loads", lat.lo,
            lat_paper, queueCause(lat.r_lo), lat.r_lo, false);
    gainRow("Trail (C=0.8) mean latency vs vLLM-FCFS, highest over the paper's loads", lat.hi,
            lat_paper, queueCause(lat.r_hi), lat.r_hi, false);
    gainRow("Trail (C=0.8) mean TTFT vs vLLM-FCFS, lowest over the paper's loads", ttft.lo,
            ttft_paper, ttftCause(ttft.r_lo), ttft.r_lo, true);
    gainRow("Trail (C=0.8) mean TTFT vs vLLM-FCFS, highest over the paper's loads", ttft.hi,
            ttft_paper, ttftCause(ttft.r_hi), ttft.r_hi, true);
    {
        const Range sjf = over(1, false);
        const Summary &f = at(sjf.r_hi, 0), &j = at(sjf.r_hi, 1);
        rep.claims.push_back(
            makeClaim("trail",
                      "vLLM-SJF (prompt-only) mean latency vs vLLM-FCFS, highest "
                      "over the paper's loads (paper: 'minimal benefit', read as 1.0 +- 0.15)",
                      1.0, sjf.hi, "x lower", f6));
        rep.claims.back().band = Band::absolute(0.15);
        rep.claims.back().quote =
            "seeds/002 (Trail), 4.2 (Fig. 6): \"SJF based on BERT predictions provides minimal "
            "benefits over vLLM-FCFS\"";
        rep.claims.back().band_origin =
            "Kairos's reading of 'minimal' (+-0.15x): the paper gives no figure";
        rep.claims.back().load = fractions[sjf.r_hi];
        rep.claims.back().baseline_queue_share = queueShare(sjf.r_hi);
        atPaperLoad(rep.claims.back(), queueShare(sjf.r_hi));
        stableAt(rep.claims.back(), sjf.r_hi, 1, false);
        rep.claims.back().cause =
            "at " + fixed(fractions[sjf.r_hi], 2) + " load SJF cuts FCFS's mean queueing from " +
            fixed(f.queue_ms.mean / 1e3, 2) + " s to " + fixed(j.queue_ms.mean / 1e3, 2) + " s";
        // Trail against vLLM-SJF at the paper's 14 req/s: the paper's Figure 6 has Trail
        // lowest, and SJF ordering the waiting requests by the same kind of prediction is the
        // part of Trail's gain that needs no preemption.
        {
            const std::size_t r = fractions.size() - 1;
            const Summary &sj = at(r, 1), &x = at(r, 2);
            // "Lower" alone would accept any gap, 1 % too (an outsider's audit): the paper's
            // own figures bound it. Trail is at least 1.66x below FCFS and SJF at most 1.15x
            // (the reading of 'minimal benefit' the SJF row is judged by), so SJF's latency
            // is at least 1.66 / 1.15 = 1.44 times Trail's.
            const double implied = 1.66 / 1.15;
            rep.claims.push_back(makeClaim(
                "trail",
                "vLLM-SJF (prompt-only) mean latency / Trail's (C=0.8), at 14 req/s (Fig. 6: "
                "Trail lowest; the paper's 1.66x over FCFS and SJF's 'minimal benefit' (at most "
                "1.15x) put it at >= 1.44)",
                implied, sj.e2el_ms.mean / x.e2el_ms.mean, "ratio", f6));
            Claim& c = rep.claims.back();
            c.band = Band::atLeast();
            c.load = fractions[r];
            c.baseline_queue_share = sj.queue_ms.mean / sj.e2el_ms.mean;
            atPaperLoad(c, queueShare(r));
            c.quote =
                "seeds/002 (Trail), 4.2 (Fig. 6): \"both Trail and Trail-BERT, which implement "
                "limited preemption, achieve lower mean and median latency ... compared to "
                "vLLM\"";
            c.band_origin = "the paper's lowest gain over FCFS (1.66x, abstract) over Kairos's "
                            "reading of SJF's 'minimal benefit' (at most 1.15x, the SJF row's "
                            "band): at least 1.44x";
            // Derived, not a figure of the paper's text: judged, not tallied (rule 10).
            c.paper_value_source = "derived: the paper's 1.66x over FCFS (abstract) divided by "
                                   "Kairos's reading of SJF's 'minimal benefit' (1.15x)";
            c.null_model = "no effect (SJF as fast as Trail)";
            c.null_value = 1.0;
            c.cause = "at " + fixed(fractions[r], 2) + " load SJF queues requests " +
                      fixed(sj.queue_ms.mean / 1e3, 2) + " s on average and Trail " +
                      fixed(x.queue_ms.mean / 1e3, 2) + " s, but Trail's " +
                      std::to_string(displaced(x)) +
                      " displaced requests wait out of the batch instead: mean latency " +
                      fixed(sj.e2el_ms.mean / 1e3, 2) + " s against " +
                      fixed(x.e2el_ms.mean / 1e3, 2) + " s";
        }
        int better = 0;
        std::string per_rate; // Trail-BERT's mean latency over Trail's, at each judged rate
        for (std::size_t r : judged) {
            const double a = at(r, 2).e2el_ms.mean, b = at(r, 3).e2el_ms.mean;
            better += a < b;
            per_rate +=
                (per_rate.empty() ? "" : ", ") + fixed(b / a, 3) + "x at " + fixed(fractions[r], 2);
        }
        rep.claims.push_back(makeClaim(
            "trail",
            "share of the paper's loads at which Trail's mean latency is below Trail-BERT's "
            "(Fig. 6: all)",
            1.0, double(better) / double(judged.size()), "fraction", f6));
        {
            double least = INFINITY; // the least-loaded of the judged rates
            for (std::size_t r : judged) least = std::min(least, queueShare(r));
            atPaperLoad(rep.claims.back(), least);
        }
        rep.claims.back().cause = "Trail-BERT's mean latency over Trail's, per load (seed " +
                                  std::to_string(opt.seed) + "): " + per_rate +
                                  "; the refined predictions' MAE is " + fixed(mae.refined, 1) +
                                  " tokens against the prompt-only " + fixed(mae.prompt_only, 1);
        rep.claims.back().band = Band::absolute(0);
        rep.claims.back().quote =
            "seeds/002 (Trail), 4.2 (Fig. 6): \"with Trail using refined embedding predictions "
            "showing the lowest latency and TTFT due to more accurate predictions\"";
        rep.claims.back().band_origin = "exact: the paper says at every rate of the figure";
        // The two differ by design in their predictions' accuracy (the MAE gap set to the
        // paper's 2.66x); what that gap does to latency here is a fraction of a percent, so the
        // share counts the signs of an effect the seeds do not resolve (an outside audit: the
        // former reason called the designed gap noise).
        rep.claims.back().not_comparable =
            "Trail and Trail-BERT differ here by the designed accuracy gap of Kairos's "
            "length-prediction models (their MAEs set 2.66x apart, as the paper's), not by "
            "trained predictors, and that gap moves the mean latency by a fraction of a percent "
            "(per load in the cause): the share counts the signs of an effect the seeds do not "
            "resolve";
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
    // Every row rests on the paper's workload, machine and predictors, none of them here.
    restOn(
        rep.claims, 0,
        {{"Alpaca prompts with Llama3-8B-Instruct's answers",
          "ShareGPT conversations with prompts of at most 256 tokens (Llama-2 tokens; answers "
          "ShareGPT's own)"},
         {"vLLM 0.5.0 measured on one A100-80GB",
          "a derived Llama3-8B A100 profile in Kairos's engine (decode from LLM-Inference-Bench, "
          "prefill scaled from TimelyLLM's RTX 4090)"},
         {"the paper's BERT and layer-11 embedding predictors",
          "Trail's prediction model with noise calibrated to the paper's MAE ratio"}});
    return rep;
}

} // namespace kairos::repro
