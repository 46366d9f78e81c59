#include "timeline_view.h"

#include "lod/time_axis.h"
#include "util/text.h"

#include <QCursor>
#include <QFontMetrics>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>

namespace kairos::views {

TimelineView::TimelineView(TimeRange* range, QWidget* parent)
    : QAbstractScrollArea(parent), range_(range) {
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn); // one time axis width (plotRect)
    setFocusPolicy(Qt::StrongFocus);                   // W/S/A/D, Esc
    setMinimumHeight(120);
    connect(range_, &TimeRange::changed, viewport(), [this] { viewport()->update(); });
    connect(range_, &TimeRange::selectionChanged, viewport(), [this] { viewport()->update(); });
    connect(verticalScrollBar(), &QScrollBar::valueChanged, viewport(),
            [this] { viewport()->update(); });
    pool_.setMaxThreadCount(1);
}

TimelineView::~TimelineView() {
    // A frame in flight reads rows this view shares and posts to it: stop and wait.
    if (cancel_) cancel_->store(true);
    pool_.clear();
    pool_.waitForDone();
}

void TimelineView::setRows(std::shared_ptr<const std::vector<lod::Row>> rows,
                           std::shared_ptr<const std::vector<lod::Row>> requests) {
    const std::size_t before = rows_ ? rows_->size() : 0;
    rows_ = std::move(rows);
    stale_.clear();
    // New rows (another workload, lanes instead of requests, a filter): every row fits
    // the view (up to 16 px; below a pixel, density rows), so a large trace opens whole
    // rather than at its first 60 requests. Ctrl+wheel zooms in.
    if (rows_ && rows_->size() != before && !rows_->empty()) fit_rows_ = true;
    if (fit_rows_) fitRows();
    requests_ = requests ? std::move(requests) : rows_;
    // What the legend names: the phases drawn, the cached part of prefills, kills (one pass).
    kinds_ = 0;
    has_cached_ = has_killed_ = false;
    if (rows_)
        for (const lod::Row& r : *rows_) {
            for (const lod::Span& sp : r.spans) {
                kinds_ |= 1u << unsigned(sp.kind);
                has_cached_ = has_cached_ || sp.cached > 0;
            }
            if (!r.robot.empty()) kinds_ |= 1u << unsigned(lod::SpanKind::Robot);
            has_killed_ = has_killed_ || r.killed;
        }
    has_robot_ = kinds_ & (1u << unsigned(lod::SpanKind::Robot));
    // Replica stripes only for a fleet's request rows (agent lanes mix replicas).
    has_replicas_ =
        rows_ && !agentLanes() &&
        std::any_of(rows_->begin(), rows_->end(), [](const lod::Row& r) { return r.replica > 0; });
    updateScrollBar();
    viewport()->update();
}

void TimelineView::setPinnedRows(std::shared_ptr<const std::vector<lod::Row>> pinned) {
    pinned_ = std::move(pinned);
    viewport()->update();
}

bool TimelineView::showsPinned() const {
    return pinned_ && rows_ && !agentLanes() && pinned_->size() == rows_->size();
}

void TimelineView::setMarked(std::shared_ptr<const std::vector<bool>> marked_by_id, int current) {
    marked_ = std::move(marked_by_id);
    current_ = current;
    viewport()->update();
}

long TimelineView::rowOf(int id) const {
    if (!rows_ || id < 0) return -1;
    const auto n = static_cast<long>(rows_->size());
    if (!agentLanes()) {
        // Request rows are by id unless filtered: try the id's index, else search.
        if (id < n && (*rows_)[std::size_t(id)].id == id) return id;
        for (long i = 0; i < n; ++i)
            if ((*rows_)[std::size_t(i)].id == id) return i;
        return -1;
    }
    for (long i = 0; i < n; ++i)
        for (const lod::Member& m : (*rows_)[std::size_t(i)].members)
            if (m.id == id) return i;
    return -1;
}

bool TimelineView::scrollToRequest(int id) {
    const long i = rowOf(id);
    if (i < 0) return false;
    const int page = std::max(1, viewport()->height() - headerHeight(viewport()->width()));
    verticalScrollBar()->setValue(
        static_cast<int>(std::lround((double(i) + 0.5) * row_h_ - page / 2.0)));
    // Its lifetime in the window: the window keeps its width when that is wide enough.
    const lod::Row* r = requests_ && std::size_t(id) < requests_->size()
                            ? &(*requests_)[std::size_t(id)]
                            : &(*rows_)[std::size_t(i)];
    const double a = r->arrival, b = r->lastTime();
    const double from = range_->from(), to = range_->to(), width = to - from;
    if (a < from || b > to) {
        const double w = std::max(width, (b - a) * 1.2);
        const double mid = (a + b) / 2;
        range_->setRange(mid - w / 2, mid + w / 2);
    }
    viewport()->update();
    return true;
}

QRect TimelineView::plotRect() const {
    const QRect v = viewport()->rect();
    const int head = headerHeight(v.width());
    return QRect(v.left() + kGutter, v.top() + head, std::max(0, v.width() - kGutter),
                 std::max(0, v.height() - head));
}

lod::TimeAxis TimelineView::plotAxis() const {
    return {range_->from(), range_->to(), double(std::max(1, plotRect().width()))};
}

double TimelineView::timeAtX(double x) const {
    return plotAxis().toT(x - kGutter);
}

