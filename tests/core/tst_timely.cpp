// TimelyLLM: the authors' workload format, segmented generation and its metrics.
#include "exec/execution_model.h"
#include "metrics/request_metrics.h"
#include "metrics/robot_metrics.h"
#include "metrics/summary.h"
#include "repro/derived.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "test_util.h"
#include "workload/llama3_counts.h"
#include "workload/minispec.h"
#include "workload/readers.h"
#include "workload/robot_generator.h"

#include <QtTest>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

using namespace kairos;

namespace {
std::unique_ptr<Scheduler> policy(const std::string& name) {
    return test::policyNoWatermark(name);
}
// Three requests of 3 tokens (prompt 4) arriving at 0, a1 and a2 with the given TUFs, and
// the one seat they share (unit model: each takes 3 s).
Workload threeRequests(double a1, double a2, Tuf t0, Tuf t1, Tuf t2) {
    Workload w;
    w.requests = {test::req(0, 4, 3), test::req(a1, 4, 3), test::req(a2, 4, 3)};
    w.requests[0].tuf = t0;
    w.requests[1].tuf = t1;
    w.requests[2].tuf = t2;
    return w;
}
EngineLimits oneSeat() {
    EngineLimits lim;
    lim.kv_capacity_tokens = 1000;
    lim.max_num_seqs = 1;
    return lim;
}
// Time of request id's first event of kind ev in the log; -1 if none.
double firstEvent(const RunLog& log, ReqId id, Ev ev) {
    for (const Event& e : log.events)
        if (e.req == id && e.ev == ev) return e.t;
    return -1.0;
}
} // namespace

class TestTimely : public QObject {
    Q_OBJECT
private slots:
    // TUF with the zero floor: normal [beta 1, ERT 1, zero at 1.5] has slope -2.
    void tufValues() {
        const Tuf normal{1, -2, 1}, urgent{0.2, -2.0 / 0.3, 2};
        QCOMPARE(normal.value(0.5), 1.0);
        KAIROS_COMPARE_NEAR(normal.value(1.25), 0.5, 1e-12);
        QCOMPARE(normal.value(3.0), 0.0);
        KAIROS_COMPARE_NEAR(normal.zeroTime(), 1.5, 1e-12);
        KAIROS_COMPARE_NEAR(urgent.value(0.35), 1.0, 1e-12);
        KAIROS_COMPARE_NEAR(normal.valueSuspended(0.25), 0.5, 1e-12); // TUF_1: ERT = 0
        QCOMPARE(normal.valueSuspended(-1.0), 1.0);
        // The paper's Eq. 1 has no zero floor: past the cut-off a response costs utility.
        KAIROS_COMPARE_NEAR(normal.signedValue(2.0), -1.0, 1e-12);
        KAIROS_COMPARE_NEAR(urgent.signedValue(0.8), 2 - 2.0 / 0.3 * 0.6, 1e-12);
        QCOMPARE(urgent.signedValue(0.1), 2.0);
    }

    // The first-response utility (the paper's metric) goes negative for a late answer, and
    // a task never answered scores no better than a late one. Unit model: R0 (output 3,
    // no segments) has its plan dispatched with its finish at t = 3: W(s0) = 3, TUF ERT 1,
    // slope -1, beta 1: 1 - 2 = -1 (the summed-over-segments utility floors it at 0). R1
    // has no event in the log (never answered): min(0, TUF(end of run 3 - arrival 0.5)).
    void firstResponseUtilityGoesNegative() {
        Workload w;
        Request r0 = test::req(0, 4, 3);
        r0.tuf = Tuf{1, -1, 1};
        Request r1 = r0;
        r1.arrival = 0.5;
        r1.tuf = Tuf{0.5, -1, 2};
        w.requests = {r0};
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        auto s = policy("fcfs");
        RunLog log = simulate(w, UnitModel(), *s, lim);
        w.requests.push_back(r1); // not in the run: never answered
        const auto t = robotTasks(log, w);
        QCOMPARE(t.size(), std::size_t(2));
        QCOMPARE(t[0].response, 3.0);
        QCOMPARE(t[0].utility, -1.0);
        QCOMPARE(t[0].max_utility, 1.0);
        QCOMPARE(t[0].segment_utility, 0.0);
        QVERIFY(std::isnan(t[1].response));
        KAIROS_COMPARE_NEAR(t[1].utility, 2 - 2.0, 1e-12); // TUF(2.5) = 2 - (2.5 - 0.5) = 0
        w.requests[1].tuf = Tuf{0.5, -2, 2};
        KAIROS_COMPARE_NEAR(robotTasks(log, w)[1].utility, -2.0, 1e-12); // 2 - 2 * 2
        SummaryOptions so;
        so.workload = &w;
        const Summary sum = summarize(log, so);
        QCOMPARE(sum.robot[0].utility, -3.0);
        QCOMPARE(sum.robot[0].max_utility, 3.0);
        KAIROS_COMPARE_NEAR(sum.robot[0].utilityPercent(), -100.0, 1e-12);
        // The JSON keeps both utilities and reads them back.
        const Summary back = Summary::fromJson(sum.toJson());
        QCOMPARE(back.robot[0].utility, -3.0);
        QCOMPARE(back.robot[0].segment_utility, 0.0);
    }

