#include "report.h"

#include "kv_chart.h"
#include "lod/timeline.h"
#include "metrics/compare.h"
#include "metrics_model.h"
#include "time_range.h"
#include "timeline_view.h"

#include <QBuffer>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QTextDocument>
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

namespace kairos::views {

namespace {

constexpr int kChartWidth = 1100;

// The charts, painted by the on-screen widgets into images.
struct Charts {
    QImage timeline, kv;
};

Charts paintCharts(const ReportData& d) {
    Charts c;
    auto rows = std::make_shared<const std::vector<lod::Row>>(lod::buildRows(*d.log, d.workload));
    const auto [lo, hi] = lod::timeExtent(*rows);
    TimeRange range;
    range.setExtent(lo, hi);
    TimelineView tl(&range);
    // All requests on one picture: rows as tall as fit in 460 px (dense below a pixel).
    const int rows_h = 460;
    tl.setRows(rows);
    tl.setRowHeight(rows->empty() ? 8.0 : std::min(8.0, double(rows_h) / double(rows->size())));
    if (d.pinned_log) // its lanes show where rows are tall enough (small workloads)
        tl.setPinnedRows(std::make_shared<const std::vector<lod::Row>>(
            lod::buildRows(*d.pinned_log, d.workload)));
    c.timeline = QImage(kChartWidth, rows_h + TimelineView::kHeader, QImage::Format_RGB32);
    c.timeline.fill(Qt::white);
    {
        QPainter p(&c.timeline);
        tl.render(p, c.timeline.rect(), 0);
    }
    KvChart kv(&range);
    kv.resize(kChartWidth, 260);
    kv.setPlotMargins(TimelineView::kGutter, 0);
    kv.setRun(std::make_shared<const std::vector<std::pair<double, double>>>(lod::kvSeries(*d.log)),
              double(d.log->kv_capacity_tokens), {});
    if (d.pinned_log)
        kv.setPinned(std::make_shared<const std::vector<std::pair<double, double>>>(
            lod::kvSeries(*d.pinned_log)));
    c.kv = kv.toPixmap(kChartWidth, 260).toImage();
    return c;
}

QString pngDataUrl(const QImage& img) {
    QByteArray bytes;
    QBuffer buf(&bytes);
    buf.open(QIODevice::WriteOnly);
    img.save(&buf, "PNG");
    return QStringLiteral("data:image/png;base64,") + QString::fromLatin1(bytes.toBase64());
}

QString esc(const std::string& s) {
    return QString::fromStdString(s).toHtmlEscaped();
}

void saveText(const QString& path, const QByteArray& bytes) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
        throw std::runtime_error(path.toStdString() + ": cannot write the report (" +
                                 f.errorString().toStdString() + ")");
}

QString html(const ReportData& d, const QString& timeline_src, const QString& kv_src) {
    const Workload& w = *d.workload;
    QString h;
    h += QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>");
    h += QStringLiteral("<title>%1</title>").arg(d.title.toHtmlEscaped());
    h +=
        QStringLiteral("<style>body{font-family:'DejaVu Sans',sans-serif;margin:24px}"
                       "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}"
                       "td.n{text-align:right}.better{color:#1e8e3e}.worse{color:#d03030}</style>");
    h += QStringLiteral("</head><body>\n<h1>%1</h1>\n").arg(d.title.toHtmlEscaped());
    const LoadReport& load = d.summary->load;
    if (load.saturated.value_or(false))
        h += QStringLiteral("<p class=\"warn\" style=\"background:#fff1d6;border:1px solid #e0a040;"
                            "padding:6px\"><b>Overloaded:</b> %1 req/s offered, %2 req/s served. "
                            "%3. Its latencies grow with the run's length and describe no "
                            "service level.</p>\n")
                 .arg(load.offered_rate, 0, 'f', 2)
                 .arg(d.summary->request_throughput, 0, 'f', 2)
                 .arg(esc(load.verdict));
    h += QStringLiteral("<h2>Workload</h2>\n<table>");
    auto row = [&](const QString& k, const QString& v) {
        h += QStringLiteral("<tr><th align=\"left\">%1</th><td>%2</td></tr>").arg(k, v);
    };
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
    row(QStringLiteral("load"), esc(load.verdict));
    h += QStringLiteral("</table>\n<h2>Configuration</h2>\n<table>");
    row(QStringLiteral("policy"), esc(d.log->policy));
    row(QStringLiteral("execution model"), esc(d.log->exec_model));
    row(QStringLiteral("KV capacity"),
        QString::number(d.log->kv_capacity_tokens) + QStringLiteral(" tokens"));
    for (const auto& [k, v] : d.config) row(esc(k), esc(v));
    h += QStringLiteral("</table>\n<h2>Metrics</h2>\n<table><tr><th>metric</th><th>value</th>");
    if (d.pinned) h += QStringLiteral("<th>pinned</th><th>change</th>");
    h += QStringLiteral("</tr>\n");
    std::vector<MetricDelta> deltas;
    std::string note;
    if (d.pinned) {
        // Per-request results of both runs when their logs are at hand: latency then
        // compares over the requests both completed (core's compare).
        std::vector<RequestMetrics> qa, qb;
        if (d.pinned_log) qa = perRequest(*d.pinned_log);
        qb = perRequest(*d.log);
        const Comparison c =
            compare({d.pinned, d.pinned_log ? &qa : nullptr}, {d.summary, &qb});
        deltas = c.deltas;
        note = c.note;
    } else {
        deltas = compareRuns(nullptr, *d.summary);
    }
    if (note.empty() && d.summary->completed < d.summary->num_requests)
        note = "latency is over " + d.summary->coverage();
    for (const MetricDelta& m : deltas) {
        h += QStringLiteral("<tr><td>%1</td><td class=\"n\">%2</td>")
                 .arg(esc(m.label), MetricsModel::formatValue(m.after));
        if (d.pinned) {
            const QString cls = m.verdict > 0   ? QStringLiteral("better")
                                : m.verdict < 0 ? QStringLiteral("worse")
                                                : QString();
            const QString change =
                m.basis == Basis::NotComparable ? QStringLiteral("n/c")
                : m.basis == Basis::Common
                    ? (std::isnan(m.relative)
                           ? MetricsModel::formatValue(m.change)
                           : QString::number(100 * m.relative, 'f', 1) + QStringLiteral(" %")) +
                          QStringLiteral(" (common set, not judged)")
                : std::isnan(m.change) ? QStringLiteral("–")
                : std::isnan(m.relative)
                    ? MetricsModel::formatValue(m.change)
                    : QString::number(100 * m.relative, 'f', 1) + QStringLiteral(" %");
            h += QStringLiteral("<td class=\"n\">%1</td><td class=\"n %2\">%3</td>")
                     .arg(MetricsModel::formatValue(m.before), cls, change);
        }
        h += QStringLiteral("</tr>\n");
    }
    h += QStringLiteral("</table>\n");
    if (!note.empty()) h += QStringLiteral("<p class=\"note\">Note: %1.</p>\n").arg(esc(note));
    h += QStringLiteral("<h2 style=\"page-break-before:always\">Request timeline</h2>\n");
    h += QStringLiteral("<p><img src=\"%1\" width=\"%2\" alt=\"request timeline\"/></p>\n")
             .arg(timeline_src)
             .arg(kChartWidth * 6 / 10);
    h += QStringLiteral("<h2>KV-cache memory</h2>\n");
    h += QStringLiteral("<p><img src=\"%1\" width=\"%2\" alt=\"KV memory\"/></p>\n")
             .arg(kv_src)
             .arg(kChartWidth * 6 / 10);
    h += QStringLiteral("<p>Kairos %1</p>\n</body></html>\n").arg(QStringLiteral(KAIROS_VERSION));
    return h;
}

} // namespace

