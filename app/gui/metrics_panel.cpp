#include "metrics_panel.h"

#include "metrics_model.h"
#include "workbench_state.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

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
    using Col = views::MetricsModel::Column;
    const bool comparing = model_->columnCount() > Col::Pinned;
    QHeaderView* h = table_->horizontalHeader();
    if (comparing) {
        h->setSectionResizeMode(0, QHeaderView::Fixed);
        h->resizeSection(0, wrappedNameWidth());
        // The pinned column as wide as its numbers, its heading cut to fit (whole on hover):
        // a long name ("pinned timebill k=20, KV 50,838") pushed the change column out.
        const int numbers = static_cast<QAbstractItemView*>(table_)->sizeHintForColumn(Col::Pinned);
        const int least = h->fontMetrics().horizontalAdvance(tr("pinned")) + 16;
        h->setSectionResizeMode(Col::Pinned, QHeaderView::Fixed);
        h->resizeSection(Col::Pinned, std::max(numbers, least));
    } else if (model_->columnCount() > 0) {
        h->setSectionResizeMode(0, QHeaderView::Stretch);
    }
    // Beside a pinned run the names wrap (their rows as tall as they need), so that four
    // columns fit in a quarter of a 1366-pixel window: in 220 px they were cut to "...",
    // and whole on one line the panel took 370 px, the timeline under half the window.
    table_->verticalHeader()->setSectionResizeMode(comparing ? QHeaderView::ResizeToContents
                                                             : QHeaderView::Interactive);
    // Refitted when the rows change too: more rows (TimeBill's budget figures) bring a
    // vertical scroll bar, which took the change column's last characters.
    if (model_->columnCount() != columns_ || model_->rowCount() != rows_) {
        columns_ = model_->columnCount();
        rows_ = model_->rowCount();
        Q_EMIT columnsChanged();
    }
}

int MetricsPanel::wantedWidth() const {
    int want = table_->frameWidth() * 2 + table_->verticalScrollBar()->sizeHint().width();
    // Each number column as its contents and header ask (measured now: the header's own
    // sizes follow at its next layout, and a pinned table was fitted to the last run's).
    const QHeaderView* h = table_->horizontalHeader();
    for (int c = 0; c < model_->columnCount(); ++c)
        want += h->sectionResizeMode(c) != QHeaderView::ResizeToContents
                    ? h->sectionSize(c) // the names wrapped, the pinned numbers (show)
                    : std::max(h->sectionSizeHint(c),
                               static_cast<const QAbstractItemView*>(table_)->sizeHintForColumn(c));
    return want;
}

int MetricsPanel::wrappedNameWidth() const {
    // The longest word of any name, and room for its cell's margins.
    const QFontMetrics fm(table_->font());
    int widest = 0;
    for (int r = 0; r < model_->rowCount(); ++r)
        for (const QString& word : model_->index(r, 0).data().toString().split(QLatin1Char(' ')))
            widest = std::max(widest, fm.horizontalAdvance(word));
    return std::clamp(widest + 2 * table_->style()->pixelMetric(QStyle::PM_FocusFrameHMargin) + 8,
                      80, 160);
}

int MetricsPanel::minimumTableWidth() const {
    return table_->minimumWidth();
}

} // namespace kairos::app