    // The TimelyLLM authors' 25-agent drone workload, with plans from the trace set beside it.
    void authorsWorkload() {
        const Workload w =
            readWorkload(test::dataPath("timelyllm/timelyllm_workload_25agents.json"));
        QCOMPARE(w.size(), std::size_t(295));
        QCOMPARE(w.meta.at("format"), std::string("timelyllm"));
        QCOMPARE(w.meta.at("plans_found"), std::string("8"));
        QCOMPARE(w.meta.at("jobs_without_plan_text"), std::string("0"));
        // Every text of the shipped trace set was counted by Llama 3's tokenizer.
        QCOMPARE(w.meta.at("texts_estimated_from_characters"), std::string("0"));
        const Request& r =
            w.requests[0]; // job 0, trace 2: "mu(40);?iv('book')==True{tp();->True}->False"
        QCOMPARE(r.id, std::int64_t(0));
        KAIROS_COMPARE_NEAR(r.arrival, 35.36046967883034, 1e-12);
        QCOMPARE(r.output_tokens, 18);   // 17 Llama 3 tokens and the EOS
        QCOMPARE(r.prompt_tokens, 1364); // TypeFly's 1,308 and the task's 56
        QCOMPARE(r.prefix.size(), std::size_t(1));
        QCOMPARE(r.prefix[0].tokens, 1308);
        // Cut as the authors' server cuts it: "mu(40);" | "?iv('book')==True{" | "tp();" |
        // "->True}->False" (7, 18, 5 and 14 of 44 characters: 3, 7, 2 and 5 of the 17
        // tokens, the EOS in the last); one measured duration per skill keyword.
        QCOMPARE(r.segments.size(), std::size_t(4));
        QCOMPARE(r.segments[0].tokens, 3);
        QCOMPARE(r.segments[1].tokens, 7);
        QCOMPARE(r.segments[2].tokens, 2);
        QCOMPARE(r.segments[3].tokens, 6);
        KAIROS_COMPARE_NEAR(r.segments[0].exec_s, 2.4995, 1e-12);
        KAIROS_COMPARE_NEAR(r.segments[1].exec_s, 0.001, 1e-12);
        KAIROS_COMPARE_NEAR(r.segments[2].exec_s, 0.001, 1e-12);
        QCOMPARE(r.segments[3].exec_s, 0.0);
        // The WCET table: mu at v = 40: 8e-7 v^3 - 0.0003 v^2 + 0.0388 v + 1.3195.
        KAIROS_COMPARE_NEAR(r.segments[0].wcet_s, 2.4427, 1e-9);
        KAIROS_COMPARE_NEAR(r.segments[1].wcet_s, 0.001, 1e-9);
        QCOMPARE(r.cls, std::string("normal"));
        KAIROS_COMPARE_NEAR(r.tuf->slope, -2.0, 1e-12);
        QCOMPARE(r.agent, 0);
        int urgent = 0, segments = 0;
        std::set<int> agents;
        for (const auto& q : w.requests) {
            urgent += q.cls == "urgent";
            segments += int(q.segments.size());
            agents.insert(q.agent);
        }
        QCOMPARE(agents.size(), std::size_t(25)); // agent_id 0..24
        QCOMPARE(*agents.begin(), 0);
        QCOMPARE(*agents.rbegin(), 24);
        QCOMPARE(urgent, 108);
        QCOMPARE(segments, 1026); // 731 skills; the code's cut adds the ends ("->False")
    }

    // The stop rule of the authors' server (rtengine/stop_rule.py as read): segments as
    // their fork logged them on trace 3, and each rule of the statement parser.
    void codeSegmentsThePlans() {
        using namespace minispec;
        auto texts = [](const std::string& plan, Robot robot = Robot::Drone) {
            std::vector<std::string> out;
            for (const PlanSegment& s : segmentPlan(plan, robot)) out.push_back(s.text);
            return out;
        };
        using V = std::vector<std::string>;
        QCOMPARE(texts("md(40);?iv('toy')==True{g('toy')}->False;"),
                 (V{"md(40);", "?iv('toy')==True{", "g('toy')}", "->False;"}));
        QCOMPARE(texts("mr(50);mf(50);"), (V{"mr(50);", "mf(50);", ""}));
        // A condition without an action goes on into its block, to the block's first
        // completion at a token's end (");" is one token).
        QCOMPARE(texts("?_1==True{mf(10);}"), (V{"?_1==True{mf(10);", "}"}));
        // A loop: "2{" then the block's first completion.
        QCOMPARE(texts("2{tc(90);}"), (V{"2{tc(90);", "}"}));
        // `)` of a call ends a statement (a token `)` alone), an action must be named.
        QVERIFY(stopsAfter("mf(100)", Robot::Drone));
        QVERIFY(!stopsAfter("->True}", Robot::Drone));
        QVERIFY(!stopsAfter("mf(100", Robot::Drone));
        QCOMPARE(texts("take(apple); move_to(box); drop(apple)", Robot::ArmFltrnn),
                 (V{"take(apple);", " move_to(box);", " drop(apple)"}));
        // Whole words only: "wallet" and "False" hold no `l`; `l('Yes')` does.
        QCOMPARE(executorSkills("?iv('keys')&iv('wallet')->{l('Yes');->True}l('No');->False"), 4);
        QCOMPARE(executorSkills("d(3);mf(50);"), 2);
        KAIROS_COMPARE_NEAR(predictedSeconds("d(3);", Robot::Drone), 3.0, 1e-12);
        KAIROS_COMPARE_NEAR(predictedSeconds("mf(50);", Robot::Drone), 0.0072 * 50 + 1.8144, 1e-9);
        KAIROS_COMPARE_NEAR(predictedSeconds("tc(90);", Robot::Drone), 0.0165 * 90 + 0.784, 1e-9);
        KAIROS_COMPARE_NEAR(predictedSeconds("g('cat')}", Robot::Drone), 2.5, 1e-12);
        KAIROS_COMPARE_NEAR(predictedSeconds("pi(a);", Robot::Arm), 3.0, 1e-12);
        // Token ends: a punctuation run is one token, "?" is its own before letters.
        QCOMPARE(tokenEnds("?iv('toy')==True{"),
                 (std::vector<std::size_t>{1, 3, 5, 8, 12, 16, 17}));
    }

