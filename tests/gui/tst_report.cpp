// Reports: the HTML is well-formed XML and escapes what the workload names; the PDF has
// pages; kairos-cli report writes every document it is asked for.
#include "exec/execution_model.h"
#include "metrics/summary.h"
#include "report.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <QFile>
#include <QProcess>
#include <QXmlStreamReader>
#include <QtTest>
#include <fstream>

using namespace kairos;

class TestReport : public QObject {
    Q_OBJECT
private slots:
    void htmlAndPdf() {
        GenerateSpec g;
        g.count = 120;
        g.arrivals.rate = 4;
        Workload w = generateWorkload(g);
        w.name = "chat <script>alert(\"x\")</script> & more";
        EngineLimits lim;
        lim.kv_capacity_tokens = 20000;
        auto s = makeScheduler("fcfs");
        const RunLog log =
            simulate(w, EteModel(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7}), *s, lim);
        const Summary sum = summarize(log);
        Summary pinned = sum;
        pinned.ttft_ms.mean *= 2; // the current run is better on mean TTFT
        views::ReportData d;
        d.workload = &w;
        d.log = &log;
        d.summary = &sum;
        d.pinned = &pinned;
        d.config = {{"predictor", "oracle <exact>"}};
        const QString html = QDir::temp().filePath("kairos_tst_report.html"),
                      pdf = QDir::temp().filePath("kairos_tst_report.pdf");
        views::writeReportHtml(d, html);
        views::writeReportPdf(d, pdf);

        QFile f(html);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QXmlStreamReader xml(text);
        int imgs = 0, rows = 0;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isStartElement() && xml.name() == QLatin1String("img")) {
                ++imgs;
                QVERIFY(xml.attributes().value("src").startsWith(
                    QLatin1String("data:image/png;base64,")));
            }
            if (xml.isStartElement() && xml.name() == QLatin1String("tr")) ++rows;
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QCOMPARE(imgs, 2);
        QVERIFY(rows > 20);
        QVERIFY(!text.contains("<script>"));
        QVERIFY(text.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more"));
        QVERIFY(text.contains("oracle &lt;exact&gt;"));
        QVERIFY(text.contains("class=\"n better\">-50.0 %")); // mean TTFT halved vs pinned

        QFile p(pdf);
        QVERIFY(p.open(QIODevice::ReadOnly));
        const QByteArray bytes = p.readAll();
        QVERIFY(bytes.startsWith("%PDF-"));
        QVERIFY(bytes.count("/Type /Page\n") + bytes.count("/Type /Page ") +
                    bytes.count("/Type /Page/") + bytes.count("/Type/Page") >=
                1);
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
        QCOMPARE(csv.readAll().count('\n'), 302); // header + 301 requests
    }
};

QTEST_MAIN(TestReport)
#include "tst_report.moc"
