#pragma once
// The Models panel: the database's fitted models (an ETE or ALA model per row, newest
// first) and the selected one plotted. An ETE model as predicted against measured time per
// fit (held-out rows hollow); an ALA model as throughput against batch size for the
// configuration chosen above the chart (measured pairs solid, unseen pairs predicted
// dashed, with the stored error predictor's estimate and confidence, and each curve's
// prediction interval as a band when the model stored its range), with the model's own
// fit warnings under it. Below, a configuration it never measured (NewHardwareBox): its
// estimate and range, fitted to the user's measured rows as they are typed in. Reading and
// parsing run on the window's job tracker; "Simulate with this model" asks the window to
// use the shown model as the execution model.
#include "jobs.h"
#include "store/store.h"

#include <QWidget>
#include <memory>
#include <set>
#include <string>
#include <vector>

class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace kairos::ala {
class AlaModel;
class RangePredictor;
class Uncertainty;
} // namespace kairos::ala

namespace kairos::views {
class ModelChart;
}

namespace kairos::app {

class NewHardwareBox;

class ModelsPanel : public QWidget {
    Q_OBJECT
public:
    ModelsPanel(JobTracker* jobs, QString db, QWidget* parent = nullptr);
    ~ModelsPanel() override;
    // The database's models (from the window's read of the runs); the selection is kept
    // by id, else the newest is selected.
    void setModels(const std::vector<store::ModelInfo>& models);
    // Reads the model (an ALA model parsed once) and plots it: modelShown(id, ok).
    void showModel(qint64 id);
    bool loading() const { return jobs_->busy(QStringLiteral("model")); }
    QTableWidget* table() const { return models_table_; }
    views::ModelChart* chart() const { return model_chart_; }
    QComboBox* configBox() const { return ala_config_; }
    NewHardwareBox* newHardwareBox() const { return new_hw_; }

Q_SIGNALS:
    void modelShown(qint64 id, bool ok);
    void useModel(qint64 id, const QString& ala_config); // Simulate with this model
    void message(const QString& text);                   // for the status bar

private:
    // The configuration chooser names the configuration the chart shows.
    void showChosenConfiguration();
    int picked_before_new_ = 0;

    void plotAlaConfiguration(const QString& key);
    void plotNewConfiguration(); // the new-hardware box's configuration, with its range
    void showModelWarnings(const std::vector<std::string>& warnings);

    JobTracker* jobs_;
    QString db_;
    QTableWidget* models_table_ = nullptr;
    views::ModelChart* model_chart_ = nullptr;
    QComboBox* ala_config_ = nullptr;
    QLabel* model_warning_ = nullptr; // under the chart: a poor fit
    QPushButton* use_model_ = nullptr;
    std::shared_ptr<const ala::AlaModel> ala_;  // the ALA model shown
    std::shared_ptr<ala::Uncertainty> ala_unc_; // its error predictor and confidence, if stored
    // Its range for what it never measured (fit ala --db stores it); null for models stored
    // before ranges. Holds `ala_` alive with it.
    struct Range;
    std::shared_ptr<Range> range_;
    NewHardwareBox* new_hw_ = nullptr;
    qint64 ala_id_ = -1;
    std::string ala_accuracy_, ala_name_;
    std::set<int> ala_batches_; // every batch size the shown model's fits measured
};

} // namespace kairos::app