    // The code's vLLM arm adds one task per engine step: three requests arriving together
    // are admitted at 0, 1 and 2 (unit time; without chunked prefill each prefill runs
    // alone), where vLLM alone (fcfs) takes all three in at 0.
    void codeArmsAddOnePerStep() {
        Workload w;
        w.requests = {test::req(0, 4, 3), test::req(0, 4, 3), test::req(0, 4, 3)};
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        lim.max_num_seqs = 8;
        auto s = policy("vllm_code");
        const RunLog log = simulate(w, UnitModel(), *s, lim);
        QCOMPARE(firstEvent(log, 0, Ev::Admit), 0.0);
        QCOMPARE(firstEvent(log, 1, Ev::Admit), 1.0);
        QCOMPARE(firstEvent(log, 2, Ev::Admit), 2.0);
        auto f = policy("fcfs");
        const RunLog all = simulate(w, UnitModel(), *f, lim);
        QCOMPARE(firstEvent(all, 2, Ev::Admit), 0.0);
    }

    // A segment handed to the robot and queued again is not a preemption: R0's plan of three
    // segments (2 + 2 + 2 tokens) is re-queued twice, R1's single segment never; nothing is
    // evicted (1,000 KV tokens). The summary counts them apart, the authors' metric beside.
    void segmentHandBacksAreNotPreemptions() {
        Workload w;
        w.requests = {test::req(0, 4, 6), test::req(0, 4, 3)};
        w.requests[0].segments = {{2, 1.0}, {2, 1.0}, {2, 1.0}};
        w.requests[1].segments = {{3, 1.0}};
        for (int i = 0; i < 2; ++i) {
            w.requests[std::size_t(i)].tuf = Tuf{5, -1, 1};
            w.requests[std::size_t(i)].agent = i;
            w.requests[std::size_t(i)].cls = "normal";
        }
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        auto s = test::policyNoWatermark("timely_code", {{"batch", 2}});
        const RunLog log = simulate(w, UnitModel(), *s, lim);
        const auto m = perRequest(log);
        QCOMPARE(m[0].resubmissions, std::uint16_t(2));
        QCOMPARE(m[0].preemptions, 0);
        QCOMPARE(m[1].resubmissions, std::uint16_t(0));
        SummaryOptions so;
        so.workload = &w;
        const Summary sum = summarize(log, so);
        QCOMPARE(sum.preemptions, std::int64_t(0));
        QCOMPARE(sum.resubmissions, std::int64_t(2));
        QVERIFY(sum.authors.has_value());
        // Two tasks, fewer than the 10 the authors' metric skips: nothing scored.
        QCOMPARE(sum.authors->scored, std::int64_t(0));
        const Summary back = Summary::fromJson(sum.toJson());
        QCOMPARE(back.resubmissions, std::int64_t(2));
        QVERIFY(back.authors.has_value());
        QVERIFY(sum.table().find("Segments re-queued (not preemptions):") != std::string::npos);
    }

    // Load shedding, by hand (a fixed batch of 1): R0 (t=0, 10 tokens) holds the batch to
    // t=10; R1 (t=0.5, TUF ERT 0.2, zero at 0.5 after arrival) is due at 0.7 and its
    // utility is 0 from 1.0: at its dequeue (t=10) it is dropped; with shed=0 it runs.
    void codeShedsWhatCannotScore() {
        Workload w;
        w.requests = {test::req(0, 4, 10), test::req(0.5, 4, 3)};
        w.requests[1].tuf = Tuf{0.2, -1.0 / 0.3, 1.0};
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        auto s = test::policyNoWatermark("timely_code", {{"batch", 1}});
        const RunLog log = simulate(w, UnitModel(), *s, lim);
        const auto m = perRequest(log);
        QCOMPARE(m[0].end, 10.0);
        QVERIFY(m[1].killed);
        QCOMPARE(m[1].kill_cause, KillCause::Shed);
        QCOMPARE(m[1].end, 10.0);
        auto keep = test::policyNoWatermark("timely_code", {{"batch", 1}, {"shed", 0}});
        const auto m2 = perRequest(simulate(w, UnitModel(), *keep, lim));
        QVERIFY(!m2[1].killed);
        QCOMPARE(m2[1].end, 13.0);
    }

