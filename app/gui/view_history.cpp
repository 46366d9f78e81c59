#include "view_history.h"

#include "find_bar.h"
#include "time_range.h"
#include "workbench_state.h"

#include <QScopedValueRollback>
#include <QTimer>
#include <QToolButton>

namespace kairos::app {

ViewHistory::ViewHistory(WorkbenchState* state, views::TimeRange* range, FindBar* find,
                         QObject* parent)
    : QObject(parent), state_(state), range_(range), find_(find) {
    back_ = new QToolButton;
    back_->setArrowType(Qt::LeftArrow);
    back_->setToolTip(tr("Back to the previous zoom and search (Alt+Left)"));
    forward_ = new QToolButton;
    forward_->setArrowType(Qt::RightArrow);
    forward_->setToolTip(tr("Forward (Alt+Right)"));
    enableButtons();
    connect(back_, &QToolButton::clicked, this, &ViewHistory::back);
    connect(forward_, &QToolButton::clicked, this, &ViewHistory::forward);
    settle_ = new QTimer(this);
    settle_->setSingleShot(true);
    settle_->setInterval(600); // a view kept this long is a step (not each wheel notch)
    connect(settle_, &QTimer::timeout, this, &ViewHistory::record);
    connect(range_, &views::TimeRange::changed, this, [this] {
        if (!restoring_) settle_->start();
    });
    connect(find_, &FindBar::applied, this, [this] {
        if (!restoring_) record();
    });
}

ViewHistory::View ViewHistory::current() const {
    return {range_->from(), range_->to(), find_->text(), find_->onlyMatches()};
}

void ViewHistory::record() {
    settle_->stop();
    if (!state_->run()) return;
    const View v = current();
    if (pos_ >= 0 && steps_[std::size_t(pos_)] == v) return;
    steps_.resize(std::size_t(pos_ + 1)); // a new step drops the forward ones
    steps_.push_back(v);
    if (steps_.size() > 100) steps_.erase(steps_.begin());
    pos_ = int(steps_.size()) - 1;
    enableButtons();
}

void ViewHistory::clear() {
    steps_.clear();
    pos_ = -1;
    enableButtons();
}

void ViewHistory::quietly(const std::function<void()>& change) {
    const QScopedValueRollback<bool> quiet(restoring_, true);
    change();
}

void ViewHistory::restore(int pos) {
    if (pos < 0 || pos >= int(steps_.size())) return;
    settle_->stop();
    pos_ = pos;
    const View& v = steps_[std::size_t(pos)];
    quietly([&] {
        find_->setOnlyMatches(v.only_matches);
        find_->setFilter(v.filter);
        range_->setRange(v.from, v.to);
    });
    enableButtons();
}

void ViewHistory::back() {
    if (settle_->isActive()) record(); // the view being settled is a step too
    restore(pos_ - 1);
}

void ViewHistory::forward() {
    restore(pos_ + 1);
}

void ViewHistory::enableButtons() {
    back_->setEnabled(pos_ > 0);
    forward_->setEnabled(pos_ + 1 < int(steps_.size()));
}

} // namespace kairos::app
