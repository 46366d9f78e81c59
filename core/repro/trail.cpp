// Trail (seeds/002): SPRPT with limited preemption and refined length predictions, against
// vLLM's FCFS and shortest-predicted-job-first, at several request rates; the C sweep.
#include "predict/trail_predictor.h"
#include "repro/common.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>

namespace kairos::repro {
namespace {

// `predictor`: Trail's prediction model, refined per token (sjf uses the first estimate).
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
    const DeviceProfile prof = opt.profile("llama2-70b-a100x2");
    const auto model = makeExecutionModel(prof);
    EngineLimits lim;
    lim.kv_capacity_tokens = prof.kvCapacityTokens();
    lim.block_size = 16; // vLLM's paged blocks (Trail is built on vLLM)
    // Trail's regime: the batch is bounded by seats while memory has room for the KV of
    // preempted requests (Llama3-8B on an 80 GB A100 holds hundreds of thousands of KV
    // tokens). Here 16 seats, with the 70B model's ~50k tokens left for kept KV. The
    // memory-bound regime (256 seats) is measured after, as a finding of our own.
    lim.max_num_seqs = 16;
    const std::size_t n = opt.quick ? 600 : 3000;
    const std::string setting =
        "Llama2-70B on 2x A100 (profile llama2-70b-a100x2, " +
        std::to_string(lim.kv_capacity_tokens) +
        " KV tokens, vLLM v0 batching, 16-token blocks, 16 seats) on " + std::to_string(n) +
        " requests with the Azure conversation trace's lengths and Poisson arrivals; the "
        "paper ran Llama3-8B on one A100 with Alpaca prompts up to 14 req/s. Rates here are "
        "fractions of FCFS's service rate. Predictions: Trail's model (prompt classifier, "
        "then a per-token classifier with Bayesian smoothing; 10 bins over [0, 512))";

    // Prediction quality as the paper's: the per-token classifier's noise is set so that
    // refined predictions have 2.66x lower MAE than prompt-only ones on this workload.
    say(opt, "trail: calibrating the prediction model to the paper's MAE ratio");
    const Workload sample = conversationTrace(opt, 1.0, n);
    const TrailOptions to = calibrateTrail(sample, TrailOptions{}, 2.66, opt.seed);
    const TrailMae mae = trailMae(sample, to, opt.seed);
    const std::string predictor = "trail:" + fmt(to.prompt_noise, 6) + "," + fmt(to.token_noise, 6);
    say(opt, "trail: measuring FCFS's service rate");
    const Workload flood = conversationTrace(opt, 1000.0, n);
    const double mu =
        runAll({{&flood, policy("fcfs", 0, opt.seed, predictor), lim, {}}}, *model, opt)[0]
            .summary.request_throughput;
    const std::vector<double> fractions{0.8, 0.9, 1.0, 1.1};
    std::vector<Workload> ws;
    for (double f : fractions) ws.push_back(conversationTrace(opt, f * mu, n));

    const std::vector<std::string> names{"fcfs", "sjf", "sprpt_lp"};
    std::vector<Job> jobs;
    for (const auto& w : ws)
        for (const auto& p : names)
            jobs.push_back({&w, policy(p, 0.8, opt.seed, predictor), lim, {}});
    say(opt, "trail: " + std::to_string(jobs.size()) + " runs at " +
                 std::to_string(fractions.size()) + " rates");
    const auto res = runAll(jobs, *model, opt);

