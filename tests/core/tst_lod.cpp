// Level of detail for the views: the time<->pixel mapping, timeline rows from a run log,
// folding of narrow spans, and downsampling that keeps peaks.
#include "exec/execution_model.h"
#include "export/runlog_jsonl.h"
#include "lod/raster.h"
#include "lod/time_axis.h"
#include "lod/timeline.h"
#include "metrics/cdf.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "test_util.h"
#include "workload/generators.h"
#include "workload/random.h"
#include "workload/readers.h"

#include <QtTest>
#include <algorithm>
#include <array>
#include <map>
#include <sstream>

using namespace kairos;
using namespace kairos::lod;

namespace {
double unif(Rng& r, double lo, double hi) {
    return lo + (hi - lo) * r.uniform();
}
// Timeline rows of every registered policy's run of `count` chat requests at `rate` with
// 6,000 KV tokens (the rasteriser's property tests): (policy, rows).
std::vector<std::pair<std::string, std::vector<Row>>> policyRows(std::size_t count, double rate) {
    GenerateSpec g;
    g.count = count;
    g.arrivals.rate = rate;
    g.prompt = LengthDist::parse("lognormal:300,0.8,max=2000");
    g.output = LengthDist::parse("lognormal:80,0.9,max=600");
    const Workload w = generateWorkload(g);
    EteModel model(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7});
    std::vector<std::pair<std::string, std::vector<Row>>> out;
    for (const std::string& name : policyNames()) {
        EngineLimits lim;
        lim.kv_capacity_tokens = 6000;
        auto s = test::policy(name, {}, "lognormal:0.6", 3);
        out.emplace_back(name, buildRows(simulate(w, model, *s, lim), &w));
    }
    return out;
}
} // namespace

class TestLod : public QObject {
    Q_OBJECT
private slots:
    // x = (t - t0) / (t1 - t0) * width, and back.
    void axisMapping_data() {
        QTest::addColumn<double>("t0");
        QTest::addColumn<double>("t1");
        QTest::addColumn<double>("width");
        QTest::addColumn<double>("t");
        QTest::addColumn<double>("x");
        QTest::newRow("left edge") << 0.0 << 10.0 << 1000.0 << 0.0 << 0.0;
        QTest::newRow("middle") << 0.0 << 10.0 << 1000.0 << 5.0 << 500.0;
        QTest::newRow("right edge") << 0.0 << 10.0 << 1000.0 << 10.0 << 1000.0;
        QTest::newRow("offset") << 100.0 << 102.0 << 400.0 << 100.5 << 100.0;
        QTest::newRow("left of view") << 1.0 << 2.0 << 100.0 << 0.5 << -50.0;
        QTest::newRow("microseconds") << 0.0 << 1e-3 << 1000.0 << 2.5e-4 << 250.0;
    }
    void axisMapping() {
        QFETCH(double, t0);
        QFETCH(double, t1);
        QFETCH(double, width);
        QFETCH(double, t);
        QFETCH(double, x);
        const TimeAxis a{t0, t1, width};
        KAIROS_COMPARE_NEAR(a.toX(t), x, 1e-9);
        KAIROS_COMPARE_NEAR(a.toT(x), t, 1e-12 * std::max(1.0, std::abs(t)));
        KAIROS_COMPARE_NEAR(a.secondsPerPixel(), (t1 - t0) / width, 1e-15);
    }

    // Zooming keeps the time under the cursor where it was; panning moves by pixels;
    // clamping keeps the view inside the run.
    void axisZoomPan_data() {
        QTest::addColumn<double>("x");
        QTest::addColumn<double>("factor");
        QTest::newRow("in at left") << 0.0 << 2.0;
        QTest::newRow("in at middle") << 500.0 << 4.0;
        QTest::newRow("out at right") << 1000.0 << 0.5;
        QTest::newRow("in at 123") << 123.0 << 1.25;
    }
    void axisZoomPan() {
        QFETCH(double, x);
        QFETCH(double, factor);
        TimeAxis a{0, 10, 1000};
        const double anchor = a.toT(x);
        a.zoom(x, factor);
        KAIROS_COMPARE_NEAR(a.toT(x), anchor, 1e-12);
        KAIROS_COMPARE_NEAR(a.t1 - a.t0, 10.0 / factor, 1e-12);
        const double before = a.t0;
        a.pan(100); // 100 px right = 100 * spp seconds later
        KAIROS_COMPARE_NEAR(a.t0 - before, 100 * (10.0 / factor) / 1000, 1e-12);
        a.clampTo(0, 10);
        QVERIFY(a.t0 >= 0 && a.t1 <= 10 + 1e-12);
    }

