// Statistics with numpy's definitions, weighted samples, goodput parsing, percentile keys.
#include "exec/execution_model.h"
#include "lod/timeline.h"
#include "metrics/compare.h"
#include "metrics/load.h"
#include "metrics/metric_table.h"
#include "metrics/range_summary.h"
#include "metrics/request_filter.h"
#include "metrics/robot_metrics.h"
#include "metrics/stats.h"
#include "metrics/summary.h"
#include "run/pipeline.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "test_util.h"
#include "util/text.h"
#include "workload/generators.h"
#include "workload/random.h"
#include "workload/robot_generator.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace kairos;

namespace {
// The workloads of the property tests over every policy: for an odd seed the chat trace
// `chat` (its arrivals drawn with the seed) with time budgets, so that TimeBill kills some;
// for an even seed TimelyLLM's wid3 robot workload of `robot_s` seconds (plans, TUFs).
Workload chatOrRobot(std::uint64_t seed, GenerateSpec chat, double robot_s) {
    if (seed % 2) {
        chat.arrivals.seed = seed;
        Workload w = generateWorkload(chat);
        for (auto& r : w.requests) r.budget_s = 0.5 + 0.01 * double(r.id % 50);
        return w;
    }
    RobotWorkloadSpec spec = RobotWorkloadSpec::preset_("wid3");
    spec.seed = seed;
    spec.agents = std::max(6, spec.max_tasks_per_event);
    spec.duration_s = robot_s;
    return generateRobotWorkload(spec, {});
}

// A run log by hand: per request (arrival, first token, end, output tokens, how it ended).
struct R {
    double arrival, first, end;
    int output;
    enum { Finished, Killed, KilledUnstarted } how;
};
RunLog logOf(const std::vector<R>& rs) {
    RunLog log;
    log.workload = "hand";
    log.num_requests = static_cast<std::int32_t>(rs.size());
    for (std::size_t i = 0; i < rs.size(); ++i) {
        const auto id = static_cast<ReqId>(i);
        const R& r = rs[i];
        log.events.push_back({r.arrival, id, Ev::Arrive, 10});
        if (r.how != R::KilledUnstarted) {
            log.events.push_back({r.arrival, id, Ev::PrefillStart, 10});
            log.events.push_back({r.first, id, Ev::PrefillEnd, 1});
            log.events.push_back({r.first, id, Ev::FirstToken, 1});
        }
        if (r.how == R::Finished) {
            log.events.push_back({r.end, id, Ev::Finish, r.output});
        } else {
            log.events.push_back(
                {r.end, id, Ev::KillCause,
                 static_cast<std::int32_t>(r.how == R::Killed ? KillCause::Deadline
                                                              : KillCause::NeverFits)});
            log.events.push_back({r.end, id, Ev::Kill, r.how == R::Killed ? 1 : 0});
        }
    }
    return log;
}
} // namespace

class TestMetrics : public QObject {
    Q_OBJECT
private slots:
    // A ruler selection summarised by hand. Four requests (prefill from arrival to first
    // token, decode to the end): R0 0-1-4 finished, R1 0.5-2-6 finished, R2 5-5.5-7
    // killed, R3 8-9-10 finished; the window [3, 6). In it: R0 and R1 decode, R2 prefills
    // and decodes (3 in the system; prefill 1, decode 3); R2 arrives; R0 finishes (R1 at
    // 6, the window's open end, does not); nothing is killed (R2 at 7). KV steps (0: 0,
    // 1: 100, 3.5: 300, 5: 50, 6: 500): 100 at 3, then 300 and 50, so 50 to 300. Reasons
    // at 2.9 (out), 3 and 5.9 (in): 2 decisions.
    // One metric table: unique names, today's names for the old ones, and the summary's JSON
    // writing every metric under the table's name with the table's value.
    void metricTableIsTheOneNameOfEachMetric() {
        const auto table = metricTable({50, 90, 99});
        std::set<std::string> keys;
        for (const MetricDef& d : table) {
            QVERIFY2(keys.insert(d.key).second, d.key.c_str());
            QVERIFY2(!d.display.empty() && !d.description.empty() && d.value, d.key.c_str());
        }
        for (const MetricDef& d : tabulatedMetrics({50, 90, 99}))
            QVERIFY2(keys.count(d.key), d.key.c_str());
        QCOMPARE(canonicalMetricKey("ttft_mean_ms"), std::string("mean_ttft_ms"));
        QCOMPARE(canonicalMetricKey("e2el_p99_ms"), std::string("p99_e2el_ms"));
        QCOMPARE(canonicalMetricKey("queue_p99.9_ms"), std::string("p99.9_queue_ms"));
        QCOMPARE(canonicalMetricKey("tpot_median_ms"), std::string("median_tpot_ms"));
        QCOMPARE(canonicalMetricKey("mean_ttft_ms"), std::string("mean_ttft_ms"));
        QCOMPARE(canonicalMetricKey("completed"), std::string("completed"));
        QCOMPARE(findMetric(table, "ttft_p90_ms")->key, std::string("p90_ttft_ms"));
        QVERIFY(!findMetric(table, "ttft_p_ms"));
        QCOMPARE(findMetric(table, "p99_ttft_ms")->label(), std::string("P99 TTFT (ms)"));
        QVERIFY(findMetric(table, "mean_e2el_ms")->vllm && !findMetric(table, "killed")->vllm);

        // A summary whose every figure differs from the others.
        Summary s;
        s.num_requests = 40;
        s.completed = 31;
        s.killed = 9;
        s.request_throughput = 1.5;
        s.output_throughput = 210.25;
        s.total_token_throughput = 900.5;
        s.load.offered_rate = 2.5;
        s.request_goodput = 1.25;
        s.good_requests = 20;
        s.percentiles = {50, 90, 99};
        double base = 10;
        for (Stats* st : {&s.ttft_ms, &s.tpot_ms, &s.itl_ms, &s.e2el_ms, &s.queue_ms}) {
            st->count = 31;
            st->mean = base + 1;
            st->median = base + 2;
            st->std = base + 3;
            st->percentiles = {{50, base + 4}, {90, base + 5}, {99, base + 6}};
            base += 100;
        }
        s.kv_peak_tokens = 5000;
        s.kv_capacity_tokens = 9000;
        s.preemptions = 7;
        s.suspensions = 3;
        s.budget_requests = 12;
        s.completion_rate = 0.75;
        s.mean_alpha = 0.125;
        s.mean_quality = 0.625;
        s.prefix_caching = true;
        s.prefix_cache_hit_rate = 0.375;
        s.prefix_recompute_cached_tokens = 640;
        const nlohmann::json j = s.toJson();
        // Derived by the table alone (no key of the summary's JSON holds them).
        const std::set<std::string> derived = {"goodput_fraction", "slo_attainment", "utility_pct"};
        for (const MetricDef& d : table) {
            if (derived.count(d.key)) continue;
            QVERIFY2(j.contains(d.key) && j[d.key].is_number(), d.key.c_str());
            QVERIFY2(j[d.key].get<double>() == d.value(s), d.key.c_str());
        }
        QCOMPARE(findMetric(table, "goodput_fraction")->value(s), 0.5);
        QCOMPARE(findMetric(table, "slo_attainment")->value(s), 0.5);
        QCOMPARE(findMetric(table, "p90_itl_ms")->value(s), 215.0);
        QVERIFY(std::isnan(findMetric(table, "utility_pct")->value(s)));
        // What a sweep tabulates is the same numbers under the same names.
        for (const auto& [name, v] : summaryMetrics(s))
            if (!derived.count(name)) QVERIFY2(j[name].get<double>() == v, name.c_str());
    }

