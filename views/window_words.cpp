#include "window_words.h"

#include <QRegularExpression>
#include <utility>

namespace kairos::views {

QString windowWords(const QString& text) {
    // Longest options first (--rate before --rate-scale would cut it).
    static const std::pair<const char*, const char*> kWords[] = {
        {"name it with --format (", "the window reads the formats of Help › Workload formats ("},
        {"--max-num-batched-tokens", "the token budget"},
        {"--max-num-seqs", "the max running slider"},
        {"--prefix-caching", "the Caching box"},
        {"--kv-capacity", "the KV capacity × slider"},
        {"--rate-scale", "the arrival rate × slider"},
        {"--replicas", "the Replicas box"},
        {"--router", "the Router box"},
        {"--budget", "TimeBill's budget slider"},
        {"--profile", "the Device box"},
        {"--param", "the Policy panel's sliders and Other parameters"},
        {"--format", "Help › Workload formats"},
    };
    QString s = text;
    for (const auto& [option, words] : kWords)
        s.replace(QString::fromUtf8(option), QString::fromUtf8(words));
    return s;
}

} // namespace kairos::views
