#include "report.h"

#include "chart_style.h"
#include "chart_tools.h"
#include "kv_chart.h"
#include "latency_chart.h"
#include "lod/timeline.h"
#include "metrics/cdf.h"
#include "metrics/compare.h"
#include "metrics/request_metrics.h"
#include "metrics_model.h"
#include "time_range.h"
#include "timeline_view.h"
#include "tuf_chart.h"
#include "util/atomic_file.h"

#include <QBuffer>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QTextDocument>
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>

namespace kairos::views {

namespace {

// The charts as the window draws them (the same widgets), painted as vectors: into an SVG
// for the HTML report, straight onto the PDF's pages for the PDF. Each is drawn at the
// size it appears (the page's width), so its fonts are the window's, not scaled down.
struct Chart {
    QString title, caption;
    int height = 0; // at the width it is drawn
    std::function<void(QCPPainter&, const QRect&)> paint;
};

struct ChartSet {
    // The widgets, alive while the charts are painted.
    std::unique_ptr<TimeRange> range;
    std::unique_ptr<TimelineView> timeline;
    std::unique_ptr<KvChart> kv;
    std::unique_ptr<LatencyChart> cdfs;
    std::unique_ptr<TufChart> tuf;
    std::vector<Chart> charts;
};

void plotInto(QCustomPlot* plot, QCPPainter& p, const QRect& r) {
    plot->resize(r.size());
    plot->replot(QCustomPlot::rpImmediateRefresh); // legend placement and layout at this size
    p.save();
    p.translate(r.topLeft());
    toPainterClipped(plot, &p, r.width(), r.height());
    p.restore();
}

std::unique_ptr<ChartSet> makeCharts(const ReportData& d) {
    auto c = std::make_unique<ChartSet>();
    auto rows = std::make_shared<const std::vector<lod::Row>>(lod::buildRows(*d.log, d.workload));
    const auto [lo, hi] = lod::timeExtent(*rows);
    c->range = std::make_unique<TimeRange>();
    c->range->setExtent(lo, hi);
    c->timeline = std::make_unique<TimelineView>(c->range.get());
    // Every request on one picture: rows as tall as fit (density rows below a pixel).
    const int rows_h = 420;
    c->timeline->setRows(rows);
    c->timeline->setRowHeight(rows->empty() ? 8.0
                                            : std::min(8.0, double(rows_h) / double(rows->size())));
    if (d.pinned_log) // its lanes show where rows are tall enough (small workloads)
        c->timeline->setPinnedRows(std::make_shared<const std::vector<lod::Row>>(
            lod::buildRows(*d.pinned_log, d.workload)));
    TimelineView* tl = c->timeline.get();
    c->charts.push_back({QStringLiteral("Request timeline"),
                         QStringLiteral("One row per request, its phases over time%1.")
                             .arg(d.pinned_log && tl->showsPinned()
                                      ? QStringLiteral("; the pinned run in each row's lower lane")
                                      : QString()),
                         rows_h + TimelineView::kHeader, [tl](QCPPainter& p, const QRect& r) {
                             p.fillRect(r, Qt::white);
                             tl->render(p, r, 0);
                         }});
    c->kv = std::make_unique<KvChart>(c->range.get());
    c->kv->setPlotMargins(TimelineView::kGutter, 0);
    // As the window draws it: a fleet's KV against its replicas' capacity together, the
    // preemptions marked, and with prefix caching the cached blocks nobody references.
    c->kv->setRun(
        std::make_shared<const std::vector<std::pair<double, double>>>(lod::kvSeries(*d.log)),
        double(d.log->kv_capacity_tokens) * std::max(1, d.log->replicas),
        lod::preemptionTimes(*d.log),
        d.log->prefix_caching ? std::make_shared<const std::vector<std::pair<double, double>>>(
                                    lod::kvSeries(*d.log, true))
                              : nullptr);
    if (d.pinned_log)
        c->kv->setPinned(std::make_shared<const std::vector<std::pair<double, double>>>(
            lod::kvSeries(*d.pinned_log)));
    KvChart* kv = c->kv.get();
    c->charts.push_back({QStringLiteral("KV-cache memory"),
                         QStringLiteral("Tokens in use (the band: each pixel's minimum to "
                                        "maximum) against the capacity%1.")
                             // Its whole curve, each pixel's maximum ("the pinned run's
                             // peak" read as one figure, a line at its highest point).
                             .arg(d.pinned_log ? QStringLiteral("; the pinned run's tokens in "
                                                                "use (each pixel's maximum) as "
                                                                "a grey line")
                                               : QString()),
                         230, [kv](QCPPainter& p, const QRect& r) { plotInto(kv, p, r); }});
    // Latency CDFs of the finished requests, the pinned run's dashed, the SLOs dotted.
    c->cdfs = std::make_unique<LatencyChart>();
    {
        auto ecdfs = [](const RunLog& log) {
            auto l = lod::latencyCdfs(perRequest(log));
            return std::array<std::vector<std::pair<double, double>>, 3>{
                std::move(l.ttft), std::move(l.tpot), std::move(l.e2el)};
        };
        const QColor colors[] = {QColor(0xf5, 0xa6, 0x23), QColor(0x9b, 0x59, 0xb6),
                                 QColor(0x2f, 0x80, 0xed)};
        const char* names[] = {"TTFT", "TPOT", "E2EL"};
        std::vector<CdfSeries> series;
        const auto mine = ecdfs(*d.log);
        for (int k = 0; k < 3; ++k)
            series.push_back({QString::fromLatin1(names[k]), colors[k], mine[std::size_t(k)]});
        if (d.pinned_log) {
            const auto theirs = ecdfs(*d.pinned_log);
            for (int k = 0; k < 3; ++k)
                series.push_back(
                    {QStringLiteral("%1, %2").arg(QString::fromLatin1(names[k]), d.pinned_name),
                     colors[k], theirs[std::size_t(k)], true});
        }
        c->cdfs->setSeries(series);
        std::vector<LatencyChart::Slo> slos;
        if (d.goodput.ttft_ms)
            slos.push_back({QStringLiteral("TTFT SLO"), colors[0], *d.goodput.ttft_ms});
        if (d.goodput.tpot_ms)
            slos.push_back({QStringLiteral("TPOT SLO"), colors[1], *d.goodput.tpot_ms});
        if (d.goodput.e2el_ms)
            slos.push_back({QStringLiteral("E2EL SLO"), colors[2], *d.goodput.e2el_ms});
        c->cdfs->setSlos(slos);
    }
    LatencyChart* cdfs = c->cdfs.get();
    c->charts.push_back({QStringLiteral("Latency CDFs"),
                         QStringLiteral("Fraction of the finished requests at or under each "
                                        "latency (log scale)."),
                         260, [cdfs](QCPPainter& p, const QRect& r) { plotInto(cdfs, p, r); }});
    // The utility view, for workloads with time-utility functions.
    auto classes = tufClasses(*d.log, *d.workload, *d.summary);
    if (!classes.empty()) {
        c->tuf = std::make_unique<TufChart>();
        c->tuf->setClasses(classes);
        TufChart* tuf = c->tuf.get();
        c->charts.push_back({QStringLiteral("Utility (TUF)"),
                             QStringLiteral("Each class's time-utility function and every task "
                                            "at its first response W(s0)."),
                             260, [tuf](QCPPainter& p, const QRect& r) { plotInto(tuf, p, r); }});
    }
    for (QCustomPlot* plot : std::initializer_list<QCustomPlot*>{c->kv.get(), c->cdfs.get(),
                                                                 c->tuf ? c->tuf.get() : nullptr})
        if (plot) {
            // White paper whatever the desktop's theme.
            plot->setPalette(QPalette(Qt::white));
            applyPalette(plot, QPalette::Base);
        }
    return c;
}

// One chart as an SVG document (vectors), `width` pixels wide.
QByteArray chartSvg(const Chart& chart, int width) {
    const QByteArray svg = drawSvg(QSize(width, chart.height), chart.title, chart.paint);
    if (svg.isEmpty())
        throw std::runtime_error("cannot draw the chart " + chart.title.toStdString());
    return svg;
}

constexpr int kHtmlChartWidth = 900;

// One chart as a PNG at twice its size (for screens that double pixels), `width` pixels
// wide as laid out.
QByteArray chartPng(const Chart& chart, int width) {
    QImage img(QSize(width, chart.height) * 2, QImage::Format_RGB32);
    img.setDevicePixelRatio(2);
    img.fill(Qt::white);
    QCPPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    chart.paint(p, QRect(0, 0, width, chart.height));
    p.end();
    QByteArray bytes;
    QBuffer buf(&bytes);
    buf.open(QIODevice::WriteOnly);
    if (!img.save(&buf, "PNG"))
        throw std::runtime_error("cannot draw the chart " + chart.title.toStdString());
    return bytes;
}

// Past this an SVG chart goes into the HTML as a PNG: a 20,000-request timeline drew
// 4.7 MB of rectangles (a 6.5 MB report that a browser took seconds to open), where its
// picture at twice the size is a tenth of that.
constexpr qsizetype kSvgLimit = 512 * 1024;

QString esc(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

void saveText(const QString& path, const QByteArray& bytes) {
    writeOutputFile(path, bytes); // chart_tools.h: the output rules, whole or not at all
}

// A table row: a heading cell and a value.
// (The tail's tables carry their own cell padding: the PDF lays the tail out without the
// head's style sheet, and "execution model" touched its value.)
void tableRow(QString& h, const QString& k, const QString& v) {
    h += QStringLiteral("<tr><th align=\"left\">%1</th><td>%2</td></tr>").arg(k, v);
}

// The load banner of one run: overloaded, or near saturation ("" when it kept up).
QString overloadBanner(const Summary& s, const QString& who) {
    const LoadReport& load = s.load;
    const LoadBand band = loadBand(load);
    const bool sheds = band == LoadBand::ShedsLoad;
    // A run that keeps up but killed or dropped some says so too, as the window's banner.
    const bool some_killed = !sheds && load.killed > 0 && load.arrivals > 0;
    if (!sheds && !some_killed && band != LoadBand::NearSaturation &&
        !load.saturated.value_or(false))
        return {};
    // Kept up (the queue did) but killed some: its own words, near saturation's colours.
    const bool keeps = some_killed && band != LoadBand::Overloaded &&
                       band != LoadBand::NearSaturation && !load.saturated.value_or(false);
    const bool near = band == LoadBand::NearSaturation || keeps;
    const QString kills =
        some_killed ? QStringLiteral(" %1.").arg(esc(killedPhrase(load))) : QString();
    const QString rates =
        QStringLiteral("%1 req/s offered, %2 req/s served over the whole run, its tail included")
            .arg(load.offered_rate, 0, 'f', 2)
            .arg(s.request_throughput, 0, 'f', 2);
    // The evidence without the verdict's own word: the banner names the band ("near
    // saturation ... (SATURATED: the backlog grew ...)" read as a contradiction).
    const QString verdict = QString::fromStdString(loadEvidence(load)).toHtmlEscaped();
    const QString text =
        sheds ? QStringLiteral("%1 of %2 requests were killed or dropped before finishing; the "
                               "latencies describe the rest. %3. The queue alone: %4.")
                    .arg(load.killed)
                    .arg(load.arrivals)
                    .arg(rates, verdict)
        : keeps ? QStringLiteral("%1. %2.").arg(rates, verdict)
        : band == LoadBand::NearSaturation
            ? QStringLiteral("%1; its backlog's largest rise is %2 of the saturation threshold "
                             "(%3). A small change of rate or policy tips it either way.")
                  .arg(rates)
                  .arg(load.score, 0, 'f', 2)
                  .arg(verdict)
            : QStringLiteral("%1. %2. Its latencies grow with the run's length and describe no "
                             "service level.")
                  .arg(rates, verdict);
    return QStringLiteral("<p class=\"warn\" style=\"background:%1;border:1px solid %2;"
                          "padding:6px\"><b>%3 %4:</b> %5</p>\n")
        .arg(near ? QStringLiteral("#fffbe6") : QStringLiteral("#fff1d6"),
             near ? QStringLiteral("#d8c060") : QStringLiteral("#e0a040"), who.toHtmlEscaped(),
             sheds                              ? QStringLiteral("sheds load")
             : band == LoadBand::NearSaturation ? QStringLiteral("near saturation")
             : band == LoadBand::Overloaded || load.saturated.value_or(false)
                 ? QStringLiteral("overloaded")
                 : QStringLiteral("keeps up, but kills"),
             text + kills);
}

// The report's text in two parts, with the charts between them (placed as HTML, or drawn
// by the PDF writer): first what a reader looks for (the title, an overload banner for
// each run that was overloaded, the metrics), after the charts what made the run (the
// workload, the configuration, the RunSpec and the device profile).
QString htmlHead(const ReportData& d) {
    QString h;
    h += QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>");
    h += QStringLiteral("<title>%1</title>").arg(d.title.toHtmlEscaped());
    h +=
        QStringLiteral("<style>body{font-family:'DejaVu Sans',sans-serif;margin:24px}"
                       "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}"
                       "td.n{text-align:right}.better{color:#1e8e3e}.worse{color:#d03030}</style>");
    h += QStringLiteral("</head><body>\n<h1>%1</h1>\n").arg(d.title.toHtmlEscaped());
    h += QStringLiteral("<p>%1 on %2: %3 requests%4.</p>\n")
             .arg(esc(d.log->policy), esc(d.workload->name))
             .arg(d.workload->size())
             .arg(d.pinned ? QStringLiteral(", compared with %1").arg(d.pinned_name.toHtmlEscaped())
                           : QString());
    h += overloadBanner(*d.summary, d.name.isEmpty() ? QStringLiteral("This run") : d.name);
    if (d.pinned)
        h += overloadBanner(*d.pinned, d.pinned_name.isEmpty() ? QStringLiteral("The pinned run")
                                                               : d.pinned_name);
    h += QStringLiteral("<h2>Metrics</h2>\n<table><tr><th>metric</th><th>value</th>");
    if (d.pinned)
        h += QStringLiteral("<th>%1</th><th>change</th>")
                 .arg((d.pinned_name.isEmpty() ? QStringLiteral("pinned") : d.pinned_name)
                          .toHtmlEscaped());
    h += QStringLiteral("</tr>\n");
    std::vector<MetricDelta> deltas;
    std::string note;
    if (d.pinned) {
        // Per-request results of both runs when their logs are at hand: latency then
        // compares over the requests both completed (core's compare).
        std::vector<RequestMetrics> qa, qb;
        if (d.pinned_log) qa = perRequest(*d.pinned_log);
        qb = perRequest(*d.log);
        const Comparison c = compare({d.pinned, d.pinned_log ? &qa : nullptr}, {d.summary, &qb});
        deltas = c.deltas;
        note = c.note;
    } else {
        deltas = compareRuns(nullptr, *d.summary);
    }
    if (note.empty() && d.summary->completed < d.summary->num_requests)
        note = "latency is over " + d.summary->coverage();
    for (const MetricDelta& m : deltas) {
        // The name as text (the table's U+2060 after a unit's slash is an invisible character
        // here: a search for "req/s" missed it, a copy carried it); its unit kept on one
        // line by the style instead.
        QString name = MetricsModel::metricLabel(m.key, m.label).remove(QChar(0x2060));
        const qsizetype unit = name.lastIndexOf(QStringLiteral(" ("));
        name = unit < 0 ? name.toHtmlEscaped()
                        : name.left(unit).toHtmlEscaped() +
                              QStringLiteral(" <span style=\"white-space: nowrap\">") +
                              name.mid(unit + 1).toHtmlEscaped() + QStringLiteral("</span>");
        h += QStringLiteral("<tr><td>%1</td><td class=\"n\">%2</td>")
                 .arg(name, MetricsModel::formatMetric(m.key, m.after));
        if (d.pinned) {
            const QString cls = m.verdict > 0   ? QStringLiteral("better")
                                : m.verdict < 0 ? QStringLiteral("worse")
                                                : QString();
            // As the window's table says it ("+74", "=": the PDF read "74" and "0"
            // where the table and the command line said "+74" and "=").
            const QString change =
                MetricsModel::formatChange(m) + (m.basis == Basis::Common
                                                     ? QStringLiteral(" (common set, not judged)")
                                                     : QString());
            h += QStringLiteral("<td class=\"n\">%1</td><td class=\"n %2\">%3</td>")
                     .arg(MetricsModel::formatMetric(m.key, m.before), cls, change);
        }
        h += QStringLiteral("</tr>\n");
    }
    h += QStringLiteral("</table>\n");
    if (!note.empty()) h += QStringLiteral("<p class=\"note\">Note: %1.</p>\n").arg(esc(note));
    return h;
}

QString htmlTail(const ReportData& d, int pre_pt = 9) {
    const Workload& w = *d.workload;
    const LoadReport& load = d.summary->load;
    QString h;
    h += QStringLiteral("<h2>Workload</h2>\n<table cellpadding=\"3\" cellspacing=\"0\">");
    auto row = [&](const QString& k, const QString& v) { tableRow(h, k, v); };
    row(QStringLiteral("name"), esc(w.name));
    row(QStringLiteral("source"), esc(w.source));
    row(QStringLiteral("requests"), QString::number(w.size()));
    row(QStringLiteral("span"), QString::number(w.span(), 'f', 2) + QStringLiteral(" s"));
    row(QStringLiteral("prompt tokens"), QString::number(w.totalPromptTokens()));
    row(QStringLiteral("output tokens"), QString::number(w.totalOutputTokens()));
    row(QStringLiteral("offered rate"),
        std::isinf(load.offered_rate)
            ? QStringLiteral("all at once (offline batch)")
            : QString::number(load.offered_rate, 'f', 2) + QStringLiteral(" req/s"));
    row(QStringLiteral("achieved rate"),
        QString::number(d.summary->request_throughput, 'f', 2) + QStringLiteral(" req/s"));
    // The band the banners name, then its evidence ("SATURATED: ..." here under an
    // "overloaded" banner read as a second verdict).
    {
        const char* band = loadBandName(loadBand(load));
        const std::string evidence = loadEvidence(load);
        row(QStringLiteral("load"),
            *band ? QString::fromUtf8(band).toHtmlEscaped() +
                        (evidence.empty() ? QString() : QStringLiteral(": ") + esc(evidence))
                  : esc(load.verdict));
    }
    h += QStringLiteral(
        "</table>\n<h2>Configuration</h2>\n<table cellpadding=\"3\" cellspacing=\"0\">");
    if (!d.name.isEmpty()) row(QStringLiteral("run"), d.name.toHtmlEscaped());
    row(QStringLiteral("policy"), esc(d.log->policy));
    row(QStringLiteral("execution model"), esc(d.log->exec_model));
    row(QStringLiteral("KV capacity"),
        QString::number(d.log->kv_capacity_tokens) + QStringLiteral(" tokens") +
            (d.log->replicas > 1 ? QStringLiteral(" per replica") : QString()) +
            (d.log->prefix_caching && d.log->cache_block_size > 1
                 ? QStringLiteral(" (in whole %1-token blocks: a capacity asked for, as the "
                                  "run specification's kv_capacity_tokens, is rounded down)")
                       .arg(d.log->cache_block_size)
                 : QString()));
    row(QStringLiteral("Kairos"), QStringLiteral(KAIROS_VERSION));
    for (const auto& [k, v] : d.config) row(esc(k), esc(v));
    h += QStringLiteral("</table>\n");
    if (!d.spec_json.isEmpty())
        h += QStringLiteral(
                 "<h2>Run specification</h2>\n<p>kairos-cli simulate --spec FILE "
                 "runs it again.</p><pre style=\"font-size:%2pt;white-space:pre-wrap\">%1</pre>\n")
                 .arg(d.spec_json.toHtmlEscaped(), QString::number(pre_pt)); // at once: no %2 in it
    if (!d.profile_json.isEmpty())
        h += QStringLiteral("<h2>Device profile</h2>\n<pre "
                            "style=\"font-size:%2pt;white-space:pre-wrap\">%1</pre>\n")
                 .arg(d.profile_json.toHtmlEscaped(), QString::number(pre_pt));
    // The version is a Configuration row: alone at the end it made a page of its own.
    h += QStringLiteral("</body></html>\n");
    return h;
}

} // namespace

QString reportHtml(const ReportData& d) {
    const auto set = makeCharts(d);
    QString charts;
    for (const Chart& c : set->charts) {
        QByteArray image = chartSvg(c, kHtmlChartWidth);
        const bool png = image.size() > kSvgLimit;
        if (png) image = chartPng(c, kHtmlChartWidth);
        charts += QStringLiteral("<h2>%1</h2>\n<p>%2</p>\n<p><img src=\"data:image/%6;base64,%3\" "
                                 "width=\"%4\" height=\"%5\" alt=\"%1\"/></p>\n")
                      .arg(c.title.toHtmlEscaped(), c.caption.toHtmlEscaped(),
                           QString::fromLatin1(image.toBase64()))
                      .arg(kHtmlChartWidth)
                      .arg(c.height)
                      .arg(png ? QStringLiteral("png") : QStringLiteral("svg+xml"));
    }
    return htmlHead(d) + charts + htmlTail(d);
}

// The target is judged before the report is drawn (a device, a pipe, a run's input).
void writeReportHtml(const ReportData& d, const QString& path) {
    checkOutputTarget(path.toStdString());
    saveText(path, reportHtml(d).toUtf8());
}

void writeReportPdf(const ReportData& d, const QString& path) {
    checkOutputTarget(path.toStdString());
    saveText(path, reportPdfBytes(d));
}

QByteArray reportPdfBytes(const ReportData& d) {
    // Into a buffer first, so that a failure leaves no half-written file. A4 with 15 mm
    // margins at 96 dpi (the HTML is laid out in screen pixels): the head's pages (title,
    // banners, metrics), the charts drawn as vectors straight onto the pages, two or three
    // a page, then the tail's (workload, configuration, RunSpec, profile).
    QByteArray bytes;
    QBuffer buf(&bytes);
    buf.open(QIODevice::WriteOnly);
    QPdfWriter pdf(&buf);
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
    pdf.setResolution(96);
    pdf.setTitle(d.title);
    pdf.setCreator(QStringLiteral("Kairos"));
    const QRect paint = pdf.pageLayout().paintRectPixels(pdf.resolution());
    const int W = paint.width(), H = paint.height();
    const auto set = makeCharts(d);
    QCPPainter p;
    if (!p.begin(&pdf)) throw std::runtime_error("cannot write the PDF report");
    bool first_page = true;
    // An HTML part on pages of its own. `part(pt)` is its HTML with its code blocks at `pt`
    // points: where the last page would carry only a few lines (the RunSpec's closing "}"
    // alone on page 6), the code is set a point or two smaller if that saves the page.
    // Returns how far down its last page is inked (a share of the page).
    auto text = [&](const std::function<QString(int)>& part) {
        // The pages something is drawn on, and how far down the last one is inked (a part
        // ending at a page's end left the next one blank: its closing empty block, or the
        // margin after the last). Judged by drawing each page small: ink is ink.
        struct Laid {
            std::unique_ptr<QTextDocument> doc;
            std::vector<bool> used;
            double last_ink = 0; // the last used page's inked height, as a share of a page
        };
        auto lay = [&](int pt) {
            Laid l;
            l.doc = std::make_unique<QTextDocument>();
            QTextDocument& doc = *l.doc;
            doc.setDefaultFont(QFont(QStringLiteral("DejaVu Sans"), 9));
            doc.setHtml(part(pt));
            doc.setPageSize(QSizeF(W, H));
            auto inked = [&](int i) { // the lowest inked row's share of the page; 0: blank
                QImage img(std::max(1, W / 4), std::max(1, H / 4), QImage::Format_Grayscale8);
                img.fill(Qt::white);
                QPainter ip(&img);
                ip.scale(0.25, 0.25);
                ip.translate(0, -double(i) * H);
                doc.drawContents(&ip, QRectF(0, double(i) * H, W, H));
                ip.end();
                for (int y = img.height() - 1; y >= 0; --y) {
                    const uchar* line = img.constScanLine(y);
                    for (int x = 0; x < img.width(); ++x)
                        if (line[x] < 250) return double(y + 1) / img.height();
                }
                return 0.0;
            };
            l.used.assign(std::size_t(std::max(0, doc.pageCount())), false);
            for (int i = 0; i < doc.pageCount(); ++i) {
                const double ink = inked(i);
                l.used[std::size_t(i)] = ink > 0;
                if (ink > 0) l.last_ink = ink;
            }
            return l;
        };
        auto pages = [](const Laid& l) { return std::count(l.used.begin(), l.used.end(), true); };
        Laid best = lay(9);
        for (int pt = 8; pt >= 7 && best.last_ink < 0.15 && pages(best) > 1; --pt)
            if (Laid smaller = lay(pt); pages(smaller) < pages(best)) best = std::move(smaller);
        QTextDocument& doc = *best.doc;
        for (int i = 0; i < doc.pageCount(); ++i) {
            if (!best.used[std::size_t(i)]) continue;
            if (!first_page) pdf.newPage();
            first_page = false;
            p.save();
            p.translate(0, -double(i) * H);
            doc.drawContents(&p, QRectF(0, double(i) * H, W, H));
            p.restore();
        }
        return best.last_ink;
    };
    // The charts follow the head on its last page where they fit (they started a page of
    // their own: the first page was half blank, and the last chart alone on another).
    const double head_ink = text([&](int) { return htmlHead(d); });
    QFont heading(QStringLiteral("DejaVu Sans"), 12, QFont::Bold),
        body(QStringLiteral("DejaVu Sans"), 9);
    // In their order, except that where the next one does not fit what is left of a page
    // and a later one does, that one comes first (the timeline, too tall for the head's
    // page, left it half blank).
    int y = int(std::ceil(head_ink * H)) + 12;
    p.setFont(body);
    std::vector<int> need;
    std::vector<int> caption_hs;
    for (const Chart& c : set->charts) {
        caption_hs.push_back(
            p.boundingRect(QRect(0, 0, W, 1000), Qt::TextWordWrap, c.caption).height() + 4);
        need.push_back(24 + caption_hs.back() + c.height + 16);
    }
    std::vector<bool> drawn(set->charts.size(), false);
    for (std::size_t n = 0; n < set->charts.size(); ++n) {
        std::size_t i = 0;
        while (drawn[i]) ++i; // the first not drawn
        if (y + need[i] > H)
            for (std::size_t j = i + 1; j < set->charts.size(); ++j)
                if (!drawn[j] && y + need[j] <= H) {
                    i = j;
                    break;
                }
        drawn[i] = true;
        const Chart& c = set->charts[i];
        const int caption_h = caption_hs[i];
        if (y + need[i] > H) {
            pdf.newPage();
            y = 0;
        }
        p.setFont(heading);
        p.setPen(Qt::black);
        p.drawText(QRect(0, y, W, 22), Qt::AlignLeft | Qt::AlignVCenter, c.title);
        y += 24;
        p.setFont(body);
        p.drawText(QRect(0, y, W, caption_h), Qt::AlignLeft | Qt::TextWordWrap, c.caption);
        y += caption_h;
        c.paint(p, QRect(0, y, W, c.height));
        y += c.height + 16;
    }
    text([&](int pt) { return htmlTail(d, pt); });
    p.end();
    return bytes;
}

} // namespace kairos::views
