#pragma once
// The latency view: CDFs of TTFT, TPOT and E2EL (milliseconds, log scale), the points
// reduced by lod::ecdf. Series can be added for a pinned run (dashed) to compare; the
// goodput SLOs are vertical lines in their metric's colour. The legend sits where no
// curve runs (chart_tools.h).
#include <QColor>
#include <cmath>
#include <qcustomplot.h>
#include <utility>
#include <vector>

namespace kairos::views {

struct CdfSeries {
    QString name;
    QColor color;
    std::vector<std::pair<double, double>> points; // (ms, fraction)
    bool dashed = false;
};

class LatencyChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit LatencyChart(QWidget* parent = nullptr);
    void setSeries(const std::vector<CdfSeries>& series);
    struct Slo {
        QString name; // "TTFT SLO"
        QColor color;
        double ms = 0;
    };
    // The SLO lines (none: no lines); the x range grows to show them.
    void setSlos(const std::vector<Slo>& slos);
    int sloCount() const { return int(slo_lines_.size()); }

private:
    void fitRange();
    std::vector<QCPGraph*> slo_lines_;
    std::vector<Slo> slos_;
    double lo_ = INFINITY, hi_ = 0; // the data's extent (ms)
};

} // namespace kairos::views
