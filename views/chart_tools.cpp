#include "chart_tools.h"

#include "util/atomic_file.h"

#include <QBuffer>
#include <QContextMenuEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontInfo>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSettings>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kairos::views {

double axisFraction(const QCPAxis* axis, double v) {
    const QCPRange r = axis->range();
    if (axis->scaleType() == QCPAxis::stLogarithmic) {
        if (v <= 0 || r.lower <= 0) return -1.0;
        return std::log(v / r.lower) / std::log(r.upper / r.lower);
    }
    return r.size() > 0 ? (v - r.lower) / r.size() : -1.0;
}

Qt::Alignment placeLegend(QCustomPlot* plot, const std::function<bool(const QCPGraph*)>& counts,
                          bool below) {
    QCPLegend* legend = plot->legend;
    // A hidden legend is placed too: sayWhenEmpty shows it after this, in the same replot,
    // once data arrives (the utility chart's legend was drawn where it first stood, on the
    // tasks, until the next replot).
    if (legend->itemCount() == 0) return Qt::AlignTop | Qt::AlignRight;
    QCPAxisRect* ar_el = plot->axisRect();
    int count[4] = {0, 0, 0, 0};
    const Qt::Alignment corners[] = {Qt::AlignTop | Qt::AlignRight, Qt::AlignTop | Qt::AlignLeft,
                                     Qt::AlignBottom | Qt::AlignRight,
                                     Qt::AlignBottom | Qt::AlignLeft};
    const QSize ls = legend->minimumOuterSizeHint();
    const QRect ar = ar_el->rect();
    const double wf = ar.width() > 0 ? std::min(0.9, (ls.width() + 16.0) / ar.width()) : 0.45;
    const double hf = ar.height() > 0 ? std::min(0.9, (ls.height() + 16.0) / ar.height()) : 0.3;
    auto mark = [&](double fx, double fy) {
        if (!(fx >= 0 && fx <= 1 && fy >= 0 && fy <= 1)) return;
        for (int c = 0; c < 4; ++c) {
            const bool right = corners[c] & Qt::AlignRight, top = corners[c] & Qt::AlignTop;
            if ((right ? fx > 1 - wf : fx < wf) && (top ? fy > 1 - hf : fy < hf)) ++count[c];
        }
    };
    // Below anyway: no corner to judge (the KV chart's 20,000 points, at every replot).
    for (int g = 0; g < (below ? 0 : plot->graphCount()); ++g) {
        const QCPGraph* graph = plot->graph(g);
        if (!graph->visible() || (counts && !counts(graph))) continue;
        const bool line = graph->lineStyle() != QCPGraph::lsNone;
        const bool fill = graph->brush().style() != Qt::NoBrush;
        double px = NAN, py = NAN;
        for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
            const double fx = axisFraction(graph->keyAxis(), it->key),
                         fy = axisFraction(graph->valueAxis(), it->value);
            if (line && std::isfinite(px)) // the line between: a few samples
                for (int k = 1; k < 8; ++k)
                    mark(px + (fx - px) * k / 8.0, py + (fy - py) * k / 8.0);
            mark(fx, fy);
            if (fill) // a filled area (bars, the KV band) covers down to the axis
                for (double f = 0; f < fy; f += 0.1) mark(fx, f);
            px = fx;
            py = fy;
        }
    }
    const int best = int(std::min_element(count, count + 4) - count);
    const bool inside = !below && count[best] == 0;
    const bool outside_now = legend->layout() == plot->plotLayout();
    if (inside && outside_now) {
        plot->plotLayout()->take(legend);
        plot->plotLayout()->simplify();
        ar_el->insetLayout()->addElement(legend, corners[best]);
    } else if (!inside && !outside_now) {
        ar_el->insetLayout()->take(legend);
        plot->plotLayout()->addElement(plot->plotLayout()->rowCount(), 0, legend);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
        legend->setMargins(QMargins(6, 2, 6, 4));
        plot->plotLayout()->setRowStretchFactor(plot->plotLayout()->rowCount() - 1, 0.001);
    }
    // QCPLegend draws its border on its outer rect, whose bottom below the plot is the
    // chart's last pixel row plus one: without a margin under it, the border's bottom line
    // fell outside the chart (the PDF report's legends had three sides).
    // The same on the right: the box spans the chart's width, and its right side fell one
    // pixel past the widget (the length histogram's legend had no right side). Not where
    // the plot's sides are fixed to line up with the timeline's (the KV chart's): a pixel
    // there would move its time axis.
    const bool sides_fixed = !(ar_el->autoMargins() & QCP::msRight);
    const QMargins room(0, 0, inside || sides_fixed ? 0 : 1, inside ? 0 : 2);
    if (plot->plotLayout()->margins() != room) plot->plotLayout()->setMargins(room);
    if (!inside) {
        // Below the plot, in as many columns as fit the plot's width (one row of every
        // entry would set the chart's minimum width to the legend's).
        wrapLegend(legend,
                   plot->width() - 12 - legend->margins().left() - legend->margins().right());
    }
    if (inside) {
        const int i = ar_el->insetLayout()->elements(false).indexOf(legend);
        if (i >= 0) ar_el->insetLayout()->setInsetAlignment(i, corners[best]);
    }
    return inside ? corners[best] : Qt::Alignment();
}

