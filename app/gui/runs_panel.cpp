#include "runs_panel.h"

#include "column_menu.h"
#include "runs_model.h"

#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <functional>
#include <memory>

namespace kairos::app {

QString RunsSnapshot::filesState(const QString& db) {
    QString state;
    for (const QString& f : {db, db + QStringLiteral("-wal")}) {
        const QFileInfo info(f);
        state += info.exists() ? QStringLiteral("%1:%2;")
                                     .arg(info.size())
                                     .arg(info.lastModified().toMSecsSinceEpoch())
                               : QStringLiteral("-;");
    }
    return state;
}

RunsSnapshot RunsSnapshot::read(const QString& db) {
    RunsSnapshot s;
    s.exists = QFileInfo::exists(db);
    if (s.exists) {
        try {
            const store::Store st(db.toStdString());
            s.runs = st.listRuns();
            s.models = st.listModels();
        } catch (const std::exception& e) {
            s.error = QString::fromStdString(e.what());
        }
    }
    s.state = filesState(db); // closing the last connection removed the WAL
    return s;
}

RunsPanel::RunsPanel(JobTracker* jobs, QString db, QWidget* parent)
    : QWidget(parent), jobs_(jobs), db_(std::move(db)) {
    qRegisterMetaType<std::vector<kairos::store::ModelInfo>>();
    model_ = new views::RunsModel(this);
    view_ = new QTableView;
    view_->setObjectName(QStringLiteral("runs"));
    view_->setWordWrap(false);
    view_->setModel(model_);
    view_->setSelectionBehavior(QAbstractItemView::SelectRows);
    view_->setSelectionMode(QAbstractItemView::SingleSelection);
    view_->verticalHeader()->setVisible(false);
    // The policy takes the width the other columns leave (elided, whole in its tooltip):
    // no sideways scrolling in a 370 px panel. Hotspot's way with columns: the header's
    // context menu shows and hides them, and the choice is remembered.
    view_->horizontalHeader()->setStretchLastSection(false);
    view_->horizontalHeader()->setSectionResizeMode(views::RunsModel::Policy, QHeaderView::Stretch);
    {
        std::vector<int> columns; // the id and the policy always show
        for (int c = views::RunsModel::Workload; c <= views::RunsModel::Created; ++c)
            columns.push_back(c);
        addColumnMenu(
            view_, columns, [this](int c) { return columnShown(c); },
            [this](int c, bool on) { showColumn(c, on); });
        hidden_ = rememberedHiddenColumns(QStringLiteral("runs/hiddenColumns"),
                                          views::RunsModel::Workload, views::RunsModel::Created,
                                          &columns_chosen_);
    }
    connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
        Q_EMIT compareRequested(i.data(views::RunsModel::RunIdRole).toLongLong());
    });
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    auto* row = new QHBoxLayout;
    auto* save = new QPushButton(tr("&Save this run"));
    save->setToolTip(tr("Store the shown run in the database (Ctrl+S)"));
    auto* compare = new QPushButton(tr("Compare with selected"));
    compare->setToolTip(tr("Pin the selected stored run (or double-click it)"));
    auto* sweeps = new QPushButton(tr("S&weeps…"));
    sweeps->setToolTip(tr("Open a stored sweep (saved from the Sweep panel or by "
                          "kairos-cli sweep --db) in the Sweep panel"));
    row->addWidget(save);
    row->addWidget(compare);
    row->addWidget(sweeps);
    label_ = new QLabel;
    label_->setWordWrap(true);
    label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addLayout(row);
    v->addWidget(view_);
    v->addWidget(label_);
    connect(save, &QPushButton::clicked, this, &RunsPanel::saveRequested);
    connect(sweeps, &QPushButton::clicked, this, &RunsPanel::sweepsRequested);
    connect(compare, &QPushButton::clicked, this, [this] {
        if (const qint64 id = selectedRun(); id >= 0) Q_EMIT compareRequested(id);
    });
    // Another process (kairos-cli simulate --db) writing the database: re-read at most
    // every 300 ms (a throttle, not a debounce: a steady stream of notices still
    // re-reads). SQLite's WAL file changes on every commit; the panel's own reads create
    // and remove the WAL too, so a notice re-reads only when the files differ from what
    // they were after the last read.
    throttle_ = new QTimer(this);
    throttle_->setSingleShot(true);
    throttle_->setInterval(300);
    connect(throttle_, &QTimer::timeout, this, [this] {
        if (RunsSnapshot::filesState(db_) != seen_) refresh();
    });
    watch_ = new QFileSystemWatcher(this);
    connect(watch_, &QFileSystemWatcher::fileChanged, this, &RunsPanel::filesChanged);
    connect(watch_, &QFileSystemWatcher::directoryChanged, this, &RunsPanel::filesChanged);
    filesChanged(); // starts watching
}

