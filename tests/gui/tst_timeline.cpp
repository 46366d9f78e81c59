// The timeline and KV chart widgets, offscreen: what they paint, where the mouse points,
// how zoom and pan move the shared range, and the paint cost with 20,000 requests.
#include "exec/execution_model.h"
#include "kv_chart.h"
#include "length_histogram.h"
#include "lod/timeline.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "sim/fleet.h"
#include "time_range.h"
#include "timeline_view.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <QElapsedTimer>
#include <QImage>
#include <QLabel>
#include <QPainter>
#include <QScrollBar>
#include <QSignalSpy>
#include <QtTest>
#include <algorithm>
#include <set>

using namespace kairos;

namespace {
struct Run {
    Workload w;
    RunLog log;
    std::shared_ptr<const std::vector<lod::Row>> rows;
};

Run simulateChat(std::size_t n, double rate) {
    Run r;
    GenerateSpec g;
    g.count = n;
    g.arrivals.rate = rate;
    g.prompt = LengthDist::parse("lognormal:300,0.8,max=2000");
    g.output = LengthDist::parse("lognormal:100,0.9,max=800");
    r.w = generateWorkload(g);
    EngineLimits lim;
    lim.kv_capacity_tokens = 40000;
    auto s = makeScheduler("fcfs");
    r.log = simulate(r.w, EteModel(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7}), *s, lim);
    r.rows = std::make_shared<const std::vector<lod::Row>>(lod::buildRows(r.log, &r.w));
    return r;
}

double extentEnd(const std::vector<lod::Row>& rows) {
    return lod::timeExtent(rows).second;
}

int countColor(const QImage& img, QColor c) {
    int n = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) n += img.pixelColor(x, y) == c;
    return n;
}
} // namespace

