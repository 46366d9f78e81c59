#pragma once
// A metric against a swept parameter: one curve per policy, the mean over seeds as a line
// with points, its 95 % interval as a shaded band, and the slider's current value as a
// dashed vertical mark that follows the slider. The legend sits outside the data (above
// the plot), so it never covers a curve.
#include "run/sweep.h"

#include <QColor>
#include <QString>
#include <limits>
#include <qcustomplot.h>
#include <vector>

namespace kairos::views {

struct SweepCurve {
    QString name;
    std::vector<double> x, mean, lo, hi; // NaN where a point has no value (a loop)
    QColor color;
};

class SweepChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit SweepChart(QWidget* parent = nullptr);
    void setCurves(const QString& x_label, const QString& y_label, bool log_x,
                   const std::vector<SweepCurve>& curves);
    // Two metrics against each other: each curve's points in sweep order (x = one metric's
    // mean, y = the other's), no band, and the Pareto front (the points no other point beats
    // on both) as a dashed grey line with diamonds. The mark is hidden.
    void setTradeoff(const QString& x_label, const QString& y_label,
                     const std::vector<SweepCurve>& curves,
                     const std::vector<std::pair<double, double>>& front);
    // Capacity marks (a rate sweep): a dotted vertical line per policy at the rate where
    // goodput fell below the target, its label in the legend (an empty label: none, as for
    // a second policy at the same rate); an empty list removes them.
    struct CapacityMark {
        double x;
        QColor color;
        QString label;
    };
    void setCapacityMarks(const std::vector<CapacityMark>& marks);
    // Its lines and their legend entries (one per label).
    int capacityMarkCount() const {
        return static_cast<int>(capacity_items_.size() + capacity_graphs_.size());
    }
    // The chart as a file: PNG (raster, 2x) or SVG (vector), by the extension; false when
    // it could not be written.
    void saveAs(const QString& path, int width = 900, int height = 560); // throws on failure
    // The slider's value (NaN hides the mark).
    void setMarker(double x);
    double marker() const { return marker_x_; }
    // The window's own run: its value `y` of the drawn metric at the mark, a diamond named
    // `name` in the legend (NaN hides it). The curves are means over seeds, and it is one.
    void setShownRun(double y, const QString& name);
    bool shownRunVisible() const { return shown_ != nullptr; }
    int curveCount() const { return curves_; }
    // Whether any curve's band has a width (seeds that all gave the same run leave none).
    bool hasSpread() const { return spread_; }
    bool tradeoff() const { return tradeoff_; }

protected:
    void resizeEvent(QResizeEvent* e) override;

private:
    // The legend in as many columns as fit `width` pixels, wrapping to more rows (in one
    // row, four policies' curves ran past the chart's edge, cut).
    void fitLegend(int width);
    void placeShownRun();
    QCPItemStraightLine* marker_ = nullptr;
    QCPGraph* shown_ = nullptr;
    double shown_y_ = std::numeric_limits<double>::quiet_NaN();
    QString shown_name_;
    double marker_x_ = 0;
    int curves_ = 0;
    bool tradeoff_ = false;
    bool spread_ = false;
    std::vector<QCPAbstractItem*> capacity_items_;
    std::vector<QCPGraph*> capacity_graphs_;
};

// A table's rows as curves of metric column `metric`: one per combination of the axes
// before the last (named by their values; "axis=value" when there are several), drawn
// against `x` (a number per row), or against metric column `against` (the trade-off).
std::vector<SweepCurve> sweepCurves(const sweep::Table& t, const std::vector<double>& x,
                                    std::size_t metric, const std::size_t* against = nullptr);

// A sweep as one self-contained HTML page: its settings ("key: value" lines), a chart per
// metric in `charted` (inline SVG drawn by SweepChart: mean and 95 % band against `x`, the
// last axis's value per row) and the whole table. Needs a QApplication (offscreen is fine).
QString sweepReportHtml(const QString& title, const std::vector<QString>& settings,
                        const sweep::Table& t, const std::vector<double>& x,
                        const std::string& x_name, bool log_x,
                        const std::vector<std::string>& charted);

} // namespace kairos::views
