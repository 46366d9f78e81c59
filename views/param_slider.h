#pragma once
// One double parameter as a slider with a spin box beside it (both edit the same value). A
// slider step gives the value its box shows (rounded to the box's decimals); a value set from
// data keeps its digits. The slider has 1,000 steps over [lo, hi], linear or logarithmic.
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
    QSlider* slider() const { return slider_; }
    QDoubleSpinBox* spinBox() const { return spin_; }

Q_SIGNALS:
    void valueChanged(double v);

private:
    void fitStep();
    int toStep(double v) const;
    double fromStep(int s) const;

    double lo_, hi_, value_;
    double unit_ = 1; // the box's smallest step (10^-decimals)
    bool log_;
    QLabel* label_;
    QSlider* slider_;
    QDoubleSpinBox* spin_;
    bool syncing_ = false;
};

} // namespace kairos::views