    void rangeSummaryByHand() {
        RunLog log = logOf({{0, 1, 4, 5, R::Finished},
                            {0.5, 2, 6, 5, R::Finished},
                            {5, 5.5, 7, 2, R::Killed},
                            {8, 9, 10, 3, R::Finished}});
        for (const double t : {2.9, 3.0, 5.9}) {
            Reason r;
            r.t = t;
            r.rule = t < 5 ? RuleId::CannotGrow : RuleId::EngineOverflow;
            log.explain.reasons.push_back(r);
        }
        const auto rows = lod::buildRows(log, nullptr);
        const auto m = perRequest(log);
        const std::vector<std::pair<double, double>> kv{
            {0, 0}, {1, 100}, {3.5, 300}, {5, 50}, {6, 500}};
        const RangeSummary s = summarizeRange(log, rows, m, kv, 3, 6);
        QCOMPARE(s.active, 3L);
        QCOMPARE(s.in_phase[0], 0L); // queued
        QCOMPARE(s.in_phase[1], 1L); // prefill
        QCOMPARE(s.in_phase[2], 3L); // decode
        QCOMPARE(s.arrived, 1L);
        QCOMPARE(s.finished, 1L);
        QCOMPARE(s.killed, 0L);
        QCOMPARE(s.kv_min, 50.0);
        QCOMPARE(s.kv_max, 300.0);
        QCOMPARE(s.decisions, 2L);
        QCOMPARE(s.by_rule.size(), std::size_t(2));
        QCOMPARE(s.ttft.count, std::int64_t(1));
        QCOMPARE(s.ttft.percentile(50), 1.0);
        QCOMPARE(s.e2el.percentile(99), 4.0);
        const std::string text = rangeSummaryText(s);
        QVERIFY2(text.rfind("3.00 s to 6.00 s (3.00 s): 3 requests in the system (1 prefill, "
                            "3 decoding); 1 arrived, 1 finished, 0 killed\nKV in use 50 to 300 "
                            "tokens; 2 decisions",
                            0) == 0,
                 text.c_str());
        // The strip's one line, and the details table: every figure in its group, both
        // rules (the by-count order, ties by code), percentiles of the one finished.
        QCOMPARE(rangeSummaryLine(s), std::string("3.00 s to 6.00 s (3.00 s): 3 requests, 1 "
                                                  "arrived, 1 finished, 0 killed; KV 50 to "
                                                  "300 tokens; 2 decisions"));
        std::string table;
        for (const RangeDetail& d : rangeSummaryDetails(s))
            table += d.group + "|" + d.name + "|" + d.value + "\n";
        QCOMPARE(table, std::string("window|from|3.00 s\nwindow|to|6.00 s\nwindow|length|3.00 s\n"
                                    "requests in the system|any phase|3\n"
                                    "requests in the system|prefill|1\n"
                                    "requests in the system|decoding|3\n"
                                    "requests|arrived|1\nrequests|finished|1\n"
                                    "requests|killed|0\nKV in use|lowest|50 tokens\n"
                                    "KV in use|highest|300 tokens\n"
                                    "decisions by rule|all|2\n"
                                    "decisions by rule|cannot_grow|1\n"
                                    "decisions by rule|overflow.latest|1\n"
                                    "finished here|TTFT p50|1.00 s\n"
                                    "finished here|TTFT p90|1.00 s\n"
                                    "finished here|TTFT p99|1.00 s\n"
                                    "finished here|end-to-end p50|4.00 s\n"
                                    "finished here|end-to-end p90|4.00 s\n"
                                    "finished here|end-to-end p99|4.00 s\n"));
        // The whole run: R1 and R3 finish too; R2 is killed.
        const RangeSummary all = summarizeRange(log, rows, m, kv, 0, 11);
        QCOMPARE(all.active, 4L);
        QCOMPARE(all.finished, 3L);
        QCOMPARE(all.killed, 1L);
        QCOMPARE(all.ttft.percentile(50), 1.0); // TTFTs 1, 1.5, 1
        QCOMPARE(all.kv_max, 500.0);
        QCOMPARE(all.decisions, 3L);
    }

    // Two runs alike in every metric say so, and why that nearly always is (nobody waited
    // long enough to be reordered): report --compare printed a table of '=' alone.
    // Two runs of one setting say that instead (a run pinned, k moved and undone).
    // Seeds that gave the same value: no spread at all, not the rounding of sum / n (0.1
    // three times summed is 0.30000000000000004, and its "interval" was 1e-17 wide). By hand:
    // {1, 2, 3} has mean 2, s = 1, half-width t(2) * 1 / sqrt(3) = 4.303 / 1.7320508.
    void intervalOfEqualValuesIsZero() {
        const auto [m, h] = meanInterval95({0.1, 0.1, 0.1});
        QCOMPARE(m, 0.1);
        QCOMPARE(h, 0.0);
        const auto [m2, h2] = meanInterval95({1.2345e5, 1.2345e5, NAN, 1.2345e5});
        QCOMPARE(m2, 1.2345e5);
        QCOMPARE(h2, 0.0);
        const auto [m3, h3] = meanInterval95({1, 2, 3});
        QCOMPARE(m3, 2.0);
        QVERIFY(std::abs(h3 - 4.303 / std::sqrt(3.0)) < 1e-12);
    }

    void identicalRunsSaySo() {
        Summary a;
        a.num_requests = a.completed = 4;
        a.ttft_ms.count = 4; // a statistic of no request is none (NaN), whatever its mean
        a.ttft_ms.mean = 120;
        a.load.max_queue = 3;
        a.policy = "sjf";
        Summary other = a;
        other.policy = "fcfs";
        const Comparison alike = compare({&a}, {&other});
        QVERIFY2(alike.note.rfind("every metric is the same", 0) == 0, alike.note.c_str());
        QVERIFY(alike.note.find("at most 3 waited") != std::string::npos);
        const Comparison same = compare({&a}, {&a});
        QCOMPARE(same.note, std::string("every metric is the same: both runs have the same "
                                        "settings (sjf), and a simulation run twice is the "
                                        "same run"));
        Summary b = a;
        b.ttft_ms.mean = 130;
        QVERIFY(compare({&a}, {&b}).note.empty());
    }

