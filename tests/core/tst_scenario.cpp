// Tiny scenarios computed by hand: exact event times and metrics.
#include "exec/execution_model.h"
#include "export/runlog_jsonl.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "sched/admission.h"
#include "sched/fcfs.h"
#include "sim/engine.h"
#include "test_util.h"

#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace kairos;
using kairos::test::req;

namespace {

struct Ev3 {
    double t;
    ReqId req;
    Ev ev;
    int v;
};

// Admits nothing until two requests wait, then both, the later arrival first, within the
// engine's admission rules (AdmissionBudget): an older request behind a younger one.
class YoungerFirst final : public Scheduler {
public:
    std::string name() const override { return "younger-first"; }
    void schedule(const EngineView& v, Decision& out) override {
        if (v.waiting().size() < 2) return;
        std::vector<ReqId> ids;
        for (ReqId id : v.waiting()) ids.insert(ids.begin(), id);
        AdmissionBudget b(v, 0.0);
        for (ReqId id : ids)
            if (b.take(v.state(id)) == AdmissionBudget::Verdict::Ok) out.admit.push_back(id);
    }
};

double admitTime(const RunLog& log, ReqId id) {
    for (const Event& e : log.events)
        if (e.req == id && e.ev == Ev::Admit) return e.t;
    return -1;
}

void compareEvents(const RunLog& log, const std::vector<Ev3>& want) {
    QCOMPARE(log.events.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        const Event& e = log.events[i];
        const QString where = QString("event %1 (%2)").arg(i).arg(evName(want[i].ev));
        QVERIFY2(e.req == want[i].req, qPrintable(where + ": req"));
        QVERIFY2(e.ev == want[i].ev, qPrintable(where + ": got " + evName(e.ev)));
        QVERIFY2(e.value == want[i].v, qPrintable(where + QString(": value %1").arg(e.value)));
        QVERIFY2(std::fabs(e.t - want[i].t) < 1e-12,
                 qPrintable(where + QString(": t=%1").arg(e.t, 0, 'g', 17)));
    }
}
} // namespace

