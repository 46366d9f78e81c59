#pragma once
// The run report: workload, configuration, the metrics table (with a named pinned run's
// values and changes when comparing), the RunSpec and device profile, and every chart the
// window has (timeline, KV memory, latency CDFs with the SLOs, utility when the workload
// has TUFs), painted by the same widgets as on screen and as vectors: inline SVG in the
// HTML, drawn straight onto the PDF's pages (A4, 15 mm margins). Needs a QApplication
// (widgets paint the charts); offscreen is fine.
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
    QString name;                                   // the run's name ("" : none)
    QString pinned_name = QStringLiteral("pinned"); // the pinned run, as columns and legends say
    GoodputSlo goodput;                             // SLO lines on the CDFs
    QString spec_json, profile_json; // the RunSpec and device profile ("" : left out)
};

// Throws std::runtime_error when the file cannot be written (nothing half-written: both
// go through a temporary file).
void writeReportHtml(const ReportData& d, const QString& path);
void writeReportPdf(const ReportData& d, const QString& path);
// The documents' bytes, for a caller that writes them with its other outputs.
QByteArray reportPdfBytes(const ReportData& d);
// The HTML text, its charts inline as SVG (data: URLs).
QString reportHtml(const ReportData& d);

} // namespace kairos::views
