#include "param_slider.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <algorithm>
#include <cmath>

namespace kairos::views {

namespace {
constexpr int kSteps = 1000;
}

ParamSlider::ParamSlider(const QString& label, double lo, double hi, double value, int decimals,
                         bool log_scale, QWidget* parent)
    : QWidget(parent), lo_(lo), hi_(hi), value_(std::clamp(value, lo, hi)), box_lo_(lo),
      box_hi_(hi), log_(log_scale) {
    auto* l = new QHBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    label_ = new QLabel(label, this);
    label_->setMinimumWidth(90);
    slider_ = new QSlider(Qt::Horizontal, this);
    slider_->setRange(0, kSteps);
    slider_->setValue(toStep(value_));
    spin_ = new QDoubleSpinBox(this);
    spin_->setRange(lo, hi);
    spin_->setDecimals(decimals);
    spin_->setSingleStep(std::pow(10.0, -decimals));
    spin_->setValue(value_);
    spin_->setKeyboardTracking(false);
    unit_ = std::pow(10.0, -decimals);
    fitStep();
    l->addWidget(label_);
    l->addWidget(slider_, 1);
    l->addWidget(spin_);
    label_->setBuddy(slider_);
    // A slider step gives the value its box shows (rounded to the box's decimals), never one
    // the box hides (C = 0.797 under a box reading 0.80). A value set from data (a workload's
    // utility function, a session) keeps its digits.
    connect(slider_, &QSlider::valueChanged, this, [this](int s) {
        if (!syncing_) setValue(spin_->valueFromText(spin_->textFromValue(fromStep(s))));
    });
    connect(spin_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this](double v) {
        if (!syncing_) setValue(v);
    });
}

// A slider step moves the value by at least one of the box's units (the value is what the
// box shows): the wheel and the arrow keys are never swallowed by the rounding. On a log
// scale a step's size grows with the value, so it is fitted to the value at hand.
void ParamSlider::fitStep() {
    const double finest =
        log_ ? value_ * (std::pow(hi_ / lo_, 1.0 / kSteps) - 1) : (hi_ - lo_) / kSteps;
    const int step = finest > 0 ? std::max(1, int(std::ceil(unit_ / finest - 1e-9))) : 1;
    slider_->setSingleStep(std::min(step, kSteps));
    slider_->setPageStep(std::min(std::max(step, kSteps / 10), kSteps));
}

void ParamSlider::setBoxRange(double lo, double hi) {
    box_lo_ = std::min(lo, lo_);
    box_hi_ = std::max(hi, hi_);
    // The slider range's width and a digit more (a value past its end shows whole up to ten
    // times it), not the domain's: 1e9 made every box as wide as its slider.
    spin_->setFixedWidth(spin_->sizeHint().width() +
                         spin_->fontMetrics().horizontalAdvance(QLatin1Char('0')));
    syncing_ = true;
    spin_->setRange(box_lo_, box_hi_);
    spin_->setValue(value_);
    syncing_ = false;
}

int ParamSlider::toStep(double v) const {
    if (v <= lo_) return 0; // (and below a log scale's start, where log() has no answer)
    if (v >= hi_) return kSteps;
    const double f = log_ ? std::log(v / lo_) / std::log(hi_ / lo_) : (v - lo_) / (hi_ - lo_);
    return static_cast<int>(std::lround(std::clamp(f, 0.0, 1.0) * kSteps));
}

double ParamSlider::fromStep(int s) const {
    const double f = double(s) / kSteps;
    return log_ ? lo_ * std::pow(hi_ / lo_, f) : lo_ + f * (hi_ - lo_);
}

void ParamSlider::setValue(double v) {
    v = std::clamp(v, box_lo_, box_hi_);
    syncing_ = true;
    slider_->setValue(toStep(v));
    spin_->setValue(v);
    syncing_ = false;
    if (v == value_) return;
    value_ = v;
    if (log_) fitStep();
    Q_EMIT valueChanged(v);
}

} // namespace kairos::views