bool RunsPanel::columnShown(int column) const {
    if (column == views::RunsModel::Id || column == views::RunsModel::Policy) return true;
    if (columns_chosen_) return !hidden_.contains(column);
    // By default what tells runs apart and how they did; the rest is a right-click away
    // (and in the rows' tooltips). A label is shown once some run has one.
    switch (column) {
    case views::RunsModel::Workload:
    case views::RunsModel::MeanTtft:
    case views::RunsModel::P99E2el:
        return true;
    case views::RunsModel::Label:
        for (int r = 0; r < model_->rowCount(); ++r)
            if (!model_->runAt(r)->label.empty()) return true;
        return false;
    default:
        return false;
    }
}

void RunsPanel::showColumn(int column, bool shown) {
    if (!columns_chosen_) // the defaults become the choice, then this change
        for (int c = views::RunsModel::Workload; c < model_->columnCount(); ++c)
            if (!columnShown(c)) hidden_ << c;
    columns_chosen_ = true;
    hidden_.removeAll(column);
    if (!shown && column > views::RunsModel::Policy) hidden_ << column;
    rememberHiddenColumns(QStringLiteral("runs/hiddenColumns"), hidden_);
    applyColumns();
    fitColumns();
}

void RunsPanel::applyColumns() {
    for (int c = 0; c < model_->columnCount(); ++c) view_->setColumnHidden(c, !columnShown(c));
}

void RunsPanel::fitColumns() {
    view_->resizeColumnsToContents();
    // The workload's name is as long as it is: capped, elided, whole in the tooltip.
    if (view_->columnWidth(views::RunsModel::Workload) > 110)
        view_->setColumnWidth(views::RunsModel::Workload, 110);
}

qint64 RunsPanel::selectedRun() const {
    const auto sel = view_->selectionModel()->selectedRows();
    return sel.isEmpty() ? -1 : sel.front().data(views::RunsModel::RunIdRole).toLongLong();
}

void RunsPanel::filesChanged() {
    const QString dir = QFileInfo(db_).absolutePath();
    const QStringList watched = watch_->files() + watch_->directories();
    if (QFileInfo::exists(dir) && !watched.contains(dir)) watch_->addPath(dir);
    for (const QString& f : {db_, db_ + QStringLiteral("-wal")}) // may have appeared
        if (QFileInfo::exists(f) && !watched.contains(f)) watch_->addPath(f);
    if (!throttle_->isActive()) throttle_->start();
}

void RunsPanel::refresh() {
    // One read of the database for both panels, off the GUI thread; a newer read (another
    // notice) supersedes this one.
    const QString path = db_;
    jobs_->start(QStringLiteral("runs"), this, [this, path](JobTracker::Job&) {
        auto snap = std::make_shared<const RunsSnapshot>(RunsSnapshot::read(path));
        return std::function<void()>([this, snap] { apply(*snap); });
    });
}

void RunsPanel::apply(const RunsSnapshot& snap) {
    seen_ = snap.state;
    if (!snap.exists || !snap.error.isEmpty()) {
        // Nothing stored yet (no database was created here), or it cannot be read.
        model_->setRuns({});
        runs_signature_.clear();
        models_signature_.clear();
        Q_EMIT modelsRead({});
        label_->setText(!snap.exists
                            ? tr("No database yet at %1; Save this run creates it.").arg(db_)
                            : tr("Cannot read the database: %1").arg(snap.error));
        Q_EMIT refreshed();
        return;
    }
    // Nothing new (a notice from a write that changed no run: SQLite's checkpoint, a model
    // stored): the table is left alone, so a selection or a scroll position stays put.
    QStringList signature;
    for (const auto& r : snap.runs)
        signature << QStringLiteral("%1|%2|%3")
                         .arg(r.id)
                         .arg(QString::fromStdString(r.created_at),
                              QString::fromStdString(r.label));
    QStringList model_signature;
    for (const auto& m : snap.models)
        model_signature << QStringLiteral("%1|%2").arg(m.id).arg(
            QString::fromStdString(m.created_at));
    if (signature == runs_signature_ && model_signature == models_signature_) {
        Q_EMIT refreshed();
        return;
    }
    const bool models_changed = model_signature != models_signature_;
    runs_signature_ = signature;
    models_signature_ = model_signature;
    // The selected run stays selected through a re-read (by id: rows move as runs arrive).
    const qint64 selected = selectedRun();
    model_->setRuns(snap.runs);
    for (int row = 0; selected >= 0 && row < model_->rowCount(); ++row)
        if (const QModelIndex i = model_->index(row, 0);
            i.data(views::RunsModel::RunIdRole).toLongLong() == selected) {
            view_->selectionModel()->select(i, QItemSelectionModel::ClearAndSelect |
                                                   QItemSelectionModel::Rows);
            view_->selectionModel()->setCurrentIndex(i, QItemSelectionModel::NoUpdate);
            break;
        }
    if (models_changed) Q_EMIT modelsRead(snap.models);
    applyColumns();
    fitColumns();
    label_->setText(tr("%1 run(s) in %2").arg(model_->rowCount()).arg(db_));
    Q_EMIT refreshed();
}

} // namespace kairos::app