    // Ticks are 1, 2 or 5 x 10^k apart, inside the range, at most max_ticks.
    void ticks_data() {
        QTest::addColumn<double>("from");
        QTest::addColumn<double>("to");
        QTest::addColumn<int>("max");
        QTest::addColumn<double>("step");
        QTest::addColumn<double>("first");
        QTest::newRow("0-100 by 6") << 0.0 << 100.0 << 6 << 20.0 << 0.0;
        QTest::newRow("0-100 by 11") << 0.0 << 100.0 << 11 << 10.0 << 0.0;
        QTest::newRow("3.7-4.2") << 3.7 << 4.2 << 6 << 0.1 << 3.7;
        QTest::newRow("ms") << 0.0012 << 0.0049 << 5 << 0.001 << 0.002;
        QTest::newRow("1000 s") << 12.0 << 1012.0 << 8 << 200.0 << 200.0;
        // The finest step that fits: 50 s gives 5 ticks (100 s, from the range over 4, gave 3).
        QTest::newRow("0-230 by 5") << 0.0 << 230.0 << 5 << 50.0 << 0.0;
        QTest::newRow("0-230 by 4") << 0.0 << 230.0 << 4 << 100.0 << 0.0;
        QTest::newRow("0.3-0.9 by 7") << 0.3 << 0.9 << 7 << 0.1 << 0.3;
    }
    void ticks() {
        QFETCH(double, from);
        QFETCH(double, to);
        QFETCH(int, max);
        QFETCH(double, step);
        QFETCH(double, first);
        const auto t = niceTicks(from, to, max);
        QVERIFY(t.size() >= 2 && int(t.size()) <= max);
        KAIROS_COMPARE_NEAR(t[0], first, 1e-9);
        KAIROS_COMPARE_NEAR(t[1] - t[0], step, 1e-9);
        QVERIFY(t.front() >= from - 1e-12 && t.back() <= to + 1e-9);
    }

    // One request through every phase (times by hand): arrive 0, prefill 1-2, decode 2-3,
    // suspended 3-4, decode 4-5, preempted 5-6, recompute 6-7, decode 7-8, finish 8; a
    // segment dispatched at 3 runs on the robot for its 2.5 s.
    void rowsByHand() {
        RunLog log;
        log.num_requests = 1;
        const std::pair<double, Ev> evs[] = {
            {0, Ev::Arrive},   {0.5, Ev::Admit},      {1, Ev::PrefillStart}, {2, Ev::PrefillEnd},
            {3, Ev::Dispatch}, {3, Ev::Suspend},      {4, Ev::Resume},       {5, Ev::Preempt},
            {6, Ev::Resume},   {6, Ev::PrefillStart}, {7, Ev::PrefillEnd},   {8, Ev::Finish}};
        for (const auto& [t, ev] : evs) log.events.push_back({t, 0, ev, ev == Ev::Finish ? 9 : 0});
        Workload w;
        w.requests.push_back(test::req(0, 10, 9));
        w.requests[0].segments = {{3, 2.5}, {6, 1.0}};
        const auto rows = buildRows(log, &w);
        QCOMPARE(rows.size(), std::size_t(1));
        const Row& r = rows[0];
        const std::vector<std::tuple<double, double, SpanKind>> want{
            {0, 1, SpanKind::Queued},    {1, 2, SpanKind::Prefill}, {2, 3, SpanKind::Decode},
            {3, 4, SpanKind::Suspended}, {4, 5, SpanKind::Decode},  {5, 6, SpanKind::Preempted},
            {6, 7, SpanKind::Prefill},   {7, 8, SpanKind::Decode}};
        QCOMPARE(r.spans.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
            QCOMPARE(r.spans[i].t0, std::get<0>(want[i]));
            QCOMPARE(r.spans[i].t1, std::get<1>(want[i]));
            QCOMPARE(r.spans[i].kind, std::get<2>(want[i]));
        }
        QVERIFY(r.finished && !r.killed);
        QCOMPARE(r.preemptions, 1);
        QCOMPARE(r.end, 8.0);
        QCOMPARE(r.robot.size(), std::size_t(1));
        QCOMPARE(r.robot[0].t0, 3.0);
        QCOMPARE(r.robot[0].t1, 5.5);
        QCOMPARE(spanAt(r.spans, 3.5)->kind, SpanKind::Suspended);
        QCOMPARE(spanAt(r.spans, 3.0)->kind, SpanKind::Suspended); // [t0, t1)
        QVERIFY(spanAt(r.spans, 8.0) == nullptr);
        QVERIFY(spanAt(r.spans, -1.0) == nullptr);
    }