int TimelineView::xOfTime(double t) const {
    return kGutter + static_cast<int>(std::lround(plotAxis().toX(t)));
}

void TimelineView::paintSelection(QPainter& p, const QRect& column) const {
    if (!range_->hasSelection()) return;
    const lod::TimeAxis axis{range_->from(), range_->to(), double(std::max(1, column.width()))};
    const double a = axis.toX(range_->selectionFrom()), b = axis.toX(range_->selectionTo());
    if (b < 0 || a > column.width()) return;
    const int x0 = column.left() + static_cast<int>(std::lround(std::max(a, -1.0)));
    const int x1 = column.left() + static_cast<int>(std::lround(std::min(b, column.width() + 1.0)));
    QColor shade = palette().color(QPalette::Highlight);
    shade.setAlpha(40);
    p.fillRect(QRect(x0, column.top(), std::max(1, x1 - x0), column.height()), shade);
    p.setPen(QPen(palette().color(QPalette::Highlight), 1));
    p.drawLine(x0, column.top(), x0, column.bottom());
    p.drawLine(x1, column.top(), x1, column.bottom());
}

double TimelineView::fittedRowHeight(int height, std::size_t rows) {
    const double fit = double(std::max(40, height)) / double(rows);
    return fit >= 1 ? std::min(16.0, std::floor(fit)) : std::max(0.01, fit);
}

void TimelineView::fitRows() {
    if (!rows_ || rows_->empty()) return;
    row_h_ =
        fittedRowHeight(viewport()->height() - headerHeight(viewport()->width()), rows_->size());
    if (agentLanes()) {
        // Every agent named: its lanes together at least a line of text tall (the gutter
        // names an agent on its first lane, and skips a name that would overlap the one
        // above), scrolling when they do not all fit.
        long fewest = std::numeric_limits<long>::max(), lanes = 0;
        for (std::size_t i = 0; i < rows_->size(); ++i) {
            ++lanes;
            if (i + 1 == rows_->size() || (*rows_)[i + 1].lane == 0) {
                fewest = std::min(fewest, lanes);
                lanes = 0;
            }
        }
        const double line = QFontMetrics(font()).height();
        row_h_ = std::max(row_h_, std::ceil(line / double(fewest)));
    }
}

void TimelineView::setRowHeight(double px) {
    fit_rows_ = false; // the user's zoom: kept through resizes
    row_h_ = std::clamp(px, 0.01, 64.0);
    updateScrollBar();
    viewport()->update();
}

QColor TimelineView::colorOf(lod::SpanKind k) {
    switch (k) {
    case lod::SpanKind::Queued:
        return QColor(0xb0, 0xb7, 0xc0);
    case lod::SpanKind::Prefill:
        return QColor(0xf5, 0xa6, 0x23);
    case lod::SpanKind::Decode:
        return QColor(0x2f, 0x80, 0xed);
    case lod::SpanKind::Preempted:
        return QColor(0xe0, 0x3e, 0x3e);
    case lod::SpanKind::Suspended:
        return QColor(0x9b, 0x59, 0xb6);
    case lod::SpanKind::Robot:
        return QColor(0x27, 0xae, 0x60);
    case lod::SpanKind::Folded:
        return QColor(0x6b, 0x72, 0x80);
    case lod::SpanKind::Cached:
        return QColor(0xfb, 0xe3, 0xb0); // the prefill's amber, pale: not computed
    case lod::SpanKind::Transfer:
        return QColor(0x14, 0xb8, 0xa6); // teal: on the link, neither pool computing
    }
    return Qt::black;
}

QColor TimelineView::replicaColor(int replica) {
    // Ten distinct hues (Tableau 10), repeating past ten replicas (the label says which).
    static const QColor kHues[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b),
                                   QColor(0xe1, 0x57, 0x59), QColor(0x76, 0xb7, 0xb2),
                                   QColor(0x59, 0xa1, 0x4f), QColor(0xed, 0xc9, 0x48),
                                   QColor(0xb0, 0x7a, 0xa1), QColor(0xff, 0x9d, 0xa7),
                                   QColor(0x9c, 0x75, 0x5f), QColor(0xba, 0xb0, 0xac)};
    return replica < 0 ? QColor(Qt::transparent) : kHues[replica % 10];
}

std::vector<TimelineView::LegendEntry> TimelineView::legend() const {
    std::vector<LegendEntry> out;
    for (lod::SpanKind k :
         {lod::SpanKind::Queued, lod::SpanKind::Prefill, lod::SpanKind::Decode,
          lod::SpanKind::Transfer, lod::SpanKind::Preempted, lod::SpanKind::Suspended,
          lod::SpanKind::Robot, lod::SpanKind::Folded}) {
        // Folded draws come with zooming out (any run); the rest where this run has them.
        if (k != lod::SpanKind::Folded && !(kinds_ & (1u << unsigned(k)))) continue;
        out.push_back({k == lod::SpanKind::Robot ? tr("robot executing")
                                                 : QString::fromLatin1(lod::spanKindName(k)),
                       Swatch::Phase, k});
        if (k == lod::SpanKind::Prefill && has_cached_) // the part of it found cached
            out.push_back({tr("cached part"), Swatch::CachedPart, k});
    }
    if (has_killed_) out.push_back({tr("killed"), Swatch::Killed, lod::SpanKind::Queued});
    if (showsPinned() && row_h_ >= lod::kLanePx) // lanes are drawn: say what the lower one is
        out.push_back({tr("pinned (lower lane)"), Swatch::PinnedLane, lod::SpanKind::Decode});
    return out;
}

