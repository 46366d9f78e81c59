#include "metrics_model.h"

#include "metrics/metric_table.h"
#include "util/text.h"
#include "window_words.h"

#include <QColor>
#include <QFont>
#include <algorithm>
#include <cmath>

namespace kairos::views {

void MetricsModel::setRuns(const Summary* current, const Summary* pinned,
                           const std::vector<RequestMetrics>* current_requests,
                           const std::vector<RequestMetrics>* pinned_requests) {
    beginResetModel();
    rows_.clear();
    note_.clear();
    comparing_ = current && pinned;
    if (comparing_) {
        const Comparison c = compare({pinned, pinned_requests}, {current, current_requests});
        rows_ = c.deltas;
        note_ = windowWords(QString::fromStdString(c.note));
    } else if (current) {
        rows_ = compareRuns(nullptr, *current);
    }
    if (note_.isEmpty() && current && current->completed < current->num_requests)
        note_ = tr("Latency is over %1").arg(QString::fromStdString(current->coverage()));
    endResetModel();
}

int MetricsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int MetricsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : (comparing_ ? 4 : 2);
}

QString MetricsModel::formatValue(double v) {
    if (std::isnan(v)) return QStringLiteral("–");
    if (std::isinf(v)) return v > 0 ? QStringLiteral("∞") : QStringLiteral("-∞");
    if (v == std::floor(v) && std::abs(v) < 1e12) return QString::number(static_cast<qlonglong>(v));
    // One rule for every number: four significant digits, at most three decimals.
    const int mag = static_cast<int>(std::floor(std::log10(std::abs(v))));
    return QString::number(v, 'f', std::clamp(3 - mag, 0, 3));
}

namespace {
bool endsWith(const std::string& key, const char* tail) {
    const std::size_t n = std::char_traits<char>::length(tail);
    return key.size() >= n && key.compare(key.size() - n, n, tail) == 0;
}
bool isDuration(const std::string& key) {
    return key.size() > 3 && endsWith(key, "_ms");
}
// The rows whose values are percentages (keyMetrics: "utility_pct", "utility_pct_urgent",
// "authors_normal_utility_pct").
bool isPercent(const std::string& key) {
    return endsWith(key, "_pct") || key.find("_pct_") != std::string::npos;
}
// The rows whose values are shares (0..1, the metric table's unit "share": the hit rates,
// within budget), shown as percentages.
bool isShare(const std::string& key) {
    static const std::vector<MetricDef> table = metricTable({99});
    if (const MetricDef* d = findMetric(table, key)) return d->unit == "share";
    return endsWith(key, "hit_rate"); // a replica's row
}
} // namespace

QString MetricsModel::formatMetric(const std::string& key, double v) {
    // A percentage with one decimal: with four significant digits one run read "99" and
    // the next "98.50" in the same row.
    if (isPercent(key) && std::isfinite(v)) return QString::number(v, 'f', 1);
    if (isShare(key) && std::isfinite(v)) return QString::number(100 * v, 'f', 1);
    if (!isDuration(key) || !std::isfinite(v)) return formatValue(v);
    return QString::fromStdString(text::duration(v / 1e3));
}

QString MetricsModel::metricLabel(const std::string& key, const std::string& label) {
    QString l = QString::fromStdString(label);
    if (isDuration(key)) l.remove(QStringLiteral(" (ms)"));
    if (isShare(key)) l.replace(QStringLiteral(" (share)"), QStringLiteral(" (%)"));
    // A unit is one word: no line break after its slash (the table wrapped "(tok/" and "s)"
    // onto two lines). U+2060 WORD JOINER forbids it and draws nothing.
    l.replace(QStringLiteral("/"), QStringLiteral("/\u2060"));
    return l;
}

QVariant MetricsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
    const MetricDelta& d = rows_[static_cast<std::size_t>(index.row())];
    if (role == KeyRole) return QString::fromStdString(d.key);
    if (role == Qt::TextAlignmentRole && index.column() != Metric)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole && index.column() == Change && d.verdict != 0)
        return d.verdict > 0 ? QColor(0x1e, 0x8e, 0x3e) : QColor(0xd0, 0x30, 0x30);
    if (role == Qt::ToolTipRole && comparing_ && d.basis == Basis::Common)
        return tr("over the requests both runs completed; not judged: which requests finish "
                  "depends on the policy");
    if (role == Qt::ToolTipRole && comparing_ && d.basis == Basis::NotComparable)
        return tr("not comparable: %1").arg(note_);
    if (role == Qt::ToolTipRole && index.column() == Change && comparing_)
        return d.verdict > 0   ? tr("better than the pinned run")
               : d.verdict < 0 ? tr("worse than the pinned run")
                               : tr("unchanged, or no better direction");
    if (role == Qt::FontRole && comparing_ && d.basis != Basis::AllRequests &&
        index.column() == Change) {
        QFont f;
        f.setItalic(true);
        return f;
    }
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case Metric:
        return d.basis == Basis::Common ? metricLabel(d.key, d.label) + tr(" [common]")
                                        : metricLabel(d.key, d.label);
    case Value:
        return formatMetric(d.key, d.after);
    case Pinned:
        return formatMetric(d.key, d.before);
    case Change:
        return formatChange(d);
    }
    return {};
}

QString MetricsModel::formatChange(const MetricDelta& d) {
    if (d.basis == Basis::NotComparable) return tr("n/c");
    if (std::isnan(d.change)) return QStringLiteral("–");
    if (d.change == 0) return QStringLiteral("=");
    const QString sign = d.change > 0 ? QStringLiteral("+") : QString();
    if (!std::isnan(d.relative)) {
        // A change too small for one decimal keeps two significant digits ("-0.014 %"): a
        // KV peak of 50,806 against 50,813 read "-0.0 %".
        const double pct = 100 * d.relative;
        return sign +
               (std::abs(pct) < 0.05 ? QString::number(pct, 'g', 2)
                                     : QString::number(pct, 'f', 1)) +
               QStringLiteral(" %");
    }
    return sign + formatMetric(d.key, d.change);
}

void MetricsModel::setPinnedName(const QString& name) {
    if (name == pinned_name_) return;
    pinned_name_ = name;
    if (columnCount() > Pinned) Q_EMIT headerDataChanged(Qt::Horizontal, Pinned, Pinned);
}

QVariant MetricsModel::headerData(int section, Qt::Orientation o, int role) const {
    // The pinned run's whole name on hover: its column is as wide as its numbers, and a
    // long name ("pinned timebill k=20, KV 50,838") is cut there.
    if (o == Qt::Horizontal && role == Qt::ToolTipRole && section == Pinned)
        return pinned_name_.isEmpty() ? tr("pinned") : pinned_name_;
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Metric:
        return tr("metric");
    case Value:
        return tr("value");
    case Pinned:
        // Short: the column is as wide as its numbers; the whole name on hover (cut at both
        // ends it read "ned sprpt_lp C=").
        return tr("pinned");
    case Change:
        return tr("change");
    }
    return {};
}

} // namespace kairos::views