    // Rows from real simulations tile each request's life: sorted, touching, no empty
    // span, from arrival to its end, for every policy family.
    void rowsTileLifetimes() {
        const Workload w =
            test::generated(300, 30, "lognormal:300,0.8,max=2000", "lognormal:80,0.9,max=600");
        EteModel model(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7});
        for (const char* name : {"fcfs", "sprpt_lp", "mcsf"}) {
            EngineLimits lim;
            lim.kv_capacity_tokens = 6000;
            auto s = test::policy(name, {}, "lognormal:0.6", 3);
            const RunLog log = simulate(w, model, *s, lim);
            const auto rows = buildRows(log, &w);
            QCOMPARE(rows.size(), w.size());
            for (const Row& r : rows) {
                QVERIFY(!r.spans.empty());
                QCOMPARE(r.spans.front().t0, r.arrival);
                QCOMPARE(r.spans.back().t1, r.end);
                for (std::size_t i = 0; i < r.spans.size(); ++i) {
                    QVERIFY(r.spans[i].t1 > r.spans[i].t0);
                    if (i) QCOMPARE(r.spans[i].t0, r.spans[i - 1].t1);
                }
            }
        }
    }

    // Agent lanes by hand. Agent 1: R0 [0, 5], R1 [2, 4] (overlaps R0: lane 1), R2 [6, 8]
    // (after R0: lane 0). Agent 0: R3 [1, 3] whose robot executes until 7, R4 [5, 9]
    // (overlaps R3's robot: lane 1). R5 [0, 1] has no agent: last.
    void agentLanesByHand() {
        const double iv[6][2] = {{0, 5}, {2, 4}, {6, 8}, {1, 3}, {5, 9}, {0, 1}};
        const int agent[6] = {1, 1, 1, 0, 0, -1};
        std::vector<Row> rows(6);
        Workload w;
        for (int i = 0; i < 6; ++i) {
            Row& r = rows[std::size_t(i)];
            r.id = i;
            r.arrival = iv[i][0];
            r.end = iv[i][1];
            r.finished = i != 2;
            r.killed = i == 2;
            r.prompt = 10 * (i + 1);
            r.spans = {{r.arrival, (r.arrival + r.end) / 2, SpanKind::Queued},
                       {(r.arrival + r.end) / 2, r.end, SpanKind::Decode}};
            Request q = test::req(iv[i][0], 10, 5);
            q.agent = agent[i];
            w.requests.push_back(q);
        }
        rows[3].robot = {{3, 7, SpanKind::Robot}};
        QVERIFY(hasAgents(w));
        const auto lanes = agentRows(rows, w);
        QCOMPARE(lanes.size(), std::size_t(5));
        const int want_agent[5] = {0, 0, 1, 1, -1}, want_lane[5] = {0, 1, 0, 1, 0};
        const std::vector<std::vector<ReqId>> want_members = {{3}, {4}, {0, 2}, {1}, {5}};
        for (std::size_t k = 0; k < 5; ++k) {
            QCOMPARE(lanes[k].agent, want_agent[k]);
            QCOMPARE(lanes[k].lane, want_lane[k]);
            std::vector<ReqId> ids;
            for (const Member& m : lanes[k].members) ids.push_back(m.id);
            QCOMPARE(ids, want_members[k]);
            QCOMPARE(lanes[k].id, want_members[k][0]);
        }
        QCOMPARE(lanes[0].members[0].t1, 7.0); // R3's robot runs past its end
        QCOMPARE(lanes[0].end, 7.0);
        QCOMPARE(lanes[0].robot.size(), std::size_t(1));
        const Row& a1 = lanes[2]; // R0 then R2
        QCOMPARE(a1.spans.size(), std::size_t(4));
        QCOMPARE(a1.spans[2].t0, 6.0);
        QCOMPARE(a1.arrival, 0.0);
        QCOMPARE(a1.end, 8.0);
        QVERIFY(a1.killed && !a1.finished); // R2 was killed
        QVERIFY(a1.members[1].killed && !a1.members[0].killed);
        QCOMPARE(a1.prompt, 10 + 30);
        QCOMPARE(memberAt(a1.members, 5.5), nullptr);           // the gap between R0 and R2
        QCOMPARE(memberAt(a1.members, 5.5, 0.6)->id, ReqId(2)); // a tie: the next
        QCOMPARE(memberAt(a1.members, 5.2, 0.6)->id, ReqId(0)); // the nearer one
        QCOMPARE(memberAt(a1.members, 0.0)->id, ReqId(0));
        QCOMPARE(memberAt(a1.members, 8.0)->id, ReqId(2));
        QCOMPARE(memberAt(a1.members, -0.1), nullptr);
        // Without agents: one lane group (agent -1), packed the same way.
        for (auto& q : w.requests) q.agent = -1;
        QVERIFY(!hasAgents(w));
        QCOMPARE(agentRows(rows, w).front().agent, -1);
    }

    // Agent lanes of a simulated robot workload: every request in exactly one lane, lanes
    // of an agent hold only its requests, members and spans in order without overlap.
    void agentLanesInvariants() {
        const Workload w =
            readWorkload(std::string(KAIROS_SOURCE_DIR) + "/sample_traces/wid2_like.jsonl");
        EteModel model(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7});
        for (const char* name : {"vllm_stream", "timely"}) {
            auto s = test::policy(name);
            EngineLimits lim;
            lim.kv_capacity_tokens = 60000;
            const RunLog log = simulate(w, model, *s, lim);
            const auto rows = buildRows(log, &w);
            const auto lanes = agentRows(rows, w);
            std::vector<int> seen(w.size(), 0);
            std::int32_t prev_agent = -1;
            for (std::size_t k = 0; k < lanes.size(); ++k) {
                const Row& l = lanes[k];
                QVERIFY(l.agent >= prev_agent);
                QCOMPARE(l.lane == 0, k == 0 || lanes[k - 1].agent != l.agent);
                prev_agent = l.agent;
                for (std::size_t m = 0; m < l.members.size(); ++m) {
                    const Member& x = l.members[m];
                    ++seen[std::size_t(x.id)];
                    QCOMPARE(w.requests[std::size_t(x.id)].agent, l.agent);
                    QVERIFY(x.t1 >= x.t0);
                    if (m) QVERIFY(x.t0 > l.members[m - 1].t1);
                }
                for (const auto* spans : {&l.spans, &l.robot})
                    for (std::size_t i = 1; i < spans->size(); ++i)
                        QVERIFY((*spans)[i].t0 >= (*spans)[i - 1].t1);
            }
            QVERIFY(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
            QVERIFY(lanes.size() >= 42); // 42 agents
        }
    }

    // Folding by hand, fold width 0.5 s: decode [0, 1) draws alone; the four short spans
    // [1, 1.1), [1.1, 1.15), [1.15, 1.2), [1.2, 1.3) merge into one folded draw of 4; the
    // long decode [1.3, 3) draws alone. A view from 1.5 cuts everything before.
    void foldByHand() {
        const std::vector<Span> s{{0, 1, SpanKind::Decode},      {1, 1.1, SpanKind::Suspended},
                                  {1.1, 1.15, SpanKind::Decode}, {1.15, 1.2, SpanKind::Suspended},
                                  {1.2, 1.3, SpanKind::Decode},  {1.3, 3, SpanKind::Decode}};
        std::vector<Draw> d;
        fold(s, 0, 10, 0.5, d);
        QCOMPARE(d.size(), std::size_t(3));
        QCOMPARE(d[0].kind, SpanKind::Decode);
        QCOMPARE(d[1].kind, SpanKind::Folded);
        QCOMPARE(d[1].count, 4);
        QCOMPARE(d[1].t0, 1.0);
        QCOMPARE(d[1].t1, 1.3);
        QCOMPARE(d[2].t0, 1.3);
        d.clear();
        fold(s, 1.5, 10, 0.5, d);
        QCOMPARE(d.size(), std::size_t(1));
        QCOMPARE(d[0].t0, 1.3);
        d.clear();
        fold(s, 0, 10, 0.01, d); // narrower than every span: nothing folds
        QCOMPARE(d.size(), s.size());
        d.clear();
        fold(s, 3.5, 10, 0.5, d);
        QVERIFY(d.empty());
    }

    // Folding random rows: draws are sorted and disjoint, count every visible span once,
    // and cover exactly the visible spans' extent.
    void foldInvariants() {
        Rng r(5);
        for (int k = 0; k < 200; ++k) {
            std::vector<Span> s;
            double t = unif(r, 0, 1);
            const auto n = r.uniformInt(0, 200);
            for (int i = 0; i < n; ++i) {
                t += r.bernoulli(0.2) ? unif(r, 0, 0.5) : 0; // a gap sometimes
                const double len = r.bernoulli(0.5) ? unif(r, 1e-4, 0.01) : unif(r, 0.01, 2);
                s.push_back({t, t + len, static_cast<SpanKind>(r.uniformInt(0, 4))});
                t += len;
            }
            const double from = unif(r, 0, t), to = from + unif(r, 0, t);
            const double min_len = unif(r, 1e-3, 0.2);
            std::vector<Draw> d;
            fold(s, from, to, min_len, d);
            int visible = 0;
            for (const Span& x : s) visible += x.t1 >= from && x.t0 <= to;
            int counted = 0;
            for (std::size_t i = 0; i < d.size(); ++i) {
                counted += d[i].count;
                QVERIFY(d[i].t1 >= d[i].t0);
                QVERIFY(d[i].count == 1 || d[i].kind == SpanKind::Folded);
                if (i) QVERIFY(d[i].t0 >= d[i - 1].t1);
            }
            QCOMPARE(counted, visible);
        }
    }

    // Rasterising by hand. Rows of 10 px over 0-10 s on 100 px: row 0 queued 0-1 s,
    // prefill 1-2, decode 2-6 (bars of 9 px, one gap line); row 1 killed at 5 s (a 2 px
    // text-coloured mark at x = 50 on its line 10-18).
    void rasterRowsByHand() {
        std::vector<Row> rows(2);
        rows[0].spans = {
            {0, 1, SpanKind::Queued}, {1, 2, SpanKind::Prefill}, {2, 6, SpanKind::Decode}};
        rows[0].end = 6;
        rows[1].id = 1;
        rows[1].spans = {{0, 5, SpanKind::Decode}};
        rows[1].end = 5;
        rows[1].killed = true;
        const RasterView v{{0, 10, 100}, 40, 10, 0};
        const std::vector<Fill> want{{0, 0, 10, 9, Ink::Phase, SpanKind::Queued, 255},
                                     {10, 0, 10, 9, Ink::Phase, SpanKind::Prefill, 255},
                                     {20, 0, 40, 9, Ink::Phase, SpanKind::Decode, 255},
                                     {0, 10, 50, 9, Ink::Phase, SpanKind::Decode, 255},
                                     {50, 10, 2, 9, Ink::Kill, SpanKind::Queued, 255}};
        const auto got = rasterize(rows, nullptr, nullptr, v);
        QCOMPARE(got.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i)
            QVERIFY2(got[i] == want[i], qPrintable(QString::number(i)));
        // Scrolled by one row: row 1 alone, on line 0.
        const auto scrolled = rasterize(rows, nullptr, nullptr, {{0, 10, 100}, 40, 10, 10});
        QCOMPARE(scrolled.size(), std::size_t(2));
        QCOMPARE(scrolled[0].y, 0);
        // A pinned run (same rows) at 10 px rows: a lower lane of 3 px at the pinned alpha.
        const auto pinned = rasterize(rows, nullptr, &rows, v);
        QCOMPARE(pinned[0].h, 6);
        QVERIFY(std::any_of(pinned.begin(), pinned.end(), [](const Fill& f) {
            return f.y == 6 && f.h == 3 && f.alpha == kPinnedAlpha;
        }));
    }

    // Density rows by hand: rows of half a pixel, so rows 0 and 1 share line 0. Row 0
    // decodes 0-5 s, row 1 0-10 s: columns 0-49 have both in the system (full shade),
    // 50-99 one of two (shade 3 of 6: alpha 255 * 4 / 7).
    void rasterDenseByHand() {
        std::vector<Row> rows(2);
        rows[0].spans = {{0, 5, SpanKind::Decode}};
        rows[0].end = 5;
        rows[1].id = 1;
        rows[1].spans = {{0, 10, SpanKind::Decode}};
        rows[1].end = 10;
        const auto got = rasterize(rows, nullptr, nullptr, {{0, 10, 100}, 40, 0.5, 0});
        QCOMPARE(got.size(), std::size_t(2));
        QVERIFY(got[0] == (Fill{0, 0, 50, 1, Ink::Phase, SpanKind::Decode, 255}));
        QVERIFY(got[1] == (Fill{50, 0, 50, 1, Ink::Phase, SpanKind::Decode, 255 * 4 / 7}));
    }

    // Rasterising simulated runs of every policy family at random windows: every fill
    // has a size, stays in the plot's columns (a kill mark may reach 2 px past the
    // right edge), lies on a visible line, and density lines never overlap; a set cancel
    // flag returns at once with nothing.
    void rasterInvariants() {
        Rng r(11);
        for (const auto& [name, rows] : policyRows(400, 40)) {
            const double end = timeExtent(rows).second;
            for (int k = 0; k < 20; ++k) {
                const double t0 = unif(r, -1, end), t1 = t0 + unif(r, 1e-3, end);
                const int width = int(r.uniformInt(1, 1500)), height = int(r.uniformInt(1, 900));
                const double row_h = r.bernoulli(0.5) ? unif(r, 0.01, 1) : unif(r, 1, 20);
                const double scroll = unif(r, 0, std::max(0.0, rows.size() * row_h - height));
                const RasterView v{{t0, t1, double(width)}, height, row_h, scroll};
                const auto fills = rasterize(rows, nullptr, k % 2 ? &rows : nullptr, v);
                std::vector<std::pair<int, int>> dense; // (y, x) starts per line
                for (const Fill& f : fills) {
                    QVERIFY(f.w >= 1 && f.h >= 1);
                    QVERIFY(f.x >= 0 && f.x + f.w <= width + 2);
                    QVERIFY2(f.y >= -1 - int(row_h) && f.y < height + int(row_h) + 1,
                             qPrintable(QString("y %1 h %2 row_h %3 scroll %4")
                                            .arg(f.y)
                                            .arg(height)
                                            .arg(row_h, 0, 'g', 17)
                                            .arg(scroll, 0, 'g', 17) +
                                        QString(" ink %1 x %2 w %3 fh %4")
                                            .arg(int(f.ink))
                                            .arg(f.x)
                                            .arg(f.w)
                                            .arg(f.h)));
                    if (row_h < 1) {
                        QCOMPARE(f.h, 1);
                        dense.push_back({f.y, f.x});
                    }
                }
                // Density fills: per line, runs in increasing x that do not overlap.
                for (std::size_t i = 1; i < fills.size() && row_h < 1; ++i)
                    if (fills[i].y == fills[i - 1].y)
                        QVERIFY(fills[i].x >= fills[i - 1].x + fills[i - 1].w);
                std::atomic<bool> stop{true};
                QVERIFY(rasterize(rows, nullptr, nullptr, v, &stop).empty());
            }
        }
    }

    // Density lines against a column-by-column reference: for every pixel line and column,
    // the most telling phase among the line's rows (queued < robot < folded < decode <
    // suspended < prefill < preempted) and the shade of how many of the line's rows have a
    // span there; runs of equal (phase, shade) in the rasteriser's fills, on runs of every
    // policy family at random windows.
    void rasterDenseMatchesColumns() {
        const SpanKind order[] = {SpanKind::Queued,   SpanKind::Robot,     SpanKind::Folded,
                                  SpanKind::Decode,   SpanKind::Suspended, SpanKind::Prefill,
                                  SpanKind::Preempted};
        auto rankOf = [&](SpanKind k) {
            return int(std::find(std::begin(order), std::end(order), k) - std::begin(order));
        };
        Rng r(5);
        long lines_checked = 0;
        for (const auto& [name, rows] : policyRows(600, 60)) {
            const double end = timeExtent(rows).second;
            for (int k = 0; k < 6; ++k) {
                const double t0 = unif(r, -1, end * 0.5), t1 = t0 + unif(r, 1e-2, end);
                const int width = int(r.uniformInt(1, 700)), height = int(r.uniformInt(1, 300));
                const double row_h = unif(r, 0.05, 0.99);
                const double scroll = unif(r, 0, std::max(0.0, rows.size() * row_h - height));
                const RasterView v{{t0, t1, double(width)}, height, row_h, scroll};
                const auto fills = rasterize(rows, nullptr, nullptr, v);
                // The reference: per line, per column, counts by phase.
                std::map<int, std::vector<std::array<int, 7>>> cover;
                std::map<int, int> line_rows;
                const auto [first, last] = visibleRows(rows.size(), v);
                for (long i = first; i < last; ++i) {
                    const int y = int(std::floor(double(i) * row_h - scroll));
                    ++line_rows[y];
                    auto& cols = cover[y];
                    cols.resize(std::size_t(width));
                    const Row& row = rows[std::size_t(i)];
                    if (row.end < t0 || row.arrival > t1) continue;
                    std::vector<Draw> draws;
                    fold(row.spans, t0, t1, v.axis.secondsPerPixel(), draws);
                    for (const Draw& d : draws) {
                        const int x0 = std::clamp(int(std::floor(v.axis.toX(d.t0))), 0, width - 1);
                        const int x1 = std::clamp(int(std::ceil(v.axis.toX(d.t1))), x0 + 1, width);
                        for (int x = x0; x < x1; ++x)
                            ++cols[std::size_t(x)][std::size_t(rankOf(d.kind))];
                    }
                }
                std::vector<Fill> want;
                for (const auto& [y, cols] : cover) {
                    int run_start = 0, run_key = -1;
                    for (int x = 0; x <= width; ++x) {
                        int key = -1;
                        if (x < width) {
                            int top = -1, total = 0;
                            for (int p = 6; p >= 0; --p) {
                                total += cols[std::size_t(x)][std::size_t(p)];
                                if (top < 0 && cols[std::size_t(x)][std::size_t(p)] > 0) top = p;
                            }
                            if (top >= 0)
                                key =
                                    top * (kShades + 1) +
                                    std::clamp((total * kShades + line_rows[y] - 1) / line_rows[y],
                                               1, kShades);
                        }
                        if (key == run_key) continue;
                        if (run_key >= 0)
                            want.push_back({run_start, y, x - run_start, 1, Ink::Phase,
                                            order[run_key / (kShades + 1)],
                                            std::uint8_t(255 * (run_key % (kShades + 1) + 1) /
                                                         (kShades + 1))});
                        run_start = x;
                        run_key = key;
                    }
                    ++lines_checked;
                }
                QCOMPARE(fills.size(), want.size());
                for (std::size_t i = 0; i < want.size(); ++i)
                    QVERIFY2(fills[i] == want[i],
                             qPrintable(QString("%1 fill %2: x %3 y %4 w %5 vs x %6 y %7 w %8")
                                            .arg(QString::fromStdString(name))
                                            .arg(i)
                                            .arg(fills[i].x)
                                            .arg(fills[i].y)
                                            .arg(fills[i].w)
                                            .arg(want[i].x)
                                            .arg(want[i].y)
                                            .arg(want[i].w)));
            }
        }
        QVERIFY(lines_checked > 1000);
    }

    // ECDF by hand: values 3, 1, 2, 2, NaN: (1, 1/4), (2, 3/4), (3, 1). A large sample
    // is cut to the budget but keeps min, max and every rank from p99 up, and is monotone.
    void ecdfPoints() {
        const auto c = ecdf({3, 1, 2, 2, std::nan("")});
        QCOMPARE(c.size(), std::size_t(3));
        QCOMPARE(c[0], std::make_pair(1.0, 0.25));
        QCOMPARE(c[1], std::make_pair(2.0, 0.75));
        QCOMPARE(c[2], std::make_pair(3.0, 1.0));
        std::vector<double> big;
        Rng r(9);
        for (int i = 0; i < 20000; ++i) big.push_back(std::exp(3 * r.uniform()));
        const auto e = ecdf(big, 600);
        QVERIFY(e.size() <= 602);
        QCOMPARE(e.front().first, *std::min_element(big.begin(), big.end()));
        QCOMPARE(e.back().first, *std::max_element(big.begin(), big.end()));
        QCOMPARE(e.back().second, 1.0);
        int tail = 0;
        for (std::size_t i = 1; i < e.size(); ++i) {
            QVERIFY(e[i].first > e[i - 1].first && e[i].second > e[i - 1].second);
            tail += e[i].second > 0.99;
        }
        QVERIFY(tail >= 199); // the top 1 %: 200 values, each its own point
        QVERIFY(ecdf({}).empty());
    }

    // Log histogram by hand: 1, 10, 100, 1000 over 3 bins (edges 1, 10, 100, 1000): counts
    // 1, 1, 2 (the maximum falls in the last bin). Counts always sum to the positive values.
    void logHistogramBins() {
        const auto h = logHistogram({1, 10, 100, 1000, 0, -5, std::nan("")}, 3);
        QCOMPARE(h.edges.size(), std::size_t(4));
        KAIROS_COMPARE_NEAR(h.edges[1], 10.0, 1e-9);
        KAIROS_COMPARE_NEAR(h.edges[3], 1000.0, 1e-9);
        QCOMPARE(h.counts, (std::vector<long>{1, 1, 2}));
        QVERIFY(logHistogram({}, 5).counts.empty());
        QCOMPARE(logHistogram({7, 7}, 4).counts[0] + logHistogram({7, 7}, 4).counts[3], 2L);
    }

    // A step series downsampled into buckets keeps each bucket's min and max: a spike of
    // one point survives. Series: 0 from t=0, 10 at t=1, 100 at t=1.5 (spike), 10 at
    // t=1.6, 0 at t=3. Buckets of 1 s over [0, 4): [0,1) 0..0, [1,2) 10..100, [2,3)
    // 10..10, [3,4) 0..0.
    void downsampleKeepsPeaks() {
        const std::vector<std::pair<double, double>> p{
            {0, 0}, {1, 10}, {1.5, 100}, {1.6, 10}, {3, 0}};
        const auto b = downsample(p, 0, 4, 4);
        QCOMPARE(b.size(), std::size_t(4));
        QCOMPARE(b[0].lo, 0.0);
        QCOMPARE(b[0].hi, 0.0);
        QCOMPARE(b[1].lo, 10.0);
        QCOMPARE(b[1].hi, 100.0);
        QCOMPARE(b[2].lo, 10.0);
        QCOMPARE(b[2].hi, 10.0);
        QCOMPARE(b[3].hi, 0.0);
        QCOMPARE(b[1].t, 1.5);
        // A window inside a step starts from the value in force.
        const auto c = downsample(p, 2.0, 2.5, 1);
        QCOMPARE(c.size(), std::size_t(1));
        QCOMPARE(c[0].lo, 10.0);
        QVERIFY(downsample(p, -2, -1, 3).empty()); // before the series: nothing known
    }

    // The KV series of a run never exceeds the capacity and its peak is the summary's.
    void kvSeriesPeak() {
        const Workload w = test::generated(200, 40, "uniform:100,400", "uniform:10,200");
        EngineLimits lim;
        lim.kv_capacity_tokens = 5000;
        auto s = test::policy("fcfs");
        const RunLog log =
            simulate(w, EteModel(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7}), *s, lim);
        const auto kv = kvSeries(log);
        double peak = 0;
        for (const auto& [t, v] : kv) peak = std::max(peak, v);
        std::int64_t want = 0;
        for (const IterSpan& it : log.iters) want = std::max(want, it.kvPeak());
        QCOMPARE(peak, double(want));
        QVERIFY(peak <= 5000);
        const auto b = downsample(kv, kv.front().first, kv.back().first, 50);
        double bpeak = 0;
        for (const auto& x : b) bpeak = std::max(bpeak, x.hi);
        QCOMPARE(bpeak, peak);
    }

    // Through an idle gap the KV series holds what the requests still in the system hold:
    // nothing when none is. It kept the gap's last iteration's value (the robot sample's
    // KV chart never fell below ~1,200 tokens while nobody ran). Every registered policy on
    // a sparse chat trace, and timely on the robot sample (suspended plans keep their KV
    // through gaps); the run log's JSONL round trip keeps the gaps' values.
    void kvSeriesEmptiesWhenIdle() {
        const Workload chat = test::generated(60, 0.3, "uniform:100,400", "uniform:10,60");
        const Workload robot =
            readWorkload(std::string(KAIROS_SOURCE_DIR) + "/sample_traces/wid1_like.jsonl");
        const EteModel model(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7});
        EngineLimits lim;
        lim.kv_capacity_tokens = 50000;
        std::vector<std::pair<std::string, const Workload*>> runs;
        for (const std::string& name : policyNames()) runs.emplace_back(name, &chat);
        runs.emplace_back("timely", &robot);
        int empty_gaps = 0, runs_done = 0;
        for (const auto& [name, w] : runs) {
            std::unique_ptr<Scheduler> sched;
            try {
                sched = test::policy(name);
            } catch (const std::exception&) {
                continue; // a policy that needs what this workload lacks
            }
            RunLog log;
            try {
                log = simulate(*w, model, *sched, lim);
            } catch (const std::exception&) {
                continue;
            }
            ++runs_done;
            std::vector<double> in(w->size(), -1), out(w->size(), -1);
            for (const Event& e : log.events) {
                if (e.ev == Ev::Arrive) in[std::size_t(e.req)] = e.t;
                if (e.ev == Ev::Finish || e.ev == Ev::Kill) out[std::size_t(e.req)] = e.t;
            }
            const auto kv = kvSeries(log);
            auto at = [&](double t) { // the step's value in force at t
                double v = 0;
                for (const auto& [x, y] : kv)
                    if (x <= t) v = y;
                return v;
            };
            for (std::size_t i = 0; i + 1 < log.iters.size(); ++i) {
                const double a = log.iters[i].tEnd(), b = log.iters[i + 1].t0;
                if (!(b > a)) continue;
                const double mid = (a + b) / 2;
                int present = 0;
                for (std::size_t r = 0; r < w->size(); ++r)
                    present += in[r] <= mid && (out[r] < 0 || out[r] > mid);
                if (present > 0) continue;
                ++empty_gaps;
                QVERIFY2(at(mid) == 0, qPrintable(QStringLiteral("%1: KV %2 at %3 s with no "
                                                                 "request in the system")
                                                      .arg(QString::fromStdString(name))
                                                      .arg(at(mid))
                                                      .arg(mid)));
            }
            std::stringstream io;
            writeRunLogJsonl(log, io);
            const RunLog back = readRunLogJsonl(io, "roundtrip");
            QVERIFY(kvSeries(back) == kv);
        }
        QVERIFY(runs_done >= 10);
        QVERIFY2(empty_gaps > 100, qPrintable(QString::number(empty_gaps)));
    }
};

QTEST_GUILESS_MAIN(TestLod)
#include "tst_lod.moc"
