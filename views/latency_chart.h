#pragma once
// The latency view: CDFs of TTFT, TPOT and E2EL (milliseconds, log scale), the points
// reduced by lod::ecdf. Series can be added for a pinned run (dashed) to compare.
#include <QColor>
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
};

} // namespace kairos::views