class TestTimeline : public QObject {
    Q_OBJECT
private slots:
    // Rendering a run paints decode bars where the requests decode, and the request under
    // a point is the one whose row and time it is.
    void paintsAndPicks() {
        const Run run = simulateChat(200, 5);
        views::TimeRange range;
        range.setExtent(0, extentEnd(*run.rows));
        views::TimelineView view(&range);
        view.resize(1000, 600);
        view.setRows(run.rows);
        view.setRowHeight(10);
        QImage img(1000, 600, QImage::Format_RGB32);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            view.render(p, img.rect(), 0);
        }
        QVERIFY(view.lastDrawCount() > 50);
        QVERIFY(countColor(img, views::TimelineView::colorOf(lod::SpanKind::Decode)) > 1000);
        // Request 7: its row is at y = header + 7 * 10 .. +9; in the middle of its decode
        // span it is picked, with "decoding" in the description.
        const lod::Row& r = (*run.rows)[7];
        const lod::Span* dec = nullptr;
        for (const auto& s : r.spans)
            if (s.kind == lod::SpanKind::Decode) dec = &s;
        QVERIFY(dec);
        const double t = 0.5 * (dec->t0 + dec->t1);
        const double width = view.viewport()->width() - views::TimelineView::kGutter;
        const int x = views::TimelineView::kGutter +
                      int((t - range.from()) / (range.to() - range.from()) * width);
        QString what;
        QCOMPARE(view.requestAt(QPoint(x, views::TimelineView::kHeader + 7 * 10 + 4), &what), 7);
        QVERIFY2(what.contains("decoding"), qPrintable(what));
        QCOMPARE(view.requestAt(QPoint(5, 200)), -1); // the gutter
        // A click (press and release without moving) reports the request and the time.
        QSignalSpy clicked(&view, &views::TimelineView::requestClicked);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {},
                          QPoint(x, views::TimelineView::kHeader + 7 * 10 + 4));
        QCOMPARE(clicked.size(), 1);
        QCOMPARE(clicked.at(0).at(0).toInt(), 7);
        QVERIFY(std::abs(clicked.at(0).at(1).toDouble() - t) <
                2 * (range.to() - range.from()) / width);
        // A double-click (Nsight's habit) zooms to the request's life, a twentieth of it
        // spare either side; Shift+M's zoomBack returns to the view before.
        const double from = range.from(), to = range.to();
        QTest::mouseDClick(view.viewport(), Qt::LeftButton, {},
                           QPoint(x, views::TimelineView::kHeader + 7 * 10 + 4));
        const double a = r.spans.front().t0, b = r.spans.back().t1, spare = (b - a) / 20;
        QCOMPARE(range.from(), std::max(0.0, a - spare));
        QCOMPARE(range.to(), b + spare);
        QVERIFY(range.zoomBack());
        QCOMPARE(range.from(), from);
        QCOMPARE(range.to(), to);
        // On no request: no zoom.
        QTest::mouseDClick(view.viewport(), Qt::LeftButton, {}, QPoint(5, 200));
        QCOMPARE(range.from(), from);
    }

    // Agent lanes: the request under the cursor is the lane's member at that time, its
    // description names the agent and lane; robot spans draw in the lane's lower part.
    void agentLanesPick() {
        const Workload w =
            readWorkload(std::string(KAIROS_SOURCE_DIR) + "/sample_traces/wid1_like.jsonl");
        EngineLimits lim;
        lim.kv_capacity_tokens = 100000;
        auto s = makeScheduler("vllm_stream");
        const RunLog log =
            simulate(w, EteModel(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7}), *s, lim);
        auto rows = std::make_shared<const std::vector<lod::Row>>(lod::buildRows(log, &w));
        auto lanes = std::make_shared<const std::vector<lod::Row>>(lod::agentRows(*rows, w));
        views::TimeRange range;
        range.setExtent(0, extentEnd(*rows));
        views::TimelineView view(&range);
        view.resize(1000, 600);
        view.setRows(lanes, rows);
        view.setRowHeight(12);
        QVERIFY(view.agentLanes());
        // The second member of the first lane with two, in the middle of its first span.
        const auto k = std::find_if(lanes->begin(), lanes->end(),
                                    [](const lod::Row& l) { return l.members.size() >= 2; }) -
                       lanes->begin();
        QVERIFY(k < long(lanes->size()));
        const lod::Row& lane = (*lanes)[std::size_t(k)];
        const lod::Row& req = (*rows)[std::size_t(lane.members[1].id)];
        range.setRange(req.arrival - 1, req.end + 1);
        const lod::Span& sp = req.spans.front();
        const double width = view.viewport()->width() - views::TimelineView::kGutter;
        const int x =
            views::TimelineView::kGutter + int(std::lround((0.5 * (sp.t0 + sp.t1) - range.from()) /
                                                           (range.to() - range.from()) * width));
        QString what;
        QCOMPARE(view.requestAt(QPoint(x, views::TimelineView::kHeader + int(k) * 12 + 3), &what),
                 int(req.id));
        QVERIFY2(what.startsWith(QStringLiteral("agent %1, lane %2\nrequest %3")
                                     .arg(lane.agent)
                                     .arg(lane.lane + 1)
                                     .arg(req.id)),
                 qPrintable(what));
        // Robot execution is painted.
        range.setExtent(0, extentEnd(*rows));
        QImage img(1000, 600, QImage::Format_RGB32);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            view.render(p, img.rect(), 0);
        }
        QVERIFY(countColor(img, views::TimelineView::colorOf(lod::SpanKind::Robot)) > 100);
        // A pinned run is not overlaid on lanes (their packing differs between runs).
        view.setPinnedRows(rows);
        QVERIFY(!view.showsPinned());
    }

    // Compare: the pinned run's phases in a faded lower lane of each request's row; the
    // description tells the pinned run's end and the change in latency.
    void pinnedLane() {
        const Run a = simulateChat(100, 5);
        Run b;
        {
            EngineLimits lim;
            lim.kv_capacity_tokens = 40000;
            auto s = makeScheduler("sjf");
            b.log = simulate(a.w, EteModel(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7}), *s, lim);
            b.rows = std::make_shared<const std::vector<lod::Row>>(lod::buildRows(b.log, &a.w));
        }
        views::TimeRange range;
        range.setExtent(0, extentEnd(*a.rows));
        views::TimelineView view(&range);
        view.resize(1000, 600);
        view.setRows(a.rows);
        view.setRowHeight(12); // bars 11 px: current 7, pinned 4
        auto paint = [&] {
            QImage img(1000, 600, QImage::Format_RGB32);
            img.fill(Qt::white);
            QPainter p(&img);
            view.render(p, img.rect(), 0);
            return img;
        };
        const QImage plain = paint();
        const long plain_draws = view.lastDrawCount();
        view.setPinnedRows(b.rows);
        QVERIFY(view.showsPinned());
        const QImage cmp = paint();
        QVERIFY(view.lastDrawCount() > plain_draws);
        // Row 5: where the pinned run decodes, its lane (rows 8-10 of the bar) is decode
        // blue faded over the background: not white, not full blue, bluer than red.
        const lod::Row& pr = (*b.rows)[5];
        const lod::Span* dec = nullptr;
        for (const auto& s : pr.spans)
            if (s.kind == lod::SpanKind::Decode) dec = &s;
        QVERIFY(dec);
        const double width = view.viewport()->width() - views::TimelineView::kGutter;
        const int x =
            views::TimelineView::kGutter +
            int((0.5 * (dec->t0 + dec->t1) - range.from()) / (range.to() - range.from()) * width);
        const int y = views::TimelineView::kHeader + 5 * 12 + 9;
        const QColor c = cmp.pixelColor(x, y);
        QVERIFY(c != QColor(Qt::white));
        QVERIFY(c != views::TimelineView::colorOf(lod::SpanKind::Decode));
        QVERIFY(c.blue() > c.red());
        QCOMPARE(plain.pixelColor(x, y) == cmp.pixelColor(x, y), false);
        QString what;
        view.requestAt(QPoint(x, views::TimelineView::kHeader + 5 * 12 + 3), &what);
        QVERIFY2(what.contains(QStringLiteral("pinned run: end %1 s").arg(pr.end, 0, 'f', 3)),
                 qPrintable(what));
        // Another workload's run (different count) is not overlaid.
        auto other =
            std::make_shared<const std::vector<lod::Row>>(a.rows->begin(), a.rows->begin() + 50);
        view.setPinnedRows(other);
        QVERIFY(!view.showsPinned());
    }

    // Rows thinner than a pixel share lines; on a shared line the most telling phase
    // wins each column, shaded by how many of the line's requests are in the system. Two
    // rows on one line (0.5 px rows): A decodes over [0, 10) s, B is queued over [0, 20) s;
    // 1 s per pixel: columns 0-9 decode (both: full), 10-19 queued (one of two: half
    // shade), 20+ empty.
    void denseRowsMerge() {
        auto rows = std::make_shared<std::vector<lod::Row>>(2);
        (*rows)[0].spans = {{0, 10, lod::SpanKind::Decode}};
        (*rows)[0].end = 10;
        (*rows)[1].id = 1;
        (*rows)[1].spans = {{0, 20, lod::SpanKind::Queued}};
        (*rows)[1].end = 20;
        views::TimeRange range;
        range.setExtent(0, 100);
        views::TimelineView view(&range);
        view.setRows(rows);
        view.setRowHeight(0.5);
        // (The legend wraps in 100 px: the header is as tall as it says.)
        const int w = 100 + views::TimelineView::kGutter, top = view.headerHeight(w);
        QImage img(w, top + 10, QImage::Format_RGB32);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            view.render(p, img.rect(), 0);
        }
        const int x0 = views::TimelineView::kGutter;
        for (int x = 0; x < 10; ++x)
            QCOMPARE(img.pixelColor(x0 + x, top),
                     views::TimelineView::colorOf(lod::SpanKind::Decode));
        // Columns 10-19: one of the line's two requests in the system: its phase's hue at
        // the middle shade (alpha 4/7 over the background), a density row.
        const QColor q = views::TimelineView::colorOf(lod::SpanKind::Queued);
        auto over_white = [](int c) { return 255 + (c - 255) * 4.0 / 7.0; };
        for (int x = 10; x < 20; ++x) {
            const QColor got = img.pixelColor(x0 + x, top);
            QVERIFY2(std::abs(got.red() - over_white(q.red())) <= 2 &&
                         std::abs(got.green() - over_white(q.green())) <= 2 &&
                         std::abs(got.blue() - over_white(q.blue())) <= 2,
                     qPrintable(got.name()));
        }
        QCOMPARE(img.pixelColor(x0 + 25, top), QColor(Qt::white));
        QCOMPARE(img.pixelColor(x0 + 5, top + 1), QColor(Qt::white)); // one line only
    }

    // The legend names what the run drew (no "preempted" in a run without preemptions; a
    // robot's execution and kills where there are some) and wraps onto a second line where
    // the width ends, the header growing by a line (at 1366x768 "robot executing", "folded"
    // and "killed" were cut off the right edge); a click still picks the row under it.
    void legendNamesWhatIsDrawnAndWraps() {
        auto rows = std::make_shared<std::vector<lod::Row>>(2);
        (*rows)[0].spans = {{0, 2, lod::SpanKind::Queued},
                            {2, 3, lod::SpanKind::Prefill},
                            {3, 10, lod::SpanKind::Decode}};
        (*rows)[0].robot = {{10, 14, lod::SpanKind::Robot}};
        (*rows)[0].end = 10;
        (*rows)[0].finished = true;
        (*rows)[1].id = 1;
        (*rows)[1].spans = {{0, 5, lod::SpanKind::Queued}};
        (*rows)[1].end = 5;
        (*rows)[1].killed = true;
        views::TimeRange range;
        range.setExtent(0, 20);
        views::TimelineView view(&range);
        view.setRows(rows);
        QCOMPARE(view.legendEntries(), QStringList({"queued", "prefill", "decoding",
                                                    "robot executing", "folded", "killed"}));
        QCOMPARE(view.headerHeight(2000), views::TimelineView::kHeader);
        const int narrow = views::TimelineView::kGutter + 230;
        QVERIFY2(view.headerHeight(narrow) > views::TimelineView::kHeader,
                 qPrintable(QString::number(view.headerHeight(narrow))));
        view.resize(narrow, 200);
        view.setRowHeight(10);
        const int head = view.headerHeight(view.viewport()->width());
        QCOMPARE(view.plotRect().top(), head);
        const int x = view.xOfTime(1);
        QCOMPARE(view.requestAt(QPoint(x, head + 10 + 4)), 1);
        QCOMPARE(view.requestAt(QPoint(x, head - 2)), -1); // on the header: no request
        // Preempted spans appear in the legend with the run that has them.
        (*rows)[1].spans.push_back({5, 6, lod::SpanKind::Preempted});
        view.setRows(rows);
        QVERIFY(view.legendEntries().contains("preempted"));
    }

    // A large trace's frame is built off the GUI thread: the first paint asks for it and
    // shows nothing stale; the finished frame is what render() paints (within rounding
    // of the image's premultiplied alpha); a new window shows the last frame moved there
    // until its own arrives; windows asked for in a burst build one frame; a view
    // destroyed with a build in flight is safe (ASan); finishFrame() builds at once.
    void frameOffTheGuiThread() {
        const Run run = simulateChat(20000, 40);
        views::TimeRange range;
        const double end = extentEnd(*run.rows);
        range.setExtent(0, end);
        views::TimelineView view(&range);
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setRows(run.rows);
        QVERIFY(view.rowHeight() < 1); // 20,000 rows fit: density rows
        view.viewport()->repaint();
        QTRY_VERIFY(view.frameReady());
        const long built = view.framesBuilt();
        QVERIFY(built >= 1);
        const QImage shown =
            view.viewport()->grab().toImage().convertToFormat(QImage::Format_RGB32);
        QImage ref(shown.size(), QImage::Format_RGB32);
        ref.fill(view.palette().color(QPalette::Base));
        {
            QPainter p(&ref);
            view.render(p, ref.rect(), view.verticalScrollBar()->value());
        }
        int differ = 0, plot_pixels = 0;
        for (int y = 0; y < ref.height(); ++y)
            for (int x = 0; x < ref.width(); ++x) {
                const QColor a = shown.pixelColor(x, y), b = ref.pixelColor(x, y);
                differ += std::abs(a.red() - b.red()) > 2 || std::abs(a.green() - b.green()) > 2 ||
                          std::abs(a.blue() - b.blue()) > 2;
                plot_pixels += b != view.palette().color(QPalette::Base);
            }
        QCOMPARE(differ, 0);
        QVERIFY(plot_pixels > 10000);

        // Zoom into the middle: the next paint shows the last frame scaled there (not an
        // empty plot) while the new one is built.
        range.setRange(end * 0.4, end * 0.6);
        const QImage stale = view.viewport()->grab().toImage();
        QVERIFY(!view.frameReady());
        int painted = 0;
        const QColor base = view.palette().color(QPalette::Base);
        for (int y = views::TimelineView::kHeader; y < stale.height(); y += 3)
            for (int x = views::TimelineView::kGutter; x < stale.width(); x += 3)
                painted += stale.pixelColor(x, y) != base;
        QVERIFY2(painted > 1000, qPrintable(QString::number(painted)));
        QTRY_VERIFY(view.frameReady());
        QCOMPARE(view.framesBuilt(), built + 1);

        // A burst of windows (a drag): only the last one's frame is kept.
        for (int i = 0; i < 6; ++i) {
            range.setRange(end * 0.01 * i, end * (0.5 + 0.01 * i));
            view.viewport()->repaint();
        }
        QTRY_VERIFY(view.frameReady());
        QCOMPARE(view.framesBuilt(), built + 2);

        // finishFrame: the current window's frame now, on this thread.
        range.setRange(0, end / 3);
        view.finishFrame();
        QVERIFY(view.frameReady());

        // Destroyed with a build in flight.
        auto* other = new views::TimelineView(&range);
        other->resize(900, 600);
        other->show();
        other->setRows(run.rows);
        other->viewport()->repaint();
        delete other;
        QTest::qWait(50); // nothing may arrive for it
    }

    // The wheel zooms around the cursor, dragging pans; both through the shared range.
    void zoomAndPan() {
        const Run run = simulateChat(100, 5);
        views::TimeRange range;
        range.setExtent(0, 100);
        views::TimelineView view(&range);
        view.resize(1072, 400);
        view.setRows(run.rows);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const int w = view.viewport()->width() - views::TimelineView::kGutter;
        const QPoint at(views::TimelineView::kGutter + w / 2, 100);
        const double anchor = range.from() + (range.to() - range.from()) * 0.5;
        QWheelEvent wheel(at, view.viewport()->mapToGlobal(at), QPoint(), QPoint(0, 120),
                          Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(view.viewport(), &wheel);
        QCOMPARE_LT(range.to() - range.from(), 100.0);
        QVERIFY(std::abs(range.from() + (range.to() - range.from()) * 0.5 - anchor) < 1e-9);
        const double before = range.from(), spp = (range.to() - range.from()) / w;
        QTest::mousePress(view.viewport(), Qt::LeftButton, {}, at);
        QTest::mouseMove(view.viewport(), at - QPoint(50, 0));
        QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, at - QPoint(50, 0));
        QVERIFY(std::abs(range.from() - (before + 50 * spp)) < 1e-9);
    }

    // The KV chart follows the shared range, one bucket per pixel of its plot.
    // Prefix caching and replicas on the timeline: two replicas behind round robin, every
    // prompt beginning with the same 1,000-token system prompt. Each replica's second
    // request finds the prompt's 62 full 16-token blocks (992 tokens) cached, so its
    // prefill bar's lower 992/prompt is drawn in the cached colour; each row's gutter
    // stripe is its replica's colour. The KV chart draws cached, unreferenced blocks as a
    // band above the tokens in use.
    void cachedPrefillAndReplicas() {
        GenerateSpec g;
        g.count = 12;
        g.arrivals.rate = 0.5; // one at a time: nothing else in the cache's way
        g.prompt = LengthDist::parse("lognormal:300,0.5,max=1500");
        g.output = LengthDist::parse("lognormal:40,0.5,max=100");
        g.system_prompt_tokens = 1000;
        const Workload w = generateWorkload(g);
        const EteModel model(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7});
        PolicyConfig pc;
        pc.name = "fcfs";
        FleetRun fr;
        fr.workload = &w;
        fr.model = &model;
        fr.make_scheduler = [&pc] { return makeScheduler(pc); };
        fr.limits.kv_capacity_tokens = 40000;
        fr.limits.block_size = 16;
        fr.limits.prefix_caching = true;
        fr.fleet.replicas = 2;
        fr.fleet.router = Router::RoundRobin;
        const RunLog log = simulateFleet(fr);
        auto rows = std::make_shared<const std::vector<lod::Row>>(lod::buildRows(log, &w));
        // Round robin: requests alternate; the first on each replica finds nothing, the
        // others the system prompt (their own prompts differ after it).
        for (std::size_t i = 0; i < rows->size(); ++i) {
            const lod::Row& r = (*rows)[i];
            QCOMPARE(r.replica, int(i % 2));
            const lod::Span* pre = nullptr;
            for (const auto& s : r.spans)
                if (s.kind == lod::SpanKind::Prefill) pre = &s;
            QVERIFY(pre);
            const float want = i < 2 ? 0.0f : float(992.0 / w.requests[i].prompt_tokens);
            QCOMPARE(pre->cached, want);
        }
        // Zoomed on request 2's prefill, rows 16 px: the bar is amber over pale amber in
        // that proportion.
        const lod::Row& r2 = (*rows)[2];
        const lod::Span* pre = nullptr;
        for (const auto& s : r2.spans)
            if (s.kind == lod::SpanKind::Prefill) pre = &s;
        views::TimeRange range;
        range.setExtent(0, extentEnd(*rows));
        range.setRange(pre->t0 - 0.2 * (pre->t1 - pre->t0), pre->t1 + 0.2 * (pre->t1 - pre->t0));
        views::TimelineView view(&range);
        view.resize(800, 400);
        view.setRows(rows);
        view.setRowHeight(16);
        QImage img(800, 400, QImage::Format_RGB32);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            view.render(p, img.rect(), 0);
        }
        const int width = view.viewport()->width() - views::TimelineView::kGutter;
        const int x = views::TimelineView::kGutter + width / 2;
        const int top = views::TimelineView::kHeader + 2 * 16, bar = 15;
        int cached = 0, computed = 0;
        for (int y = top; y < top + bar; ++y) {
            const QColor c = img.pixelColor(x, y);
            cached += c == views::TimelineView::colorOf(lod::SpanKind::Cached);
            computed += c == views::TimelineView::colorOf(lod::SpanKind::Prefill);
        }
        QCOMPARE(cached + computed, bar);
        QCOMPARE(cached, std::clamp(int(std::lround(bar * double(pre->cached))), 1, bar - 1));
        // The gutter's stripe: row 2 on replica 0, row 3 on replica 1.
        QCOMPARE(img.pixelColor(1, top + 4), views::TimelineView::replicaColor(0));
        QCOMPARE(img.pixelColor(1, top + 16 + 4), views::TimelineView::replicaColor(1));
        QVERIFY(views::TimelineView::replicaColor(0) != views::TimelineView::replicaColor(1));
        if (const QByteArray dir = qgetenv("KAIROS_SHOTS"); !dir.isEmpty())
            img.save(QString::fromUtf8(dir) + QStringLiteral("/timeline_cached.png"));
        // KV held is in use plus idle cached blocks: never below in use, above it once the
        // first requests are done and their blocks stay cached.
        const auto in_use = lod::kvSeries(log), held = lod::kvSeries(log, true);
        QCOMPARE(held.size(), in_use.size());
        bool above = false;
        for (std::size_t i = 0; i < held.size(); ++i) {
            QCOMPARE(held[i].first, in_use[i].first);
            QVERIFY(held[i].second >= in_use[i].second);
            above = above || held[i].second > in_use[i].second;
        }
        QVERIFY(above);
    }

    // A frame built before its rows reach the view (the simulation's worker): the view
    // takes it when it looks as planned, the next run's extent followed (a whole view
    // stays whole, a zoomed one stays put) and is ready without building; a plan made
    // before a resize, or for rows of another count in a view zoomed vertically, is not
    // taken (or not built), and the view builds its own frame.
    void prebuiltFrameTaken() {
        const Run a = simulateChat(6000, 40), b = simulateChat(6000, 30);
        views::TimeRange range;
        range.setExtent(0, extentEnd(*a.rows));
        views::TimelineView view(&range);
        view.setAsyncRows(0);
        view.resize(900, 600);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setRows(a.rows);
        view.finishFrame();
        const auto [lo, hi] = lod::timeExtent(*b.rows);
        QVERIFY(hi != extentEnd(*a.rows));
        auto offer = [&](const views::TimelineView::FramePlan& plan, bool whole) {
            auto f = views::TimelineView::prebuildFrame(plan, b.rows, lo, hi, whole);
            if (!f) return false;
            view.setRows(b.rows);
            if (whole)
                range.setExtent(lo, hi);
            else
                range.followExtent(lo, hi);
            return view.offerFrame(std::move(*f));
        };
        const long built = view.framesBuilt();
        QVERIFY(offer(view.planFrame(), false)); // the whole run in view: the whole new one
        QVERIFY(view.frameReady());
        QCOMPARE(range.from(), lo);
        QCOMPARE(range.to(), hi);
        QCOMPARE(view.framesOffered(), 1L);
        // Zoomed in: the window stays where it was.
        view.setRows(a.rows);
        range.setExtent(0, extentEnd(*a.rows));
        range.setRange(hi * 0.2, hi * 0.3);
        view.finishFrame();
        QVERIFY(offer(view.planFrame(), false));
        QCOMPARE(range.from(), hi * 0.2);
        QVERIFY(view.frameReady());
        QCOMPARE(view.framesOffered(), 2L);
        // Another workload (whole): the new extent.
        view.setRows(a.rows);
        range.setExtent(0, extentEnd(*a.rows));
        range.setRange(hi * 0.2, hi * 0.3);
        QVERIFY(offer(view.planFrame(), true));
        QCOMPARE(range.from(), lo);
        QCOMPARE(view.framesOffered(), 3L);
        // Planned, then resized: not taken; the view builds its own.
        view.setRows(a.rows);
        range.setExtent(0, extentEnd(*a.rows));
        const auto plan = view.planFrame();
        view.resize(800, 600);
        QTRY_COMPARE(view.viewport()->width() < 800, true);
        QVERIFY(!offer(plan, false));
        QCOMPARE(view.framesOffered(), 3L);
        view.viewport()->repaint();
        QTRY_VERIFY(view.frameReady());
        QVERIFY(view.framesBuilt() > built);
        // Rows of another count in a view the user zoomed vertically: not built.
        view.setRowHeight(0.5);
        auto fewer =
            std::make_shared<std::vector<lod::Row>>(b.rows->begin(), b.rows->begin() + 100);
        QVERIFY(!views::TimelineView::prebuildFrame(view.planFrame(), fewer, lo, hi, false));
    }

    // A density frame written straight into the image has QPainter's pixels: the same
    // fills painted with fillRect in their colours on a transparent image, at random
    // windows of a loaded run (every phase, every shade).
    void denseFrameAsPainted() {
        const Run run = simulateChat(3000, 60);
        const double end = extentEnd(*run.rows);
        const QColor text(Qt::black), mid(Qt::gray);
        for (int k = 0; k < 8; ++k) {
            const double t0 = end * 0.05 * k, t1 = end * (1 - 0.04 * k);
            const QSize size(300 + 97 * k, 200 + 31 * k);
            const lod::RasterView v{{t0, t1, double(size.width())},
                                    size.height(),
                                    double(size.height()) / 3000.0 * (1 + 0.1 * k),
                                    3.0 * k};
            QVERIFY(v.row_h < 1);
            const QImage fast = views::TimelineView::buildFrame(*run.rows, run.rows.get(), nullptr,
                                                                v, size, 1.0, text, mid);
            QImage want(size, QImage::Format_ARGB32_Premultiplied);
            want.fill(Qt::transparent);
            {
                QPainter p(&want);
                for (const lod::Fill& f : lod::rasterize(*run.rows, run.rows.get(), nullptr, v)) {
                    QColor c = views::TimelineView::colorOf(f.kind);
                    c.setAlpha(f.alpha);
                    p.fillRect(f.x, f.y, f.w, f.h, c);
                }
            }
            QCOMPARE(fast.format(), want.format());
            QVERIFY(fast == want);
        }
    }

    // The length histogram before a workload says so (no empty log axis of 0.001-1
    // tokens); with one, its two histograms, axes and legend.
    void lengthHistogramEmptyFirst() {
        views::LengthHistogram h;
        h.resize(400, 220);
        h.show();
        QVERIFY(QTest::qWaitForWindowExposed(&h));
        h.replot();
        auto* msg = h.findChild<QLabel*>(QStringLiteral("emptyMessage"));
        QVERIFY(msg && msg->isVisible());
        QVERIFY(!h.xAxis->visible());
        const Run run = simulateChat(200, 10);
        h.setWorkload(run.w);
        h.replot();
        QVERIFY(!msg->isVisible());
        QVERIFY(h.xAxis->visible() && h.legend->visible());
        QVERIFY(h.xAxis->range().lower >= 1);
        h.setWorkload(Workload{});
        h.replot();
        QVERIFY(msg->isVisible());
    }

    // Preemption marks: one per pixel column that has a preemption in view, none elsewhere,
    // and they follow the range (zoomed in, marks of one column part again).
    void kvChartMarksOnePerColumn() {
        views::TimeRange range;
        range.setExtent(0, 100);
        views::KvChart chart(&range);
        chart.resize(900, 250);
        chart.setPlotMargins(views::TimelineView::kGutter, 15);
        std::vector<double> pre;
        for (int i = 0; i < 5000; ++i) pre.push_back(40.0 + 20.0 * i / 5000); // 40-60 s
        pre.push_back(90.0);
        pre.push_back(150.0); // out of view
        chart.setRun(nullptr, 1000, pre);
        QCPGraph* marks = nullptr;
        for (int g = 0; g < chart.graphCount(); ++g)
            if (chart.graph(g)->name() == QStringLiteral("preemption")) marks = chart.graph(g);
        QVERIFY(marks);
        auto columns = [&](double from, double to) {
            std::set<long> cols;
            const double per_px = (to - from) / chart.bucketCount();
            for (double t : pre)
                if (t >= from && t <= to) cols.insert(long(std::floor((t - from) / per_px)));
            return cols;
        };
        auto check = [&](double from, double to) {
            const auto want = columns(from, to);
            QCOMPARE(marks->dataCount(), int(want.size()));
            std::set<long> got;
            for (auto it = marks->data()->constBegin(); it != marks->data()->constEnd(); ++it)
                got.insert(
                    long(std::floor((it->key - from) / ((to - from) / chart.bucketCount()))));
            QVERIFY(got == want);
        };
        check(0, 100);
        QVERIFY(marks->dataCount() < 200); // 5,002 preemptions in view
        range.setRange(45, 46);
        check(45, 46);
        QVERIFY(marks->dataCount() > 200);
    }

    void kvChartFollowsRange() {
        const Run run = simulateChat(300, 10);
        views::TimeRange range;
        range.setExtent(0, extentEnd(*run.rows));
        views::KvChart chart(&range);
        chart.resize(900, 250);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.setPlotMargins(views::TimelineView::kGutter, 15);
        chart.setRun(
            std::make_shared<const std::vector<std::pair<double, double>>>(lod::kvSeries(run.log)),
            40000, {});
        range.setRange(10, 20);
        QCOMPARE(chart.xAxis->range().lower, 10.0);
        QCOMPARE(chart.xAxis->range().upper, 20.0);
        QCOMPARE(chart.bucketCount(), 900 - views::TimelineView::kGutter - 15);
        chart.replot();
        QCOMPARE(chart.axisRect()->width(), chart.bucketCount());
        QCOMPARE(chart.axisRect()->left(), views::TimelineView::kGutter);
    }

    // Paint cost with 20,000 requests (the target: under 16 ms per frame at any
    // zoom). A figure, not a pass/fail: printed for the closing note.
    void paintCost20k() {
        if (qEnvironmentVariableIsEmpty("KAIROS_BENCH"))
            QSKIP("a benchmark: run with KAIROS_BENCH=1 (make bench)");
        const Run run = simulateChat(20000, 40);
        views::TimeRange range;
        const double end = extentEnd(*run.rows);
        range.setExtent(0, end);
        views::TimelineView view(&range);
        view.resize(1400, 800);
        view.setRows(run.rows);
        QImage img(1400, 800, QImage::Format_RGB32);
        struct Case {
            const char* name;
            double row_h, from, to, scroll;
        };
        const Case cases[] = {{"overview, 0.04 px rows", 764.0 / 20000, 0, end, 0},
                              {"8 px rows, all time", 8, 0, end, 40000},
                              {"8 px rows, 10 s", 8, 200, 210, 200 * 40 * 8.0},
                              {"1 px rows, 60 s", 1, 100, 160, 100 * 40.0}};
        for (const Case& c : cases) {
            view.setRowHeight(c.row_h);
            range.setRange(c.from, c.to);
            std::vector<double> ms;
            for (int i = 0; i < 15; ++i) {
                img.fill(Qt::white);
                QElapsedTimer t;
                t.start();
                QPainter p(&img);
                view.render(p, img.rect(), c.scroll);
                p.end();
                ms.push_back(t.nsecsElapsed() / 1e6);
            }
            std::sort(ms.begin(), ms.end());
            qInfo("timeline paint, 20,000 requests, %s: median %.2f ms, max %.2f ms, %ld rects",
                  c.name, ms[ms.size() / 2], ms.back(), view.lastDrawCount());
            QVERIFY(view.lastDrawCount() > 0);
        }
        // The window itself: the overview's frame is built on a worker; the GUI thread
        // paints the finished frame (or the last one, moved) plus the header and gutter.
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setRowHeight(764.0 / 20000);
        view.verticalScrollBar()->setValue(0);
        std::vector<double> ready, stale, build;
        for (int i = 0; i < 15; ++i) {
            range.setRange(end * 0.002 * i, end * (1 - 0.002 * i));
            QElapsedTimer t;
            t.start();
            view.viewport()->repaint(); // a new window: the stale frame, moved
            stale.push_back(t.nsecsElapsed() / 1e6);
            t.restart();
            while (!view.frameReady() && t.elapsed() < 5000)
                QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
            QVERIFY(view.frameReady());
            build.push_back(t.nsecsElapsed() / 1e6);
            t.restart();
            view.viewport()->repaint(); // the finished frame
            ready.push_back(t.nsecsElapsed() / 1e6);
        }
        for (auto* v : {&ready, &stale, &build}) std::sort(v->begin(), v->end());
        qInfo("timeline window, 20,000 requests, overview, GUI thread: new window (last frame "
              "moved) median %.2f ms, max %.2f ms; frame ready median %.2f ms, max %.2f ms; "
              "worker build to delivery median %.1f ms",
              stale[stale.size() / 2], stale.back(), ready[ready.size() / 2], ready.back(),
              build[build.size() / 2]);
    }
};

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
