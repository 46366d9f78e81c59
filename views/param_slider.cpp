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
    : QWidget(parent), lo_(lo), hi_(hi), value_(std::clamp(value, lo, hi)), log_(log_scale) {
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
    l->addWidget(label_);
    l->addWidget(slider_, 1);
    l->addWidget(spin_);
    label_->setBuddy(slider_);
    connect(slider_, &QSlider::valueChanged, this, [this](int s) {
        if (!syncing_) setValue(fromStep(s));
    });
    connect(spin_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, [this](double v) {
        if (!syncing_) setValue(v);
    });
}

int ParamSlider::toStep(double v) const {
    const double f = log_ ? std::log(v / lo_) / std::log(hi_ / lo_) : (v - lo_) / (hi_ - lo_);
    return static_cast<int>(std::lround(std::clamp(f, 0.0, 1.0) * kSteps));
}

double ParamSlider::fromStep(int s) const {
    const double f = double(s) / kSteps;
    return log_ ? lo_ * std::pow(hi_ / lo_, f) : lo_ + f * (hi_ - lo_);
}

void ParamSlider::setValue(double v) {
    v = std::clamp(v, lo_, hi_);
    syncing_ = true;
    slider_->setValue(toStep(v));
    spin_->setValue(v);
    syncing_ = false;
    if (v == value_) return;
    value_ = v;
    Q_EMIT valueChanged(v);
}

} // namespace kairos::views