    // The authors' metric by hand. Agent 0's robot: R0's first segment (handed at 2, 5 s)
    // runs 2 -> 7; R1's plan (finished at 3, 3 s) waits for it, 7 -> 10; R0's second
    // segment (handed at 4, 1 s) runs 10 -> 11. R0: response 2, utility TUF(2) = -1 (no
    // floor), waiting 2 + (10 - 7) = 5. R1 (urgent, ERT 0.2, zero at 0.5, beta 2):
    // response 6, utility 2 - (2 / 0.3) 5.8 = -36.67, -1833 % of beta. R2 never finished:
    // dropped, not scored.
    void authorsMetricByHand() {
        Workload w;
        w.requests = {test::req(0, 4, 4), test::req(1, 4, 3), test::req(0, 4, 3)};
        w.requests[0].segments = {{2, 5.0}, {2, 1.0}};
        w.requests[0].tuf = Tuf{1, -2, 1};
        w.requests[0].agent = 0;
        w.requests[0].cls = "normal";
        w.requests[1].segments = {{3, 3.0}};
        w.requests[1].tuf = Tuf{0.2, -2.0 / 0.3, 2};
        w.requests[1].agent = 0;
        w.requests[1].cls = "urgent";
        w.requests[2].tuf = Tuf{1, -2, 1};
        w.requests[2].agent = 1;
        w.requests[2].cls = "normal";
        RunLog log;
        log.events = {{2, 0, Ev::Dispatch, 0},
                      {3, 1, Ev::Finish, 0},
                      {4, 0, Ev::Dispatch, 1},
                      {4, 0, Ev::Finish, 0}};
        AuthorsMetricOptions o;
        o.skip_first = 0;
        const AuthorsMetric m = authorsMetric(log, w, o);
        QCOMPARE(m.normal.scored, 1L);
        QCOMPARE(m.normal.dropped, 1L);
        QCOMPARE(m.urgent.scored, 1L);
        KAIROS_COMPARE_NEAR(m.normal.utility_pct, -100.0, 1e-9);
        KAIROS_COMPARE_NEAR(m.normal.response_s, 2.0, 1e-12);
        KAIROS_COMPARE_NEAR(m.normal.waiting_s, 5.0, 1e-12);
        KAIROS_COMPARE_NEAR(m.urgent.response_s, 6.0, 1e-12);
        KAIROS_COMPARE_NEAR(m.urgent.utility_pct, 100.0 * (2 - 2.0 / 0.3 * 5.8) / 2, 1e-9);
        KAIROS_COMPARE_NEAR(m.all.utility_pct, (m.normal.utility_pct + m.urgent.utility_pct) / 2,
                            1e-9);
        // In TUF units (their Fig. 7): -1 and 2 - (2 / 0.3) 5.8; per task over both: their mean.
        KAIROS_COMPARE_NEAR(m.normal.utility, -1.0, 1e-9);
        KAIROS_COMPARE_NEAR(m.urgent.utility, 2 - 2.0 / 0.3 * 5.8, 1e-9);
        KAIROS_COMPARE_NEAR(m.task_utility, (-1.0 + 2 - 2.0 / 0.3 * 5.8) / 2, 1e-9);
        // The paper's simulated network latency (0.5 s here): each segment starts no sooner
        // than that after it was handed over. R0's first runs 2.5 -> 7.5, R1's plan 7.5 ->
        // 10.5, R0's second 10.5 -> 11.5: R0 response 2.5, waiting 2.5 + 3 = 5.5; R1 6.5.
        o.network_s = 0.5;
        const AuthorsMetric late = authorsMetric(log, w, o);
        KAIROS_COMPARE_NEAR(late.normal.response_s, 2.5, 1e-12);
        KAIROS_COMPARE_NEAR(late.normal.waiting_s, 5.5, 1e-12);
        KAIROS_COMPARE_NEAR(late.urgent.response_s, 6.5, 1e-12);
        o.network_s = 0;
        o.skip_first = 1; // R0 and R2 arrive first: R0 (index 0) is skipped
        QCOMPARE(authorsMetric(log, w, o).skipped, 1L);
        QCOMPARE(authorsMetric(log, w, o).normal.scored, 0L);
    }