void wrapLegend(QCPLegend* legend, int avail) {
    avail = std::max(1, avail);
    std::vector<int> widths;
    for (int i = 0; i < legend->elementCount(); ++i)
        if (QCPLayoutElement* e = legend->elementAt(i)) // empty cells of a wrapped grid
            widths.push_back(e->minimumOuterSizeHint().width());
    int columns = 1;
    for (int n = int(widths.size()); n > 1 && columns == 1; --n) {
        std::vector<int> col(std::size_t(n), 0);
        for (std::size_t i = 0; i < widths.size(); ++i)
            col[i % std::size_t(n)] = std::max(col[i % std::size_t(n)], widths[i]);
        int total = legend->columnSpacing() * (n - 1);
        for (int c : col) total += c;
        if (total <= avail) columns = n;
    }
    if (legend->wrap() != columns) {
        // setWrap alone moves no entry: they stay in the row they were laid out in (the
        // Inspector's three entries shared a 370 px row, each cut short).
        legend->setWrap(columns);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }
}

void keepLegendOffData(QCustomPlot* plot, const std::function<bool(const QCPGraph*)>& counts) {
    QObject::connect(plot, &QCustomPlot::beforeReplot, plot,
                     [plot, counts] { placeLegend(plot, counts); });
}

void keepLegendBelow(QCustomPlot* plot) {
    QObject::connect(plot, &QCustomPlot::beforeReplot, plot,
                     [plot] { placeLegend(plot, nullptr, true); });
}

namespace {

// Liang-Barsky: the part of the segment a-b inside `r`; false when none is.
bool clipSegment(QPointF& a, QPointF& b, const QRectF& r) {
    const double dx = b.x() - a.x(), dy = b.y() - a.y();
    double t0 = 0, t1 = 1;
    const double p[4] = {-dx, dx, -dy, dy};
    const double q[4] = {a.x() - r.left(), r.right() - a.x(), a.y() - r.top(), r.bottom() - a.y()};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0) return false;
            continue;
        }
        const double t = q[i] / p[i];
        if (p[i] < 0)
            t0 = std::max(t0, t);
        else
            t1 = std::min(t1, t);
        if (t0 > t1) return false;
    }
    const QPointF a0 = a;
    a = QPointF(a0.x() + t0 * dx, a0.y() + t0 * dy);
    b = QPointF(a0.x() + t1 * dx, a0.y() + t1 * dy);
    return true;
}

