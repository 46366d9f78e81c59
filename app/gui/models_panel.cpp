#include "models_panel.h"

#include "chart_tools.h"
#include "fit/ala.h"
#include "model_chart.h"

#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

namespace kairos::app {

ModelsPanel::ModelsPanel(JobTracker* jobs, QString db, QWidget* parent)
    : QWidget(parent), jobs_(jobs), db_(std::move(db)) {
    models_table_ = new QTableWidget(0, 4);
    models_table_->setObjectName(QStringLiteral("models"));
    models_table_->setHorizontalHeaderLabels(
        {tr("id"), tr("kind"), tr("name"), tr("created (UTC)")});
    models_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    models_table_->setSelectionMode(QAbstractItemView::SingleSelection);
    models_table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    models_table_->verticalHeader()->setVisible(false);
    models_table_->horizontalHeader()->setStretchLastSection(true);
    models_table_->setWordWrap(false);
    model_chart_ = new views::ModelChart;
    views::addChartExport(model_chart_, QStringLiteral("model"));
    connect(models_table_, &QTableWidget::itemSelectionChanged, this, [this] {
        const auto sel = models_table_->selectedItems();
        if (!sel.isEmpty())
            showModel(models_table_->item(sel.front()->row(), 0)->text().toLongLong());
    });
    ala_config_ = new QComboBox;
    ala_config_->setObjectName(QStringLiteral("alaConfig"));
    ala_config_->setToolTip(tr("The ALA model's configuration to plot"));
    ala_config_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    ala_config_->setMinimumContentsLength(30);
    ala_config_->setVisible(false);
    connect(ala_config_, &QComboBox::currentTextChanged, this,
            [this](const QString& key) { plotAlaConfiguration(key); });
    auto* chart_box = new QWidget;
    auto* chart_layout = new QVBoxLayout(chart_box);
    chart_layout->setContentsMargins(0, 0, 0, 0);
    chart_layout->addWidget(ala_config_);
    chart_layout->addWidget(model_chart_, 1);
    // What the model's own held-out errors say against trusting it (store::modelFitWarnings).
    model_warning_ = new QLabel;
    model_warning_->setObjectName(QStringLiteral("modelWarning"));
    model_warning_->setWordWrap(true);
    model_warning_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    model_warning_->setStyleSheet(
        QStringLiteral("QLabel { background: #fde8e8; color: #7a1010; border: 1px solid #d06060; "
                       "padding: 3px 6px; }"));
    model_warning_->setVisible(false);
    chart_layout->addWidget(model_warning_);
    use_model_ = new QPushButton(tr("Simulate &with this model"));
    use_model_->setObjectName(QStringLiteral("useModel"));
    use_model_->setToolTip(tr("Use the shown model (an ALA model: the chosen configuration) as "
                              "the simulations' execution model, on the device profile's KV "
                              "capacity"));
    use_model_->setEnabled(false);
    connect(use_model_, &QPushButton::clicked, this, [this] {
        const auto sel = models_table_->selectedItems();
        if (sel.isEmpty()) return;
        const bool ala =
            models_table_->item(sel.front()->row(), 1)->text() == QStringLiteral("ala");
        Q_EMIT useModel(models_table_->item(sel.front()->row(), 0)->text().toLongLong(),
                        ala ? ala_config_->currentText() : QString());
    });
    chart_layout->addWidget(use_model_);
    auto* msplit = new QSplitter(Qt::Vertical);
    msplit->addWidget(models_table_);
    msplit->addWidget(chart_box);
    msplit->setSizes({150, 400});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(msplit);
}

ModelsPanel::~ModelsPanel() = default;

void ModelsPanel::setModels(const std::vector<store::ModelInfo>& models) {
    const qint64 selected = [&] {
        const auto sel = models_table_->selectedItems();
        return sel.isEmpty() ? -1 : models_table_->item(sel.front()->row(), 0)->text().toLongLong();
    }();
    models_table_->setRowCount(int(models.size()));
    for (int i = 0; i < int(models.size()); ++i) {
        const auto& m = models[models.size() - 1 - std::size_t(i)]; // newest first
        const QStringList cells{QString::number(m.id), QString::fromStdString(m.kind),
                                QString::fromStdString(m.name),
                                QString::fromStdString(m.created_at.substr(0, 19))
                                    .replace(QLatin1Char('T'), QLatin1Char(' '))};
        for (int c = 0; c < 4; ++c) models_table_->setItem(i, c, new QTableWidgetItem(cells[c]));
        if (m.id == selected) models_table_->selectRow(i);
    }
    if (selected < 0 && !models.empty()) models_table_->selectRow(0); // the newest
    models_table_->resizeColumnsToContents();
}

void ModelsPanel::showModel(qint64 id) {
    // Read (and an ALA model, XGBoost's trees as JSON, parsed: a while) off the GUI
    // thread; the one already loaded is not parsed again.
    const QString path = db_;
    const qint64 loaded_id = ala_ ? ala_id_ : -1;
    if (ala_id_ != id) model_chart_->setCurves(tr("model %1").arg(id), tr("loading…"), {});
    jobs_->start(QStringLiteral("model"), this, [this, path, id, loaded_id](JobTracker::Job&) {
        std::optional<store::ModelInfo> m;
        std::shared_ptr<const ala::AlaModel> model;
        std::shared_ptr<ala::Uncertainty> unc;
        QString error;
        try {
            m = store::Store(path.toStdString()).model(id);
            if (!m) {
                error = tr("no model %1 in %2").arg(id).arg(path);
            } else if (m->kind == "ala" && id != loaded_id) {
                const auto j = nlohmann::json::parse(m->params);
                model = std::make_shared<const ala::AlaModel>(ala::AlaModel::fromParsed(j));
                // Models stored with the first, annealed uncertainty (format 1) carry none
                // that tracks error: their curves are drawn without an estimate.
                if (j.contains("uncertainty") && ala::Uncertainty::isCurrent(j["uncertainty"]))
                    unc = std::make_shared<ala::Uncertainty>(
                        ala::Uncertainty::fromJson(j["uncertainty"]));
                m->params.clear(); // parsed: not kept twice
            }
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        return std::function<void()>([this, id, m, model, unc, error] {
            if (!error.isEmpty()) {
                Q_EMIT message(tr("cannot read model %1: %2").arg(id).arg(error));
                model_chart_->setCurves(tr("model %1").arg(id), error, {});
                Q_EMIT modelShown(id, false);
                return;
            }
            const QString title =
                tr("model %1 (%2): %3")
                    .arg(id)
                    .arg(QString::fromStdString(m->kind), QString::fromStdString(m->name));
            if (m->kind != "ala") {
                ala_config_->setVisible(false);
                showModelWarnings(store::modelFitWarnings(*m));
                use_model_->setEnabled(m->kind == "ete");
                Q_EMIT modelShown(id, model_chart_->setModel(title, m->accuracy));
                return;
            }
            ala_name_ = m->name;
            if (model) { // newly parsed (else: the one loaded)
                ala_ = model;
                ala_unc_ = unc;
                ala_id_ = id;
                ala_accuracy_ = m->accuracy;
                const QSignalBlocker block(ala_config_);
                ala_config_->clear();
                for (const auto& k : model->configurations())
                    ala_config_->addItem(QString::fromStdString(k));
            }
            ala_config_->setVisible(true);
            plotAlaConfiguration(ala_config_->currentText());
            use_model_->setEnabled(true);
            Q_EMIT modelShown(id, true);
        });
    });
}

void ModelsPanel::plotAlaConfiguration(const QString& key) {
    if (!ala_ || key.isEmpty()) return;
    const std::string k = key.toStdString();
    const auto& db = ala_->database(k);
    const ala::BenchRow* cfg = ala_->fields(k);
    if (!cfg) return;
    // Batch sizes 1 to 64 (the fits do not keep their batch range; LLM-Inference-Bench
    // measures 1 to 64).
    const int max_bb = 64;
    std::vector<views::ModelChart::Curve> curves;
    auto curve = [&](int ii, int oo) {
        const ala::Prediction p = ala_->parameters(*cfg, ii, oo);
        views::ModelChart::Curve c;
        c.measured = p.source == ala::Source::Measured;
        for (int bb = 1; bb <= max_bb; ++bb) {
            c.batch.push_back(bb);
            c.throughput.push_back(std::max(0.0, p.at(bb)));
        }
        if (c.measured) {
            c.name = tr("%1/%2 fit ≤ %3 %").arg(ii).arg(oo).arg(p.fit.max_abs_pct, 0, 'f', 1);
        } else {
            c.name = tr("%1/%2 ← %3/%4").arg(ii).arg(oo).arg(p.anchor.first).arg(p.anchor.second);
            if (ala_unc_) {
                // The pair as a workload at the anchor's batch sizes: the stored error
                // predictor's estimate and the confidence.
                std::vector<ala::BenchRow> w;
                const auto& anchor_db = ala_->database(p.anchor_config);
                const auto an = anchor_db.find(p.anchor);
                for (int bb : an != anchor_db.end() ? an->second.batches : std::vector<int>{1}) {
                    ala::BenchRow r = *cfg;
                    r.ii = ii;
                    r.oo = oo;
                    r.bb = bb;
                    w.push_back(r);
                }
                c.name += tr("  error ≈ %1 %, conf. %2")
                              .arg(ala_unc_->predictedError(*ala_, w), 0, 'f', 1)
                              .arg(ala_unc_->confidence(*ala_, w), 0, 'f', 2);
            }
        }
        curves.push_back(std::move(c));
    };
    std::vector<std::pair<int, int>> pairs;
    for (const auto& [pair, f] : db) pairs.push_back(pair);
    for (const auto& [ii, oo] : pairs) curve(ii, oo);
    // Unseen pairs between measured diagonal neighbours (geometric midpoints), predicted.
    for (std::size_t i = 0; i + 1 < pairs.size() && curves.size() < 10; ++i) {
        const auto [a, b] = pairs[i];
        const auto [c, d] = pairs[i + 1];
        if (a != b || c != d) continue;
        const int mid = int(std::lround(std::sqrt(double(a) * c)));
        curve(mid, mid);
    }
    // The configuration's held-out error, when fit ala stored one.
    QString note;
    const auto acc = nlohmann::json::parse(ala_accuracy_, nullptr, false);
    if (acc.is_object() && acc.contains("configurations"))
        for (const auto& c : acc["configurations"])
            if (c.value("configuration", std::string()) == k && c.contains("ala_pct")) {
                std::vector<double> e;
                for (const auto& x : c["ala_pct"])
                    if (x.is_number()) e.push_back(x.get<double>());
                if (e.empty()) break;
                std::sort(e.begin(), e.end());
                note = tr("held-out median error %1 % (%2 rows)\nall configurations: %3 %")
                           .arg(e[e.size() / 2], 0, 'f', 1)
                           .arg(e.size())
                           .arg(acc.value("ala_median_pct", NAN), 0, 'f', 1);
            }
    model_chart_->setCurves(tr("ALA model %1 (dashed: predicted)").arg(ala_id_), note, curves);
    store::ModelInfo info;
    info.id = ala_id_;
    info.kind = "ala";
    info.name = ala_name_;
    info.accuracy = ala_accuracy_;
    showModelWarnings(store::modelFitWarnings(info, k));
}

void ModelsPanel::showModelWarnings(const std::vector<std::string>& warnings) {
    QStringList lines;
    for (const auto& w : warnings) lines << QString::fromStdString(w);
    model_warning_->setText(lines.join(QLatin1Char('\n')));
    model_warning_->setVisible(!lines.isEmpty());
}

} // namespace kairos::app
