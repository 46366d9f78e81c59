#pragma once
// A fitted execution-time model (kairos-cli fit ete) against its measurements: each
// fit's rows as predicted vs measured time on log axes, the held-out rows hollow, and
// the line of perfect prediction; the legend gives each fit's MAPE on fitted and
// held-out rows. Reads the model's stored accuracy JSON (core/store).
#include <QString>
#include <QStringList>
#include <QVector>
#include <qcustomplot.h>
#include <string>
#include <vector>

namespace kairos::views {

class ModelChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit ModelChart(QWidget* parent = nullptr);
    // `accuracy`: the stored JSON list of fits ({"fit", "mape_pct", "held_out_mape_pct",
    // "points": [[measured, predicted], ...], "held_out_points": ...}; a "label" replaces
    // the legend's "FIT: MAPE x %"). False (and an empty chart) when it has no points to
    // draw. The axes say "measured (s)" and "predicted (s)" unless given.
    bool setModel(const QString& title, const std::string& accuracy,
                  const QString& x_label = QString(), const QString& y_label = QString());
    int pointCount() const { return points_; }

    // An ALA configuration (kairos-cli fit ala): throughput against batch size, one curve
    // per (input, output) pair, measured pairs solid, predicted ones dashed, on linear
    // axes. `note` goes under the title (e.g. the held-out error).
    // `lo`, `hi` (optional, as long as `batch`): the curve's prediction interval, drawn as a
    // band in the curve's colour; `points_batch`, `points_throughput`: measurements drawn as
    // dots on it (a user's rows of a configuration the model never measured).
    struct Curve {
        QString name;
        QVector<double> batch, throughput;
        bool measured = true;
        QVector<double> lo, hi;
        QVector<double> points_batch, points_throughput;
    };
    void setCurves(const QString& title, const QString& note, const std::vector<Curve>& curves);
    int curveCount() const { return curves_; }
    int bandCount() const { return bands_; }
    QStringList curveNames() const; // the legend's names of the curves

private:
    void setLogAxes(bool log);
    void setLegendBelow(bool below); // below the plot (curves) or inside it (ETE)
    int points_ = 0, curves_ = 0, bands_ = 0;
    std::vector<QCPGraph*> curve_graphs_;
    QCPTextElement* title_ = nullptr;
};

} // namespace kairos::views
