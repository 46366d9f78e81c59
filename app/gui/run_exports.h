#pragma once
// File › Export: the shown run as a report (HTML or PDF, its charts drawn), a Perfetto trace,
// the per-request CSV or the run log, each written through core's writers (whole file or
// nothing). The window says what a report adds about the run (`Describe`: the device, the
// pinned run's name, the RunSpec).
#include "jobs.h"
#include "report.h"
#include "sim_runner.h"

#include <QObject>
#include <functional>
#include <string>

class QMenu;
class QWidget;

namespace kairos::app {

class WorkbenchState;

class RunExports : public QObject {
    Q_OBJECT
public:
    using Describe = std::function<void(views::ReportData& d, const RunView& run)>;
    RunExports(QWidget* window, WorkbenchState* state, JobTracker* jobs, Describe describe);
    // Adds one action per export to `menu`.
    void fill(QMenu* menu);
    // The file name a Save dialog offers for `filter` ("Report (*.pdf)"): the workload's
    // and the shown policy's names with the filter's extension.
    QString suggestedName(const QString& filter) const;

Q_SIGNALS:
    void message(const QString& text); // for the status bar

private:
    using Writer = std::function<void(const RunView&, const std::string&)>;
    // An action: asks for the file, then writes the shown run (`background`: on the job
    // tracker); an error is shown in a message box.
    std::function<void()> exporter(const QString& title, const QString& filter, Writer write,
                                   bool background = true);
    void writeReport(const RunView& r, const std::string& file, bool pdf) const;

    QWidget* window_;
    WorkbenchState* state_;
    JobTracker* jobs_;
    Describe describe_;
};

} // namespace kairos::app
