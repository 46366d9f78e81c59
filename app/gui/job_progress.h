#pragma once
// Progress and Cancel (Esc) in the status bar for background jobs that take longer than a
// third of a second: of the first busy channel of `channels` (the window: a workload read,
// then a simulation). Hidden otherwise.
#include "jobs.h"

#include <QStringList>
#include <QWidget>

class QProgressBar;
class QTimer;
class QToolButton;

namespace kairos::app {

class JobProgress : public QWidget {
    Q_OBJECT
public:
    JobProgress(JobTracker* jobs, QStringList channels, QWidget* parent = nullptr);
    // A job was started on one of the channels: shown if it runs past 300 ms.
    void started();
    // Hides it now (a result arrived).
    void done();

private:
    QString busyChannel() const; // "" when none is busy
    void poll();

    JobTracker* jobs_;
    QStringList channels_;
    QProgressBar* bar_;
    QToolButton* cancel_;
    QTimer* timer_;
    qint64 started_ms_ = 0;
};

} // namespace kairos::app
