#include "timeline_view.h"

#include "lod/time_axis.h"

#include <QFontMetrics>
#include <QHelpEvent>
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

namespace {
constexpr double kFoldPx = 3.0;   // spans narrower than this fold (Tracy)
constexpr int kPinnedAlpha = 110; // the pinned run's lane: faded
constexpr double kDefaultRowPx = 8.0;
constexpr double kLanePx = 6.0; // rows at least this tall get lanes (robot, pinned run)
} // namespace

TimelineView::TimelineView(TimeRange* range, QWidget* parent)
    : QAbstractScrollArea(parent), range_(range) {
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setMinimumHeight(120);
    connect(range_, &TimeRange::changed, viewport(), [this] { viewport()->update(); });
    connect(verticalScrollBar(), &QScrollBar::valueChanged, viewport(),
            [this] { viewport()->update(); });
}

void TimelineView::setRows(std::shared_ptr<const std::vector<lod::Row>> rows,
                           std::shared_ptr<const std::vector<lod::Row>> requests) {
    const std::size_t before = rows_ ? rows_->size() : 0;
    rows_ = std::move(rows);
    // New rows (another workload, lanes instead of requests, a filter): every row fits
    // the view (up to 16 px; below a pixel, density rows), so a large trace opens whole
    // rather than at its first 60 requests. Ctrl+wheel zooms in.
    if (rows_ && rows_->size() != before && !rows_->empty()) {
        const double fit =
            double(std::max(40, viewport()->height() - kHeader)) / double(rows_->size());
        row_h_ = fit >= 1 ? std::min(16.0, std::floor(fit)) : std::max(0.01, fit);
    }
    requests_ = requests ? std::move(requests) : rows_;
    has_robot_ = rows_ && std::any_of(rows_->begin(), rows_->end(),
                                      [](const lod::Row& r) { return !r.robot.empty(); });
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
    const int page = std::max(1, viewport()->height() - kHeader);
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

void TimelineView::setRowHeight(double px) {
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
    }
    return Qt::black;
}

void TimelineView::paintHeader(QPainter& p, const QRect& area) const {
    // Legend: a swatch and a name per phase.
    const QFontMetrics fm = p.fontMetrics();
    int x = area.left() + 4;
    const int y = area.top() + 3;
    for (lod::SpanKind k : {lod::SpanKind::Queued, lod::SpanKind::Prefill, lod::SpanKind::Decode,
                            lod::SpanKind::Preempted, lod::SpanKind::Suspended,
                            lod::SpanKind::Robot, lod::SpanKind::Folded}) {
        if (k == lod::SpanKind::Robot && !has_robot_) continue; // not a robot workload
        p.fillRect(x, y + 2, 10, 10, colorOf(k));
        const QString name = QString::fromLatin1(lod::spanKindName(k));
        p.drawText(x + 14, y + fm.ascent(), name);
        x += 14 + fm.horizontalAdvance(name) + 12;
    }
    p.fillRect(x, y + 2, 2, 10, palette().color(QPalette::Text));
    p.drawText(x + 6, y + fm.ascent(), tr("killed"));
    if (showsPinned() && row_h_ >= kLanePx) { // lanes are drawn: say what the lower one is
        x += 6 + fm.horizontalAdvance(tr("killed")) + 12;
        QColor c = colorOf(lod::SpanKind::Decode);
        c.setAlpha(kPinnedAlpha);
        p.fillRect(x, y + 7, 10, 5, c);
        p.drawText(x + 14, y + fm.ascent(), tr("pinned (lower lane)"));
    }
    // Ruler: ticks and labels over the plot area.
    const QRect plot(area.left() + kGutter, area.top(), area.width() - kGutter, area.height());
    const lod::TimeAxis axis{range_->from(), range_->to(), double(std::max(1, plot.width()))};
    const int base = area.bottom();
    p.drawLine(plot.left(), base, plot.right(), base);
    const int max_ticks = std::max(2, plot.width() / 90);
    for (double t : lod::niceTicks(axis.t0, axis.t1, max_ticks)) {
        const int tx = plot.left() + static_cast<int>(std::lround(axis.toX(t)));
        p.drawLine(tx, base - 4, tx, base);
        p.drawText(tx + 3, base - 4, QString::number(t, 'g', 6) + QStringLiteral(" s"));
    }
    p.drawText(area.left() + 4, base - 4, agentLanes() ? tr("agent") : tr("request"));
}

