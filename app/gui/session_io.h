#pragma once
// File › Save / Open session for the window: a session (session_file.h) is the shown run's
// RunSpec, the workload itself when it lives in the window only, the pinned run and the
// view. Opening reads and resolves off the GUI thread, applies everything with one
// simulation, pins, and restores the view once that run is shown (opened(true)).
#include "session_file.h"

#include <QObject>
#include <QString>
#include <nlohmann/json.hpp>

class QMenu;

namespace kairos::app {

class MainWindow;

class SessionIO : public QObject {
    Q_OBJECT
public:
    explicit SessionIO(MainWindow* window);
    bool save(const QString& path, QString* error = nullptr);
    void open(const QString& path);
    // File › Save session… and Open session… (with their file dialogs) into `menu`.
    void addActions(QMenu* menu);
    // The window showed a run: the opened session's view, if one is waiting for it.
    void runShown();

Q_SIGNALS:
    void opened(bool ok);
    void message(const QString& text); // for the status bar

private:
    void apply(const OpenedSession& s);

    MainWindow* w_;               // the window whose RunSpec, workload, pin and view it keeps
    nlohmann::json pending_view_; // the opened session's view, applied after its run
};

} // namespace kairos::app
