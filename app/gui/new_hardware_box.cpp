#include "new_hardware_box.h"

#include "chart_tools.h"

#include <QComboBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>
#include <stdexcept>

namespace kairos::app {

namespace {
const char* const kColumns[4] = {"input", "output", "batch", "tokens/s"};
} // namespace

NewHardwareBox::NewHardwareBox(QWidget* parent)
    : QGroupBox(tr("A configuration it never measured"), parent) {
    setObjectName(QStringLiteral("newHardware"));
    setCheckable(true);
    setChecked(false);
    setToolTip(tr("Predict hardware, a model or a framework the ALA model was not trained on, "
                  "with the range its hold-outs give; add a few measured rows and the "
                  "estimate is fitted to them (the range narrows)"));
    // Two fields a line (framework, model / hardware, precision): the chart above keeps
    // its height at 1366x768.
    auto* form = new QGridLayout;
    form->setColumnStretch(1, 1);
    form->setColumnStretch(3, 1);
    const QString names[4] = {tr("framework"), tr("model"), tr("hardware"), tr("precision")};
    const char* object_names[4] = {"newFramework", "newModel", "newHardwareName", "newPrecision"};
    for (int i = 0; i < 4; ++i) {
        fields_[i] = new QComboBox;
        fields_[i]->setObjectName(QString::fromLatin1(object_names[i]));
        fields_[i]->setEditable(true);
        fields_[i]->setInsertPolicy(QComboBox::NoInsert);
        fields_[i]->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        fields_[i]->setMinimumContentsLength(14);
        connect(fields_[i], &QComboBox::currentTextChanged, this, [this, i](const QString& t) {
            fields_[i]->setToolTip(t); // a long model name is cut in the field
            Q_EMIT changed();
        });
        auto* label = new QLabel(names[i]);
        label->setBuddy(fields_[i]);
        form->addWidget(label, i / 2, 2 * (i % 2));
        form->addWidget(fields_[i], i / 2, 2 * (i % 2) + 1);
    }
    fields_[2]->lineEdit()->setPlaceholderText(tr("chip and device count, e.g. AMD MI300X GPU x2"));
    table_ = new QTableWidget(0, 4);
    table_->setObjectName(QStringLiteral("measurements"));
    QStringList headers;
    for (const char* c : kColumns) headers << tr(c);
    table_->setHorizontalHeaderLabels(headers);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    table_->verticalHeader()->setVisible(false);
    table_->setMinimumHeight(70);
    table_->setMaximumHeight(120);
    table_->setToolTip(tr("Your measurements of this configuration: whole tokens for input, "
                          "output and batch, throughput in tokens/s"));
    connect(table_, &QTableWidget::cellChanged, this, &NewHardwareBox::changed);
    auto* add = new QPushButton(tr("Add row"));
    add->setObjectName(QStringLiteral("addMeasurement"));
    connect(add, &QPushButton::clicked, this, [this] {
        const int r = table_->rowCount();
        table_->insertRow(r);
        table_->setCurrentCell(r, 0);
        table_->editItem(table_->item(r, 0));
    });
    auto* remove = new QPushButton(tr("Remove row"));
    connect(remove, &QPushButton::clicked, this, [this] {
        const int r = table_->currentRow();
        if (r < 0) return;
        table_->removeRow(r);
        Q_EMIT changed();
    });
    auto* import = new QPushButton(tr("Import CSV…"));
    import->setToolTip(tr("framework, model, hardware, precision, input_len, output_len, batch, "
                          "throughput: the first row's configuration and its rows"));
    connect(import, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Measured rows"), views::dialogPath(QStringLiteral("measurements")),
            tr("CSV (*.csv);;All files (*)"));
        if (path.isEmpty()) return;
        views::rememberDialogChoice(QStringLiteral("measurements"), path);
        QString error;
        if (!importCsv(path, &error)) setStatus(error);
    });
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(add);
    buttons->addWidget(remove);
    buttons->addWidget(import);
    buttons->addStretch(1);
    status_ = new QLabel;
    status_->setObjectName(QStringLiteral("newHardwareStatus"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Unchecked, the box is its title line only; checked, it opens and the chart shows
    // its configuration.
    auto* body = new QWidget;
    auto* layout = new QVBoxLayout(body);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(form);
    layout->addWidget(table_, 1);
    layout->addLayout(buttons);
    layout->addWidget(status_);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(4, 2, 4, 2);
    outer->addWidget(body);
    body->setVisible(false);
    connect(this, &QGroupBox::toggled, this, [this, body](bool on) {
        body->setVisible(on);
        Q_EMIT changed();
    });
}

void NewHardwareBox::setChoices(const std::vector<std::string>& frameworks,
                                const std::vector<std::string>& models,
                                const std::vector<std::string>& hardware,
                                const std::vector<std::string>& precisions) {
    const std::vector<std::string>* lists[4] = {&frameworks, &models, &hardware, &precisions};
    for (int i = 0; i < 4; ++i) {
        const QSignalBlocker block(fields_[i]);
        const QString kept = fields_[i]->currentText();
        fields_[i]->clear();
        for (const auto& v : *lists[i]) fields_[i]->addItem(QString::fromStdString(v));
        if (!kept.isEmpty()) fields_[i]->setCurrentText(kept);
    }
}

ala::BenchRow NewHardwareBox::configuration() const {
    ala::BenchRow r;
    std::string* f[4] = {&r.framework, &r.model, &r.hardware, &r.precision};
    for (int i = 0; i < 4; ++i) *f[i] = fields_[i]->currentText().trimmed().toStdString();
    return r;
}

void NewHardwareBox::setConfiguration(const ala::BenchRow& r) {
    const std::string* f[4] = {&r.framework, &r.model, &r.hardware, &r.precision};
    for (int i = 0; i < 4; ++i) {
        const QSignalBlocker block(fields_[i]);
        fields_[i]->setCurrentText(QString::fromStdString(*f[i]));
    }
    Q_EMIT changed();
}

std::vector<ala::BenchRow> NewHardwareBox::measurements(QStringList* problems) const {
    std::vector<ala::BenchRow> rows;
    const ala::BenchRow cfg = configuration();
    for (int r = 0; r < table_->rowCount(); ++r) {
        double v[4] = {};
        QString bad;
        bool empty = true;
        for (int c = 0; c < 4; ++c) {
            const QTableWidgetItem* item = table_->item(r, c);
            const QString text = item ? item->text().trimmed() : QString();
            empty = empty && text.isEmpty();
            bool ok = false;
            v[c] = text.toDouble(&ok);
            const bool whole = c == 3 || (ok && v[c] == std::floor(v[c]) && v[c] <= 1e7);
            if (bad.isEmpty() &&
                (!ok || !(v[c] > 0) || !whole || (c == 3 && v[c] > ala::kMaxThroughput)))
                bad = text.isEmpty() ? tr("%1 is empty").arg(tr(kColumns[c]))
                                     : tr("%1 \"%2\" is not %3")
                                           .arg(tr(kColumns[c]), text,
                                                c == 3 ? tr("a throughput in (0, 1e6] tokens/s")
                                                       : tr("a whole number above 0"));
        }
        if (empty) continue; // a row just added, not yet typed in
        if (!bad.isEmpty()) {
            if (problems) *problems << tr("row %1: %2").arg(r + 1).arg(bad);
            continue;
        }
        ala::BenchRow m = cfg;
        m.ii = int(v[0]);
        m.oo = int(v[1]);
        m.bb = int(v[2]);
        m.thpt = v[3];
        rows.push_back(m);
    }
    return rows;
}

void NewHardwareBox::addMeasurement(int ii, int oo, int bb, double thpt) {
    const QSignalBlocker block(table_);
    const int r = table_->rowCount();
    table_->insertRow(r);
    const double v[4] = {double(ii), double(oo), double(bb), thpt};
    for (int c = 0; c < 4; ++c)
        table_->setItem(r, c, new QTableWidgetItem(QString::number(v[c], 'g', c == 3 ? 8 : 10)));
    Q_EMIT changed();
}

bool NewHardwareBox::importCsv(const QString& path, QString* error) {
    std::vector<ala::BenchRow> rows;
    try {
        rows = ala::readBench(path.toStdString(), true, false);
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
    if (rows.empty()) {
        if (error) *error = tr("%1: no rows").arg(path);
        return false;
    }
    const std::string key = rows.front().group();
    {
        const QSignalBlocker block(this);
        setConfiguration(rows.front());
        table_->setRowCount(0);
        for (const auto& r : rows)
            if (r.group() == key) addMeasurement(r.ii, r.oo, r.bb, r.thpt);
    }
    setChecked(true);
    Q_EMIT changed();
    return true;
}

void NewHardwareBox::setStatus(const QString& text) {
    status_->setText(text);
    status_->setVisible(!text.isEmpty());
}

} // namespace kairos::app
