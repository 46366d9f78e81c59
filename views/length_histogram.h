#pragma once
// The workload summary chart: prompt and output length distributions as histograms over
// log-spaced token bins (lod::logHistogram).
#include "model/workload.h"

#include <qcustomplot.h>

namespace kairos::views {

class LengthHistogram : public QCustomPlot {
    Q_OBJECT
public:
    explicit LengthHistogram(QWidget* parent = nullptr);
    void setWorkload(const Workload& w);
};

} // namespace kairos::views
