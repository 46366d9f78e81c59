// Replicas behind a router (sim/fleet.h): one replica is the engine alone, bit for bit, for
// every registered policy and router; round robin over N replicas is N independent runs of
// the split workload; hand-derived placements of least_outstanding and round robin; the
// prefix-aware router keeps a conversation's turns where its prefix is cached; the fleet's
// run log round-trips and its summary adds up over the replicas.
#include "exec/execution_model.h"
#include "export/perfetto.h"
#include "export/runlog_jsonl.h"
#include "lod/timeline.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "random_cases.h"
#include "run/pipeline.h"
#include "sched/registry.h"
#include "sim/disagg.h"
#include "sim/engine.h"
#include "sim/fleet.h"
#include "sim/router_tree.h"
#include "test_util.h"
#include "util/input_error.h"

#include <QtTest>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace kairos;
using kairos::test::handModel;
using kairos::test::req;

namespace {

// The run log as its JSONL text, without the wall time (the one field that differs).
std::string text(RunLog log) {
    log.sim_wall_ms = 0;
    std::ostringstream o;
    writeRunLogJsonl(log, o);
    return o.str();
}

RunLog fleetRun(const Workload& w, const ExecutionModel& m, const PolicyConfig& pc,
                const EngineLimits& lim, int replicas, Router router,
                const FleetOptions* thresholds = nullptr) {
    FleetRun run;
    if (thresholds) run.fleet = *thresholds;
    run.workload = &w;
    run.model = &m;
    run.make_scheduler = [&pc] { return makeScheduler(pc); };
    run.limits = lim;
    run.fleet.replicas = replicas;
    run.fleet.router = router;
    return simulateFleet(run);
}

PolicyConfig fcfs() {
    PolicyConfig pc;
    pc.name = "fcfs";
    return pc;
}

// The disaggregation tests' hand setup: two requests of 100 prompt and 3 output tokens at
// 0; one seat and 10,000 tokens of KV a replica, the hand model, FCFS; one prefill and one
// decode replica over a link of 1 GB/s and 1 ms; 1 MB of KV per token.
struct HandDisagg {
    Workload w;
    EteModel m = handModel();
    PolicyConfig pc = fcfs();
    DisaggRun run;
    HandDisagg() {
        w.requests = {req(0, 100, 3), req(0, 100, 3)};
        w.requests[1].id = 1;
        EngineLimits lim;
        lim.kv_capacity_tokens = 10000;
        lim.max_num_seqs = 1;
        run.prefill.workload = &w;
        run.prefill.model = &m;
        run.prefill.make_scheduler = [this] { return makeScheduler(pc); };
        run.prefill.limits = lim;
        run.decode = run.prefill;
        run.prefill.fleet.replicas = 1;
        run.decode.fleet.replicas = 1;
        run.link = LinkModel::parse("1:1000");
        run.kv_bytes_per_token = 1000000;
    }
    HandDisagg(const HandDisagg&) = delete; // the run points into it
    HandDisagg& operator=(const HandDisagg&) = delete;
};

double ttft(const RunLog& log, ReqId id) {
    return perRequest(log)[std::size_t(id)].ttft();
}

// Equal up to rounding: a stretch cut in two (at an arrival into the fleet) computes its
// second part's times from the first part's end, which may differ in the last bits from the
// uncut stretch's formula.
bool close(double a, double b) {
    return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(a));
}

} // namespace

class TestFleet : public QObject {
    Q_OBJECT
private slots:
    void oneReplicaIsTheEngine_data() { test::policyRows(); }

    // With one replica every router gives the engine's own run, bit for bit.
    void oneReplicaIsTheEngine() {
        QFETCH(QString, policy);
        const std::string name = policy.toStdString();
        const int seeds = test::seedCount(25, "KAIROS_FLEET_SEEDS");
        int compared = 0;
        for (int seed = 1; seed <= seeds; ++seed) {
            const test::Case c = test::makeCase(static_cast<std::uint64_t>(seed));
            Rng rng(static_cast<std::uint64_t>(seed) * 97 + 5);
            const PolicyConfig pc = test::randomConfig(name, std::uint64_t(seed), rng);
            EngineLimits lim = c.lim;
            lim.kv_capacity_tokens = 2 * std::max<std::int64_t>(16, c.largest_need);
            const EteModel ete(c.ete);
            const UnitModel unit;
            const ExecutionModel& m = c.unit ? static_cast<const ExecutionModel&>(unit) : ete;
            std::string alone;
            try {
                auto sched = makeScheduler(pc);
                alone = text(simulate(c.w, m, *sched, lim));
            } catch (const std::exception&) {
                continue; // a setting the policy refuses (or a documented loop): not this test's
            }
            for (const auto& r : kRouterNames) {
                if ((r.value == Router::PrefixAware || r.value == Router::PrefixOracle) &&
                    !lim.prefix_caching)
                    continue;
                const QString what =
                    test::describeRun(pc, c, lim.kv_capacity_tokens) + ", router " + r.name;
                RunLog one;
                try {
                    one = fleetRun(c.w, m, pc, lim, 1, r.value);
                } catch (const std::exception& e) {
                    QFAIL(qPrintable(what + ": " + e.what()));
                }
                QVERIFY2(text(one) == alone, qPrintable(what));
                ++compared;
            }
        }
        QVERIFY(compared > 0);
    }