    Table t({"rate req/s", "load", "policy", "mean E2E s", "mean TTFT s", "E2E vs fcfs",
             "TTFT vs fcfs", "preempt"});
    double lat_lo = INFINITY, lat_hi = 0, ttft_lo = INFINITY, ttft_hi = 0;
    double sjf_lat_lo = INFINITY, sjf_lat_hi = 0;
    std::size_t r_lo = 0, r_hi = 0, r_sjf = 0;
    // What reordering can win at most: FCFS's mean latency over it without its queueing
    // (the service part stays; a size-based order only shortens the waits).
    auto bound = [&](std::size_t r) {
        const Summary& f = res[r * names.size()].summary;
        return f.e2el_ms.mean / (f.e2el_ms.mean - f.queue_ms.mean);
    };
    auto queueCause = [&](std::size_t r) {
        const Summary& f = res[r * names.size()].summary;
        std::string c = "at " + fixed(fractions[r], 2) + " of FCFS's service rate, FCFS's " +
                        "requests queue " + fixed(f.queue_ms.mean / 1e3, 2) + " s of their " +
                        fixed(f.e2el_ms.mean / 1e3, 2) + " s mean latency: removing every " +
                        "wait would give at most " + fixed(bound(r), 2) + "x lower latency";
        c += bound(r) < 1.66 ? " (16 seats of a 70B model: service, not queueing, is most of "
                               "the latency, so the paper's 1.66x cannot be reached here)"
                             : " (the queue leaves room for the paper's gain; why sprpt_lp "
                               "does not take it is not measured yet)";
        return c;
    };
    for (std::size_t r = 0; r < fractions.size(); ++r) {
        const Summary& f = res[r * names.size()].summary;
        for (std::size_t p = 0; p < names.size(); ++p) {
            const Summary& s = res[r * names.size() + p].summary;
            const double le = f.e2el_ms.mean / s.e2el_ms.mean, lt = f.ttft_ms.mean / s.ttft_ms.mean;
            t.add({fixed(fractions[r] * mu, 2), fixed(fractions[r], 2),
                   p == 2 ? "sprpt_lp C=0.8" : names[p], fixed(s.e2el_ms.mean / 1e3, 2),
                   fixed(s.ttft_ms.mean / 1e3, 2), fixed(le, 2) + "x", fixed(lt, 2) + "x",
                   std::to_string(s.preemptions)});
            if (p == 2) {
                if (le < lat_lo) lat_lo = le, r_lo = r;
                if (le > lat_hi) lat_hi = le, r_hi = r;
                ttft_lo = std::min(ttft_lo, lt), ttft_hi = std::max(ttft_hi, lt);
            }
            if (p == 1) {
                sjf_lat_lo = std::min(sjf_lat_lo, le);
                if (le > sjf_lat_hi) sjf_lat_hi = le, r_sjf = r;
            }
        }
    }
    rep.details += "Trail: SPRPT with limited preemption vs FCFS (" + setting +
                   ")\n  FCFS serves " + fixed(mu, 3) + " req/s under overload\n" + t.str();
    const nlohmann::json lat_paper = {1.66, 2.01}, ttft_paper = {1.76, 24.07};
    rep.claims.push_back(makeClaim("trail",
                                   "sprpt_lp (C=0.8) mean latency vs FCFS, lowest over rates",
                                   lat_paper, lat_lo, "x lower", setting));
    rep.claims.push_back(makeClaim("trail",
                                   "sprpt_lp (C=0.8) mean latency vs FCFS, highest over rates",
                                   lat_paper, lat_hi, "x lower", setting));
    rep.claims.push_back(makeClaim("trail", "sprpt_lp (C=0.8) mean TTFT vs FCFS, lowest over rates",
                                   ttft_paper, ttft_lo, "x lower", setting));
    rep.claims.push_back(makeClaim("trail",
                                   "sprpt_lp (C=0.8) mean TTFT vs FCFS, highest over rates",
                                   ttft_paper, ttft_hi, "x lower", setting));
    for (std::size_t i = rep.claims.size() - 4; i < rep.claims.size(); ++i)
        rep.claims[i].band = Band::relative(0.25);
    rep.claims[rep.claims.size() - 4].cause = queueCause(r_lo);
    rep.claims[rep.claims.size() - 3].cause = queueCause(r_hi);
    rep.claims.push_back(
        makeClaim("trail",
                  "sjf (prompt prediction) mean latency vs FCFS, highest over rates "
                  "(paper: 'minimal benefit', read as 1.0 +- 0.15)",
                  1.0, sjf_lat_hi, "x lower", setting));
    rep.claims.back().band = Band::absolute(0.15);
    {
        const Summary &f = res[r_sjf * names.size()].summary,
                      &j = res[r_sjf * names.size() + 1].summary;
        rep.claims.back().cause =
            "at " + fixed(fractions[r_sjf], 2) + " load SJF cuts the mean queueing from " +
            fixed(f.queue_ms.mean / 1e3, 2) + " s (FCFS) to " + fixed(j.queue_ms.mean / 1e3, 2) +
            " s: prompt-only predictions separate the Azure lengths well enough to reorder the "
            "queue; the paper's vLLM-SJF still put new prefills first, which Kairos's sjf does "
            "not model yet";
    }

