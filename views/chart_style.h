#pragma once
// One look for every chart: the widget's palette (light or dark) for background, axes,
// labels and the legend, so charts follow the system theme as the rest of the window.
#include <qcustomplot.h>

namespace kairos::views {

// `background`: QPalette::Base for plots, QPalette::Window for small panel charts.
inline void applyPalette(QCustomPlot* plot, QPalette::ColorRole background = QPalette::Base) {
    plot->setBackground(plot->palette().color(background));
    const QColor fg = plot->palette().color(QPalette::Text);
    for (QCPAxis* a : {plot->xAxis, plot->yAxis}) {
        a->setBasePen(QPen(fg));
        a->setTickPen(QPen(fg));
        a->setSubTickPen(QPen(fg));
        a->setTickLabelColor(fg);
        a->setLabelColor(fg);
    }
    plot->legend->setVisible(true);
    plot->legend->setBrush(plot->palette().color(QPalette::Base));
    plot->legend->setTextColor(fg);
}

} // namespace kairos::views
