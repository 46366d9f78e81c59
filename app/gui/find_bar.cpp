#include "find_bar.h"

#include "metrics/request_filter.h"
#include "timeline_view.h"
#include "workbench_state.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QTimer>
#include <QToolButton>

namespace kairos::app {

FindBar::FindBar(WorkbenchState* state, views::TimelineView* timeline, QWidget* parent)
    : QWidget(parent), state_(state), timeline_(timeline) {
    layout_ = new QHBoxLayout(this);
    layout_->setContentsMargins(2, 2, 2, 0);
    field_ = new QLineEdit;
    field_->setObjectName(QStringLiteral("requestFilter"));
    field_->setClearButtonEnabled(true);
    field_->setPlaceholderText(
        tr("Find requests: id=17, killed, preempted, slo, class=urgent, agent=3, "
           "phase=suspended, ttft>2000, e2el>30000 …"));
    help_ = tr("<b>Find requests</b> (Ctrl+F). Terms separated by spaces must all hold; a leading "
               "! negates one.<br><tt>17</tt> or <tt>id=17</tt> the request the trace calls 17 "
               "(robot traces: agent × 100000 + index); <tt>row=4</tt> the fifth to arrive; "
               "<tt>agent=3</tt>, "
               "<tt>class=urgent</tt>; <tt>phase=queued|prefill|decoding|preempted|suspended</tt> "
               "(it spent time in it); <tt>killed finished unfinished preempted suspended</tt>; "
               "<tt>slo</tt> missed a goodput SLO; <tt>ttft&gt;MS tpot&gt;MS e2el&gt;MS "
               "queue&gt;MS</tt> (also &lt;, &gt;=, &lt;=); <tt>prompt&gt;N output&gt;N</tt> "
               "tokens.<br>Enter or F3 jumps to the next match, Shift+F3 to the previous.");
    field_->setToolTip(help_);
    info_ = new QLabel;
    info_->setObjectName(QStringLiteral("filterInfo"));
    auto* prev = new QToolButton;
    prev->setArrowType(Qt::UpArrow);
    prev->setToolTip(tr("Previous match (Shift+F3)"));
    prev->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F3));
    auto* next = new QToolButton;
    next->setArrowType(Qt::DownArrow);
    next->setToolTip(tr("Next match (F3)"));
    next->setShortcut(QKeySequence(Qt::Key_F3));
    only_ = new QCheckBox(tr("Only &matches"));
    only_->setToolTip(tr("Show only the matching requests' rows"));
    layout_->addWidget(field_, 1);
    layout_->addWidget(info_);
    layout_->addWidget(prev);
    layout_->addWidget(next);
    layout_->addWidget(only_);
    // Typing settles for 200 ms before the search runs; Enter runs it and steps.
    timer_ = new QTimer(this);
    timer_->setSingleShot(true);
    timer_->setInterval(200);
    connect(field_, &QLineEdit::textChanged, timer_, qOverload<>(&QTimer::start));
    connect(timer_, &QTimer::timeout, this, [this] { apply(); });
    connect(field_, &QLineEdit::returnPressed, this, [this] {
        timer_->stop();
        apply();
        nextMatch();
    });
    connect(prev, &QToolButton::clicked, this, &FindBar::previousMatch);
    connect(next, &QToolButton::clicked, this, &FindBar::nextMatch);
    connect(only_, &QCheckBox::toggled, this, &FindBar::rowsWanted);
}

void FindBar::addLeading(QWidget* w) {
    layout_->insertWidget(layout_->indexOf(field_), w);
}

QString FindBar::text() const {
    return field_->text().trimmed();
}

void FindBar::setFilter(const QString& text) {
    const QSignalBlocker block(field_);
    field_->setText(text);
    timer_->stop();
    apply();
}

bool FindBar::onlyMatches() const {
    return only_->isChecked();
}

void FindBar::setOnlyMatches(bool on) {
    const QSignalBlocker block(only_);
    only_->setChecked(on);
}

bool FindBar::showsOnlyMatches() const {
    return only_->isChecked() && !text().isEmpty() && error_.isEmpty();
}

void FindBar::focusField() {
    field_->setFocus();
    field_->selectAll();
}

void FindBar::apply(bool rows) {
    matches_.clear();
    pos_ = -1;
    error_.clear();
    const QString t = text();
    const auto& run = state_->run();
    std::shared_ptr<std::vector<bool>> marked;
    if (!t.isEmpty() && run && run->requests) {
        try {
            const RequestFilter f = RequestFilter::parse(t.toStdString());
            matches_ = f.apply(*run->requests, run->workload.get(), run->rows.get(),
                               run->summary_options.goodput);
            marked = std::make_shared<std::vector<bool>>(run->requests->size(), false);
            for (ReqId id : matches_) (*marked)[std::size_t(id)] = true;
        } catch (const std::exception& e) {
            error_ = QString::fromStdString(e.what());
        }
    }
    field_->setStyleSheet(error_.isEmpty() ? QString()
                                           : QStringLiteral("QLineEdit { background: #fde8e8; }"));
    field_->setToolTip(error_.isEmpty() ? help_ : help_ + "<hr>" + error_.toHtmlEscaped());
    if (!error_.isEmpty())
        info_->setText(tr("<span style='color:#b02020'>%1</span>")
                           .arg(error_.section(':', 1).trimmed().toHtmlEscaped()));
    else if (t.isEmpty() || !run)
        info_->clear();
    else if (matches_.empty()) // "0 of 400" read as a search that had not run
        info_->setText(tr("none of %1 matches").arg(run->requests->size()));
    else
        info_->setText(tr("%1 of %2").arg(matches_.size()).arg(run->requests->size()));
    timeline_->setMarked(marked, -1);
    if (rows && only_->isChecked()) Q_EMIT rowsWanted();
    Q_EMIT applied();
}

void FindBar::step(int by) {
    if (matches_.empty()) return;
    const int n = int(matches_.size());
    pos_ = pos_ < 0 ? (by > 0 ? 0 : n - 1) : ((pos_ + by) % n + n) % n;
    const int id = int(matches_[std::size_t(pos_)]);
    const auto& run = state_->run();
    info_->setText(tr("%1 / %2 of %3").arg(pos_ + 1).arg(n).arg(run ? run->requests->size() : 0));
    timeline_->setMarked(timeline_->marked(), id);
    timeline_->scrollToRequest(id);
    // The request's card, at its arrival.
    state_->setSelection(id, (*run->rows)[std::size_t(id)].arrival);
    Q_EMIT stepped();
}

QString FindBar::infoText() const {
    return info_->text();
}

void FindBar::nextMatch() {
    step(+1);
}

void FindBar::previousMatch() {
    step(-1);
}

} // namespace kairos::app
