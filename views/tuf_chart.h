#pragma once
// The utility view (TimelyLLM): each class's time-utility function TUF(t) over response
// time (without the zero floor: TimelyLLM scores a late first response negatively), and
// every task plotted at its response time W(s0) and the utility it earned there; the
// legend carries each class's first-response utility as a share of its maximum.
#include "model/request.h"

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

class TufChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit TufChart(QWidget* parent = nullptr);
    void setClasses(const std::vector<TufClass>& classes);
    static QColor classColor(std::size_t i);
};

} // namespace kairos::views
