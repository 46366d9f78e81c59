#include "models_panel.h"

#include "chart_tools.h"
#include "fit/ala.h"
#include "fit/ala_transfer.h"
#include "model_chart.h"
#include "new_hardware_box.h"
#include "util/json_line.h"

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
#include <set>

namespace kairos::app {

struct ModelsPanel::Range {
    std::shared_ptr<const ala::AlaModel> model; // the predictor refers to it
    std::unique_ptr<ala::RangePredictor> predictor;
    double coverage = 0.8;
};

namespace {
constexpr int kMaxBatch = 64; // drawn when nothing says how far: most of the bench's range

// "x0.42-x2.9": an interval as factors on the estimate.
QString factors(double lo, double hi) {
    return QStringLiteral("×%1–%2")
        .arg(lo, 0, 'g', 2)
        .arg(std::isfinite(hi) ? QStringLiteral("×%1").arg(hi, 0, 'g', 2) : QStringLiteral("∞"));
}
} // namespace

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
    views::sayWhenEmpty(
        model_chart_,
        tr("No model shown. Pick one in the table above; the database gets them from kairos-cli "
           "fit (ETE and ALA models) and kairos-cli profile, with --db. Its predicted against "
           "measured times are drawn here."));
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
    connect(ala_config_, &QComboBox::currentTextChanged, this, [this] {
        {
            const QSignalBlocker block(new_hw_);
            new_hw_->setChecked(false); // a trained configuration chosen: it is shown
        }
        showChosenConfiguration();
        plotAlaConfiguration(ala_config_->currentText());
    });
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
    new_hw_ = new NewHardwareBox;
    new_hw_->setVisible(false);
    chart_layout->addWidget(new_hw_);
    chart_layout->addWidget(use_model_);
    connect(new_hw_, &NewHardwareBox::changed, this, [this] {
        showChosenConfiguration();
        if (new_hw_->isChecked())
            plotNewConfiguration();
        else
            plotAlaConfiguration(ala_config_->currentText());
    });
    auto* msplit = new QSplitter(Qt::Vertical);
    msplit->addWidget(models_table_);
    msplit->addWidget(chart_box);
    msplit->setSizes({120, 500});
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
        std::shared_ptr<Range> range;
        QString error;
        try {
            m = store::Store(path.toStdString()).model(id);
            if (!m) {
                error = tr("no model %1 in %2").arg(id).arg(path);
            } else if (m->kind == "ala" && id != loaded_id) {
                const auto j = parseJsonDocument(m->params, path.toStdString() + ": model");
                model = std::make_shared<const ala::AlaModel>(ala::AlaModel::fromParsed(j));
                // Models stored with the first, annealed uncertainty (format 1) carry none
                // that tracks error: their curves are drawn without an estimate.
                if (j.contains("uncertainty") && ala::Uncertainty::isCurrent(j["uncertainty"]))
                    unc = std::make_shared<ala::Uncertainty>(
                        ala::Uncertainty::fromJson(j["uncertainty"]));
                // Models stored before ranges (no "unseen") draw no bands.
                if (j.contains("unseen") && j.contains("spec")) {
                    range = std::make_shared<Range>();
                    range->model = model;
                    range->predictor = std::make_unique<ala::RangePredictor>(
                        *model, ala::UnseenEstimator::fromJson(j["unseen"]),
                        ala::SpecModel::fromJson(j["spec"]));
                    range->coverage = j.value("coverage", 0.8);
                }
                m->params.clear(); // parsed: not kept twice
            }
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        return std::function<void()>([this, id, m, model, unc, range, error] {
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
                new_hw_->setVisible(false);
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
                range_ = range;
                ala_batches_.clear();
                for (const auto& k : model->configurations())
                    for (const auto& [pair, f] : model->database(k))
                        ala_batches_.insert(f.batches.begin(), f.batches.end());
                const QSignalBlocker block(ala_config_);
                ala_config_->clear();
                std::set<std::string> fw, md, hw, pr;
                for (const auto& k : model->configurations()) {
                    ala_config_->addItem(QString::fromStdString(k));
                    if (const ala::BenchRow* f = model->fields(k)) {
                        fw.insert(f->framework);
                        md.insert(f->model);
                        hw.insert(f->hardware);
                        pr.insert(f->precision);
                    }
                }
                // Every chip of the spec-sheet tables, one device, beside the model's own.
                for (const auto& [chip, acc] : model->options().descriptors.accelerators())
                    hw.insert(acc.chip + " x1");
                auto list = [](const std::set<std::string>& v) {
                    return std::vector<std::string>(v.begin(), v.end());
                };
                new_hw_->setChoices(list(fw), list(md), list(hw), list(pr));
                new_hw_->setEnabled(range_ != nullptr);
                new_hw_->setToolTip(range_ ? QString()
                                           : tr("This model was stored before ranges: store it "
                                                "again with kairos-cli fit ala --db to predict "
                                                "what it never measured"));
            }
            ala_config_->setVisible(true);
            new_hw_->setVisible(true);
            showChosenConfiguration();
            if (new_hw_->isChecked() && range_)
                plotNewConfiguration();
            else
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
    // Batch sizes 1 to the largest any of the configuration's fits measured (64 for models
    // stored before fits kept their batch sizes).
    int max_bb = 0;
    for (const auto& [pair, f] : db)
        for (int bb : f.batches) max_bb = std::max(max_bb, bb);
    if (max_bb <= 1) max_bb = kMaxBatch;
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
        if (range_) {
            // The interval is a constant factor on a pair's curve (its curve's largest error,
            // or the pair hold-outs'): read once.
            ala::BenchRow q = *cfg;
            q.ii = ii;
            q.oo = oo;
            q.bb = 1;
            const ala::RangePrediction rp = range_->predictor->predict(q, range_->coverage);
            const double lo = rp.predicted > 0 ? rp.lo / rp.predicted : 0,
                         hi = rp.predicted > 0 ? rp.hi / rp.predicted : INFINITY;
            for (double y : c.throughput) {
                c.lo.push_back(y * lo);
                c.hi.push_back(y * hi);
            }
            if (!c.measured) c.name += tr("  %1").arg(factors(lo, hi));
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
    const auto acc = parseJsonLenient(ala_accuracy_);
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
    if (range_)
        note += QString(note.isEmpty() ? "" : "\n") +
                tr("bands: %1 % intervals (measured pairs: the curve's largest error)")
                    .arg(100 * range_->coverage, 0, 'f', 0);
    model_chart_->setCurves(tr("ALA model %1 (dashed: predicted)").arg(ala_id_), note, curves);
    use_model_->setEnabled(true);
    store::ModelInfo info;
    info.id = ala_id_;
    info.kind = "ala";
    info.name = ala_name_;
    info.accuracy = ala_accuracy_;
    showModelWarnings(store::modelFitWarnings(info, k));
}

void ModelsPanel::plotNewConfiguration() {
    if (!ala_ || !range_) return;
    ala::RangePredictor& range = *range_->predictor;
    const ala::BenchRow cfg = new_hw_->configuration();
    QStringList problems;
    const std::vector<ala::BenchRow> rows = new_hw_->measurements(&problems);
    range.clearCalibration();
    const std::string key = ala::configKey(cfg, ala_->options().columns);
    const bool trained = range.unseen().novelty(cfg) == ala::Novelty::Pair;
    if (!rows.empty() && !trained) range.calibrateWith(rows);
    // The pairs drawn: those measured (up to four), else two of the bench's diagonal.
    std::vector<std::pair<int, int>> pairs;
    for (const auto& r : rows)
        if (pairs.size() < 4 &&
            std::find(pairs.begin(), pairs.end(), std::make_pair(r.ii, r.oo)) == pairs.end())
            pairs.emplace_back(r.ii, r.oo);
    if (pairs.empty()) pairs = {{128, 128}, {1024, 1024}};
    std::sort(pairs.begin(), pairs.end());
    // At the batch sizes the training measured and the user's rows: the estimate is
    // XGBoost's, a step function of batch between them, so points between would only draw
    // its steps.
    std::set<int> batch_set = ala_batches_;
    for (const auto& r : rows) batch_set.insert(r.bb);
    if (batch_set.size() < 2)
        for (int bb = 1; bb <= kMaxBatch; bb *= 2) batch_set.insert(bb);
    std::vector<int> batches(batch_set.begin(), batch_set.end());
    if (batches.size() > 128) batches.resize(128); // a user's rows at many batch sizes
    std::vector<views::ModelChart::Curve> curves;
    ala::RangePrediction first;
    for (const auto& [ii, oo] : pairs) {
        views::ModelChart::Curve c;
        c.measured = false;
        for (int bb : batches) {
            ala::BenchRow q = cfg;
            q.ii = ii;
            q.oo = oo;
            q.bb = bb;
            const ala::RangePrediction rp = range.predict(q, range_->coverage);
            if (curves.empty() && bb == 1) first = rp;
            c.batch.push_back(bb);
            c.throughput.push_back(std::max(0.0, rp.predicted));
            c.lo.push_back(std::max(0.0, rp.lo));
            c.hi.push_back(rp.hi);
        }
        for (const auto& r : rows)
            if (r.ii == ii && r.oo == oo) {
                c.points_batch.push_back(r.bb);
                c.points_throughput.push_back(r.thpt);
            }
        c.name = tr("%1/%2").arg(ii).arg(oo);
        curves.push_back(std::move(c));
    }
    const QString novelty = QString::fromLatin1(ala::noveltyName(first.novelty));
    QString note;
    if (trained) {
        note = tr("ALA measured this configuration:\npick it in the list above");
    } else {
        // Short lines: the title is centred over the chart and is not elided.
        note = tr("new %1 · %2 % range %3")
                   .arg(novelty)
                   .arg(100 * range_->coverage, 0, 'f', 0)
                   .arg(first.predicted > 0
                            ? factors(first.lo / first.predicted, first.hi / first.predicted)
                            : QStringLiteral("?"));
        note += QLatin1Char('\n') + QString::fromStdString(first.estimate);
    }
    model_chart_->setCurves(
        tr("ALA model %1 · %2").arg(ala_id_).arg(QString::fromStdString(cfg.hardware)), note,
        curves);
    model_chart_->setToolTip(QString::fromStdString(key) + QLatin1Char('\n') +
                             tr("range from %1").arg(QString::fromStdString(first.from)));
    QString status;
    if (const ala::Calibration* c = range.calibration(key)) {
        status = tr("fitted to %n measured row(s): level ×%1, batch slope %2, length slope %3",
                    nullptr, int(c->rows))
                     .arg(std::exp(c->level), 0, 'g', 3)
                     .arg(c->slope_batch, 0, 'f', 2)
                     .arg(c->slope_length, 0, 'f', 2);
        // The rows' own error score: ranks configurations (Spearman 0.55-0.73 held out by
        // vendor), it is not the band.
        if (std::isfinite(first.error_pct))
            status += tr("\nerror score %1 % (the rows left out in turn, and a second "
                         "estimate's disagreement): high means measure more")
                          .arg(first.error_pct, 0, 'f', 0);
    } else if (!trained)
        status = tr("no measured rows: the zero-shot estimate and its range");
    if (!problems.isEmpty()) status += QLatin1Char('\n') + problems.join(QLatin1Char('\n'));
    new_hw_->setStatus(status);
    showModelWarnings({});
    // The simulator runs ALA's trained curves only.
    use_model_->setEnabled(false);
}

void ModelsPanel::showChosenConfiguration() {
    // The chooser names what the chart shows: the new configuration while the box is on
    // (an entry of its own, the trained ones out of reach), the trained one picked after.
    const QSignalBlocker block(ala_config_);
    const int at = ala_config_->findData(QStringLiteral("new"));
    if (new_hw_->isChecked() && ala_) {
        const QString key = tr("new: %1").arg(QString::fromStdString(
            ala::configKey(new_hw_->configuration(), ala_->options().columns)));
        if (at < 0) {
            picked_before_new_ = ala_config_->currentIndex();
            ala_config_->addItem(key, QStringLiteral("new"));
        } else {
            ala_config_->setItemText(at, key);
        }
        ala_config_->setCurrentIndex(ala_config_->findData(QStringLiteral("new")));
        ala_config_->setToolTip(tr("The configuration of New hardware below, not one ALA "
                                   "measured: pick one of those to plot it instead"));
    } else if (at >= 0) {
        // Back to the trained one shown before, unless one was just picked.
        const bool was_new = ala_config_->currentIndex() == at;
        ala_config_->removeItem(at);
        if (was_new) ala_config_->setCurrentIndex(std::max(0, picked_before_new_));
        ala_config_->setToolTip(tr("The ALA model's configuration to plot"));
    }
}

void ModelsPanel::showModelWarnings(const std::vector<std::string>& warnings) {
    QStringList lines;
    for (const auto& w : warnings) lines << QString::fromStdString(w);
    model_warning_->setText(lines.join(QLatin1Char('\n')));
    model_warning_->setVisible(!lines.isEmpty());
}

} // namespace kairos::app