    // Durations for people: the largest unit it is at least 1 of, three significant digits.
    void durationsForPeople() {
        const std::vector<std::pair<double, const char*>> cases{
            {0, "0 s"},          {850e-6, "850 µs"},   {0.0123, "12.3 ms"}, {0.09996, "100 ms"},
            {0.99996, "1.00 s"}, {1.5, "1.50 s"},      {59.99, "1.00 min"}, {135, "2.25 min"},
            {6216.99, "1.73 h"}, {-0.25, "-250 ms"},   {2e-9, "0.00 µs"},   {NAN, "–"},
            {INFINITY, "–"},     {3600 * 100, "100 h"}};
        for (const auto& [v, want] : cases)
            QCOMPARE(QString::fromStdString(text::duration(v)), QString::fromUtf8(want));
        // Axis ticks: a round number of the largest unit it is one of exactly (a log
        // axis's 100 s read "1.67 min"), else three digits of the largest unit.
        const std::vector<std::pair<double, const char*>> ticks{
            {0.01, "10 ms"},     {0.1, "100 ms"},  {1, "1 s"},       {10, "10 s"},
            {100, "100 s"},      {1000, "1000 s"}, {1e4, "10000 s"}, {600, "10 min"},
            {7200, "2 h"},       {5400, "1.5 h"},  {2.5, "2.5 s"},   {0.0005, "500 µs"},
            {1.0 / 3, "333 ms"}, {0, "0"}};
        for (const auto& [v, want] : ticks)
            QCOMPARE(QString::fromStdString(text::durationTick(v)), QString::fromUtf8(want));
    }

    // numpy: np.mean([1,2,3,4]) = 2.5, np.std = sqrt(1.25) = 1.1180339887,
    // np.percentile(x, 90) = 3 + 0.7*(4-3) = 3.7, np.percentile(x, 99) = 3.97.
    // The request filter (the workbench's search) on runs of every registered policy over
    // chat and robot workloads with random SLOs: a term and its negation split the
    // requests; two terms give the intersection of each; thresholds nest; the counts agree
    // with the summary (killed, good requests) and the run log (preempted); a class term
    // finds the workload's class. Bad terms are errors naming the term.
    void requestFilter() {
        auto ids = [](const RequestFilter& f, const std::vector<RequestMetrics>& m,
                      const Workload& w, const std::vector<lod::Row>& rows, const GoodputSlo& g) {
            const auto v = f.apply(m, &w, &rows, g);
            return std::set<ReqId>(v.begin(), v.end());
        };
        int runs = 0;
        for (std::uint64_t seed = 1; seed <= 3; ++seed)
            for (const PolicySpec& ps : policySpecs()) {
                if (!ps.general) continue;
                GenerateSpec g;
                g.count = 120;
                g.arrivals.rate = 4.0 * double(seed);
                g.prompt = LengthDist::parse("lognormal:200,1.0,max=2000");
                g.output = LengthDist::parse("lognormal:80,1.0,max=800");
                const Workload w = chatOrRobot(seed, g, 20);
                EngineLimits lim;
                lim.kv_capacity_tokens = 6000;
                lim.max_num_seqs = 8;
                std::unique_ptr<Scheduler> sched;
                try {
                    sched = test::policy(ps.name);
                } catch (const std::exception& e) {
                    QFAIL((ps.name + ": " + e.what()).c_str());
                }
                const auto model = EteModel(EteParams{0.01, 1e-4, 0, 0.02, 1e-4, 1e-7});
                RunLog log;
                try {
                    log = simulate(w, model, *sched, lim);
                } catch (const std::exception& e) {
                    QFAIL((ps.name + " seed " + std::to_string(seed) + ": " + e.what()).c_str());
                }
                const auto m = perRequest(log);
                const auto rows = lod::buildRows(log, &w);
                SummaryOptions so;
                so.goodput.ttft_ms = 200.0 * double(seed);
                so.goodput.tpot_ms = 60;
                so.workload = &w;
                const Summary sum = summarize(log, m, so);
                const std::string where = ps.name + " seed " + std::to_string(seed);
                std::set<ReqId> all;
                for (const auto& r : m) all.insert(r.id);
                const std::vector<std::string> terms = {
                    "killed",    "finished",     "unfinished",
                    "preempted", "suspended",    "slo",
                    "ttft>300",  "ttft<=300",    "e2el>=2000",
                    "tpot>40",   "queue>50",     "prompt>300",
                    "output<20", "phase=queued", "phase=preempted",
                    "agent=1",   "class=urgent", "id=5",
                    "7"};
                for (const std::string& t : terms) {
                    const auto in = ids(RequestFilter::parse(t), m, w, rows, so.goodput);
                    const auto out = ids(RequestFilter::parse("!" + t), m, w, rows, so.goodput);
                    std::set<ReqId> both;
                    std::set_union(in.begin(), in.end(), out.begin(), out.end(),
                                   std::inserter(both, both.end()));
                    QVERIFY2(both == all && in.size() + out.size() == all.size(),
                             (where + ": " + t).c_str());
                }
                for (const char* a : {"killed", "preempted", "ttft>300", "slo"})
                    for (const char* b : {"prompt>300", "finished", "phase=queued"}) {
                        const auto x = ids(RequestFilter::parse(a), m, w, rows, so.goodput),
                                   y = ids(RequestFilter::parse(b), m, w, rows, so.goodput),
                                   xy = ids(RequestFilter::parse(std::string(a) + "  " + b), m, w,
                                            rows, so.goodput);
                        std::set<ReqId> both;
                        std::set_intersection(x.begin(), x.end(), y.begin(), y.end(),
                                              std::inserter(both, both.end()));
                        QVERIFY2(xy == both, (where + ": " + a + " " + b).c_str());
                    }
                const auto over = [&](const std::string& t) {
                    return ids(RequestFilter::parse(t), m, w, rows, so.goodput);
                };
                const auto loose = over("e2el>100"), tight = over("e2el>1000");
                QVERIFY(std::includes(loose.begin(), loose.end(), tight.begin(), tight.end()));
                // Against the summary and the run log.
                QCOMPARE(std::int64_t(over("killed").size()), std::int64_t(sum.killed));
                std::int64_t good = 0;
                for (ReqId id : over("finished !slo")) good += id >= 0;
                QCOMPARE(good, std::int64_t(sum.good_requests));
                std::set<ReqId> preempted_in_log;
                for (const Event& e : log.events)
                    if (e.ev == Ev::Preempt) preempted_in_log.insert(e.req);
                QCOMPARE(over("preempted"), preempted_in_log);
                std::set<ReqId> urgent;
                for (const Request& r : w.requests)
                    if (r.cls == "urgent") urgent.insert(r.id);
                QCOMPARE(over("class=urgent"), urgent);
                if (w.size() > 7) QCOMPARE(over("7"), std::set<ReqId>({7}));
                ++runs;
            }
        QVERIFY(runs >= 3 * 5);
        // Exact values on a hand log: TTFTs 125, 500 and 1000 ms (exact in binary).
        {
            const RunLog log = logOf({{0, 0.125, 1, 5, R::Finished},
                                      {1, 1.5, 3, 5, R::Finished},
                                      {2, 3.0, 4, 5, R::Killed}});
            const auto m = perRequest(log);
            auto run = [&](const std::string& t) {
                return RequestFilter::parse(t).apply(m, nullptr, nullptr, {});
            };
            QCOMPARE(run("ttft>125"), std::vector<ReqId>({1, 2}));
            QCOMPARE(run("ttft>=125"), std::vector<ReqId>({0, 1, 2}));
            QCOMPARE(run("ttft<=500 finished"), std::vector<ReqId>({0, 1}));
            QCOMPARE(run("ttft<500 finished"), std::vector<ReqId>({0}));
            QCOMPARE(run("killed"), std::vector<ReqId>({2}));
            QCOMPARE(run("slo"), std::vector<ReqId>());     // no SLO set: nothing missed one
            QCOMPARE(run("class=a"), std::vector<ReqId>()); // no workload: no class
            QCOMPARE(run(""), std::vector<ReqId>({0, 1, 2}));
        }
        for (const char* bad :
             {"ttft>abc", "colour=red", "phase=sleeping", "class>3", "ttft>", "=3", "slow"}) {
            try {
                (void)RequestFilter::parse(std::string("killed ") + bad);
                QFAIL(bad);
            } catch (const std::invalid_argument& e) {
                QVERIFY2(std::string(e.what()).find(std::string("'") + bad + "'") !=
                             std::string::npos,
                         e.what());
            }
        }
    }

