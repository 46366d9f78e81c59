#pragma once
// The Policy panel: the workload (its name, Open and Generate, the prompt/output length
// histograms), the policy, predictor and device, a slider per parameter (a policy's from
// the registry, the run's own: KV capacity, seats, arrival rate, SLOs), each class's
// time-utility sliders, and the clicked request's card. The window reacts to its
// controls (it re-simulates on every change); the panel decides nothing itself.
#include "sched/registry.h"

#include <QString>
#include <QWidget>
#include <map>
#include <string>
#include <vector>

class QComboBox;
class QGroupBox;
class QLabel;

namespace kairos::views {
class LengthHistogram;
class ParamSlider;
} // namespace kairos::views

namespace kairos::app {

// A slider: parameter name, label, tooltip, range, default, decimals, log scale, and the
// policies it applies to (empty: every run).
struct SliderSpec {
    std::string name, label, tooltip;
    double lo, hi, value;
    int decimals;
    bool log;
    std::vector<std::string> policies;
};
// Every slider: the policies' (the parameters the registry marks `slider`), then the run's.
const std::vector<SliderSpec>& sliderSpecs();
bool appliesTo(const SliderSpec& s, const std::string& policy);

class PolicyPanel : public QWidget {
    Q_OBJECT
public:
    // The start-up policy, predictor and device profile; `params` (from --param) set the
    // sliders they name.
    PolicyPanel(const QString& policy, const QString& predictor, const QString& profile,
                const PolicyParams& params, QWidget* parent = nullptr);
    QLabel* workloadLabel() const { return workload_label_; }
    views::LengthHistogram* histogram() const { return histogram_; }
    QComboBox* policyBox() const { return policy_; }
    QComboBox* predictorBox() const { return predictor_; }
    QComboBox* deviceBox() const { return device_; }
    QGroupBox* tufBox() const { return tuf_box_; }
    QLabel* details() const { return details_; }
    const std::map<QString, views::ParamSlider*>& sliders() const { return sliders_; }

Q_SIGNALS:
    void openRequested();
    void generateRequested();
    void sweepRequested(const QString& param); // a slider's "Sweep this parameter"

private:
    QLabel* workload_label_ = nullptr;
    views::LengthHistogram* histogram_ = nullptr;
    QComboBox *policy_ = nullptr, *predictor_ = nullptr, *device_ = nullptr;
    QGroupBox* tuf_box_ = nullptr;
    QLabel* details_ = nullptr;
    std::map<QString, views::ParamSlider*> sliders_;
};

} // namespace kairos::app
