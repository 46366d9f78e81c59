#pragma once
// The utility view (TimelyLLM): each class's time-utility function TUF(t) over response
// time (without the zero floor: TimelyLLM scores a late first response negatively), and
// every task plotted at its response time W(s0) and the utility it earned there; the
// legend carries each class's first-response utility as a share of its maximum.
#include "metrics/summary.h"
#include "model/request.h"
#include "model/run_log.h"
#include "model/workload.h"

#include <qcustomplot.h>
#include <string>
#include <utility>
#include <vector>

namespace kairos::views {

struct TufClass {
    std::string cls;
    Tuf tuf;
    std::vector<std::pair<double, double>> tasks; // (response s, signed TUF of W(s0))
    double utility_pct = 0; // first-response utility, % of the maximum (may be negative)
};

// A run's utility view data: per class with a TUF, its function and every task at
// (W(s0), TUF(W(s0))), with the class's first-response utility from the summary.
std::vector<TufClass> tufClasses(const RunLog& log, const Workload& w, const Summary& s);

class TufChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit TufChart(QWidget* parent = nullptr);
    // The x axis spans every class's curve past its zero-utility time and the tasks up to
    // their 99th percentile response time (one task minutes late would squeeze the rest
    // into a corner); tasks beyond it, and below the -3 x beta floor, are counted in a note
    // on the chart, not dropped silently.
    void setClasses(const std::vector<TufClass>& classes);
    static QColor classColor(const std::string& cls);
    int tasksBeyond() const { return beyond_; } // right of the x axis
    int tasksBelow() const { return below_; }   // drawn at the -3 x beta floor
    double xMax() const { return xAxis->range().upper; }
    QString note() const { return note_; }
    // The legend's corner in the plot; none (0) when it is below the plot.
    Qt::Alignment legendCorner() const { return legend_corner_; }

private:
    void placeLegend();
    int beyond_ = 0, below_ = 0;
    QString note_;
    QCPTextElement* note_element_ = nullptr; // a row above the plot while there is a note
    Qt::Alignment legend_corner_ = Qt::AlignTop | Qt::AlignRight;
};

} // namespace kairos::views
