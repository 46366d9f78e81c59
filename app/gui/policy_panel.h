#pragma once
// The Policy panel: the workload (its name, Open and Generate, the prompt/output length
// histograms), the policy, predictor and device, a slider per parameter (a policy's from
// the registry, the run's own: KV capacity, seats, arrival rate, SLOs), each class's
// time-utility sliders, and the clicked request's card. It follows the shared state
// itself (the workload's name, histogram and classes; the selected request in the shown
// and pinned runs); the window reacts to its signals (it re-simulates on every change).
#include "run/run_spec.h"
#include "sched/registry.h"

#include <QElapsedTimer>
#include <QString>
#include <QWidget>
#include <functional>
#include <map>
#include <string>
#include <vector>

class QCheckBox;
class QComboBox;
class QGroupBox;
class QSpinBox;
class QLabel;

class QScrollArea;

namespace kairos {
struct Workload;
}

namespace kairos::views {
class LengthHistogram;
class ParamSlider;
} // namespace kairos::views

namespace kairos::app {

class WorkbenchState;

// A slider: parameter name, label, tooltip, range, default, decimals, log scale, and the
// policies it applies to (empty: every run).
struct SliderSpec {
    std::string name, label, tooltip;
    double lo, hi, value;
    int decimals;
    bool log;
    std::vector<std::string> policies;
    // What its box accepts: the parameter's domain (RunSpec::validate's), wider than the
    // slider's explored range [lo, hi]; the run's knobs: that range.
    double box_lo = 0, box_hi = 0;
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
    // Follow `state`: its workload (name, lengths, one pair of TUF sliders per class with
    // a time-utility function) and the selected request's card in the shown run (with the
    // pinned run's same request when comparable); a failed run's error in the card.
    void attach(WorkbenchState* state);

