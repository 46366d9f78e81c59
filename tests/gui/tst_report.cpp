// Reports: the HTML is well-formed XML and escapes what the workload names; the PDF has
// pages; kairos-cli report writes every document it is asked for.
#include "chart_tools.h"
#include "exec/execution_model.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "metrics_model.h"
#include "report.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "workload/generators.h"
#include "workload/readers.h"
#include "workload/robot_generator.h"

#include <QFile>
#include <QPainter>
#include <QProcess>
#include <QSvgRenderer>
#include <QXmlStreamReader>
#include <QtTest>
#include <fstream>

using namespace kairos;

// FCFS on `w` with `kv` tokens of KV, on a fixed ETE model.
RunLog fcfsRun(const Workload& w, std::int64_t kv) {
    EngineLimits lim;
    lim.kv_capacity_tokens = kv;
    auto s = makeScheduler("fcfs");
    return simulate(w, EteModel(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7}), *s, lim);
}

class TestReport : public QObject {
    Q_OBJECT
private slots:
    // Qt's SVG engine ignores clipping, so an exported curve leaving its axes ran over the
    // tick labels (the urgent utility curve in the HTML report). toPainterClipped draws each
    // line, step line and scatter from its part inside the axis rect: rendered back, the
    // SVG has no ink outside the axis rect, and has it inside. Drawn plainly (toPainter),
    // the same chart has ink outside: the check can fail.
    void svgCurvesStayInTheirAxes() {
        QCustomPlot plot;
        plot.resize(300, 200);
        plot.axisRect()->setAutoMargins(QCP::msNone);
        plot.axisRect()->setMargins(QMargins(50, 50, 50, 50));
        for (QCPAxis* a : plot.axisRect()->axes()) a->setVisible(false);
        plot.xAxis->setRange(0, 10);
        plot.yAxis->setRange(0, 10);
        plot.xAxis2->setScaleType(QCPAxis::stLogarithmic);
        plot.xAxis2->setRange(1, 100);
        const QColor red(255, 0, 0);
        QCPGraph* line = plot.addGraph();
        line->setPen(QPen(red, 2));
        line->setData({-10, 5, 20}, {-10, 5, 30}); // crosses in and out
        QCPGraph* steps = plot.addGraph();
        steps->setPen(QPen(red, 2));
        steps->setLineStyle(QCPGraph::lsStepLeft);
        steps->setData({-5, 3, 8, 40}, {2, 12, 4, -7});
        QCPGraph* dots = plot.addGraph();
        dots->setLineStyle(QCPGraph::lsNone);
        dots->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, red, red, 6));
        dots->setData({-3, 2, 5, 15}, {5, 5, -4, 5});
        QCPGraph* logline = plot.addGraph(plot.xAxis2, plot.yAxis);
        logline->setPen(QPen(red, 2));
        logline->setData({0.1, 10, 1000}, {1, 5, 9});
        plot.replot();
        const QRect inside = plot.axisRect()->rect();
        auto ink = [&](bool clipped) {
            const QByteArray svg = views::drawSvg(
                QSize(300, 200), QStringLiteral("t"), [&](QCPPainter& p, const QRect&) {
                    if (clipped)
                        views::toPainterClipped(&plot, &p, 300, 200);
                    else
                        plot.toPainter(&p, 300, 200);
                });
            QSvgRenderer r(svg);
            QImage img(300, 200, QImage::Format_RGB32);
            img.fill(Qt::white);
            QPainter p(&img);
            r.render(&p, QRectF(0, 0, 300, 200));
            p.end();
            int out = 0, in = 0;
            for (int y = 0; y < img.height(); ++y)
                for (int x = 0; x < img.width(); ++x) {
                    const QColor c = img.pixelColor(x, y);
                    if (c.red() < 200 || c.green() > 200) continue; // not red
                    (inside.adjusted(-2, -2, 2, 2).contains(x, y) ? in : out)++;
                }
            return std::make_pair(in, out);
        };
        const auto [in, out] = ink(true);
        QVERIFY2(out == 0, qPrintable(QString("%1 red pixels outside the axes").arg(out)));
        QVERIFY(in > 200);
        QVERIFY2(ink(false).second > 100, "the plain SVG drew nothing outside: no check");
        // The graphs' own data are as they were.
        QCOMPARE(line->data()->size(), 3);
        QCOMPARE(steps->data()->size(), 4);
        QCOMPARE(steps->lineStyle(), QCPGraph::lsStepLeft);
        QCOMPARE(dots->data()->size(), 4);
    }

    void htmlAndPdf() {
        GenerateSpec g;
        g.count = 120;
        g.arrivals.rate = 4;
        Workload w = generateWorkload(g);
        w.name = "chat <script>alert(\"x\")</script> & more";
        EngineLimits lim;
        lim.kv_capacity_tokens = 20000;
        const RunLog log = fcfsRun(w, lim.kv_capacity_tokens);
        const Summary sum = summarize(log);
        Summary pinned = sum;
        pinned.ttft_ms.mean *= 2;   // the current run is better on mean TTFT
        pinned.ttft_ms.median /= 2; // and worse on median TTFT: +100 %
        views::ReportData d;
        d.workload = &w;
        d.log = &log;
        d.summary = &sum;
        d.pinned = &pinned;
        d.config = {{"predictor", "oracle <exact>"}};
        d.name = "fcfs run";
        d.pinned_name = "run 7 <sjf>";
        d.goodput.ttft_ms = 500;
        d.spec_json = R"({"policy": {"name": "fcfs"}})";
        d.profile_json = R"({"name": "test-device"})";
        const QString html = QDir::temp().filePath("kairos_tst_report.html"),
                      pdf = QDir::temp().filePath("kairos_tst_report.pdf");
        views::writeReportHtml(d, html);
        views::writeReportPdf(d, pdf);

        // HTML: every chart as inline SVG (vectors) that parses; the pinned run named.
        QFile f(html);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QXmlStreamReader xml(text);
        int imgs = 0, rows = 0;
        QStringList alts;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isStartElement() && xml.name() == QLatin1String("img")) {
                ++imgs;
                const QString src = xml.attributes().value("src").toString();
                alts << xml.attributes().value("alt").toString();
                QVERIFY(src.startsWith(QLatin1String("data:image/svg+xml;base64,")));
                const QByteArray svg = QByteArray::fromBase64(src.section(',', 1).toLatin1());
                QSvgRenderer r(svg);
                QVERIFY2(r.isValid(), qPrintable(alts.back()));
                QVERIFY2(svg.count("<path") + svg.count("<rect") + svg.count("<polyline") > 10,
                         qPrintable(alts.back()));
                QVERIFY(!svg.contains("<image")); // no raster inside
            }
            if (xml.isStartElement() && xml.name() == QLatin1String("tr")) ++rows;
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QCOMPARE(imgs, 3); // timeline, KV, CDFs (no TUF: a chat workload)
        QVERIFY2(alts.contains("Latency CDFs") && alts.contains("Request timeline"),
                 qPrintable(alts.join(',')));
        QVERIFY(rows > 20);
        QVERIFY(!text.contains("<script>"));
        QVERIFY(text.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more"));
        QVERIFY(text.contains("oracle &lt;exact&gt;"));
        QVERIFY(text.contains("class=\"n better\">-50.0 %")); // mean TTFT halved vs pinned
        // A rise carries its sign and no change reads "=", as in the window's table and the
        // command line (the PDF read "100.0 %" and "0").
        QVERIFY(text.contains("class=\"n worse\">+100.0 %"));
        QVERIFY(text.contains("class=\"n \">=</td>"));
        QVERIFY(text.contains("<th>run 7 &lt;sjf&gt;</th>")); // the pinned run's name
        QVERIFY(text.contains("Run specification") && text.contains("test-device"));
        // Charts first, what made the run after: the metrics, then every chart, then the
        // workload, the configuration, the RunSpec and the profile.
        const auto at = [&](const char* s) { return text.indexOf(s); };
        QVERIFY(at("<h2>Metrics</h2>") < at("<img"));
        QVERIFY(at("<img") < at("<h2>Workload</h2>"));
        QVERIFY(text.lastIndexOf("<img") < at("<h2>Workload</h2>"));
        QVERIFY(at("<h2>Workload</h2>") < at("<h2>Configuration</h2>"));
        QVERIFY(at("<h2>Configuration</h2>") < at("<h2>Run specification</h2>"));
        QVERIFY(at("<h2>Run specification</h2>") < at("<h2>Device profile</h2>"));
        QCOMPARE(text.contains("<b>fcfs run overloaded:</b>"), sum.load.saturated.value_or(false));
        // A pinned run that was overloaded says so too, by its name.
        {
            Summary sat = pinned, kept_up = sum;
            sat.load.saturated = true;
            kept_up.load.saturated = false;
            sat.load.verdict = "the queue grew";
            views::ReportData e = d;
            e.pinned = &sat;
            e.summary = &kept_up;
            const QString h = views::reportHtml(e);
            QVERIFY2(h.contains("<b>run 7 &lt;sjf&gt; overloaded:</b>"), qPrintable(h.left(3000)));
            QVERIFY(!h.contains("<b>fcfs run overloaded:</b>"));
            QVERIFY(h.indexOf("overloaded:</b>") < h.indexOf("<h2>Metrics</h2>"));
        }

        // PDF: pages of text then charts drawn as vectors (no image objects at all).
        QFile p(pdf);
        QVERIFY(p.open(QIODevice::ReadOnly));
        const QByteArray bytes = p.readAll();
        QVERIFY(bytes.startsWith("%PDF-"));
        const int pages = int(bytes.count("/Type /Page\n") + bytes.count("/Type /Page ") +
                              bytes.count("/Type /Page/") + bytes.count("/Type/Page"));
        // The head's page carries the charts that fit under it, and no page is left to one
        // chart: the head and charts on two pages, the workload, configuration, RunSpec and
        // profile on two more (five pages, the first and third half blank, before).
        QVERIFY2(pages >= 3 && pages <= 4, qPrintable(QString::number(pages)));
        QVERIFY(!bytes.contains("/Subtype /Image") && !bytes.contains("/Subtype/Image"));
        // A robot workload adds the utility chart.
        {
            RobotWorkloadSpec spec = RobotWorkloadSpec::preset_("wid3");
            spec.agents = 8;
            spec.duration_s = 20;
            const Workload rw = generateRobotWorkload(spec, {});
            auto t = makeScheduler("timely");
            const RunLog rlog =
                simulate(rw, EteModel(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7}), *t, lim);
            SummaryOptions so;
            so.workload = &rw;
            const Summary rs = summarize(rlog, perRequest(rlog), so);
            views::ReportData r;
            r.workload = &rw;
            r.log = &rlog;
            r.summary = &rs;
            const QString h2 = views::reportHtml(r);
            QVERIFY(h2.contains(QStringLiteral("alt=\"Utility (TUF)\"")));
            // Metric names are plain text (no invisible word joiner); a unit stays on one line.
            QVERIFY(!h2.contains(QChar(0x2060)));
            QVERIFY2(h2.contains(QStringLiteral("<span style=\"white-space: nowrap\">(req/s)"
                                                "</span>")),
                     qPrintable(h2.left(4000)));
        }
    }

    // A change as the window's table and the reports say it (MetricsModel::formatChange):
    // signed, "=" unchanged, and two significant digits where one decimal would read
    // "-0.0 %" (a KV peak of 50,806 against 50,813). By hand.
    void changeFormatting() {
        MetricDelta d;
        d.key = "kv_peak_tokens";
        d.before = 50813;
        d.after = 50806;
        d.change = -7;
        d.relative = -7.0 / 50813;
        QCOMPARE(views::MetricsModel::formatChange(d), QStringLiteral("-0.014 %"));
        d.change = 25406.5;
        d.relative = 0.5;
        QCOMPARE(views::MetricsModel::formatChange(d), QStringLiteral("+50.0 %"));
        d.change = 0;
        d.relative = 0;
        QCOMPARE(views::MetricsModel::formatChange(d), QStringLiteral("="));
        d.key = "preemptions";
        d.change = 74;
        d.relative = std::numeric_limits<double>::quiet_NaN(); // from 0
        QCOMPARE(views::MetricsModel::formatChange(d), QStringLiteral("+74"));
    }

    // A report of 20,000 requests stays a file a browser opens at once: its timeline, whose
    // SVG held a rectangle per request's phase (4.7 MB of a 6.5 MB report), goes in as a PNG
    // at twice its size; the smaller charts stay vectors.
    void largeReportEmbedsAPicture() {
        GenerateSpec g;
        g.count = 20000;
        g.arrivals.rate = 40;
        const Workload w = generateWorkload(g);
        const RunLog log = fcfsRun(w, 200000);
        const Summary sum = summarize(log);
        views::ReportData d;
        d.workload = &w;
        d.log = &log;
        d.summary = &sum;
        const QByteArray text = views::reportHtml(d).toUtf8();
        QVERIFY2(text.size() < 1500 * 1024, qPrintable(QString::number(text.size())));
        QXmlStreamReader xml(text);
        QMap<QString, QString> kinds;
        while (!xml.atEnd()) {
            xml.readNext();
            if (!xml.isStartElement() || xml.name() != QLatin1String("img")) continue;
            const QString src = xml.attributes().value("src").toString();
            const QString alt = xml.attributes().value("alt").toString();
            kinds[alt] = src.section(';', 0, 0);
            if (alt == QLatin1String("Request timeline")) {
                QImage img;
                QVERIFY(img.loadFromData(QByteArray::fromBase64(src.section(',', 1).toLatin1()),
                                         "PNG"));
                QCOMPARE(img.width(), 2 * xml.attributes().value("width").toInt());
            }
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QCOMPARE(kinds.value("Request timeline"), QStringLiteral("data:image/png"));
        QCOMPARE(kinds.value("KV-cache memory"), QStringLiteral("data:image/svg+xml"));
        QCOMPARE(kinds.value("Latency CDFs"), QStringLiteral("data:image/svg+xml"));
    }

    // kairos-cli report: the HTML, PDF, CSV and Perfetto files it was asked for.
    void cliReport() {
        const QString dir = QDir::temp().filePath("kairos_tst_cli_report");
        QDir().mkpath(dir);
        const QStringList outs{dir + "/r.html", dir + "/r.pdf", dir + "/r.csv", dir + "/r.json"};
        for (const auto& o : outs) QFile::remove(o);
        QProcess proc;
        proc.start(KAIROS_CLI,
                   {"report", "-w", QString(KAIROS_SOURCE_DIR) + "/sample_traces/wid1_like.jsonl",
                    "--policy", "timely", "--quiet", "--html", outs[0], "--pdf", outs[1], "--csv",
                    outs[2], "--perfetto", outs[3], "--compare", "vllm_stream"});
        QVERIFY(proc.waitForFinished(60000));
        QVERIFY2(proc.exitCode() == 0, proc.readAllStandardError().constData());
        // --compare: the delta table on stdout (--quiet keeps it quiet), and the report's
        // metrics table with the pinned column.
        QVERIFY(proc.readAllStandardOutput().isEmpty());
        QFile h(outs[0]);
        QVERIFY(h.open(QIODevice::ReadOnly));
        QVERIFY(h.readAll().contains("pinned"));
        for (const auto& o : outs) QVERIFY2(QFileInfo(o).size() > 1000, qPrintable(o));
        QFile csv(outs[2]);
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QByteArray rows = csv.readAll();
        QCOMPARE(rows.count('\n'), 302); // header + 301 requests
        // The trace's ids, agents and classes: the first to arrive is robot 5's request
        // 500000, row 0.
        QVERIFY(rows.startsWith("id,row,agent,class,arrival_s,"));
        QVERIFY(rows.contains("\n500000,0,5,urgent,0.574912,"));
        // --perfetto records the decisions (instants), as the workbench's export does.
        QFile pf(outs[3]);
        QVERIFY(pf.open(QIODevice::ReadOnly));
        QVERIFY(pf.readAll().contains("\"cat\":\"decision\""));
    }
};

QTEST_MAIN(TestReport)
#include "tst_report.moc"
