#pragma once
// The run report: workload, configuration, the metrics table (with a pinned run's values
// and changes when comparing), and the charts painted by the same code as on screen (the
// timeline's render(), the KV chart), as HTML (charts inline as PNG) or PDF (pages via
// QTextDocument). Needs a QApplication (widgets paint the charts), offscreen is fine.
#include "metrics/summary.h"
#include "model/run_log.h"
#include "model/workload.h"

#include <QString>
#include <string>
#include <vector>

namespace kairos::views {

struct ReportData {
    const Workload* workload = nullptr;
    const RunLog* log = nullptr;
    const Summary* summary = nullptr;
    const Summary* pinned = nullptr;    // optional: compare against it
    const RunLog* pinned_log = nullptr; // optional: the pinned run, overlaid on the charts
    std::vector<std::pair<std::string, std::string>> config; // (setting, value) rows
    QString title = QStringLiteral("Kairos run report");
};

// Throws std::runtime_error when the file cannot be written (nothing half-written: both
// go through a temporary file).
void writeReportHtml(const ReportData& d, const QString& path);
void writeReportPdf(const ReportData& d, const QString& path);
// The documents' bytes, for a caller that writes them with its other outputs.
QByteArray reportPdfBytes(const ReportData& d);
// The HTML text; `inline_images` embeds the charts as data: URLs (else "timeline.png" and
// "kv.png", which the PDF writer registers as document resources).
QString reportHtml(const ReportData& d, bool inline_images);

} // namespace kairos::views