    void roundRobinIsSplitRuns_data() { test::policyRows(); }

    // Round robin over N identical replicas: replica r runs requests r, r + N, ... (in arrival
    // order) exactly as an engine alone given only those. The predictor is the oracle, whose
    // predictions do not depend on which other requests the workload holds.
    void roundRobinIsSplitRuns() {
        QFETCH(QString, policy);
        const std::string name = policy.toStdString();
        const int seeds = test::seedCount(20, "KAIROS_FLEET_SEEDS");
        int compared = 0;
        for (int seed = 1; seed <= seeds; ++seed) {
            const test::Case c = test::makeCase(static_cast<std::uint64_t>(seed));
            Rng rng(static_cast<std::uint64_t>(seed) * 131 + 7);
            PolicyConfig pc = test::randomConfig(name, std::uint64_t(seed), rng);
            pc.predictor = "oracle";
            EngineLimits lim = c.lim;
            lim.kv_capacity_tokens = 2 * std::max<std::int64_t>(16, c.largest_need);
            const EteModel ete(c.ete);
            const UnitModel unit;
            const ExecutionModel& m = c.unit ? static_cast<const ExecutionModel&>(unit) : ete;
            const int n = 2 + seed % 3;
            RunLog fleet;
            try {
                fleet = fleetRun(c.w, m, pc, lim, n, Router::RoundRobin);
            } catch (const std::invalid_argument&) {
                continue; // a setting the policy refuses
            } catch (const SchedulerLoop&) {
                continue;
            }
            QCOMPARE(fleet.replicas, n);
            // The fleet's inter-token latencies (its summary takes them from the replica logs
            // of its per-replica rows): each alone run's, in replica order.
            std::vector<std::pair<double, std::int64_t>> itl;
            for (int r = 0; r < n; ++r) {
                Workload part;
                part.name = c.w.name;
                for (std::size_t i = std::size_t(r); i < c.w.size(); i += std::size_t(n))
                    part.requests.push_back(c.w.requests[i]);
                auto sched = makeScheduler(pc);
                RunLog alone;
                const QString what = test::describeRun(pc, c, lim.kv_capacity_tokens) +
                                     QString(", replica %1 of %2").arg(r).arg(n);
                try {
                    alone = simulate(part, m, *sched, lim);
                } catch (const std::exception& e) {
                    QFAIL(qPrintable(what + ": alone: " + e.what()));
                }
                std::vector<ReqId> members;
                const RunLog mine = replicaLog(fleet, r, &members);
                QCOMPARE(members.size(), part.size());
                // The same events at the same times, and the same token times. The iteration
                // records differ only in where stretches are cut: a replica's stretch stops at
                // every arrival into the fleet (the router looks then), and skipping ahead is
                // exact, so the iterations themselves (and every token) are the same.
                QCOMPARE(mine.events.size(), alone.events.size());
                for (std::size_t i = 0; i < mine.events.size(); ++i) {
                    const Event &x = mine.events[i], &y = alone.events[i];
                    QVERIFY2(close(x.t, y.t) && x.req == y.req && x.ev == y.ev &&
                                 x.value == y.value,
                             qPrintable(what + QString(": event %1 (%2 of req %3 at %4 vs %5 of "
                                                       "req %6 at %7)")
                                                   .arg(i)
                                                   .arg(evName(x.ev))
                                                   .arg(x.req)
                                                   .arg(x.t, 0, 'g', 17)
                                                   .arg(evName(y.ev))
                                                   .arg(y.req)
                                                   .arg(y.t, 0, 'g', 17)));
                }
                const auto tm = allTokenTimes(mine), ta = allTokenTimes(alone);
                QCOMPARE(tm.size(), ta.size());
                for (std::size_t i = 0; i < tm.size(); ++i) {
                    QCOMPARE(tm[i].size(), ta[i].size());
                    for (std::size_t k = 0; k < tm[i].size(); ++k)
                        QVERIFY2(close(tm[i][k], ta[i][k]), qPrintable(what));
                }
                QCOMPARE(mine.totalIterations(), alone.totalIterations());
                QVERIFY(mine.iters.size() >= alone.iters.size());
                const auto gaps = interTokenLatencies(mine);
                itl.insert(itl.end(), gaps.begin(), gaps.end());
            }
            for (auto& g : itl) g.first *= 1e3;
            const Stats want = describeWeighted(itl, {50, 90, 99});
            const Stats got = summarize(fleet).itl_ms;
            QCOMPARE(got.count, want.count);
            if (want.count > 0) {
                QCOMPARE(got.mean, want.mean);
                QCOMPARE(got.std, want.std);
                QCOMPARE(got.percentiles, want.percentiles);
            }
            ++compared;
        }
        QVERIFY(compared > 0);
    }