void TimelineView::render(QPainter& p, const QRect& area, double scroll_px) const {
    draws_ = 0;
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setClipRect(area);
    p.setPen(palette().color(QPalette::Text));
    paintHeader(p, QRect(area.left(), area.top(), area.width(), kHeader));
    const QRect rowsArea(area.left(), area.top() + kHeader, area.width(), area.height() - kHeader);
    const QRect plot(rowsArea.left() + kGutter, rowsArea.top(), rowsArea.width() - kGutter,
                     rowsArea.height());
    p.setClipRect(rowsArea);
    if (!rows_ || rows_->empty() || plot.width() <= 0) {
        p.restore();
        return;
    }
    const lod::TimeAxis axis{range_->from(), range_->to(), double(plot.width())};
    const double spp = axis.secondsPerPixel(), fold_len = kFoldPx * spp;
    const auto n = static_cast<long>(rows_->size());
    const long first = std::max(0L, static_cast<long>(std::floor(scroll_px / row_h_)));
    const long last =
        std::min(n, static_cast<long>(std::ceil((scroll_px + plot.height()) / row_h_)) + 1);
    // Rows thinner than 4 px get no gap and no robot lane; below a pixel, consecutive rows
    // land on the same pixel line and simply overdraw (the line shows the union).
    const int bar_h = std::max(1, static_cast<int>(row_h_ >= 4 ? row_h_ - 1 : row_h_));
    const bool lanes = row_h_ >= kLanePx;
    if (row_h_ < 1.0) {
        renderDense(p, plot, axis, first, last, scroll_px);
        paintMarks(p, plot, first, last, scroll_px);
        // The gutter: the first request of a pixel line every two text lines.
        const QFontMetrics fm = p.fontMetrics();
        for (int y = plot.top(); y < plot.bottom() - fm.height(); y += 2 * fm.height()) {
            const auto i = static_cast<long>(std::floor((y - plot.top() + scroll_px) / row_h_));
            if (i < 0 || i >= n) continue;
            const lod::Row& r = (*rows_)[static_cast<std::size_t>(i)];
            p.drawText(rowsArea.left() + 4, y + fm.ascent(),
                       agentLanes() ? (r.agent >= 0 ? tr("agent %1").arg(r.agent) : tr("no agent"))
                                    : QString::number(r.id));
        }
        p.restore();
        return;
    }
    const QFontMetrics fm = p.fontMetrics();
    const bool labels = row_h_ >= fm.height();
    const bool agents = agentLanes(), compare = showsPinned();
    // A draw's pixel columns, clamped to the plot: the bars never reach the gutter, so one
    // clip to the rows area serves the labels and the bars alike.
    auto pixels = [&](const lod::Draw& d) {
        const int x0 =
            std::max(plot.left(), plot.left() + static_cast<int>(std::floor(axis.toX(d.t0))));
        const int x1 =
            std::min(plot.right() + 1, plot.left() + static_cast<int>(std::ceil(axis.toX(d.t1))));
        return std::pair<int, int>{x0, x1};
    };
    // Folds `spans` and fills each draw in [y, y + h); alpha < 255 fades the colours.
    auto lane = [&](const std::vector<lod::Span>& spans, int y, int h, int alpha,
                    bool robot_colour) {
        if (h <= 0) return;
        scratch_.clear();
        lod::fold(spans, axis.t0, axis.t1, fold_len, scratch_);
        for (const lod::Draw& d : scratch_) {
            const auto [x0, x1] = pixels(d);
            QColor c = colorOf(robot_colour ? lod::SpanKind::Robot : d.kind);
            c.setAlpha(alpha);
            p.fillRect(x0, y, std::max(1, x1 - x0), h, c);
            ++draws_;
        }
    };
    auto killMark = [&](double t, int y) {
        if (t < axis.t0 || t > axis.t1) return;
        p.fillRect(plot.left() + static_cast<int>(axis.toX(t)), y, 2, bar_h,
                   palette().color(QPalette::Text));
        ++draws_;
    };
    const QColor separator = palette().color(QPalette::Mid);
    long last_label_px = -1000000;
    for (long i = first; i < last; ++i) {
        const lod::Row& r = (*rows_)[static_cast<std::size_t>(i)];
        const int y = plot.top() + static_cast<int>(std::floor(i * row_h_ - scroll_px));
        // Request ids (or agents, on each agent's first lane) in the gutter where they fit:
        // every row when rows are tall enough, else one every few rows.
        const bool first_lane = agents && r.lane == 0;
        if (first_lane && i > first && row_h_ >= 3)
            p.fillRect(plot.left(), y - 1, plot.width(), 1, separator); // not over labels
        if (y - last_label_px >= fm.height() && y >= plot.top() &&
            (agents ? first_lane : (labels || i % 10 == 0))) {
            // Centred on a row that is tall enough, else hanging from its top (a label
            // taller than the row must not reach above it, into the header).
            const int base =
                labels ? y + (bar_h + fm.ascent() - fm.descent()) / 2 : y + fm.ascent() - 1;
            p.drawText(rowsArea.left() + 4, base,
                       agents ? (r.agent >= 0 ? tr("agent %1").arg(r.agent) : tr("no agent"))
                              : QString::number(r.id));
            last_label_px = y;
        }
        if (r.lastTime() < axis.t0 || r.arrival > axis.t1) continue;
        // Lanes of a row: generation on top, then the robot executing (if any), then the
        // pinned run's generation (compare).
        const bool robot = lanes && !r.robot.empty(), pin = lanes && compare;
        const int h_gen = robot && pin ? bar_h / 2 : (robot || pin ? bar_h * 2 / 3 : bar_h);
        const int h_robot = robot ? (pin ? (bar_h - h_gen) / 2 : bar_h - h_gen) : 0;
        lane(r.spans, y, h_gen, 255, false);
        if (robot) lane(r.robot, y + h_gen, h_robot, 255, true);
        if (pin)
            lane((*pinned_)[static_cast<std::size_t>(i)].spans, y + h_gen + h_robot,
                 bar_h - h_gen - h_robot, kPinnedAlpha, false);
        if (!r.members.empty()) {
            for (const lod::Member& m : r.members)
                if (m.killed && requests_ && std::size_t(m.id) < requests_->size())
                    killMark((*requests_)[std::size_t(m.id)].end, y);
        } else if (r.killed) {
            killMark(r.end, y);
        }
    }
    paintMarks(p, plot, first, last, scroll_px);
    p.restore();
}