QString reportHtml(const ReportData& d, bool inline_images) {
    if (!inline_images) return html(d, QStringLiteral("timeline.png"), QStringLiteral("kv.png"));
    const Charts c = paintCharts(d);
    return html(d, pngDataUrl(c.timeline), pngDataUrl(c.kv));
}

void writeReportHtml(const ReportData& d, const QString& path) {
    saveText(path, reportHtml(d, true).toUtf8());
}

void writeReportPdf(const ReportData& d, const QString& path) {
    saveText(path, reportPdfBytes(d));
}

QByteArray reportPdfBytes(const ReportData& d) {
    const Charts c = paintCharts(d);
    QTextDocument doc;
    doc.addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("timeline.png")), c.timeline);
    doc.addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("kv.png")), c.kv);
    doc.setHtml(html(d, QStringLiteral("timeline.png"), QStringLiteral("kv.png")));
    // Into a buffer first, so that a failure leaves no half-written file.
    QByteArray bytes;
    {
        QBuffer buf(&bytes);
        buf.open(QIODevice::WriteOnly);
        QPdfWriter pdf(&buf);
        pdf.setPageSize(QPageSize(QPageSize::A4));
        pdf.setResolution(96); // the HTML is laid out in screen pixels
        pdf.setTitle(d.title);
        pdf.setCreator(QStringLiteral("Kairos"));
        doc.setPageSize(QSizeF(pdf.width(), pdf.height()));
        doc.print(&pdf);
    }
    return bytes;
}

} // namespace kairos::views