    // A run that keeps only the summary (Simulator::recordIterations(false), then
    // summarizeReleasing) gives the summary of a run that keeps everything, to the bit:
    // every registered policy, on conversations with shared prefixes (caching on, budgets
    // that TimeBill kills by) and on robot workloads (plans, TUFs), three seeds each. The
    // digest's decode ends are those the records give, and the released log holds neither
    // events nor iterations.
    void releasingSummaryEqualsFull() {
        int runs = 0;
        for (std::uint64_t seed = 1; seed <= 3; ++seed)
            for (const PolicySpec& ps : policySpecs()) {
                if (!ps.general) continue;
                GenerateSpec g;
                g.count = 150;
                g.arrivals.rate = 6.0 * double(seed);
                g.prompt = LengthDist::parse("lognormal:200,1.0,max=1500");
                g.output = LengthDist::parse("lognormal:60,1.0,max=400");
                g.system_prompt_tokens = 300;
                g.turns = 3;
                g.think_s = 2;
                const Workload w = chatOrRobot(seed, g, 240);
                EngineLimits lim;
                lim.kv_capacity_tokens = 6000;
                lim.max_num_seqs = 8;
                lim.prefix_caching = seed % 2 == 1; // the conversations share prefixes
                lim.block_size = lim.prefix_caching ? 16 : 1;
                QVERIFY(!w.empty());
                const auto model = EteModel(EteParams{0.01, 1e-4, 0, 0.02, 1e-4, 1e-7});
                const std::string where = ps.name + " seed " + std::to_string(seed);
                auto run = [&](bool record) {
                    auto sched = test::policy(ps.name);
                    Simulator engine(w, model, *sched, lim);
                    engine.recordIterations(record);
                    return engine.run();
                };
                const RunLog full = run(true);
                RunLog digest = run(false);
                QVERIFY2(digest.iter_digest.on && digest.iters.empty(), where.c_str());
                QVERIFY2(digest.iter_digest.decode_ends == decodeEnds(full), where.c_str());
                QCOMPARE(digest.totalIterations(), full.totalIterations());
                SummaryOptions so;
                so.goodput.ttft_ms = 300;
                so.goodput.tpot_ms = 60;
                so.workload = &w;
                nlohmann::json a = summarize(full, so).toJson();
                nlohmann::json b = summarizeReleasing(digest, so).toJson();
                a.erase("sim_wall_ms");
                b.erase("sim_wall_ms");
                QVERIFY2(a == b, (where + ": " + a.dump() + "\n" + b.dump()).c_str());
                QVERIFY2(digest.events.empty() && digest.iter_digest.decode_ends.empty(),
                         where.c_str());
                QVERIFY2(a["completed"].get<std::int64_t>() > 0, (where + a.dump()).c_str());
                ++runs;
            }
        QVERIFY(runs >= 3 * 6);
    }

    void numpyValues() {
        const Stats s = describe({4, 1, 3, 2}, {90, 99, 0, 100});
        QCOMPARE(s.count, std::int64_t(4));
        KAIROS_COMPARE_NEAR(s.mean, 2.5, 1e-15);
        KAIROS_COMPARE_NEAR(s.median, 2.5, 1e-15);
        KAIROS_COMPARE_NEAR(s.std, 1.1180339887498949, 1e-15);
        KAIROS_COMPARE_NEAR(s.percentile(90), 3.7, 1e-12);
        KAIROS_COMPARE_NEAR(s.percentile(99), 3.97, 1e-12);
        KAIROS_COMPARE_NEAR(s.percentile(0), 1.0, 0);
        KAIROS_COMPARE_NEAR(s.percentile(100), 4.0, 0);
    }