    QString policy() const;
    void setPolicy(const QString& name); // emits policyChanged when it changes
    bool knowsPolicy(const QString& name) const;
    QString predictor() const;
    void setPredictor(const QString& spec);
    // The slider of a parameter (sliderSpecs' names), nullptr if none.
    views::ParamSlider* slider(const QString& name) const;
    // Whether `policy`'s parameter `name` is set by a slider (one of that name that applies
    // to it: timebill's alpha is not α-protection's slider).
    bool sliderSets(const std::string& policy, const std::string& name) const;
    // A line under the slider's own tooltip: why it is greyed, or why it cannot change the
    // run shown ("" clears it).
    void setSliderNote(const QString& name, const QString& note);
    // Whether a request picked brings its card into view (scrolling the panel): not while
    // the window tells its story elsewhere in view (the Inspector), where scrolling the
    // panel away from the sliders only lost the user's place. Unset: always.
    void setRevealCardWhen(std::function<bool()> when) { reveal_when_ = std::move(when); }
    // The parameter table: every registered parameter of the current policy without a
    // slider (name, value, unit, accepted values; its help as the tooltip), showing `values`
    // where given and the registry's default otherwise. Editing a value emits paramEdited.
    void showOtherParams(const PolicyParams& values);
    class QTableWidget* paramTable() const {
        return params_;
    }
    const std::map<QString, views::ParamSlider*>& sliders() const { return sliders_; }
    // A class's ERT and zero-utility-time sliders ({nullptr, nullptr}: none), and all.
    std::pair<views::ParamSlider*, views::ParamSlider*> tufSliders(const std::string& cls) const;
    const std::map<std::string, std::pair<views::ParamSlider*, views::ParamSlider*>>&
    allTufSliders() const {
        return tuf_sliders_;
    }
    // How the run is served: prefix caching (vLLM's automatic prefix caching, 16-token
    // blocks), the replicas behind a router (1: one engine, the router unused).
    bool prefixCaching() const;
    void setPrefixCaching(bool on);
    // Whether the user has set Caching (by hand or with a session): the window then no
    // longer sets it for the workload.
    bool cachingChosen() const { return caching_chosen_; }
    // Whether the user (or a session, or a stored run) picked the policy or the seats.
    bool policyChosen() const { return policy_chosen_; }
    int replicas() const;
    void setReplicas(int n);
    QString router() const;
    void setRouter(const QString& name); // one of kRouterNames
    // The run's settings as the panel has them: prefix caching (in kPrefixCacheBlockSize
    // blocks) into `limits`, replicas and router into `fleet`.
    void servingInto(bool* prefix_caching, std::int32_t* block_size,
                     RunSpec::FleetPart* fleet) const;
    // The run as the panel sets it, written into `spec`: the policy, predictor and the
    // sliders of its parameters; the run knobs (run/knobs.h: KV capacity as a multiple of
    // `profile_kv`, seats, the trace's rate scaled, the SLOs); serving; and each class's
    // utility function once its sliders were moved. The workload's path is the caller's.
    void specInto(RunSpec* spec, std::int64_t profile_kv) const;
    // The panel set from `spec` (a session, a stored run): the inverse of specInto. Each
    // control that changes signals as the user's change would.
    void applySpec(const RunSpec& spec, std::int64_t profile_kv);
    // The device in use: a shipped profile by name, or a stored model (id > 0) on it.
    void showDevice(const QString& profile, qint64 stored_model = 0);
    QString cardText() const;
    // Widgets for tests and the window's chart export.
    QComboBox* policyBox() const { return policy_; }
    QComboBox* deviceBox() const { return device_; }
    views::LengthHistogram* histogram() const { return histogram_; }

Q_SIGNALS:
    void openRequested();
    void generateRequested();
    void sweepRequested(const QString& param); // a slider's "Sweep this parameter"
    void policyChanged(const QString& policy);
    void predictorChanged(const QString& predictor);
    void paramMoved(const QString& name, double value); // a slider
    void tufMoved(const QString& what);                 // a class's TUF slider ("urgent ERT")
    void deviceChosen(const QString& profile);          // a shipped profile picked
    void servingChanged(const QString& what);           // "caching", "replicas" or "router" changed
    // A parameter without a slider edited in the parameter table (its value checked against
    // the registry's domain first).
    void paramEdited(const QString& name, double value);
    // The scrolling panel's viewport must be this wide to show the parameter table whole
    // (its names and values unwrapped, its units and accepted values wrapped at spaces).
    void tableWidthNeeded(int viewport_width);
    void message(const QString& text); // for the status bar

protected:
    bool eventFilter(QObject* o, QEvent* e) override;

private:
    void fitParamTable(); // every row and column in view, wrapping when the dock is narrow
    void showWorkload();
    void rebuildTufSliders(const Workload& w);
    void showCard();
    void enableParams();

    WorkbenchState* state_ = nullptr;
    QLabel* workload_label_ = nullptr;
    views::LengthHistogram* histogram_ = nullptr;
    QComboBox *policy_ = nullptr, *predictor_ = nullptr, *device_ = nullptr;
    QCheckBox* caching_ = nullptr;
    QSpinBox* replicas_ = nullptr;
    QComboBox* router_ = nullptr;
    QGroupBox* tuf_box_ = nullptr;
    QGroupBox* params_box_ = nullptr;
    class QTableWidget* params_ = nullptr;
    bool filling_params_ = false;
    int card_shown_for_ = -1;    // the request whose card was last brought into view
    QElapsedTimer reveal_until_; // since the last pick: the card is kept in view a while
    void revealCard();
    std::function<bool()> reveal_when_;
    QScrollArea* scrollArea() const;
    bool range_watched_ = false;
    QLabel* details_ = nullptr;
    std::map<QString, views::ParamSlider*> sliders_;
    std::map<std::string, std::pair<views::ParamSlider*, views::ParamSlider*>> tuf_sliders_;
    std::map<std::string, std::pair<double, double>> tuf_initial_; // as the workload has them
    bool caching_chosen_ = false;
    bool policy_chosen_ = false;
};

} // namespace kairos::app
