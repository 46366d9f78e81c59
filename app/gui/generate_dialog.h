#pragma once
// Generate a workload in the workbench: chat requests with Poisson or bursty (gamma)
// arrivals and lengths from distributions or from a trace file, or robot workloads shaped
// like TimelyLLM's WID1-3 (core/workload generators; the same as kairos-cli generate).
#include "model/workload.h"

#include <QDialog>

class QComboBox;
class QSpinBox;
class QDoubleSpinBox;
class QLineEdit;
class QLabel;

namespace kairos::app {

class GenerateDialog : public QDialog {
    Q_OBJECT
public:
    explicit GenerateDialog(QWidget* parent = nullptr);
    // The workload the dialog describes; throws std::invalid_argument / InputError.
    Workload generate() const;
    QComboBox* kindBox() const { return kind_; }

    void accept() override; // validates by generating; stays open with the error shown

private:
    void updateEnabled();

    QComboBox* kind_;
    QSpinBox *count_, *seed_;
    QDoubleSpinBox *rate_, *burstiness_;
    QLineEdit *prompt_, *output_, *lengths_;
    QLabel* error_;
};

} // namespace kairos::app