    // Unit time, one seat. R0 (t=0): two segments of 2 tokens, the robot takes 5 s then
    // 1 s; R1 (t=1): one segment of 3 tokens, TUF ERT 4, slope -1, beta 2.
    //  vllm_stream: R0 runs 0 -> 4 (s_0 dispatched at 2, s_1 with the finish at 4; the
    //   robot is busy to 7, so s_1 waits 0); R1 then runs 4 -> 7: W(s_0) = 6, utility 0.
    //  seg_fcfs and timely: at t=2 R0's s_0 is dispatched and R0 suspended; R1 (ready
    //   since 1) goes first, 2 -> 5: W = 4, utility 2; R0 resumes 5 -> 7, its s_1 is
    //   ready at 7 when the robot becomes free: no wait.
    void segmentsByHand() {
        Workload w;
        Request r0;
        r0.prompt_tokens = 4;
        r0.output_tokens = 4;
        r0.segments = {{2, 5.0}, {2, 1.0}};
        r0.tuf = Tuf{1, -1, 1};
        Request r1;
        r1.arrival = 1;
        r1.prompt_tokens = 4;
        r1.output_tokens = 3;
        r1.segments = {{3, 0.5}};
        r1.tuf = Tuf{4, -1, 2};
        r1.cls = "urgent";
        w.requests = {r0, r1};
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        lim.max_num_seqs = 1;
        SummaryOptions so;
        so.workload = &w;
        {
            auto s = policy("vllm_stream");
            const RunLog log = simulate(w, UnitModel(), *s, lim);
            const auto m = perRequest(log);
            QCOMPARE(m[0].end, 4.0);
            QCOMPARE(m[1].end, 7.0);
            const auto t = robotTasks(log, w);
            QCOMPARE(t.size(), std::size_t(2));
            QCOMPARE(t[0].response, 2.0);
            QCOMPARE(t[0].robot_wait, 0.0);
            QCOMPARE(t[0].completion, 8.0); // robot: 2 -> 7, then 7 -> 8
            QCOMPARE(t[0].utility, 0.0);    // W(s0) = 2: 1 - 1 * (2 - 1)
            QCOMPARE(t[0].segment_utility, 0.0 + 1.0);
            QCOMPARE(t[1].response, 6.0);
            QCOMPARE(t[1].utility, 0.0); // 2 - 1 * (6 - 4)
        }
        // seg_fcfs keeps the initial priority (arrival) for R0's suspended generation
        // (section 7.3.2): R0 resumes at 2 before R1 and ends at 4; R1 runs 4 -> 7.
        {
            auto s = policy("seg_fcfs");
            const RunLog log = simulate(w, UnitModel(), *s, lim);
            const auto m = perRequest(log);
            QCOMPARE(m[0].end, 4.0);
            QCOMPARE(m[1].end, 7.0);
            QCOMPARE(m[0].suspensions, 1);
            QCOMPARE(robotTasks(log, w)[1].response, 6.0);
        }
        for (const char* name : {"timely"}) {
            auto s = policy(name);
            const RunLog log = simulate(w, UnitModel(), *s, lim);
            const auto m = perRequest(log);
            QCOMPARE(m[1].end, 5.0);
            QCOMPARE(m[0].end, 7.0);
            QCOMPARE(m[0].suspensions, 1);
            int dispatches = 0;
            for (const Event& e : log.events) dispatches += e.ev == Ev::Dispatch;
            QCOMPARE(dispatches, 1); // s_0 of R0; the last segments go with the finish
            const auto t = robotTasks(log, w);
            QCOMPARE(t[1].response, 4.0);
            QCOMPARE(t[1].utility, 2.0);
            QCOMPARE(t[0].utility, 0.0); // W(s0) = 2: 1 - 1 * (2 - 1)
            QCOMPARE(t[0].segment_utility, 1.0);
            QCOMPARE(t[0].robot_wait, 0.0);
            QCOMPARE(t[0].completion, 8.0);
            const Summary sum = summarize(log, so);
            QCOMPARE(sum.robot.size(), std::size_t(3)); // all, default, urgent
            QCOMPARE(sum.robot[0].utility, 2.0);
            QCOMPARE(sum.robot[0].max_utility, 3.0);
            QCOMPARE(sum.robot[0].segment_utility, 3.0);
            QCOMPARE(sum.robot[0].segment_max_utility, 4.0);
        }
    }