QStringList TimelineView::legendEntries() const {
    QStringList names;
    for (const LegendEntry& e : legend()) names << e.name;
    return names;
}

std::vector<QPoint> TimelineView::flowLegend(const std::vector<LegendEntry>& entries, int width,
                                             const QFontMetrics& fm) {
    // Each entry's place from the header's top left: a swatch and its name, left to right,
    // onto another line where `width` ends (headerHeight and paintHeader both use this).
    std::vector<QPoint> at;
    int x = 4, y = 3;
    for (const LegendEntry& e : entries) {
        const int w = 14 + fm.horizontalAdvance(e.name);
        if (x > 4 && x + w > width - 4) {
            x = 4;
            y += kLegendLine;
        }
        at.emplace_back(x, y);
        x += w + 12;
    }
    return at;
}

int TimelineView::headerHeight(int width) const {
    const std::vector<QPoint> at = flowLegend(legend(), width, fontMetrics());
    return kHeader + (at.empty() ? 0 : at.back().y() - 3);
}

void TimelineView::paintHeader(QPainter& p, const QRect& area) const {
    // Legend: a swatch and a name per entry (headerHeight made room for its lines).
    const QFontMetrics fm = p.fontMetrics();
    const std::vector<LegendEntry> entries = legend();
    const std::vector<QPoint> at = flowLegend(entries, area.width(), fm);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const LegendEntry& e = entries[i];
        const int x = area.left() + at[i].x(), y = area.top() + at[i].y();
        switch (e.swatch) {
        case Swatch::Phase:
            p.fillRect(x, y + 2, 10, 10, colorOf(e.kind));
            break;
        case Swatch::CachedPart:
            p.fillRect(x, y + 2, 10, 10, colorOf(lod::SpanKind::Prefill));
            p.fillRect(x, y + 7, 10, 5, colorOf(lod::SpanKind::Cached));
            break;
        case Swatch::Killed:
            p.fillRect(x + 4, y + 2, 2, 10, palette().color(QPalette::Text));
            break;
        case Swatch::PinnedLane: {
            QColor c = colorOf(lod::SpanKind::Decode);
            c.setAlpha(lod::kPinnedAlpha);
            p.fillRect(x, y + 7, 10, 5, c);
            break;
        }
        }
        p.drawText(x + 14, y + fm.ascent(), e.name);
    }
    // Ruler: ticks and labels over the plot area.
    const QRect plot(area.left() + kGutter, area.top(), area.width() - kGutter, area.height());
    const lod::TimeAxis axis{range_->from(), range_->to(), double(std::max(1, plot.width()))};
    const int base = area.bottom();
    p.drawLine(plot.left(), base, plot.right(), base);
    const int max_ticks = std::max(2, plot.width() / 80);
    for (double t : lod::niceTicks(axis.t0, axis.t1, max_ticks)) {
        const int tx = plot.left() + static_cast<int>(std::lround(axis.toX(t)));
        p.drawLine(tx, base - 4, tx, base);
        const QString label = QString::number(t, 'g', 6) + QStringLiteral(" s");
        if (tx + 3 + fm.horizontalAdvance(label) <= plot.right()) // whole, or not at all
            p.drawText(tx + 3, base - 4, label);
    }
    p.drawText(area.left() + 4, base - 4, agentLanes() ? tr("agent") : tr("request"));
}

void TimelineView::paintFills(QPainter& p, const std::vector<lod::Fill>& fills, QPoint origin,
                              QColor text, QColor mid) {
    for (const lod::Fill& f : fills) {
        QColor c = f.ink == lod::Ink::Kill        ? text
                   : f.ink == lod::Ink::Separator ? mid
                                                  : colorOf(f.kind);
        if (f.ink == lod::Ink::Phase) c.setAlpha(f.alpha);
        p.fillRect(origin.x() + f.x, origin.y() + f.y, f.w, f.h, c);
    }
}

QImage TimelineView::buildFrame(const std::vector<lod::Row>& rows,
                                const std::vector<lod::Row>* requests,
                                const std::vector<lod::Row>* pinned, const lod::RasterView& v,
                                QSize size, double dpr, QColor text, QColor mid,
                                const std::atomic<bool>* cancel, long* fills) {
    const std::vector<lod::Fill> list = lod::rasterize(rows, requests, pinned, v, cancel);
    if (fills) *fills = static_cast<long>(list.size());
    QImage image((QSizeF(size) * dpr).toSize(), QImage::Format_ARGB32_Premultiplied);
    if (image.isNull()) return image;
    image.setDevicePixelRatio(dpr);
    image.fill(Qt::transparent);
    if (cancel && cancel->load()) return {};
    if (v.row_h < 1.0 && dpr == 1.0) {
        // Density lines: one pixel tall, never overlapping, on a transparent image, where
        // QPainter's source-over leaves each pixel the fill's premultiplied colour. Written
        // straight into the scan lines (37,000 fills of an overloaded 20,000-request run
        // took QPainter 3-7 ms); the same pixels as QPainter's (tst_timeline
        // denseFrameAsPainted).
        // By kind and alpha, filled when met (0: not yet; a density line's alpha is never 0).
        std::array<std::array<QRgb, 256>, 8> ink{};
        for (const lod::Fill& f : list) {
            if (f.ink != lod::Ink::Phase || f.h != 1 || f.y < 0 || f.y >= image.height())
                continue; // (dense mode draws phase lines only)
            const auto k = std::size_t(f.kind);
            if (!ink[k][f.alpha]) {
                QColor c = colorOf(f.kind);
                c.setAlpha(f.alpha);
                ink[k][f.alpha] = qPremultiply(c.rgba64()).toArgb32();
            }
            const int x0 = std::max(0, f.x), x1 = std::min(image.width(), f.x + f.w);
            auto* line = reinterpret_cast<QRgb*>(image.scanLine(f.y));
            std::fill(line + x0, line + std::max(x0, x1), ink[k][f.alpha]);
        }
        return image;
    }
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing, false);
    paintFills(p, list, QPoint(0, 0), text, mid);
    return image;
}

