#include "job_progress.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QProgressBar>
#include <QTimer>
#include <QToolButton>

namespace kairos::app {

JobProgress::JobProgress(JobTracker* jobs, QStringList channels, QWidget* parent)
    : QWidget(parent), jobs_(jobs), channels_(std::move(channels)) {
    auto* l = new QHBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    bar_ = new QProgressBar;
    bar_->setRange(0, 1000);
    bar_->setMaximumWidth(220);
    bar_->setTextVisible(false);
    cancel_ = new QToolButton;
    cancel_->setText(tr("Cancel"));
    cancel_->setShortcut(QKeySequence(Qt::Key_Escape));
    // Hidden, they keep their room: a run over 0.3 s showed them, the status bar grew 5 px
    // and the whole window above it moved up and back at every slider move on a large trace,
    // and the device label beside them jumped from the right edge to the middle.
    for (QWidget* part : {static_cast<QWidget*>(bar_), static_cast<QWidget*>(cancel_)}) {
        QSizePolicy sp = part->sizePolicy();
        sp.setRetainSizeWhenHidden(true);
        part->setSizePolicy(sp);
    }
    l->addWidget(bar_);
    l->addWidget(cancel_);
    done();
    connect(cancel_, &QToolButton::clicked, this, [this] {
        if (const QString c = busyChannel(); !c.isEmpty()) jobs_->cancel(c);
    });
    timer_ = new QTimer(this);
    timer_->setInterval(100);
    connect(timer_, &QTimer::timeout, this, &JobProgress::poll);
}

void JobProgress::started() {
    started_ms_ = QDateTime::currentMSecsSinceEpoch();
    timer_->start();
}

void JobProgress::done() {
    bar_->hide();
    cancel_->hide();
}

QString JobProgress::busyChannel() const {
    for (const QString& c : channels_)
        if (jobs_->busy(c)) return c;
    return {};
}

void JobProgress::poll() {
    const QString busy = busyChannel();
    const bool show = !busy.isEmpty() && QDateTime::currentMSecsSinceEpoch() - started_ms_ > 300;
    bar_->setVisible(show);
    cancel_->setVisible(show);
    if (show) bar_->setValue(static_cast<int>(1000 * jobs_->latest(busy)->progress.load()));
    if (busy.isEmpty()) timer_->stop();
}

} // namespace kairos::app
