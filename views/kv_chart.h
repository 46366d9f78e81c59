#pragma once
// KV-cache memory under the timeline, on the same time axis: tokens in use (the min-max
// band of each pixel column, so spikes survive downsampling), the capacity, and a mark
// at every preemption; with a pinned run, its peak tokens per pixel as a grey line. QCustomPlot
// draws; core/lod downsamples the visible window to one bucket per pixel on every range change.
#include "time_range.h"

#include <memory>
#include <qcustomplot.h>
#include <utility>
#include <vector>

namespace kairos::views {

class KvChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit KvChart(TimeRange* range, QWidget* parent = nullptr);
    // The KV series (lod::kvSeries), the capacity in tokens and the preemption times;
    // with prefix caching, `held` (lod::kvSeries(log, true)): the cached blocks nobody
    // references are drawn as a pale band above the tokens in use. A disaggregated run:
    // `kv` is both pools' and `prefill` (lod::kvPoolSeries) the prefill pool's, a line
    // inside the band (the band above the line is the decode pool's).
    void setRun(std::shared_ptr<const std::vector<std::pair<double, double>>> kv, double capacity,
                std::vector<double> preemptions,
                std::shared_ptr<const std::vector<std::pair<double, double>>> held = nullptr,
                std::shared_ptr<const std::vector<std::pair<double, double>>> prefill = nullptr);
    // Compare: the pinned run's KV series, drawn as a grey line (nullptr: none).
    void setPinned(std::shared_ptr<const std::vector<std::pair<double, double>>> kv);
    bool hasPinned() const { return pinned_ && !pinned_->empty(); }
    int bucketCount() const { return buckets_; }
    // Fixed left and right margins of the plot, to line its time axis up with the timeline's.
    void setPlotMargins(int left, int right);
    // The inspector's instant as a dashed vertical line (NaN: none).
    void setInspectedTime(double t);

Q_SIGNALS:
    // A click (no drag) on the plot: the time under it; the mouse moving over it: the same.
    void timeClicked(double t);
    void cursorMoved(double t);

protected:
    void resizeEvent(QResizeEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override; // W/S/A/D, Esc (TimeRange::handleKey)
    // Shift+drag selects a stretch of time (the timeline's ruler's selection); a plain
    // drag pans.
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;

private:
    void resample();
    void updateYRange();

    TimeRange* range_;
    bool selecting_ = false;
    double select_from_ = 0;
    std::shared_ptr<const std::vector<std::pair<double, double>>> kv_, pinned_, held_, prefill_;
    QCPGraph *hi_, *lo_, *cap_, *marks_, *pinned_hi_, *held_hi_, *prefill_hi_;
    QCPItemStraightLine* inspected_ = nullptr;
    QCPItemRect* selection_ = nullptr; // the shared range selection, shaded
    QPoint press_;
    double capacity_ = 0;
    int buckets_ = 0;
    std::vector<double> preemptions_; // sorted; drawn one mark per pixel column (resample)
    int margin_lr_ = -1;              // left + right plot margins when fixed
    int margin_l_ = -1, margin_r_ = -1;
    bool syncing_ = false;
};

} // namespace kairos::views
