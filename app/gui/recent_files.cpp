#include "recent_files.h"

#include <QAction>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace kairos::app {

namespace {
const QString kKey = QStringLiteral("recentFiles");
}

RecentFiles::RecentFiles(QMenu* menu, std::function<void(const QString&)> open, QObject* parent)
    : QObject(parent), menu_(menu), open_(std::move(open)) {
    rebuild();
}

void RecentFiles::remember(const QString& path) {
    QSettings settings;
    QStringList recent = settings.value(kKey).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    while (recent.size() > 10) recent.removeLast();
    settings.setValue(kKey, recent);
    rebuild();
}

void RecentFiles::rebuild() {
    menu_->clear();
    const QStringList recent = QSettings().value(kKey).toStringList();
    for (const QString& f : recent)
        menu_->addAction(QFileInfo(f).fileName(), this, [this, f] { open_(f); })->setToolTip(f);
    menu_->setEnabled(!recent.isEmpty());
}

} // namespace kairos::app