class TestScenario : public QObject {
    Q_OBJECT
private slots:
    // Two requests under FCFS without chunked prefill, ETE model with round coefficients:
    //   prefill = 0.1 + 0.01*sum(L);  decode = 0.05 + 0.01*B + 0.001*sum(N_kv).
    // R0 (t=0, 10 -> 3 tokens): prefill 0.1+0.1 = 0.2, first token at 0.2, kv 11.
    // R1 (t=0.1, 20 -> 2): waits for the running prefill; prefill 0.1+0.2 = 0.3: 0.2 -> 0.5,
    //   R0 stalls meanwhile (vLLM v0 runs prefills alone). kv 21.
    // Decode B=2, sum N_kv = 11+21 = 32: 0.05+0.02+0.032 = 0.102: 0.5 -> 0.602; R1 done.
    // Decode B=1, N_kv = 12: 0.05+0.01+0.012 = 0.072: 0.602 -> 0.674; R0 done.
    void twoRequestsEte() {
        Workload w;
        w.requests = {req(0.0, 10, 3), req(0.1, 20, 2)};
        EteParams p;
        p.a = 0.1;
        p.b = 0.01;
        p.q0 = 0.05;
        p.q1 = 0.01;
        p.p = 0.001;
        EteModel model(p);
        FcfsScheduler fcfs(FcfsOptions{0.0});
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        const RunLog log = simulate(w, model, fcfs, lim);
        compareEvents(log, {
                               {0.0, 0, Ev::Arrive, 10},
                               {0.0, 0, Ev::Admit, 0},
                               {0.0, 0, Ev::PrefillStart, 10},
                               {0.1, 1, Ev::Arrive, 20},
                               {0.2, 0, Ev::PrefillEnd, 1},
                               {0.2, 0, Ev::FirstToken, 1},
                               {0.2, 1, Ev::Admit, 0},
                               {0.2, 1, Ev::PrefillStart, 20},
                               {0.5, 1, Ev::PrefillEnd, 1},
                               {0.5, 1, Ev::FirstToken, 1},
                               {0.602, 1, Ev::Finish, 2},
                               {0.674, 0, Ev::Finish, 3},
                           });
        QCOMPARE(log.iters.size(), std::size_t(4));
        KAIROS_COMPARE_NEAR(log.iters[2].d0, 0.102, 1e-12);
        QCOMPARE(log.iters[2].decode_seqs, 2);
        QCOMPARE(log.iters[2].kv_first, std::int64_t(11 + 21 + 2));

        const auto m = perRequest(log);
        KAIROS_COMPARE_NEAR(m[0].ttft(), 0.2, 1e-12);
        KAIROS_COMPARE_NEAR(m[1].ttft(), 0.4, 1e-12);
        KAIROS_COMPARE_NEAR(m[0].e2el(), 0.674, 1e-12);
        KAIROS_COMPARE_NEAR(m[1].e2el(), 0.502, 1e-12);
        KAIROS_COMPARE_NEAR(m[0].tpot(), (0.674 - 0.2) / 2, 1e-12);
        KAIROS_COMPARE_NEAR(m[1].tpot(), 0.102, 1e-12);
        KAIROS_COMPARE_NEAR(m[1].queue_delay, 0.1, 1e-12);

        // ITL: R0 gaps 0.402 (it stalled through R1's prefill) and 0.072; R1 gap 0.102.
        SummaryOptions so;
        so.percentiles = {50, 100};
        so.goodput = GoodputSlo::parse({"ttft:300"});
        const Summary s = summarize(log, so);
        QCOMPARE(s.completed, std::int64_t(2));
        QCOMPARE(s.itl_ms.count, std::int64_t(3));
        KAIROS_COMPARE_NEAR(s.itl_ms.mean, (402.0 + 72.0 + 102.0) / 3, 1e-9);
        KAIROS_COMPARE_NEAR(s.itl_ms.median, 102.0, 1e-9);
        KAIROS_COMPARE_NEAR(s.itl_ms.percentile(100), 402.0, 1e-9);
        KAIROS_COMPARE_NEAR(s.duration_s, 0.674, 1e-12);
        KAIROS_COMPARE_NEAR(s.request_throughput, 2 / 0.674, 1e-9);
        KAIROS_COMPARE_NEAR(s.output_throughput, 5 / 0.674, 1e-9);
        KAIROS_COMPARE_NEAR(s.ttft_ms.mean, 300.0, 1e-9);
        QCOMPARE(s.good_requests, std::int64_t(1)); // R0: 200 ms <= 300; R1: 400 ms > 300
        QCOMPARE(s.kv_peak_tokens, std::int64_t(34));
    }

