#pragma once
// What every chart of the workbench shares beyond its look (chart_style.h): the legend
// kept off the data, and "Export chart" as SVG (vector) or PNG from a right click.
#include <QString>
#include <functional>
#include <qcustomplot.h>

namespace kairos::views {

// Places the plot's legend in the corner of the plotting area with no data under it (top
// right first), judged by the legend's real size against the plot's; when every corner
// has data, below the plot, where it hides nothing. `counts` chooses the graphs that
// count as data (default: every visible graph; lines are sampled between their points,
// so a line crossing a corner counts). Returns the corner, or no alignment when below.
// Call from beforeReplot (the sizes are the ones about to be drawn).
Qt::Alignment placeLegend(QCustomPlot* plot,
                          const std::function<bool(const QCPGraph*)>& counts = nullptr,
                          bool below = false);
// Where `v` falls across `axis`'s range as shown: 0 at its lower end, 1 at its upper, on a
// log axis too; outside [0, 1] when off the range, -1 where it has no place (a value <= 0 on
// a log axis, an empty range).
double axisFraction(const QCPAxis* axis, double v);
// Lays `legend`'s entries out in as many columns as fit `avail` pixels (entry i in column
// i % n, a column as wide as its widest entry), wrapping to more rows.
void wrapLegend(QCPLegend* legend, int avail);
// Connects placeLegend to every replot of `plot`.
void keepLegendOffData(QCustomPlot* plot,
                       const std::function<bool(const QCPGraph*)>& counts = nullptr);
// The legend below the plot, always, in as many columns as fit (a chart whose data changes
// with every slider move: a legend moving between corners and below read as a jump).
void keepLegendBelow(QCustomPlot* plot);

// A drawing as an SVG document (vectors), `size` pixels; empty when it cannot be drawn.
// What every SVG the workbench writes (a chart's export, a report's charts) comes from.
QByteArray drawSvg(QSize size, const QString& title,
                   const std::function<void(QCPPainter&, const QRect&)>& paint);

// plot->toPainter(painter, width, height), with every line and point kept inside its plot
// area on any paint engine. Qt's SVG engine ignores clipping (QCustomPlot clips each graph
// to its axis rect), so a curve leaving its axes ran over the tick labels in SVG and HTML
// exports: for an SVG painter each unfilled graph is drawn from its part inside the axes
// (lines cut where they cross the edge, in pixels, so log axes too; steps as their
// corners; points outside left out), its data restored afterwards.
void toPainterClipped(QCustomPlot* plot, QCPPainter* painter, int width, int height);

// An empty chart says what fills it instead of drawing empty axes and an empty legend
// box: `message` (the command or the button) over its plot while no graph, curve or bar
// has data, and its legend hidden until one has ("" : only the legend). Follows every
// replot. The label is named "emptyMessage" (tests).
void sayWhenEmpty(QCustomPlot* plot, const QString& message);
bool chartHasData(const QCustomPlot* plot);

// An SVG document with every font-family list completed: the family as it resolves here,
// common stand-ins and the generic family, so a browser without Qt's font aliases ("Sans
// Serif") draws the text as Qt did. drawSvg applies it.
QByteArray withFontFallbacks(const QByteArray& svg);

// Items that follow the mouse or the Inspector (the instant's dashed line) carry this
// property; an exported chart leaves them out.
inline constexpr const char* kTransientItem = "kairosTransient";

// Every file the window writes goes through here: whole or not at all, by the project's
// output rules (util/atomic_file.h; the workbench refuses a device, a pipe, a folder, a
// link to nothing and its run's inputs), the write checked to its close. Throws
// kairos::InputError naming the path and the reason.
void writeOutputFile(const QString& path, const QByteArray& bytes);
// A picture as PNG bytes (throws when Qt cannot encode it).
QByteArray pngBytes(const QImage& img);

// Writes a chart by the file's extension: .svg as vectors (QSvgGenerator), anything else
// as PNG at twice the pixels. Width and height 0: the widget's size. Throws (InputError
// naming the path, or std::runtime_error) when nothing could be written.
void saveChart(QCustomPlot* plot, const QString& path, int width = 0, int height = 0);
// The same for a widget that paints itself: `paint` draws it into a painter of the size.
void saveDrawing(const QString& path, QSize size,
                 const std::function<void(QPainter&, const QRect&)>& paint);

// A right click on `chart` offers "Export chart as SVG…" and "as PNG…", which ask for a
// file (named `name` by default) and write it with `save` (saveChart for a QCustomPlot
// when empty; it throws on failure). Errors are shown in a message box that names the path
// and the reason.
void addChartExport(QWidget* chart, const QString& name,
                    std::function<void(const QString&)> save = nullptr);

// File dialogs open where the user last chose a file of the same kind ("workload", "export",
// "session", "model", "measurements"; QSettings "folders/KIND"): every one opened in the
// current directory, so a second export went looking for the first one's folder again.
// `name` (a file name a save dialog offers) is put in that folder; none remembered yet:
// `name` alone (the dialog's own default folder).
QString dialogPath(const QString& kind, const QString& name = {});
// Remembers the folder of `chosen` (a file, or a folder for a folder dialog) for `kind`;
// nothing when the dialog was cancelled (empty).
void rememberDialogChoice(const QString& kind, const QString& chosen, bool is_folder = false);

} // namespace kairos::views
