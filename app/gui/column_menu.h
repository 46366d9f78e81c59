#pragma once
// A table's columns chosen as Hotspot does: the header's context menu has a checkable
// entry per column, and the choice (the hidden columns) is remembered in QSettings under
// `key`. The Runs panel and the Inspector's scheduler table use it.
#include <QAbstractItemModel>
#include <QHeaderView>
#include <QMenu>
#include <QSettings>
#include <QTableView>
#include <functional>
#include <vector>

namespace kairos::app {

inline void addColumnMenu(QTableView* view, std::vector<int> columns,
                          std::function<bool(int)> shown, std::function<void(int, bool)> show) {
    QHeaderView* header = view->horizontalHeader();
    header->setToolTip(QObject::tr("Right-click: choose the columns"));
    header->setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(
        header, &QHeaderView::customContextMenuRequested, view,
        [view, columns, shown, show](const QPoint& at) {
            QMenu menu(view);
            for (int c : columns) {
                QAction* a =
                    menu.addAction(view->model()->headerData(c, Qt::Horizontal).toString());
                a->setCheckable(true);
                a->setChecked(shown(c));
                QObject::connect(a, &QAction::toggled, view, [show, c](bool on) { show(c, on); });
            }
            menu.exec(view->horizontalHeader()->mapToGlobal(at));
        });
}

// The hidden columns remembered under `key`, those in [lo, hi]; `chosen`: whether any were.
inline QList<int> rememberedHiddenColumns(const QString& key, int lo, int hi, bool* chosen) {
    QSettings settings;
    QList<int> hidden;
    *chosen = settings.contains(key);
    for (const QVariant& v : settings.value(key).toList())
        if (v.toInt() >= lo && v.toInt() <= hi) hidden << v.toInt();
    return hidden;
}

inline void rememberHiddenColumns(const QString& key, const QList<int>& hidden) {
    QVariantList list;
    for (int c : hidden) list << c;
    QSettings().setValue(key, list);
}

} // namespace kairos::app