    // Comparing runs by hand. Before: mean TTFT 100 ms, 2 req/s, 3 suspensions; after:
    // 80 ms (-20, -20 %, better: lower is better), 1 req/s (worse: higher is better), 5
    // suspensions (a change with no better direction: verdict 0). A run against itself:
    // every change 0, every verdict 0.
    void compareByHand() {
        Summary a, b;
        a.ttft_ms = describe({100, 100}, {99});
        b.ttft_ms = describe({80, 80}, {99});
        a.request_throughput = 2;
        b.request_throughput = 1;
        a.suspensions = 3;
        b.suspensions = 5;
        std::map<std::string, MetricDelta> d;
        for (const auto& x : compareRuns(a, b)) d[x.key] = x;
        KAIROS_COMPARE_NEAR(d.at("mean_ttft_ms").change, -20.0, 1e-12);
        KAIROS_COMPARE_NEAR(d.at("mean_ttft_ms").relative, -0.2, 1e-12);
        QCOMPARE(d.at("mean_ttft_ms").verdict, 1);
        QCOMPARE(d.at("p99_ttft_ms").verdict, 1);
        QCOMPARE(d.at("request_throughput").verdict, -1);
        QCOMPARE(d.at("suspensions").verdict, 0);
        QCOMPARE(d.at("suspensions").change, 2.0);
        QVERIFY(std::isnan(d.at("request_goodput").change)); // no SLOs: undefined
        for (const auto& x : compareRuns(b, b)) {
            QCOMPARE(x.verdict, 0);
            QVERIFY(x.change == 0 || std::isnan(x.change));
        }
        // A metric only one run has (utility of a class) is NaN on the other side.
        b.robot.push_back({"urgent", 3, 3, 3, 1.5, 3.0, 2.0, 8.0, 0, 0, 0});
        const auto withRobot = compareRuns(a, b);
        // First-response utility, then the one summed over segments.
        const auto& u = withRobot[withRobot.size() - 2];
        QCOMPARE(u.key, std::string("utility_pct_urgent"));
        KAIROS_COMPARE_NEAR(u.after, 50.0, 1e-12);
        QVERIFY(std::isnan(u.before));
        QCOMPARE(u.verdict, 0);
        QCOMPARE(withRobot.back().key, std::string("segment_utility_pct_urgent"));
        KAIROS_COMPARE_NEAR(withRobot.back().after, 25.0, 1e-12);
        // As text: the rows of the hand example, column by column.
        const std::string table = deltaTable(compareRuns(a, b), "fcfs", "sjf");
        // The fields after a metric's label on its line.
        auto fields = [&](const std::string& label) {
            const auto at = table.find(label);
            std::vector<std::string> f;
            if (at == std::string::npos) return f;
            std::istringstream in(
                table.substr(at + label.size(), table.find('\n', at) - at - label.size()));
            for (std::string x; in >> x;) f.push_back(x);
            return f;
        };
        using F = std::vector<std::string>;
        QCOMPARE(fields("Mean TTFT (ms)"), (F{"100", "80", "-20.0", "%", "better"}));
        QCOMPARE(fields("Request throughput (req/s)"), (F{"2", "1", "-50.0", "%", "worse"}));
        QCOMPARE(fields("Suspensions"), (F{"3", "5", "+66.7", "%"})); // no better direction
        QCOMPARE(fields("Request goodput (req/s)"), (F{"-", "-", "-"}));
        QVERIFY(table.rfind("metric", 0) == 0 && table.find("fcfs") < table.find("sjf"));
    }