    // The C sweep at 90 % load: latency, TTFT and peak KV memory against C.
    const std::vector<double> Cs{0, 0.2, 0.5, 0.8, 1};
    const Workload& w90 = ws[2];
    std::vector<Job> cj;
    for (double C : Cs) cj.push_back({&w90, policy("sprpt_lp", C, opt.seed, predictor), lim, {}});
    say(opt, "trail: C sweep at 100 % load");
    const auto cr = runAll(cj, *model, opt);
    Table ct({"C", "mean E2E s", "mean TTFT s", "peak KV tokens", "preemptions"});
    double best_c = 0, best = INFINITY;
    for (std::size_t i = 0; i < Cs.size(); ++i) {
        const Summary& s = cr[i].summary;
        ct.add({fmt(Cs[i]), fixed(s.e2el_ms.mean / 1e3, 2), fixed(s.ttft_ms.mean / 1e3, 2),
                std::to_string(s.kv_peak_tokens), std::to_string(s.preemptions)});
        if (s.e2el_ms.mean < best) best = s.e2el_ms.mean, best_c = Cs[i];
    }
    rep.details += "\n  C sweep at " + fixed(mu, 2) + " req/s (100 % load)\n" + ct.str();
    const std::string cset = setting + "; C sweep at 100 % of FCFS's service rate";
    rep.claims.push_back(
        makeClaim("trail", "C with the lowest mean latency", 0.8, best_c, "C", cset));
    rep.claims.back().band = Band::absolute(0.2);
    {
        double lo = INFINITY, hi = 0;
        for (const auto& o : cr)
            lo = std::min(lo, o.summary.e2el_ms.mean), hi = std::max(hi, o.summary.e2el_ms.mean);
        rep.claims.back().cause =
            "mean latency varies by " + fixed(100 * (hi / lo - 1), 1) +
            " % over C in {0, 0.2, 0.5, 0.8, 1}; C = 0 preempts " +
            std::to_string(cr[0].summary.preemptions) + " times, C = 1 " +
            std::to_string(cr[4].summary.preemptions) +
            ": on this setting preemption costs more than the reordering gains";
    }
    rep.claims.push_back(makeClaim("trail", "mean latency at C=1 (SPRPT) / at C=0.8", nullptr,
                                   cr[4].summary.e2el_ms.mean / cr[3].summary.e2el_ms.mean, "ratio",
                                   cset));
    rep.claims.push_back(
        makeClaim("trail", "peak KV at C=1 / at C=0 (memory grows with preemption)", nullptr,
                  double(cr[4].summary.kv_peak_tokens) / double(cr[0].summary.kv_peak_tokens),
                  "ratio", cset));

    // Memory-bound: 256 seats, so the 70B model's KV cache is what limits the batch; a
    // preemption then drops KV and the request recomputes its whole context.
    {
        EngineLimits mem = lim;
        mem.max_num_seqs = 256;
        const Workload fl = conversationTrace(opt, 1000.0, n);
        const double mu_m =
            runAll({{&fl, policy("fcfs", 0, opt.seed, predictor), mem, {}}}, *model, opt)[0]
                .summary.request_throughput;
        const Workload wm = conversationTrace(opt, 0.9 * mu_m, n);
        say(opt, "trail: memory-bound regime at 90 % load");
        const auto mr = runAll({{&wm, policy("fcfs", 0, opt.seed, predictor), mem, {}},
                                {&wm, policy("sprpt_lp", 0.8, opt.seed, predictor), mem, {}}},
                               *model, opt);
        const Summary &f = mr[0].summary, &t2 = mr[1].summary;
        rep.details += "\n  memory-bound (256 seats) at " + fixed(0.9 * mu_m, 2) +
                       " req/s (90 % of FCFS's " + fixed(mu_m, 3) + "): mean E2E fcfs " +
                       fixed(f.e2el_ms.mean / 1e3, 2) + " s, sprpt_lp " +
                       fixed(t2.e2el_ms.mean / 1e3, 2) + " s (" + std::to_string(t2.preemptions) +
                       " preemptions, each a recompute of the whole context)\n";
        rep.claims.push_back(makeClaim(
            "trail", "memory-bound: sprpt_lp (C=0.8) mean latency vs FCFS at 90 % load", nullptr,
            f.e2el_ms.mean / t2.e2el_ms.mean, "x lower",
            "as above but 256 seats, so the KV cache bounds the batch and preemption means "
            "recompute (~1,200-token contexts, stalling every decode under vLLM v0); the "
            "paper does not test this regime"));
    }

    rep.details += "\n  remaining-length MAE over every token: prompt-only " +
                   fixed(mae.prompt_only, 1) + ", refined " + fixed(mae.refined, 1) + " tokens (" +
                   predictor + ")\n\n";
    rep.claims.push_back(makeClaim(
        "trail", "prompt-only MAE / refined MAE", 2.66, mae.ratio(), "x",
        "set, not found: the per-token classifier's noise of Trail's prediction model is "
        "calibrated on this workload to the paper's ratio, so that the scheduling results "
        "above use predictions as good as the paper's"));
    rep.claims.back().calibrated = true;
    return rep;
}

} // namespace kairos::repro