void TimelineView::render(QPainter& p, const QRect& area, double scroll_px, bool transient) const {
    draws_ = 0;
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setClipRect(area);
    p.setPen(palette().color(QPalette::Text));
    const int head = headerHeight(area.width());
    paintHeader(p, QRect(area.left(), area.top(), area.width(), head));
    const QRect rowsArea(area.left(), area.top() + head, area.width(), area.height() - head);
    const QRect plot(rowsArea.left() + kGutter, rowsArea.top(), rowsArea.width() - kGutter,
                     rowsArea.height());
    p.setClipRect(rowsArea);
    if (!rows_ || rows_->empty() || plot.width() <= 0) {
        p.restore();
        return;
    }
    const lod::RasterView v{
        {range_->from(), range_->to(), double(plot.width())}, plot.height(), row_h_, scroll_px};
    const std::vector<lod::Fill> fills =
        lod::rasterize(*rows_, requests_.get(), showsPinned() ? pinned_.get() : nullptr, v);
    paintFills(p, fills, plot.topLeft(), palette().color(QPalette::Text),
               palette().color(QPalette::Mid));
    draws_ += static_cast<long>(fills.size());
    const auto [first, last] = lod::visibleRows(rows_->size(), v);
    paintGutter(p, rowsArea, plot, first, last, scroll_px);
    paintMarks(p, plot, first, last, scroll_px,
               transient ? inspected_t_ : std::numeric_limits<double>::quiet_NaN());
    p.setClipRect(area);
    paintSelection(p, QRect(plot.left(), area.top(), plot.width(), area.height()));
    p.restore();
}

void TimelineView::paintGutter(QPainter& p, const QRect& rowsArea, const QRect& plot, long first,
                               long last, double scroll_px) const {
    // Request ids (or agents, on each agent's first lane) where they fit: every row when
    // rows are tall enough, else one every few rows; density rows, the first request of a
    // pixel line every two text lines.
    const QFontMetrics fm = p.fontMetrics();
    const bool agents = agentLanes();
    auto label = [&](const lod::Row& r) {
        if (agents) return r.agent >= 0 ? tr("agent %1").arg(r.agent) : tr("no agent");
        // In a fleet: the replica too (its colour is the stripe at the gutter's left).
        // The trace's own id (robot traces: agent x 100000 + index), elided to the gutter.
        const QString id = has_replicas_ && r.replica >= 0
                               ? tr("%1 r%2").arg(r.trace_id).arg(r.replica)
                               : QString::number(r.trace_id);
        return fm.elidedText(id, Qt::ElideMiddle, kGutter - 6);
    };
    if (has_replicas_ && row_h_ >= 1.0) {
        const int h = std::max(1, static_cast<int>(std::ceil(row_h_)));
        for (long i = first; i < last; ++i) {
            const lod::Row& r = (*rows_)[static_cast<std::size_t>(i)];
            const int y = plot.top() + static_cast<int>(std::floor(i * row_h_ - scroll_px));
            p.fillRect(rowsArea.left(), y, 3, h, replicaColor(r.replica));
        }
        draws_ += last - first;
    }
    const auto n = static_cast<long>(rows_->size());
    // Rows too short for a label each: label every `step`-th row, step a round number (1,
    // 2 or 5 x 10^k rows) at least a text line and a half apart, so the labels of request
    // rows read 0, 50, 100 rather than wherever a text line fell.
    const double min_rows = 1.5 * fm.height() / row_h_;
    long step = 1;
    for (long mag = 1; double(step) < min_rows; mag *= 10)
        for (long m : {1L, 2L, 5L})
            if (double(step = m * mag) >= min_rows) break;
    if (row_h_ < 1.0) {
        const long from = std::max(0L, first / step * step);
        for (long i = from; i < std::min(n, last + step); i += step) {
            const int y = plot.top() + static_cast<int>(std::floor(i * row_h_ - scroll_px));
            if (y < plot.top() || y > plot.bottom() - fm.height()) continue;
            p.drawText(rowsArea.left() + 4, y + fm.ascent(), label((*rows_)[std::size_t(i)]));
        }
        return;
    }
    const bool labels = row_h_ >= fm.height();
    const int bar_h = std::max(1, static_cast<int>(row_h_ >= 4 ? row_h_ - 1 : row_h_));
    long last_label_px = -1000000;
    for (long i = first; i < last; ++i) {
        const lod::Row& r = (*rows_)[static_cast<std::size_t>(i)];
        const int y = plot.top() + static_cast<int>(std::floor(i * row_h_ - scroll_px));
        const bool first_lane = agents && r.lane == 0;
        if (y - last_label_px >= fm.height() && y >= plot.top() &&
            (agents ? first_lane : (labels || i % step == 0))) {
            // Centred on a row that is tall enough, else hanging from its top (a label
            // taller than the row must not reach above it, into the header).
            const int base =
                labels ? y + (bar_h + fm.ascent() - fm.descent()) / 2 : y + fm.ascent() - 1;
            p.drawText(rowsArea.left() + 4, base, label(r));
            last_label_px = y;
        }
    }
}