    // Preemption by recompute, unit model (1 time unit per iteration), capacity 12 tokens:
    // A and B (t=0, 4 -> 4 tokens each) are admitted together (5 + 5 reserved <= 12).
    // t=1: both have 1 token (kv 5+5). Decode to t=2: kv 6+6 = 12 (full).
    // t=2: growth would need 14 > 12: B (latest arrival; tie -> higher id) is preempted.
    //      A decodes alone, tokens 3 and 4 at t=3, t=4, and finishes.
    // t=4: B is readmitted (needs 4+2+1 = 7), recomputes 6 tokens, emits token 3 at t=5,
    //      token 4 at t=6.
    void preemptionUnit() {
        for (const bool skip : {true, false}) {
            Workload w;
            w.requests = {req(0, 4, 4), req(0, 4, 4)};
            UnitModel model;
            FcfsScheduler fcfs(FcfsOptions{0.0});
            EngineLimits lim;
            lim.kv_capacity_tokens = 12;
            lim.skip_ahead = skip;
            const RunLog log = simulate(w, model, fcfs, lim);
            compareEvents(log, {
                                   {0, 0, Ev::Arrive, 4},
                                   {0, 1, Ev::Arrive, 4},
                                   {0, 0, Ev::Admit, 0},
                                   {0, 1, Ev::Admit, 0},
                                   {0, 0, Ev::PrefillStart, 4},
                                   {0, 1, Ev::PrefillStart, 4},
                                   {1, 0, Ev::PrefillEnd, 1},
                                   {1, 0, Ev::FirstToken, 1},
                                   {1, 1, Ev::PrefillEnd, 1},
                                   {1, 1, Ev::FirstToken, 1},
                                   {2, 1, Ev::Preempt, 2},
                                   {4, 0, Ev::Finish, 4},
                                   {4, 1, Ev::Resume, 2},
                                   {4, 1, Ev::PrefillStart, 6},
                                   {5, 1, Ev::PrefillEnd, 3},
                                   {6, 1, Ev::Finish, 4},
                               });
            QCOMPARE(tokenTimes(log, 0), (std::vector<double>{1, 2, 3, 4}));
            QCOMPARE(tokenTimes(log, 1), (std::vector<double>{1, 2, 5, 6}));
            const Summary s = summarize(log);
            QCOMPARE(s.preemptions, std::int64_t(1));
            QCOMPARE(s.kv_peak_tokens, std::int64_t(12));
            QCOMPARE(s.itl_ms.count,
                     std::int64_t(6)); // A: 1,1,1  B: 1,3,1 (time units -> "ms" x1000)
            KAIROS_COMPARE_NEAR(s.itl_ms.mean, 1000.0 * 8 / 6, 1e-9);
            QCOMPARE(s.iterations, std::int64_t(6));
            // No stretch: the iteration after B's preemption for room runs alone (the
            // scheduler must see the KV it freed, as when stepping), and A's last one too.
            QCOMPARE(s.stretches, std::int64_t(6));

            // --tokens writes one line per token, in time order, at these same times.
            std::stringstream out;
            writeRunLogJsonl(log, out, RunLogWriteOptions{true});
            std::vector<std::vector<double>> seen(2);
            std::string line;
            double last_t = -1;
            while (std::getline(out, line)) {
                if (line.find("\"ev\":\"token\"") == std::string::npos) continue;
                const auto j = nlohmann::json::parse(line);
                seen[j["req"].get<std::size_t>()].push_back(j["t"].get<double>());
                QCOMPARE(j["v"].get<std::size_t>(), seen[j["req"].get<std::size_t>()].size());
                QVERIFY(j["t"].get<double>() >= last_t);
                last_t = j["t"].get<double>();
            }
            QCOMPARE(seen[0], (std::vector<double>{1, 2, 3, 4}));
            QCOMPARE(seen[1], (std::vector<double>{1, 2, 5, 6}));
        }
    }

    // vLLM v0's rules (EngineRules::VllmV0), chunked prefill, 8 tokens per iteration, unit
    // model: three requests at t = 0, 6 prompt tokens and 2 output tokens each.
    //   t=0: R0 takes 6 of the budget, R1 the 2 left; R2 finds none: vLLM does not admit it
    //        (Kairos's rules admit it; its prefill waits for budget all the same).
    //   t=1: R0 decodes (1), R1's prefill takes its last 4, R2 is admitted with the 3 left.
    //   t=2: R1 decodes, R2 its last 3.  Token times are the same under both rules.
    void vllmV0AdmitsWithinTheTokenBudget() {
        for (const EngineRules rules : {EngineRules::VllmV0, EngineRules::Kairos}) {
            Workload w;
            w.requests = {req(0, 6, 2), req(0, 6, 2), req(0, 6, 2)};
            UnitModel model;
            FcfsScheduler fcfs(FcfsOptions{0.0});
            EngineLimits lim;
            lim.kv_capacity_tokens = 1000;
            lim.chunked_prefill = true;
            lim.max_num_batched_tokens = 8;
            lim.rules = rules;
            const RunLog log = simulate(w, model, fcfs, lim);
            QCOMPARE(admitTime(log, 0), 0.0);
            QCOMPARE(admitTime(log, 1), 0.0);
            QCOMPARE(admitTime(log, 2), rules == EngineRules::VllmV0 ? 1.0 : 0.0);
            QCOMPARE(tokenTimes(log, 0), (std::vector<double>{1, 2}));
            QCOMPARE(tokenTimes(log, 1), (std::vector<double>{2, 3}));
            QCOMPARE(tokenTimes(log, 2), (std::vector<double>{3, 4}));
        }
    }