    // WID-like generators: structure, and the task count of a Poisson process of events
    // each releasing U{1..8} tasks: 0.25/s * 260 s * 4.5 = 292.5 tasks on average (over 12
    // seeds the mean is within 8 %: sd of one run is about sqrt(65 * (4.5^2 + 5.25)) = 40).
    void widGenerators() {
        const auto traces =
            readRobotTraces(test::dataPath("timelyllm/timelyllm_drone_trace_set_extracted.json"));
        QCOMPARE(traces.size(), std::size_t(8));
        double total = 0;
        for (std::uint64_t seed = 1; seed <= 12; ++seed) {
            RobotWorkloadSpec spec = RobotWorkloadSpec::preset_("wid1");
            spec.seed = seed;
            spec.agent_rule = RobotWorkloadSpec::Agents::Paper;
            const Workload w = generateRobotWorkload(spec, traces);
            total += double(w.size());
            for (std::size_t i = 0; i < w.size(); ++i) {
                const Request& r = w.requests[i];
                QVERIFY(r.arrival >= 0 && r.arrival < 260 + 0.01);
                QVERIFY(r.tuf.has_value());
                QVERIFY(r.cls == "normal" || r.cls == "urgent");
                int sum = 0;
                for (const auto& sg : r.segments) sum += sg.tokens;
                QCOMPARE(sum, r.output_tokens);
                // Tasks of one event come 1 ms apart from distinct agents.
                QVERIFY(r.agent >= 0 && r.agent < spec.agents);
                QCOMPARE(std::int64_t(r.agent), r.id / 100000);
                if (i > 0 && r.arrival - w.requests[i - 1].arrival < 0.0015)
                    QVERIFY(r.agent != w.requests[i - 1].agent);
            }
        }
        KAIROS_COMPARE_NEAR(total / 12, 292.5, 0.08 * 292.5);
        // The authors' generator's agents (the default): each agent's next task at least its
        // last task's arrival + plan time + execution + 1 s later, a new agent only when
        // every one is busy.
        for (const char* preset : {"wid1", "wid2", "wid3"}) {
            RobotWorkloadSpec spec = RobotWorkloadSpec::preset_(preset);
            spec.seed = 3;
            QVERIFY(spec.agent_rule == RobotWorkloadSpec::Agents::Code);
            const Workload w = generateRobotWorkload(
                spec, std::string(preset) == "wid3" ? std::vector<RobotTrace>{} : traces);
            std::map<int, double> free_at;
            for (const Request& r : w.requests) {
                double exec = 0;
                for (const auto& sg : r.segments) exec += sg.exec_s;
                const auto f = free_at.find(r.agent);
                if (f != free_at.end()) {
                    QVERIFY(r.arrival >= f->second);
                } else { // a new agent: every earlier one was busy
                    QCOMPARE(r.agent, int(free_at.size()));
                    for (const auto& [agent, at] : free_at) QVERIFY2(at > r.arrival, preset);
                }
                free_at[r.agent] = r.arrival + exec + spec.plan_time_s + 1.0;
            }
        }
        // The timer's plan times are the authors' measured means.
        {
            std::ifstream csv(test::dataPath("timelyllm/timelyllm_plan_times.csv"));
            std::string line;
            std::map<std::string, std::pair<double, int>> mean;
            while (std::getline(csv, line)) {
                const auto a = line.find(','), b = line.rfind(',');
                if (a == std::string::npos || line.rfind("system", 0) == 0) continue;
                const std::string sys = line.substr(0, a);
                const int index = std::stoi(line.substr(a + 1, b - a - 1));
                if (sys == "drone_typefly" && index >= int(traces.size())) continue;
                mean[sys].first += std::stod(line.substr(b + 1));
                ++mean[sys].second;
            }
            KAIROS_COMPARE_NEAR(RobotWorkloadSpec::preset_("wid1").plan_time_s,
                                mean["drone_typefly"].first / mean["drone_typefly"].second, 1e-5);
            KAIROS_COMPARE_NEAR(RobotWorkloadSpec::preset_("wid3").plan_time_s,
                                mean["robotarm_fltrnn"].first / mean["robotarm_fltrnn"].second,
                                1e-4);
        }
        // The generator's system prompt is the counted one; the paper's section 7.1 gives the
        // arm's tasks (trace ids 9-11) the normal TUF.
        QCOMPARE(RobotWorkloadSpec{}.system_prompt_tokens, llama3::typeflySystemPromptTokens());
        QCOMPARE(llama3::countedTokens("?s('cat')==True{g('cat')}->False"), 12);
        QCOMPARE(llama3::countedTokens("not in the trace set"), -1);
        QCOMPARE(llama3::tokensOf("not in the trace set", 4.0), 5); // ceil(20 / 4)
        RobotWorkloadSpec arm = RobotWorkloadSpec::preset_("wid3");
        const Workload a = generateRobotWorkload(arm, {});
        QVERIFY(!a.requests.empty());
        for (const auto& r : a.requests) {
            QCOMPARE(r.cls, std::string("normal"));
            KAIROS_COMPARE_NEAR(r.tuf->slope, -2.0, 1e-12);
            QVERIFY(r.segments.size() >= 8 && r.segments.size() <= 16);
            for (const auto& sg : r.segments) QVERIFY(sg.exec_s >= 1 && sg.exec_s <= 4.2);
            QVERIFY(r.output_tokens >= 48 && r.output_tokens <= 106);
        }
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, RobotWorkloadSpec::preset_("wid9"));
        // Reading time: 0.75 words per token at 300 words per minute.
        Workload chat;
        chat.requests = {test::req(0, 10, 400)};
        addReadingTime(chat, 300);
        KAIROS_COMPARE_NEAR(chat.requests[0].segments[0].exec_s, 400 * 0.75 / 300 * 60, 1e-12);
    }

    // Kairos's utility-gain admission (gain_admission=1) by hand. Prefill 1 ms per token, decode 10
    // ms per step. A normal task (ERT 1 s) and an urgent one (ERT 0.2 s) arrive together, 100-token
    // prompts, first segments of 5 tokens. Alone, the urgent segment ends at 0.1 + 4 * 0.01
    // = 0.14 <= 0.2 (utility 2); prefilled with the normal one at 0.2 + 0.04 = 0.24
    // (utility 2 - 6.67 * 0.04 = 1.73). The normal one gains nothing by starting now (it
    // ends by 0.38 either way, before its ERT of 1 s), so timely (PUD ranks the urgent
    // first) admits the urgent one alone and the normal one after the urgent segment is
    // dispatched at 0.14. fcfs prefills both at once: the urgent first token comes at 0.2.
    void guidedAdmissionByHand() {
        Workload w;
        for (int i = 0; i < 2; ++i) {
            Request q = test::req(0, 100, 10);
            q.segments = {{5, 1.0}, {5, 1.0}};
            q.cls = i ? "urgent" : "normal";
            q.tuf = i ? Tuf{0.2, -2.0 / 0.3, 2} : Tuf{1, -2, 1};
            w.requests.push_back(q);
        }
        EteModel model(EteParams{0, 1e-3, 0, 0.01, 0, 0});
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        auto t = test::policyNoWatermark("timely", {{"gain_admission", 1}});
        const RunLog log = simulate(w, model, *t, lim);
        KAIROS_COMPARE_NEAR(firstEvent(log, 1, Ev::FirstToken), 0.1, 1e-12);
        KAIROS_COMPARE_NEAR(firstEvent(log, 1, Ev::Dispatch), 0.14, 1e-12);
        QVERIFY(firstEvent(log, 0, Ev::Admit) >= 0.14 - 1e-12);
        auto f = policy("fcfs");
        const RunLog lf = simulate(w, model, *f, lim);
        KAIROS_COMPARE_NEAR(firstEvent(lf, 1, Ev::FirstToken), 0.2, 1e-12);
    }

    // The paper's WCET batching (section 4.4) by hand. Prefill 1 ms per token, decode 10 ms
    // per step; an urgent task U (ERT 0.15 s) and a normal one N (ERT 2 s) arrive at 0 with
    // 100-token prompts, first segments of 5 tokens; max segment 10. PUD ranks U first; an empty
    // batch takes one generation, so U is prefilled alone: first token at 0.1. At 0.1 U's
    // rate is 0.1 s per token (its prefill), WCET = 9 x 0.1 s: N is refused; from 0.11 on
    // U runs at 0.01 s per token and WCET = (10 - generated) x 0.01 ends at 0.19 > 0.15:
    // still refused (admitting N, whose prefill takes 0.1 s, would make U miss). U's
    // segment is dispatched at 0.14 <= 0.15 and suspended; the batch is empty and U's next
    // segment ranks first (PUD 2 / (0.09 x 0.91) against N's 1 / (0.09 x 1.77); by arrival
    // and by deadline too), so it resumes alone; at 0.15 its WCET (due when the robot ends
    // s_0, at 1.14) allows N, which joins. With a loose ERT (1.05 s) N joins at the first decision
    // after U's prefill: 0.1 + 0.9 <= 1.05. With a fixed batch both are prefilled together: U's
    // first token at 0.2.
    void wcetBatchingByHand() {
        auto make = [](double urgent_ert) {
            Workload w;
            for (int i = 0; i < 2; ++i) {
                Request q = test::req(0, 100, 10);
                q.segments = {{5, 1.0}, {5, 1.0}};
                q.cls = i ? "normal" : "urgent";
                q.tuf = i ? Tuf{2, -2, 1} : Tuf{urgent_ert, -2.0 / 0.3, 2};
                w.requests.push_back(q);
            }
            return w;
        };
        EteModel model(EteParams{0, 1e-3, 0, 0.01, 0, 0});
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        for (const char* name : {"timely", "seg_edf", "seg_fcfs"}) {
            const Workload tight = make(0.15);
            auto t = policy(name);
            const RunLog log = simulate(tight, model, *t, lim);
            QCOMPARE(firstEvent(log, 0, Ev::Admit), 0.0);
            KAIROS_COMPARE_NEAR(firstEvent(log, 0, Ev::FirstToken), 0.1, 1e-12);
            KAIROS_COMPARE_NEAR(firstEvent(log, 0, Ev::Dispatch), 0.14, 1e-12);
            KAIROS_COMPARE_NEAR(firstEvent(log, 1, Ev::Admit), 0.15, 1e-12);
            QCOMPARE(robotTasks(log, tight)[0].utility, 2.0); // in time
            const Workload loose = make(1.05);
            auto t2 = policy(name);
            const RunLog l2 = simulate(loose, model, *t2, lim);
            KAIROS_COMPARE_NEAR(firstEvent(l2, 1, Ev::Admit), 0.1, 1e-12);
        }
        const Workload tight = make(0.15);
        auto fixed = test::policyNoWatermark("timely", {{"adaptive_batch", 0}});
        const RunLog lf = simulate(tight, model, *fixed, lim);
        KAIROS_COMPARE_NEAR(firstEvent(lf, 0, Ev::FirstToken), 0.2, 1e-12);
        QVERIFY(robotTasks(lf, tight)[0].utility < 2.0);
    }

    // seg_edf orders by deadline wherever a queue forms; seg_fcfs by arrival. One seat,
    // unit model: R0 runs 0 -> 3; N (t = 0.5, ERT 10) and U (t = 1, ERT 3) queue behind it.
    // seg_fcfs serves N at 3 -> 6, then U 6 -> 9; seg_edf serves U (due 4) at 3 -> 6 first.
    void edfOrdersByDeadlineWhenAQueueForms() {
        const Workload w = threeRequests(0.5, 1, Tuf{1, -1, 1}, Tuf{10, -1, 1}, Tuf{3, -1, 2});
        const EngineLimits lim = oneSeat();
        auto fc = policy("seg_fcfs");
        const auto mf = perRequest(simulate(w, UnitModel(), *fc, lim));
        QCOMPARE(mf[1].end, 6.0);
        QCOMPARE(mf[2].end, 9.0);
        auto ed = policy("seg_edf");
        const auto me = perRequest(simulate(w, UnitModel(), *ed, lim));
        QCOMPARE(me[2].end, 6.0);
        QCOMPARE(me[1].end, 9.0);
    }

    // A late segment whose TUF is still positive (B: due at 1.1, still waiting at 3) against
    // an on-time one (C: due at 10.2), one seat. Kairos's PUD (L at least 1 ms) serves B
    // first; Eq. 4 as written (literal_eq4=1: L = 1.1 - 3.09 < 0, a negative priority)
    // serves C first. Unit model: each 3-token request takes 3 s.
    void lateSegmentsByHand() {
        const Workload w =
            threeRequests(0.1, 0.2, Tuf{100, -0.1, 1}, Tuf{1, -0.1, 1}, Tuf{10, -0.1, 1});
        const EngineLimits lim = oneSeat();
        for (const bool literal : {false, true}) {
            auto p = test::policyNoWatermark(
                "timely", {{"adaptive_batch", 0}, {"literal_eq4", literal ? 1 : 0}});
            const auto m = perRequest(simulate(w, UnitModel(), *p, lim));
            QCOMPARE(m[0].end, 3.0);
            QCOMPARE(m[literal ? 2 : 1].end, 6.0);
            QCOMPARE(m[literal ? 1 : 2].end, 9.0);
        }
    }

    // TimelyLLM's derived RTX 4090 profile against the authors' measurements: the mean of
    // the 8 drone plan times matched to the trace set, by hand (0.295053 + 0.241694 +
    // 0.454337 + 0.332765 + 0.349534 + 0.29676 + 0.168722 + 0.168722) / 8 = 0.28844838 s,
    // is what the profile predicts on average; its prefill is one pass over the weights
    // (a decode step at batch 1 without KV) plus a per-token cost that meets the paper's
    // 133.31 ms for 1,300 tokens.
    void derivedRtx4090MeetsTheAuthorsTimes() {
        repro::Options opt;
        opt.data_dir = test::dataPath("");
        const DeviceProfile p = repro::llama3_8bRtx4090(opt);
        const repro::PlanTimes t = repro::planTimes(opt, p);
        QCOMPARE(t.plans, 8);
        KAIROS_COMPARE_NEAR(t.measured_mean, 2.307587 / 8, 1e-9);
        KAIROS_COMPARE_NEAR(t.predicted_mean, t.measured_mean, 1e-9);
        const EteModel ete(p.ete);
        KAIROS_COMPARE_NEAR(ete.prefillTime(1300, 1300.0 * 1300), 0.13331, 1e-12);
        KAIROS_COMPARE_NEAR(p.ete.a, p.ete.q0 + p.ete.q1, 1e-15);
        QVERIFY(p.ete.b > 0 && p.ete.a > 0.016); // at least 16 GB over 1.0 TB/s
    }

    // The shipped profiles of the papers' own machines are what `kairos-cli derive-profile`
    // derives from the data today, to the last bit: a change to the derivation (or to the
    // data) that leaves resources/profiles behind fails here.
    void shippedDerivedProfilesAreTheDerivation() {
        repro::Options opt;
        opt.data_dir = test::dataPath("");
        const std::pair<const char*, DeviceProfile> cases[] = {
            {"llama3-8b-rtx4090", repro::llama3_8bRtx4090(opt)},
            {"llama3-8b-a100", repro::llama3_8bA100(opt)},
            {"llama3-8b-h100", repro::llama3_8bH100(opt)}};
        for (const auto& [name, derived] : cases) {
            const DeviceProfile shipped = DeviceProfile::load(
                std::string(KAIROS_SOURCE_DIR) + "/resources/profiles/" + name + ".json");
            QCOMPARE(QString::fromStdString(shipped.name), QString(name));
            const double got[] = {shipped.ete.a,  shipped.ete.b,  shipped.ete.c,
                                  shipped.ete.q0, shipped.ete.q1, shipped.ete.p};
            const double want[] = {derived.ete.a,  derived.ete.b,  derived.ete.c,
                                   derived.ete.q0, derived.ete.q1, derived.ete.p};
            for (int i = 0; i < 6; ++i)
                QVERIFY2(got[i] == want[i], qPrintable(QStringLiteral("%1: coefficient %2 is %3, "
                                                                      "derived %4")
                                                           .arg(name)
                                                           .arg(i)
                                                           .arg(got[i], 0, 'g', 17)
                                                           .arg(want[i], 0, 'g', 17)));
            QCOMPARE(shipped.kvCapacityTokens(), derived.kvCapacityTokens());
            QCOMPARE(QString::fromStdString(shipped.model.name),
                     QString::fromStdString(derived.model.name));
            QVERIFY(shipped.provenance.find("derived, not measured") != std::string::npos);
        }
    }

    // Every segmented policy finishes the authors' workload, keeps KV within capacity and
    // dispatches every segment exactly once.
    void authorsWorkloadRuns() {
        const Workload w =
            readWorkload(test::dataPath("timelyllm/timelyllm_workload_25agents.json"));
        EteModel model(EteParams{0.02, 1e-4, 0, 0.02, 2e-4, 1e-7});
        EngineLimits lim;
        lim.kv_capacity_tokens = 40000;
        for (const char* name : {"timely", "seg_fcfs", "seg_edf", "vllm_stream", "fcfs"}) {
            auto s = policy(name);
            const RunLog log = simulate(w, model, *s, lim);
            const auto tasks = robotTasks(log, w);
            QCOMPARE(tasks.size(), std::size_t(295));
            for (const auto& t : tasks) {
                QCOMPARE(t.dispatched, t.segments);
                QVERIFY(t.utility <= t.max_utility + 1e-12); // negative when late
                QVERIFY(t.segment_utility >= 0 &&
                        t.segment_utility <= t.segment_max_utility + 1e-12);
                QVERIFY(t.completion >= t.response);
            }
            SummaryOptions so;
            so.workload = &w;
            const Summary sum = summarize(log, so);
            QCOMPARE(sum.completed, std::int64_t(295));
            QVERIFY(sum.kv_peak_tokens <= 40000);
        }
    }
};

QTEST_GUILESS_MAIN(TestTimely)
#include "tst_timely.moc"