void TimelineView::setInspectedTime(double t) {
    if (t == inspected_t_ || (std::isnan(t) && std::isnan(inspected_t_))) return;
    inspected_t_ = t;
    viewport()->update();
}

void TimelineView::paintMarks(QPainter& p, const QRect& plot, long first, long last,
                              double scroll_px, double inspected) const {
    // The inspector's instant (inspector_panel.h): a dashed line across the rows.
    if (!std::isnan(inspected) && inspected >= range_->from() && inspected <= range_->to()) {
        const lod::TimeAxis axis{range_->from(), range_->to(), double(std::max(1, plot.width()))};
        const int x = plot.left() + static_cast<int>(std::lround(axis.toX(inspected)));
        p.setPen(QPen(palette().color(QPalette::Text), 1, Qt::DashLine));
        p.drawLine(x, plot.top(), x, plot.bottom());
        ++draws_;
    }
    // Search results: a bar in the gutter's right edge; the current one outlined.
    if (!marked_ && current_ < 0) return;
    const QColor accent = palette().color(QPalette::Highlight);
    auto marked = [&](const lod::Row& r) {
        if (!marked_) return false;
        if (r.members.empty()) return std::size_t(r.id) < marked_->size() && (*marked_)[r.id];
        for (const lod::Member& m : r.members)
            if (std::size_t(m.id) < marked_->size() && (*marked_)[m.id]) return true;
        return false;
    };
    const int h = std::max(1, static_cast<int>(std::ceil(row_h_)));
    for (long i = first; i < last; ++i) {
        const lod::Row& r = (*rows_)[static_cast<std::size_t>(i)];
        if (!marked(r)) continue;
        const int y = plot.top() + static_cast<int>(std::floor(i * row_h_ - scroll_px));
        p.fillRect(plot.left() - 6, y, 4, h, accent);
        ++draws_;
    }
    const long c = rowOf(current_);
    if (c >= first && c < last) {
        const int y = plot.top() + static_cast<int>(std::floor(c * row_h_ - scroll_px));
        p.setPen(QPen(accent, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRect(plot.left() - 8, y - 2, plot.width() + 8, std::max(3, h + 3)));
        ++draws_;
    }
}

bool TimelineView::FrameKey::operator==(const FrameKey& o) const {
    return v.axis.t0 == o.v.axis.t0 && v.axis.t1 == o.v.axis.t1 && v.axis.width == o.v.axis.width &&
           v.height == o.v.height && v.row_h == o.v.row_h && v.scroll_px == o.v.scroll_px &&
           rows == o.rows && requests == o.requests && pinned == o.pinned && text == o.text &&
           mid == o.mid && dpr == o.dpr && size == o.size;
}

TimelineView::FrameKey TimelineView::currentKey(QRect* plot_out) const {
    const QRect area = viewport()->rect();
    const int head = headerHeight(area.width());
    const QRect plot(area.left() + kGutter, area.top() + head, area.width() - kGutter,
                     area.height() - head);
    if (plot_out) *plot_out = plot;
    FrameKey k;
    k.v = {{range_->from(), range_->to(), double(std::max(1, plot.width()))},
           plot.height(),
           row_h_,
           double(verticalScrollBar()->value())};
    k.rows = rows_.get();
    k.requests = requests_.get();
    k.pinned = showsPinned() ? pinned_.get() : nullptr;
    k.text = palette().color(QPalette::Text).rgba();
    k.mid = palette().color(QPalette::Mid).rgba();
    k.dpr = viewport()->devicePixelRatioF();
    k.size = plot.size();
    return k;
}

TimelineView::FramePlan TimelineView::planFrame() const {
    FramePlan p;
    if (!rows_ || agentLanes()) return p; // lanes are fitted by agent: not planned
    p.key = currentKey();
    p.fit_rows = fit_rows_;
    p.rows_height = viewport()->height() - headerHeight(viewport()->width());
    p.row_count = rows_->size();
    p.extent_lo = range_->extentFrom();
    p.extent_hi = range_->extentTo();
    p.async_rows = async_rows_;
    p.pinned = pinned_;
    p.valid = p.key.size.width() > 0 && p.key.size.height() > 0;
    return p;
}

std::optional<TimelineView::PrebuiltFrame>
TimelineView::prebuildFrame(const FramePlan& plan,
                            const std::shared_ptr<const std::vector<lod::Row>>& rows, double lo,
                            double hi, bool whole, const std::atomic<bool>* cancel) {
    if (!plan.valid || !rows || rows->empty()) return std::nullopt;
    // setRows fits new rows anew when their count changes (fitRows: agents aside, the same
    // rule); a view the user zoomed vertically keeps its row height.
    if (!plan.fit_rows && rows->size() != plan.row_count) return std::nullopt;
    PrebuiltFrame f;
    f.key = plan.key;
    lod::RasterView& v = f.key.v;
    if (plan.fit_rows) v.row_h = fittedRowHeight(plan.rows_height, rows->size());
    const auto [from, to] = TimeRange::followed(plan.key.v.axis.t0, plan.key.v.axis.t1,
                                                plan.extent_lo, plan.extent_hi, lo, hi, whole);
    v.axis.t0 = from;
    v.axis.t1 = to;
    f.key.rows = rows.get();
    f.key.requests = rows.get(); // setRows(rows, rows): the requests are the rows
    const std::vector<lod::Row>* pinned =
        plan.pinned && plan.pinned->size() == rows->size() ? plan.pinned.get() : nullptr;
    f.key.pinned = pinned;
    const auto [first, last] = lod::visibleRows(rows->size(), v);
    if (last - first <= plan.async_rows) return std::nullopt; // painted on the GUI thread
    f.image =
        buildFrame(*rows, rows.get(), pinned, v, f.key.size, f.key.dpr,
                   QColor::fromRgba(f.key.text), QColor::fromRgba(f.key.mid), cancel, &f.fills);
    if (f.image.isNull()) return std::nullopt;
    return f;
}

bool TimelineView::offerFrame(PrebuiltFrame f) {
    const FrameKey key = currentKey();
    if (!asyncFor(key) || !(f.key == key)) return false;
    if (frame_ && frame_->key == key) return false; // already there
    dropPendingFrame();
    frame_ = Frame{key, std::move(f.image), f.fills};
    ++frames_offered_;
    viewport()->update();
    return true;
}

bool TimelineView::asyncFor(const FrameKey& key) const {
    if (!rows_ || key.size.width() <= 0 || key.size.height() <= 0) return false;
    const auto [first, last] = lod::visibleRows(rows_->size(), key.v);
    return last - first > async_rows_;
}

bool TimelineView::frameReady() const {
    const FrameKey key = currentKey();
    return !asyncFor(key) || (frame_ && frame_->key == key);
}

void TimelineView::requestFrame(const FrameKey& key) {
    if (wanted_ && *wanted_ == key) return; // already being built
    if (cancel_) cancel_->store(true);
    pool_.clear(); // a queued, not yet started build is dropped
    wanted_ = key;
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    const std::uint64_t gen = ++generation_;
    // The job holds the rows it reads (shared, immutable) and no pointer into this view
    // but the one it posts to: the destructor waits for the pool, and Qt drops events
    // posted to an object that is then destroyed.
    pool_.start([this, gen, key, rows = rows_, requests = requests_,
                 pinned = key.pinned ? pinned_ : nullptr, cancel = cancel_] {
        long fills = 0;
        QImage image =
            buildFrame(*rows, requests.get(), pinned.get(), key.v, key.size, key.dpr,
                       QColor::fromRgba(key.text), QColor::fromRgba(key.mid), cancel.get(), &fills);
        if (cancel->load()) return;
        QMetaObject::invokeMethod(
            this,
            [this, gen, key, image = std::move(image), fills]() mutable {
                if (gen != generation_) return; // a newer window was asked for since
                frame_ = Frame{key, std::move(image), fills};
                wanted_.reset();
                ++frames_built_;
                viewport()->update();
            },
            Qt::QueuedConnection);
    });
}

void TimelineView::dropPendingFrame() {
    if (cancel_) cancel_->store(true);
    pool_.clear();
    ++generation_; // whatever is in flight is no longer wanted
    wanted_.reset();
}

void TimelineView::finishFrame() {
    const FrameKey key = currentKey();
    if (!asyncFor(key) || (frame_ && frame_->key == key)) return;
    dropPendingFrame();
    long fills = 0;
    QImage image =
        buildFrame(*rows_, requests_.get(), key.pinned ? pinned_.get() : nullptr, key.v, key.size,
                   key.dpr, QColor::fromRgba(key.text), QColor::fromRgba(key.mid), nullptr, &fills);
    frame_ = Frame{key, std::move(image), fills};
    ++frames_built_;
    viewport()->update();
}

QString TimelineView::describe(const lod::Row& r, double t, const lod::Row* pinned) {
    const lod::Span* s = lod::spanAt(r.spans, t);
    const lod::Span* robot = lod::spanAt(r.robot, t);
    // Where the request is at t; outside its spans it is not yet there, done, or with the
    // robot (the card once read "request 500000 (agent 5): -").
    QString phase = s               ? QString::fromLatin1(lod::spanKindName(s->kind))
                    : robot         ? tr("robot executing")
                    : t < r.arrival ? tr("not arrived at %1 s").arg(t, 0, 'f', 3)
                    : t >= r.end    ? tr("done at %1 s").arg(t, 0, 'f', 3)
                                    : tr("between phases at %1 s").arg(t, 0, 'f', 3);
    if (s)
        phase += QStringLiteral(" %1 – %2 s (%3)")
                     .arg(s->t0, 0, 'f', 3)
                     .arg(s->t1, 0, 'f', 3)
                     .arg(QString::fromStdString(text::duration(s->t1 - s->t0)));
    auto outcome = [](const lod::Row& x) {
        return x.killed ? tr("killed") : x.finished ? tr("finished") : tr("unfinished");
    };
    QString text = tr("request %1: %2\narrival %3 s, end %4 s (%5)\nprompt %6, output %7 tokens, "
                      "%8 preemption(s)")
                       .arg(r.members.empty() && r.agent >= 0
                                ? tr("%1 (agent %2)").arg(r.trace_id).arg(r.agent)
                                : QString::number(r.trace_id))
                       .arg(phase)
                       .arg(r.arrival, 0, 'f', 3)
                       .arg(r.end, 0, 'f', 3)
                       .arg(outcome(r))
                       .arg(r.prompt)
                       .arg(r.output)
                       .arg(r.preemptions);
    if (robot && s) text += tr("\nrobot executing a segment");
    // Its whole wait, every stretch (the Inspector's "waited"): the phase above is only
    // the stretch at t ("queued ... (54.2 s)" beside the Inspector's "waited 54.67 s").
    double waited = 0;
    int stretches = 0;
    QStringList kinds; // those it waited in, in the order met
    for (const lod::Span& w : r.spans)
        if (w.kind == lod::SpanKind::Queued || w.kind == lod::SpanKind::Preempted ||
            w.kind == lod::SpanKind::Suspended) {
            waited += w.t1 - w.t0;
            ++stretches;
            const QString k = QString::fromLatin1(lod::spanKindName(w.kind));
            if (!kinds.contains(k)) kinds << k;
        }
    if (stretches > 1)
        text += tr("\nwaited %1 in all, in %2 stretches (%3)")
                    .arg(QString::fromStdString(text::duration(waited)))
                    .arg(stretches)
                    .arg(kinds.join(QStringLiteral(", ")));
    if (pinned)
        text += tr("\npinned run: end %1 s (%2, this run %3%4), %5 preemption(s)")
                    .arg(pinned->end, 0, 'f', 3)
                    .arg(outcome(*pinned))
                    .arg(r.end - r.arrival >= pinned->end - pinned->arrival ? "+" : "")
                    .arg(QString::fromStdString(
                        text::duration((r.end - r.arrival) - (pinned->end - pinned->arrival))))
                    .arg(pinned->preemptions);
    return text;
}

int TimelineView::requestAt(const QPoint& pos, QString* what, double* t_out) const {
    if (!rows_) return -1;
    const double scroll = verticalScrollBar()->value();
    const int head = headerHeight(viewport()->width());
    if (pos.y() < head || pos.x() < kGutter) return -1;
    const auto i = static_cast<long>(std::floor((pos.y() - head + scroll) / row_h_));
    if (i < 0 || i >= static_cast<long>(rows_->size())) return -1;
    const lod::Row& row = (*rows_)[static_cast<std::size_t>(i)];
    const double t = timeAtX(pos.x());
    const double slop = 2 * plotAxis().secondsPerPixel();
    const lod::Row* r = &row;
    if (!row.members.empty()) { // an agent lane: the request under the cursor
        const lod::Member* m = lod::memberAt(row.members, t, slop);
        if (!m || !requests_ || std::size_t(m->id) >= requests_->size()) return -1;
        r = &(*requests_)[std::size_t(m->id)];
    }
    if (t < r->arrival - slop || t > r->lastTime() + slop) return -1;
    if (what) {
        const bool pin = showsPinned() && std::size_t(r->id) < pinned_->size();
        *what = describe(*r, t, pin ? &(*pinned_)[std::size_t(r->id)] : nullptr);
        if (!row.members.empty())
            *what = (row.agent >= 0 ? tr("agent %1, lane %2\n").arg(row.agent).arg(row.lane + 1)
                                    : tr("no agent, lane %1\n").arg(row.lane + 1)) +
                    *what;
    }
    if (t_out) *t_out = t;
    return static_cast<int>(r->id);
}

void TimelineView::paintEvent(QPaintEvent*) {
    QPainter p(viewport());
    p.fillRect(viewport()->rect(), palette().color(QPalette::Base));
    QRect plot;
    const FrameKey key = currentKey(&plot);
    if (!asyncFor(key)) {
        render(p, viewport()->rect(), verticalScrollBar()->value());
        paintStale(p);
        return;
    }
    // Many rows: the frame is built off this thread. Until it arrives, the last frame is
    // shown moved and scaled to the current window (time and rows), as a map viewer does.
    if (!frame_ || !(frame_->key == key)) requestFrame(key);
    draws_ = 0;
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(palette().color(QPalette::Text));
    const int head = headerHeight(viewport()->width());
    paintHeader(p, QRect(0, 0, viewport()->width(), head));
    const QRect rowsArea(0, head, viewport()->width(), viewport()->height() - head);
    p.setClipRect(plot);
    if (frame_) {
        const lod::RasterView& a = frame_->key.v; // the frame's window
        const lod::RasterView& b = key.v;         // the current one
        const double sx = a.axis.secondsPerPixel() / b.axis.secondsPerPixel();
        const double dx = (a.axis.t0 - b.axis.t0) / b.axis.secondsPerPixel();
        const double sy = b.row_h / a.row_h;
        const double dy = a.scroll_px * sy - b.scroll_px;
        p.save();
        p.translate(plot.topLeft());
        p.setTransform(QTransform(sx, 0, 0, sy, dx, dy), true);
        p.drawImage(QPointF(0, 0), frame_->image);
        p.restore();
        draws_ = frame_->fills;
    }
    p.setClipRect(rowsArea);
    const auto [first, last] = lod::visibleRows(rows_->size(), key.v);
    paintGutter(p, rowsArea, plot, first, last, key.v.scroll_px);
    paintMarks(p, plot, first, last, key.v.scroll_px, inspected_t_);
    p.setClipRect(viewport()->rect());
    paintSelection(p, QRect(plot.left(), 0, plot.width(), viewport()->height()));
    paintStale(p);
}

void TimelineView::setStale(const QString& note) {
    if (note == stale_) return;
    stale_ = note;
    viewport()->update();
}

void TimelineView::paintStale(QPainter& p) {
    // The last workload's rows stayed under the new one's name until its run arrived (an
    // outside test read them as the new workload's).
    if (stale_.isEmpty()) return;
    p.setClipRect(viewport()->rect());
    QColor veil = palette().color(QPalette::Base);
    veil.setAlpha(190);
    p.fillRect(viewport()->rect(), veil);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(viewport()->rect(), Qt::AlignCenter | Qt::TextWordWrap, stale_);
}

void TimelineView::resizeEvent(QResizeEvent* e) {
    QAbstractScrollArea::resizeEvent(e);
    if (fit_rows_) fitRows(); // every row still fits (a banner above, a resized window)
    updateScrollBar();
    Q_EMIT plotGeometryChanged();
}

void TimelineView::updateScrollBar() {
    const double total = rows_ ? double(rows_->size()) * row_h_ : 0.0;
    const int page = std::max(1, viewport()->height() - headerHeight(viewport()->width()));
    verticalScrollBar()->setRange(0, std::max(0, static_cast<int>(std::ceil(total)) - page));
    verticalScrollBar()->setPageStep(page);
    verticalScrollBar()->setSingleStep(std::max(1, static_cast<int>(row_h_)));
}

void TimelineView::wheelEvent(QWheelEvent* e) {
    const double steps = e->angleDelta().y() / 120.0;
    if (e->modifiers() & Qt::ShiftModifier) { // scroll rows
        QAbstractScrollArea::wheelEvent(e);
        return;
    }
    if (e->modifiers() & Qt::ControlModifier) { // row height, keeping the row under the cursor
        const double y = e->position().y() - headerHeight(viewport()->width());
        const double row = (y + verticalScrollBar()->value()) / row_h_;
        setRowHeight(row_h_ * std::pow(1.25, steps));
        verticalScrollBar()->setValue(static_cast<int>(row * row_h_ - y));
        e->accept();
        return;
    }
    range_->zoom(timeAtX(e->position().x()), std::pow(1.25, steps));
    e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
    // On the ruler, or Shift+drag anywhere on the plot: select a stretch of time, as
    // Perfetto does (a plain drag on the rows pans).
    const bool on_ruler =
        e->pos().y() < headerHeight(viewport()->width()) && e->pos().x() >= kGutter;
    const bool shifted = (e->modifiers() & Qt::ShiftModifier) && plotRect().contains(e->pos());
    if (e->button() == Qt::LeftButton && (on_ruler || shifted)) {
        ruler_drag_ = true;
        ruler_from_ = timeAtX(e->pos().x());
        press_ = e->pos();
        return;
    }
    if (e->button() == Qt::LeftButton) {
        press_ = e->pos();
        dragging_ = true;
        moved_ = false;
    }
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
    if (ruler_drag_) {
        if (std::abs(e->pos().x() - press_.x()) > 2)
            range_->select(ruler_from_, timeAtX(e->pos().x()));
        return;
    }
    if (!dragging_) {
        // The time under the cursor, for the inspector's "scheduler at t" (mouse tracking).
        if (plotRect().contains(e->pos())) Q_EMIT cursorMoved(timeAtX(e->pos().x()));
        return;
    }
    const QPoint d = e->pos() - press_;
    if (std::abs(d.x()) + std::abs(d.y()) > 2) moved_ = true;
    if (!moved_) return;
    range_->pan(-d.x() * plotAxis().secondsPerPixel());
    verticalScrollBar()->setValue(verticalScrollBar()->value() - d.y());
    press_ = e->pos();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
    if (ruler_drag_) { // a click on the ruler (no drag) clears the selection
        ruler_drag_ = false;
        if (std::abs(e->pos().x() - press_.x()) > 2)
            range_->select(ruler_from_, timeAtX(e->pos().x()));
        else
            range_->clearSelection();
        return;
    }
    if (dragging_ && !moved_ && e->button() == Qt::LeftButton) {
        double t = 0;
        const int id = requestAt(e->pos(), nullptr, &t);
        if (id >= 0) Q_EMIT requestClicked(id, t);
    }
    dragging_ = false;
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton || !plotRect().contains(e->pos()) || !requests_) {
        QAbstractScrollArea::mouseDoubleClickEvent(e);
        return;
    }
    const int id = requestAt(e->pos());
    if (id < 0 || std::size_t(id) >= requests_->size()) return;
    const lod::Row& row = (*requests_)[std::size_t(id)];
    if (row.id == id && !row.spans.empty())
        range_->zoomTo(row.spans.front().t0, row.spans.back().t1);
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
    // Around the time under the mouse when it is over the plot, else the window's middle.
    const QPoint at = viewport()->mapFromGlobal(QCursor::pos());
    const double anchor = plotRect().contains(at) ? timeAtX(at.x()) : std::nan("");
    if (range_->handleKey(e, anchor))
        e->accept();
    else
        QAbstractScrollArea::keyPressEvent(e);
}

bool TimelineView::viewportEvent(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        QString text;
        if (requestAt(he->pos(), &text) >= 0)
            QToolTip::showText(he->globalPos(), text, viewport());
        else
            QToolTip::hideText();
        return true;
    }
    return QAbstractScrollArea::viewportEvent(e);
}

} // namespace kairos::views