    // Two replicas, FCFS, the hand model. A (prompt 10, output 5) and B (10, 1) arrive at 0;
    // C (10, 1) at 2.5 s. Round robin: A -> 0, B -> 1, C -> 0. A's prefill ends at 1.11 s,
    // its decodes at 2.11, 3.11, ...; C waits for the boundary at 3.11, prefills alone (A's
    // decode waits, vLLM v0) until 4.22: TTFT 1.72 s. Least outstanding: at 2.5 replica 1 has
    // finished B (at 1.11) and replica 0 still runs A, so C -> 1 and prefills at once: TTFT
    // 1.11 s. least_kv places it the same way (replica 1 holds no KV).
    void handPlacements() {
        Workload w;
        w.requests = {req(0, 10, 5), req(0, 10, 1), req(2.5, 10, 1)};
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        const EteModel m = handModel();
        const RunLog rr = fleetRun(w, m, fcfs(), lim, 2, Router::RoundRobin);
        QCOMPARE(rr.replica_of, (std::vector<std::int16_t>{0, 1, 0}));
        QVERIFY(std::fabs(ttft(rr, 2) - 1.72) < 1e-9);
        QVERIFY(std::fabs(ttft(rr, 0) - 1.11) < 1e-9);
        for (Router r : {Router::LeastOutstanding, Router::LeastKv}) {
            const RunLog lo = fleetRun(w, m, fcfs(), lim, 2, r);
            QCOMPARE(lo.replica_of, (std::vector<std::int16_t>{0, 1, 1}));
            QVERIFY(std::fabs(ttft(lo, 2) - 1.11) < 1e-9);
        }
        // The fleet summary: over all requests, and a row per replica that adds up.
        const Summary s = summarize(rr);
        QCOMPARE(s.replica_count, 2);
        QCOMPARE(s.router, std::string("round_robin"));
        QCOMPARE(int(s.replicas.size()), 2);
        QCOMPARE(s.replicas[0].requests, std::int64_t(2));
        QCOMPARE(s.replicas[1].requests, std::int64_t(1));
        QCOMPARE(s.replicas[0].completed + s.replicas[1].completed, s.completed);
        QCOMPARE(s.ttft_ms.count, std::int64_t(3));
        const auto j = s.toJson();
        QCOMPARE(j["replicas"].size(), std::size_t(2));
        QCOMPARE(j["router"].get<std::string>(), std::string("round_robin"));
        const Summary back = Summary::fromJson(j);
        QCOMPARE(int(back.replicas.size()), 2);
        QCOMPARE(back.replicas[1].requests, std::int64_t(1));
        QCOMPARE(back.replicas[0].ttft_ms.mean, s.replicas[0].ttft_ms.mean);
    }

    // What the router reads is the fleet at the arrival's time, not at the replica's next
    // boundary. A (prompt 10, output 1) arrives at 0 and finishes with its prefill at 1.11 s;
    // B (10, 1) arrives at 0.5. Replica 0 has stopped at its boundary at or after 0.5, the
    // end of A's prefill, so A is done there, but at 0.5 it is in flight: least_outstanding
    // sends B to the idle replica 1 (TTFT 1.11 s), not behind A (1.72 s, as when the router
    // counted A done). A prefill pool (disaggregation: every request one token) left half
    // its replicas idle and its prompts queued that way.
    void routerSeesTheFleetAtTheArrival() {
        Workload w;
        w.requests = {req(0, 10, 1), req(0.5, 10, 1)};
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        const EteModel m = handModel();
        const RunLog lo = fleetRun(w, m, fcfs(), lim, 2, Router::LeastOutstanding);
        QCOMPARE(lo.replica_of, (std::vector<std::int16_t>{0, 1}));
        QVERIFY(close(ttft(lo, 0), 1.11));
        QVERIFY(close(ttft(lo, 1), 1.11));
    }