    // vLLM v0 serves the running requests in arrival order within the token budget, so a
    // decode waits behind an older request's prefill (4 tokens per iteration, unit model).
    // R0 (t=0, 8 -> 2) and R1 (t=0.5, 1 -> 3), admitted at 0.5 younger first:
    //   t=0.5: new prefills in admission order: R1 its 1 token, R0 3.  R1's first token 1.5.
    //   t=1.5: R0 (older) takes 4 of its 5 left: nothing is left for R1's decode (vLLM:
    //          num_running_tokens == 0, break).  Kairos's rules run R1's decode first.
    //   t=2.5: R0 its last 1, R1 decodes.  t=3.5: both decode.
    void vllmV0DecodesWaitBehindAnOlderPrefill() {
        for (const bool skip : {true, false})
            for (const EngineRules rules : {EngineRules::VllmV0, EngineRules::Kairos}) {
                Workload w;
                w.requests = {req(0, 8, 2), req(0.5, 1, 3)};
                UnitModel model;
                YoungerFirst sched;
                EngineLimits lim;
                lim.kv_capacity_tokens = 1000;
                lim.chunked_prefill = true;
                lim.max_num_batched_tokens = 4;
                lim.skip_ahead = skip;
                lim.rules = rules;
                const RunLog log = simulate(w, model, sched, lim);
                QCOMPARE(admitTime(log, 0), 0.5);
                QCOMPARE(admitTime(log, 1), 0.5);
                if (rules == EngineRules::VllmV0) {
                    QCOMPARE(tokenTimes(log, 0), (std::vector<double>{3.5, 4.5}));
                    QCOMPARE(tokenTimes(log, 1), (std::vector<double>{1.5, 3.5, 4.5}));
                } else { // t=1.5: R1 decodes, R0 takes 3; t=2.5: R1, R0 its last 2
                    QCOMPARE(tokenTimes(log, 0), (std::vector<double>{3.5, 4.5}));
                    QCOMPARE(tokenTimes(log, 1), (std::vector<double>{1.5, 2.5, 3.5}));
                }
            }
    }

    // vLLM v0's block manager checks each request of an iteration for one free block
    // (can_append_slots), even one that grows into none. Blocks of 4, 8 tokens of KV, one
    // request of 3 prompt and 3 output tokens, alone:
    //   t=0: admitted with 4 tokens (one block); prefill -> kv 4 at t=1.
    //   t=1: its decode grows into the second block (4 <= 4 free): kv 5 at t=2.
    //   t=2: its decode fits its blocks, but no block is free: vLLM preempts it and would
    //        admit it again forever; Kairos kills it (cannot_grow). Kairos's rules finish it.
    void vllmV0NeedsAFreeBlockPerCheck() {
        for (const bool skip : {true, false})
            for (const EngineRules rules : {EngineRules::VllmV0, EngineRules::Kairos}) {
                Workload w;
                w.requests = {req(0, 3, 3)};
                UnitModel model;
                FcfsScheduler fcfs(FcfsOptions{0.0});
                EngineLimits lim;
                lim.kv_capacity_tokens = 8;
                lim.block_size = 4;
                lim.skip_ahead = skip;
                lim.rules = rules;
                const RunLog log = simulate(w, model, fcfs, lim);
                const auto m = perRequest(log);
                if (rules == EngineRules::VllmV0) {
                    QVERIFY(m[0].killed);
                    QCOMPARE(m[0].kill_cause, KillCause::CannotGrow);
                    QCOMPARE(tokenTimes(log, 0), (std::vector<double>{1, 2}));
                } else {
                    QVERIFY(m[0].finished);
                    QCOMPARE(tokenTimes(log, 0), (std::vector<double>{1, 2, 3}));
                }
            }
    }

    // A request that cannot fit even alone is killed, not looped on forever.
    void tooLargeIsKilled() {
        Workload w;
        w.requests = {req(0, 20, 5), req(0, 4, 2)};
        UnitModel model;
        FcfsScheduler fcfs(FcfsOptions{0.0});
        EngineLimits lim;
        lim.kv_capacity_tokens = 10;
        const RunLog log = simulate(w, model, fcfs, lim);
        const Summary s = summarize(log);
        QCOMPARE(s.killed, std::int64_t(1));
        QCOMPARE(s.completed, std::int64_t(1));
        const auto m = perRequest(log);
        QVERIFY(m[0].killed);
        QVERIFY(m[1].finished);
    }
};

QTEST_GUILESS_MAIN(TestScenario)
#include "tst_scenario.moc"
