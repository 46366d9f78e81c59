#pragma once
// One double parameter as a slider with a spin box beside it (both edit the same value). A
// slider step gives the value its box shows (rounded to the box's decimals); a value set from
// data keeps its digits. The slider has 1,000 steps over [lo, hi], linear or logarithmic; the
// box may accept a wider range (setBoxRange: the parameter's whole domain), a value beyond
// the slider's range holding the slider at its end.
#include <QWidget>

class QSlider;
class QDoubleSpinBox;
class QLabel;

namespace kairos::views {

class ParamSlider : public QWidget {
    Q_OBJECT
public:
    ParamSlider(const QString& label, double lo, double hi, double value, int decimals,
                bool log_scale = false, QWidget* parent = nullptr);
    double value() const { return value_; }
    void setValue(double v); // emits valueChanged if it changes
    // What the box accepts, around the slider's range (typed "120" for a budget whose
    // slider ends at 60 s read "12.00": the box dropped the keystroke past its maximum, and
    // --param C=5 became 1). Its width stays the slider range's.
    void setBoxRange(double lo, double hi);
    QSlider* slider() const { return slider_; }
    QDoubleSpinBox* spinBox() const { return spin_; }

Q_SIGNALS:
    void valueChanged(double v);

private:
    void fitStep();
    int toStep(double v) const;
    double fromStep(int s) const;

    double lo_, hi_, value_;
    double box_lo_, box_hi_; // the box's range (setBoxRange), around [lo_, hi_]
    double unit_ = 1;        // the box's smallest step (10^-decimals)
    bool log_;
    QLabel* label_;
    QSlider* slider_;
    QDoubleSpinBox* spin_;
    bool syncing_ = false;
};

} // namespace kairos::views