// The graphs of `plot` cut to their axis rects while it lives (see toPainterClipped).
class ClippedGraphs {
public:
    explicit ClippedGraphs(QCustomPlot* plot) {
        for (int i = 0; i < plot->graphCount(); ++i) {
            QCPGraph* g = plot->graph(i);
            // A filled graph (the KV band, a channel) is left as it is: cutting its outline
            // would cut its fill differently from its partner's.
            if (!g->visible() || g->brush().style() != Qt::NoBrush || g->channelFillGraph() ||
                !g->keyAxis() || !g->valueAxis() || g->data()->isEmpty())
                continue;
            saved_.push_back({g, g->data(), g->lineStyle()});
            g->setData(clipped(g));
            if (g->lineStyle() != QCPGraph::lsNone) g->setLineStyle(QCPGraph::lsLine);
        }
    }
    ~ClippedGraphs() {
        for (const Saved& s : saved_) {
            s.graph->setData(s.data);
            s.graph->setLineStyle(s.style);
        }
    }
    ClippedGraphs(const ClippedGraphs&) = delete;
    ClippedGraphs& operator=(const ClippedGraphs&) = delete;

private:
    struct Saved {
        QCPGraph* graph;
        QSharedPointer<QCPGraphDataContainer> data;
        QCPGraph::LineStyle style;
    };
    static QSharedPointer<QCPGraphDataContainer> clipped(const QCPGraph* g) {
        QCPAxis *k = g->keyAxis(), *v = g->valueAxis();
        const QRectF r = QRectF(k->axisRect()->rect()).adjusted(-0.5, -0.5, 0.5, 0.5);
        const bool horizontal = k->orientation() == Qt::Horizontal;
        auto toPixel = [&](double key, double value) {
            const double kp = k->coordToPixel(key), vp = v->coordToPixel(value);
            return horizontal ? QPointF(kp, vp) : QPointF(vp, kp);
        };
        auto toData = [&](const QPointF& px) {
            return horizontal ? QCPGraphData(k->pixelToCoord(px.x()), v->pixelToCoord(px.y()))
                              : QCPGraphData(k->pixelToCoord(px.y()), v->pixelToCoord(px.x()));
        };
        // The polyline as drawn: steps as their corners; NaN values break it.
        std::vector<QCPGraphData> pts;
        const QCPGraph::LineStyle style = g->lineStyle();
        const QCPGraphData* prev = nullptr;
        for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
            if (prev && std::isfinite(prev->value) && std::isfinite(it->value)) {
                if (style == QCPGraph::lsStepLeft)
                    pts.push_back(QCPGraphData(it->key, prev->value));
                else if (style == QCPGraph::lsStepRight)
                    pts.push_back(QCPGraphData(prev->key, it->value));
                else if (style == QCPGraph::lsStepCenter) {
                    const double mid = (prev->key + it->key) / 2;
                    pts.push_back(QCPGraphData(mid, prev->value));
                    pts.push_back(QCPGraphData(mid, it->value));
                }
            }
            pts.push_back(*it);
            prev = &*it;
        }
        auto out = QSharedPointer<QCPGraphDataContainer>::create();
        QVector<QCPGraphData> kept;
        auto gap = [&](double key) {
            if (!kept.isEmpty() && !std::isnan(kept.back().value))
                kept.push_back(QCPGraphData(key, qQNaN()));
        };
        if (style == QCPGraph::lsNone) { // points: those inside
            for (const QCPGraphData& d : pts)
                if (std::isfinite(d.value) && r.contains(toPixel(d.key, d.value)))
                    kept.push_back(d);
        } else {
            bool joined = false; // the last point kept ends the previous piece
            for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
                const QCPGraphData &a = pts[i], &b = pts[i + 1];
                if (!std::isfinite(a.value) || !std::isfinite(b.value)) {
                    joined = false;
                    continue;
                }
                QPointF pa = toPixel(a.key, a.value), pb = toPixel(b.key, b.value);
                const QPointF oa = pa;
                if (!clipSegment(pa, pb, r)) {
                    joined = false;
                    continue;
                }
                if (!joined || pa != oa) {
                    gap(a.key);
                    kept.push_back(pa == oa ? a : toData(pa));
                }
                const bool whole_end = pb == toPixel(b.key, b.value);
                kept.push_back(whole_end ? b : toData(pb));
                joined = whole_end;
            }
            if (pts.size() == 1 && std::isfinite(pts[0].value) &&
                r.contains(toPixel(pts[0].key, pts[0].value)))
                kept.push_back(pts[0]);
        }
        out->set(kept, true);
        return out;
    }
    std::vector<Saved> saved_;
};

} // namespace

