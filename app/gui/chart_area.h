#pragma once
// The window's centre: the request timeline under the find bar, over the KV-memory chart,
// the latency CDFs and the utility view (tabs), with a banner above when the run was
// overloaded. The timeline and the KV chart share the state's time window. The shown run
// and the pinned one come from WorkbenchState; the window says when to redraw (showRun, and
// refreshComparison after a pin), since the find bar's matches must be evaluated on a new
// run before its rows are laid out.
#include "timeline_view.h"

#include <QWidget>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

class QAction;
class QLabel;
class QTreeWidget;
class QTabWidget;

namespace kairos::views {
class KvChart;
class LatencyChart;
class TimelineView;
class TufChart;
} // namespace kairos::views

namespace kairos::app {

class FindBar;
struct RunView;
class WorkbenchState;

class ChartArea : public QWidget {
    Q_OBJECT
public:
    explicit ChartArea(WorkbenchState* state, QWidget* parent = nullptr);

    views::TimelineView* timeline() const { return timeline_; }
    // The timeline as it is now, for the next run's frame to be built beside its summary
    // (TimelineView::planFrame); none while Find shows only its matches.
    views::TimelineView::FramePlan framePlan() const;
    views::KvChart* kvChart() const { return kv_; }
    views::LatencyChart* latencyChart() const { return latency_; }
    views::TufChart* tufChart() const { return tuf_; }
    QTabWidget* tabs() const { return tabs_; }
    FindBar* findBar() const { return find_; }

    // The shown run drawn: the overload banner, KV, utility, and what refreshComparison draws.
    void showRun(const RunView& r);
    // The line under the load banner: what to try with the sliders on this run, or why one
    // cannot change it ("" hides it).
    void setHint(const QString& text);
    QString hintText() const;
    // The rows (per request, per agent lane, or the find bar's matches only) with the pinned
    // run's lane when comparable, and the pinned run's KV and CDF overlays.
    void refreshComparison();
    // The pinned run as legends name it ("run 3 fcfs", "pinned sjf"; "" when none).
    QString pinnedName() const;

    // The Inspector follows the cursor over the timeline and the KV chart, marks its instant
    // on both, and a request it picks is selected and scrolled to; a click on the KV chart
    // inspects that instant. A click on either asks for the Inspector (inspectorWanted).
    void followInspector(class InspectorPanel* inspector);

    // Timeline rows per agent lane (when the workload names agents) or per request; the
    // checkable action (View › Rows per agent) follows it.
    void setAgentRows(bool on);
    bool agentRows() const { return agent_rows_; }
    QAction* agentRowsAction() const { return agent_action_; }

    // The view as a session keeps it (the chart tab, rows per agent, the time window, the
    // row height, the search and "only matches"), and restored from one (a field of the wrong
    // type leaves the rest as it is).
    nlohmann::json viewJson() const;
    void restoreView(const nlohmann::json& v);

    // Every chart by name, written as .svg (vector) or .png: what each chart's right click >
    // Export chart does. Other panels' charts are added with addChart.
    // `save` throws when it cannot write (chart_tools.h).
    void addChart(const QString& name, std::function<void(const QString&)> save);
    QStringList chartNames() const;
    // False for an unknown chart or a failed write, with the reason in `error`.
    bool exportChart(const QString& chart, const QString& path, QString* error = nullptr) const;

    // The load strip's words for a run, by the core's loadBand (overloaded, near
    // saturation, keeping up), the core's verdict after. Its whole text (the strip shows it
    // elided to one line).
    static QString loadText(const RunView& r);
    // The strip's whole text: loadText, then the finished requests that missed an SLO.
    static QString bannerText(const RunView& r);
    QString loadStripText() const;

    // The ruler selection's summary (requests by phase, KV, decisions, latencies of the
    // requests that finished in it), while there is one: its counts on one line above the
    // timeline (the whole text its tooltip), every figure in the Selection tab under it, as
    // Perfetto's area selection fills its details panel. Empty without a selection.
    QString rangeSummaryText() const;
    // The strip's line as shown (elided to its width) and the Selection tab (null without
    // a selection); showSelectionDetails makes it the tab shown (the strip's "details").
    QString rangeSummaryLine() const;
    QWidget* selectionTab() const;
    void showSelectionDetails();

    // The KV chart's plot spans exactly the timeline's time axis, to the pixel: its left
    // and right margins follow the timeline's plot wherever frames, the gutter and the
    // scroll bar put it (called on every resize of either).
    void alignTimeAxes();

Q_SIGNALS:
    void inspectorWanted();

protected:
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    // A key press anywhere in the window meant for the time tracks (routeTrackKey: the
    // pointer over the timeline or the KV chart, the focus not in something that types).
    bool routeTrackKey(QObject* watched, class QKeyEvent* e);

    void applyRows();
    void refreshRangeSummary();
    void elideBanner(); // the load strip's whole text, elided to its width
    void elideRangeLine();

    WorkbenchState* state_;
    views::TimelineView* timeline_;
    views::KvChart* kv_;
    views::LatencyChart* latency_;
    views::TufChart* tuf_;
    QTabWidget* tabs_;
    QLabel* banner_;
    QLabel* hint_;         // what to try with the sliders, or why one cannot change this run
    QWidget* range_bar_;   // the selection's strip: range_info_ and the details link
    QLabel* range_info_;   // its line, elided (property fullText: the line, whole)
    QTreeWidget* details_; // the Selection tab (a page of tabs_ while there is a selection)
    FindBar* find_;
    QAction* agent_action_;
    bool agent_rows_ = false;
    std::map<QString, std::function<void(const QString&)>> savers_;
};

} // namespace kairos::app
