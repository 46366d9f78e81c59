#include "metrics_panel.h"

#include "metrics_model.h"
#include "workbench_state.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QTableView>
#include <QVBoxLayout>

namespace kairos::app {

MetricsPanel::MetricsPanel(QWidget* parent) : QWidget(parent) {
    model_ = new views::MetricsModel(this);
    table_ = new QTableView;
    table_->setModel(model_);
    // The metric's name takes what the numbers leave (elided, its tooltip whole).
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(false);
    table_->verticalHeader()->setVisible(false);
    // The metric's name elided, the numbers whole: 220 px leaves the timeline 60 % of a
    // 1366-pixel window beside the Policy panel and the right column's tabs.
    table_->setMinimumWidth(220);
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    auto* row = new QHBoxLayout;
    auto* pin = new QPushButton(tr("&Pin this run"));
    pin->setToolTip(tr("Keep the shown run to compare the next ones with (Ctrl+P)"));
    auto* unpin = new QPushButton(tr("U&npin"));
    unpin->setToolTip(tr("Stop comparing (Ctrl+Shift+P)"));
    row->addWidget(pin);
    row->addWidget(unpin);
    v->addLayout(row);
    v->addWidget(table_);
    // What the table leaves out (killed requests) or could not judge (a pinned run that
    // completed other requests): said in words under it.
    note_ = new QLabel;
    note_->setObjectName(QStringLiteral("metricsNote"));
    note_->setWordWrap(true);
    note_->setVisible(false);
    note_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(note_);
    connect(pin, &QPushButton::clicked, this, &MetricsPanel::pinRequested);
    connect(unpin, &QPushButton::clicked, this, &MetricsPanel::unpinRequested);
}

void MetricsPanel::attach(WorkbenchState* state, std::function<QString()> pinned_name) {
    auto refresh = [this, state, pinned_name] {
        model_->setPinnedName(pinned_name && state->pinned() ? pinned_name() : QString());
        show(state->run().get(), state->pinned().get(),
             {state->pinnedNote(), state->pinnedOther()});
    };
    connect(state, &WorkbenchState::runChanged, this, refresh);
    connect(state, &WorkbenchState::pinnedChanged, this, refresh);
}

void MetricsPanel::show(const RunView* run, const RunView* pinned, const QStringList& notes) {
    model_->setRuns(run ? &run->summary : nullptr, pinned ? &pinned->summary : nullptr,
                    run ? run->requests.get() : nullptr, pinned ? pinned->requests.get() : nullptr);
    QStringList lines = notes;
    lines.removeAll(QString());
    if (!model_->note().isEmpty()) lines << model_->note();
    note_->setText(lines.join(QLatin1Char('\n')));
    note_->setVisible(!lines.isEmpty());
    if (model_->columnCount() > 0)
        table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    if (model_->columnCount() != columns_) {
        columns_ = model_->columnCount();
        Q_EMIT columnsChanged();
    }
}

int MetricsPanel::wantedWidth() const {
    int want = table_->frameWidth() * 2 + table_->verticalScrollBar()->sizeHint().width();
    for (int c = 0; c < model_->columnCount(); ++c)
        want += table_->horizontalHeader()->sectionSize(c);
    return want;
}

int MetricsPanel::minimumTableWidth() const {
    return table_->minimumWidth();
}

} // namespace kairos::app