void toPainterClipped(QCustomPlot* plot, QCPPainter* painter, int width, int height) {
    QPaintEngine* engine = painter->paintEngine();
    if (!engine || engine->type() != QPaintEngine::SVG) {
        plot->toPainter(painter, width, height);
        return;
    }
    // The layout at the size drawn (toPainter lays it out the same), so that pixels here
    // are the drawing's.
    const QRect old = plot->viewport();
    plot->setViewport(
        QRect(0, 0, width > 0 ? width : old.width(), height > 0 ? height : old.height()));
    for (auto phase :
         {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
        plot->plotLayout()->update(phase);
    {
        const ClippedGraphs cut(plot);
        plot->toPainter(painter, width, height);
    }
    plot->setViewport(old);
    for (auto phase :
         {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
        plot->plotLayout()->update(phase);
}

bool chartHasData(const QCustomPlot* plot) {
    for (int i = 0; i < plot->plottableCount(); ++i) {
        const QCPAbstractPlottable* p = const_cast<QCustomPlot*>(plot)->plottable(i);
        if (!p->visible()) continue;
        if (const auto* g = qobject_cast<const QCPGraph*>(p); g && !g->data()->isEmpty())
            return true;
        if (const auto* c = qobject_cast<const QCPCurve*>(p); c && !c->data()->isEmpty())
            return true;
        if (const auto* b = qobject_cast<const QCPBars*>(p); b && !b->data()->isEmpty())
            return true;
        if (const auto* e = qobject_cast<const QCPErrorBars*>(p); e && e->dataCount() > 0)
            return true;
    }
    return false;
}

void sayWhenEmpty(QCustomPlot* plot, const QString& message) {
    QLabel* label = nullptr;
    if (!message.isEmpty()) {
        label = new QLabel(message, plot);
        label->setObjectName(QStringLiteral("emptyMessage"));
        label->setWordWrap(true);
        label->setAlignment(Qt::AlignCenter);
        label->setAttribute(Qt::WA_TransparentForMouseEvents);
        QPalette pal = label->palette();
        pal.setColor(QPalette::WindowText, plot->palette().color(QPalette::PlaceholderText));
        label->setPalette(pal);
    }
    const bool legend_wanted = plot->legend->visible();
    // The axes it shows with data; without, only the message (no empty axes to read).
    std::vector<QCPAxis*> axes;
    if (label)
        for (QCPAxis* a : plot->axisRect()->axes())
            if (a->visible()) axes.push_back(a);
    auto follow = [plot, label, legend_wanted, axes] {
        const bool data = chartHasData(plot);
        if (legend_wanted && plot->legend->visible() != data) plot->legend->setVisible(data);
        if (!label) return;
        for (QCPAxis* a : axes)
            if (a->visible() != data) a->setVisible(data);
        label->setVisible(!data);
        label->setGeometry(plot->rect().adjusted(16, 8, -16, -8));
    };
    QObject::connect(plot, &QCustomPlot::beforeReplot, plot, follow);
    follow();
}

QByteArray drawSvg(QSize size, const QString& title,
                   const std::function<void(QCPPainter&, const QRect&)>& paint) {
    QByteArray bytes;
    QBuffer buf(&bytes);
    buf.open(QIODevice::WriteOnly);
    QSvgGenerator gen;
    gen.setOutputDevice(&buf);
    gen.setSize(size);
    gen.setViewBox(QRect(QPoint(0, 0), size));
    gen.setTitle(title);
    QCPPainter p;
    if (!p.begin(&gen)) return {};
    paint(p, QRect(QPoint(0, 0), size));
    p.end();
    return withFontFallbacks(bytes);
}

QByteArray withFontFallbacks(const QByteArray& svg) {
    // Qt names fonts by the family asked for, often fontconfig's alias "Sans Serif", which
    // no browser knows (they fall back to a small serif). Each family becomes the one it
    // resolves to here, then common stand-ins, then the generic family.
    static const QRegularExpression family(QStringLiteral("font-family=\"([^\"]*)\""));
    QString text = QString::fromUtf8(svg);
    QString out;
    out.reserve(text.size() + 256);
    qsizetype at = 0;
    auto it = family.globalMatch(text);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        const QString asked = m.captured(1);
        if (asked.contains(QLatin1Char(','))) continue; // already a list
        const QString real = QFontInfo(QFont(asked)).family();
        const bool mono = QFontInfo(QFont(asked)).fixedPitch();
        QStringList list{real};
        if (asked != real && !asked.contains(QStringLiteral("Serif")) &&
            !asked.contains(QStringLiteral("Sans")))
            list.prepend(asked);
        for (const QString& f :
             mono ? QStringList{QStringLiteral("DejaVu Sans Mono"), QStringLiteral("Consolas"),
                                QStringLiteral("monospace")}
                  : QStringList{QStringLiteral("DejaVu Sans"), QStringLiteral("Verdana"),
                                QStringLiteral("Arial"), QStringLiteral("sans-serif")})
            if (!list.contains(f)) list << f;
        QStringList quoted;
        for (const QString& f : list)
            quoted << (f.contains(QLatin1Char(' ')) && !f.contains(QLatin1Char('-'))
                           ? QStringLiteral("'%1'").arg(f)
                           : f);
        out += QStringView(text).mid(at, m.capturedStart(1) - at);
        out += quoted.join(QStringLiteral(", "));
        at = m.capturedEnd(1);
    }
    out += QStringView(text).mid(at);
    return out.toUtf8();
}

void writeOutputFile(const QString& path, const QByteArray& bytes) {
    writeFileAtomically(path.toStdString(), [&](std::ostream& out) {
        out.write(bytes.constData(), std::streamsize(bytes.size()));
    });
}

QByteArray pngBytes(const QImage& img) {
    QByteArray bytes;
    QBuffer buf(&bytes);
    if (!buf.open(QIODevice::WriteOnly) || !img.save(&buf, "PNG") || bytes.isEmpty())
        throw std::runtime_error("cannot encode the picture as PNG");
    return bytes;
}

namespace {
void writeSvg(const QString& path, const QByteArray& svg) {
    if (svg.isEmpty()) throw std::runtime_error("cannot draw the chart as SVG");
    writeOutputFile(path, svg);
}
bool isSvg(const QString& path) {
    return path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive);
}
} // namespace

void saveDrawing(const QString& path, QSize size,
                 const std::function<void(QPainter&, const QRect&)>& paint) {
    // The target is judged before anything is drawn (a device, a pipe, a run's input).
    checkOutputTarget(path.toStdString());
    if (isSvg(path)) {
        writeSvg(path, drawSvg(size, QStringLiteral("Kairos"),
                               [&](QCPPainter& p, const QRect& r) { paint(p, r); }));
        return;
    }
    QImage img(size * 2, QImage::Format_ARGB32);
    img.setDevicePixelRatio(2.0);
    img.fill(Qt::white);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing);
    paint(p, QRect(QPoint(0, 0), size));
    p.end();
    writeOutputFile(path, pngBytes(img));
}

void saveChart(QCustomPlot* plot, const QString& path, int width, int height) {
    checkOutputTarget(path.toStdString());
    if (width <= 0) width = plot->width();
    if (height <= 0) height = plot->height();
    // The mouse's and the Inspector's lines are not part of the chart.
    std::vector<QCPAbstractItem*> hidden;
    for (int i = 0; i < plot->itemCount(); ++i)
        if (QCPAbstractItem* it = plot->item(i);
            it->visible() && it->property(kTransientItem).toBool()) {
            it->setVisible(false);
            hidden.push_back(it);
        }
    struct Restore { // the hidden items come back whatever happens to the write
        QCustomPlot* plot;
        std::vector<QCPAbstractItem*>& hidden;
        ~Restore() {
            for (QCPAbstractItem* it : hidden) it->setVisible(true);
            if (!hidden.empty()) plot->replot(QCustomPlot::rpQueuedReplot);
        }
    } restore{plot, hidden};
    if (isSvg(path)) {
        writeSvg(path, drawSvg(QSize(width, height), QStringLiteral("Kairos"),
                               [&](QCPPainter& p, const QRect&) {
                                   toPainterClipped(plot, &p, width, height);
                               }));
        return;
    }
    // As QCustomPlot's savePng draws it (twice the pixels), into memory first: the file is
    // then written whole through the output rules, never by QImage::save in place.
    writeOutputFile(path, pngBytes(plot->toPixmap(width, height, 2.0).toImage()));
}

void addChartExport(QWidget* chart, const QString& name, std::function<void(const QString&)> save) {
    if (!save) {
        auto* plot = qobject_cast<QCustomPlot*>(chart);
        Q_ASSERT(plot);
        save = [plot](const QString& path) { saveChart(plot, path); };
    }
    chart->setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(
        chart, &QWidget::customContextMenuRequested, chart, [chart, name, save](const QPoint& at) {
            QMenu menu(chart);
            QAction* svg = menu.addAction(QObject::tr("Export chart as &SVG…"));
            QAction* png = menu.addAction(QObject::tr("Export chart as &PNG…"));
            QAction* picked = menu.exec(chart->mapToGlobal(at));
            if (picked != svg && picked != png) return;
            const bool vector = picked == svg;
            const QString path = QFileDialog::getSaveFileName(
                chart, QObject::tr("Export chart"),
                dialogPath(QStringLiteral("export"),
                           name + (vector ? QStringLiteral(".svg") : QStringLiteral(".png"))),
                vector ? QObject::tr("SVG (*.svg)") : QObject::tr("PNG (*.png)"));
            if (path.isEmpty()) return;
            rememberDialogChoice(QStringLiteral("export"), path);
            try {
                save(path);
            } catch (const std::exception& e) {
                // The path and why (a device, a run's input, a full disk).
                QMessageBox::warning(
                    chart, QObject::tr("Export chart"),
                    QObject::tr("Nothing was written: %1").arg(QString::fromStdString(e.what())));
            }
        });
}

QString dialogPath(const QString& kind, const QString& name) {
    const QString folder = QSettings().value(QStringLiteral("folders/") + kind).toString();
    if (folder.isEmpty() || !QFileInfo(folder).isDir()) return name;
    return name.isEmpty() ? folder : QDir(folder).filePath(name);
}

void rememberDialogChoice(const QString& kind, const QString& chosen, bool is_folder) {
    if (chosen.isEmpty()) return;
    const QFileInfo f(chosen);
    QSettings().setValue(QStringLiteral("folders/") + kind,
                         is_folder ? f.absoluteFilePath() : f.absolutePath());
}

} // namespace kairos::views
