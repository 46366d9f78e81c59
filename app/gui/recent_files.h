#pragma once
// File › Open recent: the last ten workload files opened, kept in the user's settings.
#include <QObject>
#include <QString>
#include <functional>

class QMenu;

namespace kairos::app {

class RecentFiles : public QObject {
    Q_OBJECT
public:
    // Fills `menu`; choosing a file calls `open` with its path.
    RecentFiles(QMenu* menu, std::function<void(const QString&)> open, QObject* parent = nullptr);
    // `path` was opened: first in the list.
    void remember(const QString& path);

private:
    void rebuild();

    QMenu* menu_;
    std::function<void(const QString&)> open_;
};

} // namespace kairos::app