    // What the latency leaves out is counted beside it: 2 of 4 requests completed, one
    // killed for its deadline after its first token, one dropped before it started.
    void coverageCountsWhatIsLeftOut() {
        const RunLog log = logOf({{0, 1, 3, 1, R::Finished},
                                  {0, 2, 4, 1, R::Finished},
                                  {0, 1, 5, 0, R::Killed},
                                  {1, 0, 1, 0, R::KilledUnstarted}});
        const Summary s = summarize(log);
        QCOMPARE(s.completed, std::int64_t(2));
        QCOMPARE(s.killed, std::int64_t(2));
        QCOMPARE(s.never_started, std::int64_t(1));
        QCOMPARE(s.ttft_ms.count, std::int64_t(2));
        KAIROS_COMPARE_NEAR(s.ttft_ms.mean, 1500.0, 1e-9);
        using P = std::vector<std::pair<std::string, std::int64_t>>;
        QCOMPARE(s.killed_by, (P{{"deadline", 1}, {"never_fits", 1}}));
        QCOMPARE(s.coverage(),
                 std::string("2 completed of 4 requests; left out: 2 killed (deadline 1, "
                             "never_fits 1)"));
        QVERIFY(s.table().find("Latency statistics are over:") != std::string::npos);
        // A log that claims decode tokens without decode iterations is refused, not read
        // past its end.
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 summarize(logOf({{0, 1, 2, 3, R::Finished}})));
        // The counts survive the JSON a stored run keeps.
        const Summary back = Summary::fromJson(s.toJson());
        QCOMPARE(back.killed_by, s.killed_by);
        QCOMPARE(back.never_started, std::int64_t(1));
        QCOMPARE(summarize(logOf({{0, 1, 2, 1, R::Finished}})).coverage(),
                 std::string("all 1 requests"));
    }

    // Survivorship. Run A completes requests 0..3 (TTFT 1, 2, 3, 4 s); run B completes
    // only request 0 (TTFT 0.5 s) and kills the rest. As they stand B's mean TTFT would
    // be 80 % lower (500 vs 2500 ms); over the one request both completed it is 500 vs
    // 1000 ms, shown but not judged. Completed and killed are judged as usual. Without
    // per-request results the latency rows do not compare at all; with another workload
    // nothing does.
    // The same requests arriving at other times (the rate slider): said as such, with the
    // two offered rates, not as "different workloads (4 and 4 requests)". By hand, the offered
    // rate is (n - 1) / the arrivals' span: 3 / 3 s = 1 req/s, then 3 / 6 s = 0.5 req/s.
    void sameRequestsAtOtherTimes() {
        const RunLog la = logOf({{0, 1, 2, 1, R::Finished},
                                 {1, 2, 3, 1, R::Finished},
                                 {2, 3, 4, 1, R::Finished},
                                 {3, 4, 5, 1, R::Finished}});
        const RunLog lb = logOf({{0, 1, 2, 1, R::Finished},
                                 {2, 3, 4, 1, R::Finished},
                                 {4, 5, 6, 1, R::Finished},
                                 {6, 7, 8, 1, R::Finished}});
        const Summary a = summarize(la), b = summarize(lb);
        const auto qa = perRequest(la), qb = perRequest(lb);
        const Comparison c = compare({&a, &qa}, {&b, &qb});
        QVERIFY(!c.same_workload);
        QVERIFY2(c.note.rfind("the same 4 requests arriving at other times (1 and 0.5 req/s "
                              "offered",
                              0) == 0,
                 c.note.c_str());
    }

    void comparisonOnTheCommonSet() {
        const RunLog la = logOf({{0, 1, 2, 1, R::Finished},
                                 {0, 2, 3, 1, R::Finished},
                                 {0, 3, 4, 1, R::Finished},
                                 {0, 4, 5, 1, R::Finished}});
        const RunLog lb = logOf({{0, 0.5, 1, 1, R::Finished},
                                 {0, 1, 5, 0, R::Killed},
                                 {0, 1, 5, 0, R::Killed},
                                 {0, 1, 5, 0, R::Killed}});
        const Summary a = summarize(la), b = summarize(lb);
        const auto qa = perRequest(la), qb = perRequest(lb);
        const Comparison c = compare({&a, &qa}, {&b, &qb});
        QVERIFY(c.same_workload);
        QVERIFY(!c.same_completed);
        QCOMPARE(c.common, std::int64_t(1));
        QCOMPARE(c.only_before, std::int64_t(3));
        QCOMPARE(c.only_after, std::int64_t(0));
        QVERIFY2(c.note.find("latency rows are over the 1 both completed") != std::string::npos &&
                     c.note.find("also completed 3 others, the compared run 0;") !=
                         std::string::npos,
                 c.note.c_str());
        std::map<std::string, MetricDelta> d;
        for (const auto& x : c.deltas) d[x.key] = x;
        KAIROS_COMPARE_NEAR(d.at("mean_ttft_ms").before, 1000.0, 1e-9);
        KAIROS_COMPARE_NEAR(d.at("mean_ttft_ms").after, 500.0, 1e-9);
        for (const auto& x : c.deltas) {
            QCOMPARE(x.basis, isLatencyMetric(x.key) ? Basis::Common : Basis::AllRequests);
            if (isLatencyMetric(x.key)) QCOMPARE(x.verdict, 0);
        }
        QCOMPARE(d.at("completed").verdict, -1);
        QCOMPARE(d.at("killed").verdict, -1);
        const std::string table = deltaTable(c, "A", "B");
        QVERIFY(table.rfind("note: the runs completed different requests", 0) == 0);
        QVERIFY(table.find("not judged") != std::string::npos);
        QVERIFY(table.find("better") == std::string::npos);

        // Summaries alone: latency not comparable, never coloured.
        for (const auto& x : compareRuns(a, b)) {
            if (!isLatencyMetric(x.key)) continue;
            QCOMPARE(x.basis, Basis::NotComparable);
            QCOMPARE(x.verdict, 0);
        }
        // The same set of requests completed: judged as they stand.
        const auto same = compare({&a, &qa}, {&a, &qa});
        QVERIFY(same.same_completed && same.note.empty());
        // Another workload (other arrivals): nothing judged.
        RunLog lc = la;
        for (auto& e : lc.events) e.t += 1;
        const Summary sc = summarize(lc);
        const auto qc = perRequest(lc);
        const Comparison other = compare({&a, &qa}, {&sc, &qc});
        QVERIFY(!other.same_workload);
        for (const auto& x : other.deltas) {
            QCOMPARE(x.basis, Basis::NotComparable);
            QCOMPARE(x.verdict, 0);
        }
        // Workload hashes that differ say so even when the requests look alike.
        QVERIFY(!compare({&a, &qa, "aa"}, {&a, &qa, "bb"}).same_workload);
    }

    // Robot means are over the tasks they apply to: a task never answered has no
    // response time (not 0 s), and one not dispatched whole has no completion time.
    void robotMeansOverTheirTasks() {
        std::vector<RobotTask> t(3);
        t[0].cls = t[1].cls = t[2].cls = "c";
        t[0].response = 1.0;
        t[0].completion = 4.0;
        t[0].robot_wait = 0.5;
        t[0].utility = 2;
        t[0].max_utility = 2;
        t[1].response = 3.0; // answered late (negative utility), plan never dispatched whole
        t[1].utility = -1;
        t[1].max_utility = 2;
        t[2].max_utility = 2; // never answered
        const auto s = summarizeRobotTasks(t);
        QCOMPARE(s.size(), std::size_t(2));
        QCOMPARE(s[0].tasks, 3L);
        QCOMPARE(s[0].responded, 2L);
        QCOMPARE(s[0].complete, 1L);
        KAIROS_COMPARE_NEAR(s[0].mean_response, 2.0, 1e-12);
        KAIROS_COMPARE_NEAR(s[0].mean_completion, 4.0, 1e-12);
        KAIROS_COMPARE_NEAR(s[0].mean_robot_wait, 0.5, 1e-12);
        KAIROS_COMPARE_NEAR(s[0].utilityPercent(), 100.0 / 6, 1e-9); // (2 - 1 + 0) / 6
        KAIROS_COMPARE_NEAR(s[0].meanUtility(), 1.0 / 3, 1e-12);
        // None answered: the means are undefined, not 0.
        const auto none = summarizeRobotTasks({t[2]});
        QVERIFY(std::isnan(none[0].mean_response) && std::isnan(none[0].mean_completion));
    }

    void printableNames() {
        QCOMPARE(text::printable("fcfs"), std::string("fcfs"));
        QCOMPARE(text::printable("a\x1b[31mred\nb"), std::string("a\\x1b[31mred\\x0ab"));
        QCOMPARE(text::printable("caf\xc3\xa9 \xe2\x86\x92"),
                 std::string("caf\xc3\xa9 \xe2\x86\x92"));
        QCOMPARE(text::printable("\xc2\x9b"), std::string("\\xc2\\x9b")); // C1 CSI
        QCOMPARE(text::printable("\xff\xc3"), std::string("\\xff\\xc3")); // not UTF-8
        QCOMPARE(text::printable("a\\b"), std::string("a\\\\b"));
    }

    // The saturation verdict on a queue whose capacity is known: one seat, the unit model,
    // every request 10 tokens (a prefill iteration and 9 decode steps: 10 time units), so
    // the server does 0.1 requests per unit and rho = 10 * rate. 2000 arrivals (Poisson,
    // and gamma with burstiness 0.2), 20 seeds per load: below capacity (rho 0.5, 0.8)
    // never saturated, well above it (2, 3) always; the queue an arrival finds agrees
    // with a count by hand.
    void saturationVerdict() {
        for (double rho : {0.5, 0.8, 2.0, 3.0})
            for (double burstiness : {1.0, 0.2}) {
                int saturated = 0;
                for (std::uint64_t seed = 1; seed <= 20; ++seed) {
                    GenerateSpec g;
                    g.count = 2000;
                    g.arrivals.rate = rho / 10;
                    g.arrivals.burstiness = burstiness;
                    g.arrivals.seed = seed;
                    g.prompt = LengthDist::parse("const:8");
                    g.output = LengthDist::parse("const:10");
                    const Workload w = generateWorkload(g);
                    EngineLimits lim;
                    lim.kv_capacity_tokens = 1000;
                    lim.max_num_seqs = 1;
                    auto fcfs = test::policy("fcfs");
                    const RunLog log = simulate(w, UnitModel(), *fcfs, lim);
                    const Summary s = summarize(log);
                    QVERIFY(s.load.saturated.has_value());
                    saturated += *s.load.saturated;
                    // The score says how near: above 1 exactly when saturated.
                    QCOMPARE(s.load.score > 1, *s.load.saturated);
                    QVERIFY(s.load.score > 0);
                    // Its band, in the JSON and the text alike (0.8 to 1.25: near).
                    const LoadBand band = loadBand(s.load);
                    QCOMPARE(band == LoadBand::NearSaturation,
                             s.load.score >= 0.8 && s.load.score <= 1.25);
                    QCOMPARE(s.toJson()["saturation"]["band"].get<std::string>(),
                             std::string(loadBandName(band)));
                    QCOMPARE(s.table().find("near saturation (") != std::string::npos,
                             band == LoadBand::NearSaturation);
                    KAIROS_COMPARE_NEAR(
                        s.load.offered_rate,
                        1999.0 / (w.requests.back().arrival - w.requests.front().arrival), 1e-9);
                    // The queue each arrival found: arrived before it and not admitted yet (one
                    // admitted at the very instant it arrives still waited: arrivals at a time
                    // come before the decisions at that time).
                    const auto q = queueAtArrivals(log);
                    const auto m = perRequest(log);
                    QCOMPARE(q.size(), w.size());
                    for (std::size_t i = 0; i < w.size(); i += 197) {
                        std::int64_t waiting = 0;
                        for (std::size_t j = 0; j < i; ++j)
                            waiting += m[j].arrival + m[j].queue_delay >= m[i].arrival;
                        QCOMPARE(q[i].second, waiting);
                    }
                }
                QVERIFY2(rho < 1 ? saturated == 0 : saturated == 20,
                         qPrintable(QString("rho %1, burstiness %2: %3 of 20 saturated")
                                        .arg(rho)
                                        .arg(burstiness)
                                        .arg(saturated)));
            }
        // Overloaded for a while, then drained (the Azure trace's busy hour): 600 arrivals
        // at rho 0.5, 400 at rho 2, 1000 at rho 0.3. The stretch named lies in the burst,
        // and the verdict says the queue drained before the arrivals stopped.
        {
            Workload w;
            double t = 0;
            int id = 0;
            for (const auto& [n, rho] :
                 std::vector<std::pair<int, double>>{{600, 0.5}, {400, 2.0}, {1000, 0.3}}) {
                ArrivalSpec a;
                a.rate = rho / 10;
                a.seed = static_cast<std::uint64_t>(n);
                a.start = t;
                for (double x : generateArrivals(a, static_cast<std::size_t>(n))) {
                    w.requests.push_back(test::req(x, 8, 10));
                    w.requests.back().id = id++;
                    t = x;
                }
            }
            EngineLimits lim;
            lim.kv_capacity_tokens = 1000;
            lim.max_num_seqs = 1;
            auto fcfs = test::policy("fcfs");
            const LoadReport l = summarize(simulate(w, UnitModel(), *fcfs, lim)).load;
            const double burst0 = w.requests[600].arrival - w.requests[0].arrival;
            const double burst1 = w.requests[999].arrival - w.requests[0].arrival;
            QVERIFY2(l.saturated.value_or(false), l.verdict.c_str());
            QVERIFY2(l.from_s >= burst0 - 0.1 * burst1 && l.from_s <= burst1 && l.to_s >= burst0 &&
                         l.to_s <= burst1 + 0.2 * burst1,
                     l.verdict.c_str());
            QVERIFY2(l.verdict.find("then it drained") != std::string::npos, l.verdict.c_str());
        }
        // A policy that sheds load keeps its queue short; what it drops while waiting is
        // backlog all the same. TimeBill (Kill) with 30-unit budgets on the same queue: at
        // rho 3 saturated by its drops (most of those killed waited their budget out, or
        // were admitted too late to finish), at rho 0.5 it keeps up.
        for (double rho : {3.0, 0.5}) {
            Workload w = test::generated(2000, rho / 10, "const:8", "const:10", 9);
            for (auto& r : w.requests) r.budget_s = 30;
            EngineLimits lim;
            lim.kv_capacity_tokens = 1000;
            lim.max_num_seqs = 1;
            auto tb = test::policy("timebill");
            const LoadReport l = summarize(simulate(w, UnitModel(), *tb, lim)).load;
            QVERIFY(l.saturated.has_value());
            QCOMPARE(*l.saturated, rho > 1);
            QVERIFY2(rho > 1 ? l.dropped_waiting > l.window_arrivals / 2
                             : l.dropped_waiting < l.window_arrivals / 10,
                     qPrintable(QString("rho %1: %2 of %3 dropped waiting")
                                    .arg(rho)
                                    .arg(l.dropped_waiting)
                                    .arg(l.window_arrivals)));
            QVERIFY(rho > 1 ? l.verdict.find("dropped by the policy") != std::string::npos
                            : l.verdict.rfind("keeps up", 0) == 0);
        }
        // An offline batch has no rate and no verdict.
        GenerateSpec g;
        g.count = 50;
        g.arrivals.rate = INFINITY;
        EngineLimits lim;
        lim.kv_capacity_tokens = 1 << 20;
        auto fcfs = test::policy("fcfs");
        const Summary s = summarize(simulate(generateWorkload(g), UnitModel(), *fcfs, lim));
        QVERIFY(std::isinf(s.load.offered_rate) && !s.load.saturated);
        QVERIFY(s.toJson()["saturated"].is_null() && s.toJson()["offered_rate"].is_null());
    }

    // What requests got enters the load's band: a run that kills or drops most of its
    // requests sheds load, whatever its queue did (issue 55: TimeBill read "keeps up" while
    // 376 of 400 were killed). Ten requests a second apart, each served in half a second:
    // the queue never grows. Six killed: sheds load (text, JSON, a stored summary read
    // back); five, exactly half: not most, it keeps up.
    // The verdict's evidence for a banner that names the band: its leading word gone, a
    // sentence of its own (by hand).
    void loadEvidenceDropsTheVerdictsWord() {
        LoadReport r;
        r.verdict = "SATURATED: the backlog grew by 12 requests";
        QCOMPARE(loadEvidence(r), std::string("The backlog grew by 12 requests"));
        r.verdict = "keeps up: over no stretch did the backlog grow";
        QCOMPARE(loadEvidence(r), std::string("Over no stretch did the backlog grow"));
        r.verdict = "";
        QCOMPARE(loadEvidence(r), std::string());
    }

    // A policy's time budget for requests that carry none (TimeBill's `budget`) scores them:
    // ten requests finished 0.5 s after arriving are all within a 0.6 s budget and none
    // within 0.4 s; without one, nothing is scored (Help described "Within budget" for
    // TimeBill where no table showed it). By hand.
    void defaultBudgetScoresRequests() {
        std::vector<R> rs;
        for (int i = 0; i < 10; ++i) rs.push_back({double(i), i + 0.1, i + 0.5, 1, R::Finished});
        const RunLog log = logOf(rs);
        SummaryOptions so;
        QCOMPARE(summarize(log, so).budget_requests, std::int64_t(0));
        so.default_budget_s = 0.6;
        Summary s = summarize(log, so);
        QCOMPARE(s.budget_requests, std::int64_t(10));
        QCOMPARE(s.in_budget, std::int64_t(10));
        QCOMPARE(s.completion_rate, 1.0);
        so.default_budget_s = 0.4;
        s = summarize(log, so);
        QCOMPARE(s.in_budget, std::int64_t(0));
        // The comparison table carries it.
        bool shown = false;
        std::set<std::string> keys, labels;
        for (const MetricRow& m : keyMetrics(s)) {
            if (m.key == "completion_rate") shown = m.value == 0.0;
            // Each figure once: the same three were listed twice under other names.
            QVERIFY2(keys.insert(m.key).second, m.key.c_str());
            QVERIFY2(labels.insert(m.label).second, m.label.c_str());
        }
        QVERIFY(shown);
        QVERIFY(!keys.count("within_budget_pct")); // one name per metric: completion_rate
    }

    void shedsLoadCountsWhatRequestsGot() {
        for (const int killed : {6, 5}) {
            std::vector<R> rs;
            for (int i = 0; i < 10; ++i)
                rs.push_back({double(i), i + 0.1, i + 0.5, i < killed ? 0 : 1,
                              i < killed ? R::Killed : R::Finished});
            const Summary s = summarize(logOf(rs));
            QCOMPARE(s.load.killed, std::int64_t(killed));
            QCOMPARE(s.load.arrivals, std::int64_t(10));
            const bool sheds = killed > 5;
            QCOMPARE(loadBand(s.load) == LoadBand::ShedsLoad, sheds);
            const auto j = s.toJson();
            QCOMPARE(j["saturation"]["band"].get<std::string>(),
                     std::string(sheds ? "sheds load" : loadBandName(loadBand(s.load))));
            QCOMPARE(j["saturation"]["killed"].get<std::int64_t>(), std::int64_t(killed));
            const std::string text = s.table();
            QCOMPARE(text.find("sheds load: 6 of 10 requests killed or dropped") !=
                         std::string::npos,
                     sheds);
            // A stored summary keeps the band.
            QCOMPARE(loadBand(Summary::fromJson(j).load), loadBand(s.load));
        }
    }

    // SLO misses enter the load's report: 10 finished one-token requests, 3 of them with
    // their first token 800 ms after arrival, under a 500 ms TTFT SLO: 3 of 10 missed it, in the
    // report, its JSON (read back) and the table's Load line; without an SLO, none is said.
    void sloMissesAreCounted() {
        std::vector<R> rs;
        for (int i = 0; i < 10; ++i)
            rs.push_back({double(i), i + (i < 3 ? 0.8 : 0.1), i + 0.9, 1, R::Finished});
        SummaryOptions so;
        so.goodput.ttft_ms = 500;
        const Summary s = summarize(logOf(rs), so);
        QCOMPARE(s.load.slo_missed, std::int64_t(3));
        QCOMPARE(s.load.finished, std::int64_t(10));
        const auto j = s.toJson();
        QCOMPARE(j["saturation"]["slo_missed"].get<std::int64_t>(), std::int64_t(3));
        QCOMPARE(Summary::fromJson(j).load.slo_missed, std::int64_t(3));
        QVERIFY(s.table().find("; 3 of 10 finished missed an SLO") != std::string::npos);
        const Summary none = summarize(logOf(rs));
        QCOMPARE(none.load.slo_missed, std::int64_t(-1));
        QVERIFY(none.toJson()["saturation"]["slo_missed"].is_null());
        QVERIFY(none.table().find("missed an SLO") == std::string::npos);
    }

    void emptyIsNan() {
        const Stats s = describe({}, {99});
        QCOMPARE(s.count, std::int64_t(0));
        QVERIFY(std::isnan(s.mean) && std::isnan(s.percentile(99)));
    }

    // A weight w must act exactly as w copies, for random inputs (percentiles to the bit).
    void weightedEqualsExpanded() {
        Rng r(5);
        for (int trial = 0; trial < 200; ++trial) {
            std::vector<std::pair<double, std::int64_t>> w;
            std::vector<double> flat;
            // Small samples, then large ones (weighted selection partitions past 16 pairs),
            // with many ties or none.
            const int n =
                static_cast<int>(trial < 100 ? r.uniformInt(1, 30) : r.uniformInt(17, 3000));
            for (int i = 0; i < n; ++i) {
                const double v = trial % 2 ? std::round(r.uniform() * 50) / 4 // ties happen
                                           : r.uniform() * 50;
                const auto k = r.uniformInt(0, 5);
                w.emplace_back(v, k);
                for (int j = 0; j < k; ++j) flat.push_back(v);
            }
            const std::vector<double> qs{1, 25, 50, 90, 99.9};
            const Stats a = describeWeighted(w, qs), b = describe(flat, qs);
            QCOMPARE(a.count, b.count);
            if (b.count == 0) continue;
            KAIROS_COMPARE_NEAR(a.mean, b.mean, 1e-9);
            KAIROS_COMPARE_NEAR(a.std, b.std, 1e-9);
            // The order statistics are the same values, interpolated alike: to the bit.
            QCOMPARE(a.median, b.median);
            for (double q : qs) QCOMPARE(a.percentile(q), b.percentile(q));
        }
    }

    // describe() selects its order statistics (std::nth_element) instead of sorting: each
    // percentile must be the sorted sample's, to the bit, for every asked q, ties and
    // duplicates of q included; the mean and std agree with a sorted-order sum to 1e-15.
    void describeEqualsSorting() {
        Rng r(11);
        for (int trial = 0; trial < 300; ++trial) {
            const int n = static_cast<int>(r.uniformInt(1, trial < 200 ? 40 : 3000));
            std::vector<double> v;
            for (int i = 0; i < n; ++i)
                v.push_back(trial % 3 == 0 ? std::round(r.uniform() * 8) // many ties
                                           : std::exp(r.uniform() * 30) * 1e-3);
            const std::vector<double> qs{0, 1, 25, 50, 50, 90, 99, 99.9, 100};
            const Stats st = describe(v, qs);
            std::vector<double> sorted = v;
            std::sort(sorted.begin(), sorted.end());
            auto pct = [&](double q) {
                const double h = double(n - 1) * q / 100.0;
                const auto lo = static_cast<std::size_t>(std::floor(h));
                if (lo + 1 >= sorted.size()) return sorted[lo];
                return sorted[lo] + (h - double(lo)) * (sorted[lo + 1] - sorted[lo]);
            };
            QCOMPARE(st.count, std::int64_t(n));
            QCOMPARE(st.median, pct(50));
            for (double q : qs) QCOMPARE(st.percentile(q), pct(q));
            long double sum = 0;
            for (double x : sorted) sum += x;
            const double mean = static_cast<double>(sum / n);
            QVERIFY(std::fabs(st.mean - mean) <= 1e-15 * std::fabs(mean));
        }
    }

    void goodputParse() {
        const GoodputSlo g = GoodputSlo::parse({"ttft:200", "e2el:5000"});
        QCOMPARE(*g.ttft_ms, 200.0);
        QCOMPARE(*g.e2el_ms, 5000.0);
        QVERIFY(!g.tpot_ms);
        for (const char* bad : {"ttft", "ttft:-1", "itl:20", "tpot:x"})
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, GoodputSlo::parse({bad}));
    }

    void keys() {
        QCOMPARE(percentileKey(99), std::string("p99"));
        QCOMPARE(percentileKey(99.9), std::string("p99.9"));
        QCOMPARE(percentileKey(50), std::string("p50"));
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
