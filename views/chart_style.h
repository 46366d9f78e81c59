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
    // QCustomPlot draws an entry's text from the top of a row as tall as the icon when the
    // icon is taller, and centres the icon: with its default 32x18 icon the text sat above
    // its swatch. An icon no taller than a line of text keeps them level.
    plot->legend->setIconSize(28, 10);
    // QCustomPlot clips each element one pixel above its rect (QCPLayer::draw translates
    // the clip by -1): an entry's underscore ("sprpt_lp") lost its line. Two pixels below
    // every entry keep it; entries come and go with the graphs, so at every replot.
    if (!plot->property("kairosLegendPad").toBool()) {
        plot->setProperty("kairosLegendPad", true);
        QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] {
            for (int i = 0; i < plot->legend->itemCount(); ++i) {
                QCPAbstractLegendItem* item = plot->legend->item(i); // null: a wrapped gap
                if (!item) continue;
                const QMargins m = item->margins();
                if (m.bottom() < 2) item->setMargins(QMargins(m.left(), m.top(), m.right(), 2));
            }
        });
    }
}

} // namespace kairos::views