    // Three conversations (32-token shared prefixes, prompts of 50, answers of 2) take turns,
    // 3 s apart: each turn (prefill at most 1.75 s, a 1 s decode) has finished before the next
    // arrives, so the load never tips the balance. prefix_aware sends a conversation's later
    // turns where its prefix is cached (32 > half of 50): every turn after each
    // conversation's first finds 32 tokens (2 blocks of 16). Round robin over two replicas
    // sends a conversation to alternating replicas: its second turn misses too. The same for
    // prefix_oracle (the real caches) and prefix_aware (SGLang's tree of what it sent: with
    // equal loads it sends every first turn to replica 0, the first of the least loaded).
    void prefixAwareFollowsTheCache_data() {
        QTest::addColumn<int>("router");
        QTest::newRow("prefix_aware") << int(Router::PrefixAware);
        QTest::newRow("prefix_oracle") << int(Router::PrefixOracle);
    }
    void prefixAwareFollowsTheCache() {
        QFETCH(int, router);
        Workload w;
        const int turns = 12;
        for (int k = 0; k < turns; ++k) {
            Request r = req(3.0 * k, 50, 2);
            r.prefix = {{std::uint64_t(1 + k % 3), 32}};
            w.requests.push_back(r);
        }
        EngineLimits lim;
        lim.kv_capacity_tokens = 100000;
        lim.block_size = 16;
        lim.prefix_caching = true;
        const EteModel m = handModel();
        const RunLog pa = fleetRun(w, m, fcfs(), lim, 2, Router(router));
        const Summary s = summarize(pa);
        QCOMPARE(s.prefix_cached_tokens, std::int64_t((turns - 3) * 32));
        for (int k = 3; k < turns; ++k)
            QCOMPARE(pa.replica_of[std::size_t(k)], pa.replica_of[std::size_t(k % 3)]);
        const Summary rr = summarize(fleetRun(w, m, fcfs(), lim, 2, Router::RoundRobin));
        QCOMPARE(rr.prefix_cached_tokens, std::int64_t((turns - 6) * 32));
        QCOMPARE(int(s.replicas.size()), 2);
        QCOMPARE(s.replicas[0].prefix_cached_tokens + s.replicas[1].prefix_cached_tokens,
                 s.prefix_cached_tokens);
        // A fleet whose replicas would hold more than 25 million request states is refused
        // before anything is allocated (4096 replicas of 10,000 requests: 41 million).
        {
            Workload big;
            big.requests.assign(10000, req(0, 10, 1));
            EngineLimits l;
            l.kv_capacity_tokens = 1000;
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                     fleetRun(big, m, fcfs(), l, kMaxReplicas, Router::RoundRobin));
        }
        // Without prefix caching the prefix-aware router has nothing to read: refused.
        lim.prefix_caching = false;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 fleetRun(w, m, fcfs(), lim, 2, Router(router)));
    }

    // SGLang's router routes by the tree of the prompts it sent, not by the replicas' caches.
    // Two replicas of 8 blocks of 16 tokens. R0 (64 tokens of span A, 2 out) at 0 s goes to
    // replica 0 (equal loads: the first); R1 (96 tokens of span B, 30 out) at 10 s too (no
    // match). R1's blocks evict A's: at its admission hashless A4 and the 3 never-used blocks,
    // then A3, A2, and A1 as it grows past 96 tokens; at 20 s replica 0 still holds A0 only.
    // R2 (80 tokens, A then 16 of its own) at 20 s, replica 0 running R1 (load 1 to 0, not
    // imbalanced under 64 / 1.5):
    //  - prefix_aware: the tree matches A, 64 of 80 tokens = 0.8 > 0.3: replica 0, where A
    //    is gone (the router is never told);
    //  - prefix_oracle: replica 0's cache holds 16 of 80 = 0.2, not above 0.5: the least
    //    loaded, replica 1;
    //  - prefix_aware with --cache-threshold 0.9: 0.8 is not above it: replica 1;
    //  - prefix_aware with --balance-abs 0 --balance-rel 1: loads 1 and 0 are imbalanced
    //    (1 - 0 > 0 and 1 > 1 x 0): the least loaded, replica 1, before any match.
    void prefixAwareRoutesByWhatItSent() {
        Workload w;
        Request r0 = req(0, 64, 2), r1 = req(10, 96, 30), r2 = req(20, 80, 2);
        r0.prefix = {{1, 64}};
        r1.prefix = {{2, 96}};
        r2.prefix = {{1, 64}};
        w.requests = {r0, r1, r2};
        EngineLimits lim;
        lim.kv_capacity_tokens = 128;
        lim.block_size = 16;
        lim.prefix_caching = true;
        const EteModel m = handModel();
        // Where R0, R1 and R2 go.
        const auto to = [&](Router router, const FleetOptions* o = nullptr) {
            const RunLog log = fleetRun(w, m, fcfs(), lim, 2, router, o);
            return std::vector<int>(log.replica_of.begin(), log.replica_of.end());
        };
        QCOMPARE(to(Router::PrefixAware), std::vector<int>({0, 0, 0}));
        QCOMPARE(to(Router::PrefixOracle), std::vector<int>({0, 0, 1}));
        FleetOptions strict;
        strict.cache_threshold = 0.9;
        QCOMPARE(to(Router::PrefixAware, &strict), std::vector<int>({0, 0, 1}));
        FleetOptions eager;
        eager.balance_abs = 0;
        eager.balance_rel = 1;
        QCOMPARE(to(Router::PrefixAware, &eager), std::vector<int>({0, 0, 1}));
    }

    // Prefill/decode disaggregation by hand (sim/disagg.h). The hand model: a prefill of L
    // tokens alone takes 1 + 0.01 L + 1e-4 L^2 s, a decode step 1 s. One prefill and one
    // decode replica, one seat each; a link of 1 GB/s and 1 ms, 1 MB of KV per token.
    //  - A (100 prompt tokens, 3 out) at 0: prefill 0 -> 3 s; its 100 MB move in 0.101 s:
    //    at the decode replica at 3.101, where it computes its last prompt token over the 99
    //    that came (1 + 0.01 + 1e-4 (100^2 - 99^2) = 1.0299 s): first token 4.1309, then
    //    5.1309 and 6.1309, done.
    //  - B (the same) at 0 waits for the prefill seat: 3 -> 6 s; there at 6.101, it waits
    //    for the decode seat until A is done at 6.1309: first token 7.1608, done 9.1608.
    void disaggregationByHand() {
        const LinkModel link = LinkModel::parse("1:1000");
        QCOMPARE(link.transferTime(1e8, 1), 0.101);
        QCOMPARE(link.transferTime(1e8, 4), 0.001 + 0.025);
        HandDisagg hand;
        const Workload& w = hand.w;
        const DisaggRun& run = hand.run;
        const RunLog log = simulateDisaggregated(run);
        QCOMPARE(log.replicas, 2);
        const auto mets = perRequest(log);
        QVERIFY(std::fabs(mets[0].ttft() - 4.1309) < 1e-9);
        QVERIFY(std::fabs(mets[0].end - 6.1309) < 1e-9);
        QVERIFY(std::fabs(mets[1].ttft() - 7.1608) < 1e-9);
        QVERIFY(std::fabs(mets[1].end - 9.1608) < 1e-9);
        QVERIFY(std::fabs(mets[1].queue_delay - 3.0) < 1e-9); // the prefill pool's queue
        QCOMPARE(int(log.replica_of[0]), 1);
        QCOMPARE(int(log.replica_of[1]), 1);
        QCOMPARE(mets[0].output_tokens, 3);
        const Summary s = summarize(log);
        QCOMPARE(s.completed, std::int64_t(2));
        // The prefill pool's iterations on replica 0, the decode pool's on replica 1.
        for (std::size_t i = 0; i < log.iters.size(); ++i)
            QCOMPARE(int(log.iter_replica[i]),
                     log.iters[i].decode_seqs > 0 || log.iters[i].t0 > 3.1 ? 1 : 0);

        // The two-stage queue by hand. Prefill pool (one seat): request 0's prompt 0 -> 3 s,
        // request 1's 3 -> 6 s (queued 3 s). Transfers of 100 tokens x 1 MB at 1 GB/s +
        // 1 ms: 0.101 s, so the KV arrives at 3.101 and 6.101. Decode pool (one seat):
        // request 0 runs from 3.101 to 6.1309; request 1 waits there for the seat until
        // 6.1309 (0.0299 s), its first token at 7.1608.
        const lod::Row* rows1 = nullptr;
        const auto rows = lod::buildRows(log, &w);
        rows1 = &rows[1];
        std::vector<std::pair<lod::SpanKind, std::pair<double, double>>> want = {
            {lod::SpanKind::Queued, {0, 3}},
            {lod::SpanKind::Prefill, {3, 6}},
            {lod::SpanKind::Transfer, {6, 6.101}},
            {lod::SpanKind::Queued, {6.101, 6.1309}},
            {lod::SpanKind::Prefill, {6.1309, 7.1608}},
            {lod::SpanKind::Decode, {7.1608, 9.1608}}};
        QCOMPARE(rows1->spans.size(), want.size());
        for (std::size_t k = 0; k < want.size(); ++k) {
            QCOMPARE(int(rows1->spans[k].kind), int(want[k].first));
            QVERIFY(std::fabs(rows1->spans[k].t0 - want[k].second.first) < 1e-9);
            QVERIFY(std::fabs(rows1->spans[k].t1 - want[k].second.second) < 1e-9);
        }
        QCOMPARE(rows1->prefill_replica, 0);
        QCOMPARE(rows1->replica, 1);
        QVERIFY(std::fabs(rows1->handoff - 6.101) < 1e-9);
        QCOMPARE(log.prefill_replicas, 1);
        QCOMPARE(log.replicaName(0), std::string("prefill 0"));
        QCOMPARE(log.replicaName(1), std::string("decode 0"));
        // Each side's own log: the prefill instance finishes each request with its one token
        // when the KV leaves; the decode instance sees it arrive when the KV has arrived.
        const auto side = [&](int rep) { return perRequest(replicaLog(log, rep)); };
        const auto pf = side(0), dc = side(1);
        QCOMPARE(pf.size(), std::size_t(2));
        QVERIFY(std::fabs(pf[1].end - 6.0) < 1e-9);
        QCOMPARE(pf[1].output_tokens, 1);
        QVERIFY(std::fabs(dc[1].arrival - 6.101) < 1e-9);
        QVERIFY(std::fabs(dc[1].queue_delay - 0.0299) < 1e-9); // the decode pool's queue
        QVERIFY(std::fabs(dc[1].end - 9.1608) < 1e-9);
        // The run log keeps both replicas of each request, and reads back as written.
        std::stringstream text;
        writeRunLogJsonl(log, text);
        const RunLog back = readRunLogJsonl(text, "disagg.jsonl");
        QCOMPARE(back.prefill_replicas, 1);
        QVERIFY(back.prefill_of == log.prefill_of);
        QVERIFY(back.replica_of == log.replica_of);
        QCOMPARE(back.events.size(), log.events.size());
        // Perfetto: a process per replica, named by pool; request 1's spans before its KV
        // arrived on the prefill replica's process.
        std::stringstream trace;
        writePerfetto(log, &w, trace);
        const auto tj = nlohmann::json::parse(trace.str());
        std::map<int, std::string> procs;
        int transfer_pid = -1;
        for (const auto& e : tj["traceEvents"]) {
            if (e["ph"] == "M" && e["name"] == "process_name")
                procs[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
            if (e["ph"] == "X" && e["tid"] == 1 && e["name"] == "KV transfer")
                transfer_pid = e["pid"].get<int>();
        }
        QVERIFY(procs.count(transfer_pid));
        QVERIFY(procs[transfer_pid].rfind("prefill 0", 0) == 0);
        bool decode_named = false;
        for (const auto& [pid, name] : procs) decode_named |= name.rfind("decode 0", 0) == 0;
        QVERIFY(decode_named);
        // A log that says nothing of disaggregation cannot carry a transfer.
        std::string bad = text.str();
        const auto at = bad.find("\"prefill_replicas\":1,");
        QVERIFY(at != std::string::npos);
        bad.erase(at, std::string("\"prefill_replicas\":1,").size());
        std::stringstream bad_in(bad);
        QVERIFY_THROWS_EXCEPTION(InputError, readRunLogJsonl(bad_in, "bad.jsonl"));

        // Bad input, each naming what is wrong.
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseDisaggregate("0:2"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseDisaggregate("3"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseDisaggregate("2:x"));
        QCOMPARE(parseDisaggregate("3:5"), std::make_pair(3, 5));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, LinkModel::parse("fast"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, LinkModel::parse("0:5"));
        QCOMPARE(LinkModel::parse("ib-ndr").bandwidth_gbs, 50.0);
        DisaggRun small = run;
        small.decode.limits.kv_capacity_tokens = 50; // a 100-token prompt's KV cannot land
        try {
            simulateDisaggregated(small);
            QFAIL("a transfer larger than the decode replica's KV was accepted");
        } catch (const std::invalid_argument& e) {
            QVERIFY(std::string(e.what()).find("larger than a decode replica's KV") !=
                    std::string::npos);
        }
    }

    // The decode pool on other hardware (--decode-profile), by hand: the setup above, with
    // decode steps of 0.5 s on the decode side and 4 GPUs a prefill replica against 2 a
    // decode replica, so the 100 MB move over 2 links: 0.001 + 1e8 / 2e9 = 0.051 s.
    //  - A: prefill 0 -> 3 s, there at 3.051; its last prompt token (1.0299 s) gives the
    //    first token at 4.0809, then 4.5809 and 5.0809, done.
    //  - B: prefill 3 -> 6 s, there at 6.051, the seat free: 7.0809, done 8.0809.
    void disaggregationOnOtherHardwareByHand() {
        HandDisagg hand;
        DisaggRun& run = hand.run;
        EteParams fast;
        fast.a = 1;
        fast.b = 0.01;
        fast.c = 1e-4;
        fast.q0 = 0.5;
        const EteModel dm(fast);
        run.decode.model = &dm;
        run.gpus_per_replica = 4;
        run.decode_gpus_per_replica = 2;
        QCOMPARE(run.transferGpus(), 2);
        const auto mets = perRequest(simulateDisaggregated(run));
        QVERIFY(std::fabs(mets[0].first_token - 4.0809) < 1e-9);
        QVERIFY(std::fabs(mets[0].end - 5.0809) < 1e-9);
        QVERIFY(std::fabs(mets[1].first_token - 7.0809) < 1e-9);
        QVERIFY(std::fabs(mets[1].end - 8.0809) < 1e-9);
        // Through a spec: the decode pool's own KV capacity, round-tripped with the spec;
        // a decode profile needs disaggregation.
        RunSpec s;
        s.workload.path = KAIROS_SOURCE_DIR "/sample_traces/chat_poisson_small.jsonl";
        s.exec.profile = KAIROS_SOURCE_DIR "/resources/profiles/llama2-70b-a100x4.json";
        s.fleet.disaggregate = "1:1";
        s.fleet.decode_profile = KAIROS_SOURCE_DIR "/resources/profiles/llama2-70b-h100x2.json";
        s.validate();
        QCOMPARE(RunSpec::fromJson(s.toJson()).fleet.decode_profile, s.fleet.decode_profile);
        const PreparedRun p = prepareRun(s);
        QVERIFY(p.decode.has_value());
        QCOMPARE(p.decode->profile.gpu_count, 2);
        QCOMPARE(p.decode->limits.kv_capacity_tokens, p.decode->profile.kvCapacityTokens());
        QVERIFY(p.decode->limits.kv_capacity_tokens != p.limits.kv_capacity_tokens);
        const RunResult r = executeRun(p);
        QCOMPARE(r.summary.completed, r.summary.num_requests);
        QVERIFY(r.log.exec_model.find("decode: llama2-70b-h100x2") != std::string::npos);
        // Each pool's KV: the capacities of its hardware, peaks from its replicas, kept by
        // the run log and the stored summary; a decode replica's own log has its pool's.
        QCOMPARE(r.log.decode_kv_capacity_tokens, p.decode->limits.kv_capacity_tokens);
        QCOMPARE(r.summary.kv_capacity_tokens, p.limits.kv_capacity_tokens);
        QCOMPARE(r.summary.decode_kv_capacity_tokens, p.decode->limits.kv_capacity_tokens);
        QCOMPARE(r.summary.prefill_kv_peak_tokens, r.summary.replicas[0].kv_peak_tokens);
        QCOMPARE(r.summary.decode_kv_peak_tokens, r.summary.replicas[1].kv_peak_tokens);
        QCOMPARE(std::max(r.summary.prefill_kv_peak_tokens, r.summary.decode_kv_peak_tokens),
                 r.summary.kv_peak_tokens);
        QCOMPARE(replicaLog(r.log, 1).kv_capacity_tokens, p.decode->limits.kv_capacity_tokens);
        QCOMPARE(replicaLog(r.log, 0).kv_capacity_tokens, p.limits.kv_capacity_tokens);
        std::stringstream logged;
        writeRunLogJsonl(r.log, logged);
        QCOMPARE(readRunLogJsonl(logged, "pools.jsonl").decode_kv_capacity_tokens,
                 r.log.decode_kv_capacity_tokens);
        const Summary back = Summary::fromJson(r.summary.toJson());
        QCOMPARE(back.decode_kv_capacity_tokens, r.summary.decode_kv_capacity_tokens);
        QCOMPARE(back.decode_kv_peak_tokens, r.summary.decode_kv_peak_tokens);
        QVERIFY(r.summary.table().find("KV peak / capacity, decode pool:") != std::string::npos);
        RunSpec alone = s;
        alone.fleet.disaggregate.clear();
        QVERIFY_THROWS_EXCEPTION(InputError, alone.validate());
        RunSpec other = s;
        other.fleet.decode_profile = KAIROS_SOURCE_DIR "/resources/profiles/llama3-8b-h100.json";
        try {
            prepareRun(other);
            QFAIL("a decode pool of another model was accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.field(), std::string("fleet.decode_profile"));
        }
    }

    // The approximate tree by hand: spans as nodes, split where two spans of one id part,
    // matches part-way into a node, a tenant's tokens, and its least recently used leaves
    // evicted first.
    void routerTreeByHand() {
        RouterTree tree(2);
        Request a = req(0, 100, 1), b = req(0, 100, 1), c = req(0, 60, 1);
        a.prefix = {{7, 40}, {8, 40}}; // 80 of spans, 20 of its own
        b.prefix = {{7, 40}, {9, 40}};
        c.prefix = {{7, 30}};
        tree.insert(a, 0, 0, 1.0);
        QCOMPARE(tree.tenantTokens(0), std::int64_t(100));
        // b matches span 7 (40 tokens), then parts: tenant 0 made that node.
        RouterTree::Match m = tree.match(b, 1, 2.0);
        QCOMPARE(m.tokens, std::int64_t(40));
        QCOMPARE(m.tenant, 0);
        tree.insert(b, 1, 1, 2.0);
        QCOMPARE(tree.tenantTokens(1), std::int64_t(100));
        // c's span 7 is 30 tokens: 30 matched, part-way into the node; its sticky tenant is
        // still the one that made it.
        m = tree.match(c, 2, 3.0);
        QCOMPARE(m.tokens, std::int64_t(30));
        QCOMPARE(m.tenant, 0);
        // Inserting c under tenant 1 splits span 7's node at 30: counts unchanged but for
        // c's own 30 tokens.
        tree.insert(c, 2, 1, 4.0);
        QCOMPARE(tree.tenantTokens(1), std::int64_t(130));
        QCOMPARE(tree.tenantTokens(0), std::int64_t(100));
        m = tree.match(a, 3, 5.0); // a's spans, not its own tokens (another request's id)
        QCOMPARE(m.tokens, std::int64_t(80));
        QCOMPARE(m.tenant, 0);
        // Every tenant cut to 70 tokens, its least recently used leaves first. Tenant 1: b's
        // own 20 (accessed at 2), then span 9's 40 (at 2, a leaf once b's own is gone): 70;
        // c's own 30 and span 7's 30 + 10 stay. Tenant 0: a's own 20 (at 1), then span 8's
        // 40 (refreshed at 5, then a leaf): 40.
        tree.evict(70);
        QCOMPARE(tree.tenantTokens(1), std::int64_t(70));
        QCOMPARE(tree.tenantTokens(0), std::int64_t(40));
        m = tree.match(b, 4, 6.0);
        QCOMPARE(m.tokens, std::int64_t(40));
        QCOMPARE(m.tenant, 0);
        // Every tenant cut to nothing: nothing matches.
        tree.evict(0);
        QCOMPARE(tree.tenantTokens(0), std::int64_t(0));
        QCOMPARE(tree.tenantTokens(1), std::int64_t(0));
        QCOMPARE(tree.match(a, 5, 7.0).tenant, -1);
    }

    // A fleet's run log round-trips through JSONL (replica of each request and iteration),
    // and a replica the header does not have is an error naming the field.
    void runLogRoundTrip() {
        const test::Case c = test::makeCase(3);
        EngineLimits lim = c.lim;
        lim.kv_capacity_tokens = 2 * std::max<std::int64_t>(16, c.largest_need);
        const EteModel m(c.ete);
        const RunLog log = fleetRun(c.w, m, fcfs(), lim, 3, Router::LeastOutstanding);
        const std::string t = text(log);
        std::istringstream in(t);
        const RunLog back = readRunLogJsonl(in, "fleet.jsonl");
        QCOMPARE(back.replicas, 3);
        QCOMPARE(back.replica_of, log.replica_of);
        QCOMPARE(back.iter_replica, log.iter_replica);
        QCOMPARE(text(back), t);
        // Token times are each replica's own: the fleet's equal the replicas'.
        const auto all = allTokenTimes(log);
        for (int r = 0; r < 3; ++r) {
            std::vector<ReqId> members;
            const auto part = allTokenTimes(replicaLog(log, r, &members));
            for (std::size_t i = 0; i < members.size(); ++i)
                QCOMPARE(all[std::size_t(members[i])], part[i]);
        }
        std::string bad = t;
        const auto at = bad.find("\"replica\":");
        QVERIFY(at != std::string::npos);
        bad.replace(at, 11, "\"replica\":9");
        std::istringstream in2(bad);
        try {
            (void)readRunLogJsonl(in2, "fleet.jsonl");
            QFAIL("a replica out of range was read");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("replica") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestFleet)
#include "tst_fleet.moc"