void TimelineView::paintMarks(QPainter& p, const QRect& plot, long first, long last,
                              double scroll_px) const {
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

void TimelineView::renderDense(QPainter& p, const QRect& plot, const lod::TimeAxis& axis,
                               long first, long last, double scroll_px) const {
    // Several requests per pixel line: each line's rows go into per-phase difference
    // arrays (+1 where a span starts, -1 where it ends), one sweep finds at every pixel
    // column the most telling phase present, and one rectangle fills each run of equal
    // phase. O(spans + phases * width) per line, whatever the spans' lengths.
    // Phases by how telling they are when rows of one line disagree (last wins).
    static constexpr lod::SpanKind kOrder[] = {lod::SpanKind::Queued,    lod::SpanKind::Robot,
                                               lod::SpanKind::Folded,    lod::SpanKind::Decode,
                                               lod::SpanKind::Suspended, lod::SpanKind::Prefill,
                                               lod::SpanKind::Preempted};
    constexpr int kPhases = int(std::size(kOrder));
    static const auto kRankOf = [] {
        std::array<int, 8> r{};
        for (int i = 0; i < kPhases; ++i) r[std::size_t(kOrder[i])] = i;
        return r;
    }();
    const int w = plot.width();
    const auto stride = static_cast<std::size_t>(w + 1);
    diff_.assign(stride * kPhases, 0);
    const double fold_len = axis.secondsPerPixel(); // one pixel: finer cannot show
    // The shade: how many of the line's requests are in the system at that column, in
    // kShades steps from faint (one) to full (all), so a busy stretch of a large trace
    // reads as a darker band (a heat row) while the hue still says the phase.
    constexpr int kShades = 6;
    int line_y = std::numeric_limits<int>::min();
    int line_rows = 0;
    bool any = false;
    auto flush = [&] {
        if (!any) return;
        int cnt[kPhases] = {};
        int run_start = 0, run_key = -1;
        for (int x = 0; x <= w; ++x) {
            int top = -1, total = 0;
            if (x < w)
                for (int k = kPhases - 1; k >= 0; --k) {
                    cnt[k] += diff_[std::size_t(k) * stride + std::size_t(x)];
                    total += cnt[k];
                    if (top < 0 && cnt[k] > 0) top = k;
                }
            const int shade =
                top < 0 ? 0
                        : std::clamp((total * kShades + line_rows - 1) / std::max(1, line_rows), 1,
                                     kShades);
            const int key = top < 0 ? -1 : top * (kShades + 1) + shade;
            if (key != run_key) {
                if (run_key >= 0) {
                    QColor c = colorOf(kOrder[run_key / (kShades + 1)]);
                    c.setAlpha(255 * (run_key % (kShades + 1) + 1) / (kShades + 1));
                    p.fillRect(plot.left() + run_start, line_y, x - run_start, 1, c);
                    ++draws_;
                }
                run_start = x;
                run_key = key;
            }
        }
        std::fill(diff_.begin(), diff_.end(), 0);
        any = false;
    };
    for (long i = first; i < last; ++i) {
        const int y = plot.top() + static_cast<int>(std::floor(i * row_h_ - scroll_px));
        if (y != line_y) {
            flush();
            line_y = y;
            line_rows = 0;
        }
        ++line_rows;
        const lod::Row& r = (*rows_)[static_cast<std::size_t>(i)];
        if (r.end < axis.t0 || r.arrival > axis.t1) continue;
        scratch_.clear();
        lod::fold(r.spans, axis.t0, axis.t1, fold_len, scratch_);
        for (const lod::Draw& d : scratch_) {
            const int x0 = std::clamp(static_cast<int>(std::floor(axis.toX(d.t0))), 0, w - 1);
            const int x1 = std::clamp(static_cast<int>(std::ceil(axis.toX(d.t1))), x0 + 1, w);
            int* row = diff_.data() + std::size_t(kRankOf[std::size_t(d.kind)]) * stride;
            ++row[x0];
            --row[x1];
            any = true;
        }
    }
    flush();
}

QString TimelineView::describe(const lod::Row& r, double t, const lod::Row* pinned) {
    const lod::Span* s = lod::spanAt(r.spans, t);
    const lod::Span* robot = lod::spanAt(r.robot, t);
    QString phase = s ? QString::fromLatin1(lod::spanKindName(s->kind)) : QStringLiteral("-");
    if (s)
        phase += QStringLiteral(" %1 – %2 s (%3 ms)")
                     .arg(s->t0, 0, 'f', 3)
                     .arg(s->t1, 0, 'f', 3)
                     .arg((s->t1 - s->t0) * 1e3, 0, 'f', 1);
    auto outcome = [](const lod::Row& x) {
        return x.killed ? tr("killed") : x.finished ? tr("finished") : tr("unfinished");
    };
    QString text = tr("request %1: %2\narrival %3 s, end %4 s (%5)\nprompt %6, output %7 tokens, "
                      "%8 preemption(s)")
                       .arg(r.id)
                       .arg(phase)
                       .arg(r.arrival, 0, 'f', 3)
                       .arg(r.end, 0, 'f', 3)
                       .arg(outcome(r))
                       .arg(r.prompt)
                       .arg(r.output)
                       .arg(r.preemptions);
    if (robot) text += tr("\nrobot executing a segment");
    if (pinned)
        text += tr("\npinned run: end %1 s (%2, %3%4 s), %5 preemption(s)")
                    .arg(pinned->end, 0, 'f', 3)
                    .arg(outcome(*pinned))
                    .arg(r.end - r.arrival >= pinned->end - pinned->arrival ? "+" : "")
                    .arg((r.end - r.arrival) - (pinned->end - pinned->arrival), 0, 'f', 3)
                    .arg(pinned->preemptions);
    return text;
}

int TimelineView::requestAt(const QPoint& pos, QString* what, double* t_out) const {
    if (!rows_) return -1;
    const double scroll = verticalScrollBar()->value();
    if (pos.y() < kHeader || pos.x() < kGutter) return -1;
    const auto i = static_cast<long>(std::floor((pos.y() - kHeader + scroll) / row_h_));
    if (i < 0 || i >= static_cast<long>(rows_->size())) return -1;
    const lod::Row& row = (*rows_)[static_cast<std::size_t>(i)];
    const lod::TimeAxis axis{range_->from(), range_->to(),
                             double(std::max(1, viewport()->width() - kGutter))};
    const double t = axis.toT(pos.x() - kGutter);
    const double slop = 2 * axis.secondsPerPixel();
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
    render(p, viewport()->rect(), verticalScrollBar()->value());
}

void TimelineView::resizeEvent(QResizeEvent* e) {
    QAbstractScrollArea::resizeEvent(e);
    updateScrollBar();
}

void TimelineView::updateScrollBar() {
    const double total = rows_ ? double(rows_->size()) * row_h_ : 0.0;
    const int page = std::max(1, viewport()->height() - kHeader);
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
        const double y = e->position().y() - kHeader;
        const double row = (y + verticalScrollBar()->value()) / row_h_;
        setRowHeight(row_h_ * std::pow(1.25, steps));
        verticalScrollBar()->setValue(static_cast<int>(row * row_h_ - y));
        e->accept();
        return;
    }
    const lod::TimeAxis axis{range_->from(), range_->to(),
                             double(std::max(1, viewport()->width() - kGutter))};
    range_->zoom(axis.toT(e->position().x() - kGutter), std::pow(1.25, steps));
    e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
    if (e->button() == Qt::LeftButton) {
        press_ = e->pos();
        dragging_ = true;
        moved_ = false;
    }
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
    if (!dragging_) return;
    const QPoint d = e->pos() - press_;
    if (std::abs(d.x()) + std::abs(d.y()) > 2) moved_ = true;
    if (!moved_) return;
    const double spp = (range_->to() - range_->from()) / std::max(1, viewport()->width() - kGutter);
    range_->pan(-d.x() * spp);
    verticalScrollBar()->setValue(verticalScrollBar()->value() - d.y());
    press_ = e->pos();
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
    if (dragging_ && !moved_ && e->button() == Qt::LeftButton) {
        double t = 0;
        const int id = requestAt(e->pos(), nullptr, &t);
        if (id >= 0) Q_EMIT requestClicked(id, t);
    }
    dragging_ = false;
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
