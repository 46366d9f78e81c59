#include "model/run_log.h"

#include <cstring>

namespace kairos {
namespace {
constexpr const char* kNames[] = {
    "arrive", "admit",    "prefill_start", "prefill_end", "first_token", "preempt", "suspend",
    "resume", "dispatch", "finish",        "kill",        "token",       "budget",  "evict",
    "kill_cause", "cache_hit"};
constexpr int kCount = sizeof(kNames) / sizeof(kNames[0]);
} // namespace

const char* evName(Ev e) {
    const int i = static_cast<int>(e);
    return i >= 0 && i < kCount ? kNames[i] : "?";
}

bool evFromName(const std::string& s, Ev* out) {
    for (int i = 0; i < kCount; ++i)
        if (s == kNames[i]) {
            *out = static_cast<Ev>(i);
            return true;
        }
    return false;
}

const char* killCauseName(KillCause c) {
    switch (c) {
    case KillCause::NeverFits:
        return "never_fits";
    case KillCause::CannotGrow:
        return "cannot_grow";
    case KillCause::Deadline:
        return "deadline";
    case KillCause::SkipNext:
        return "skip_next";
    default:
        return "unknown";
    }
}

std::int64_t RunLog::totalIterations() const {
    std::int64_t n = 0;
    for (const auto& s : iters) n += s.n;
    return n;
}

} // namespace kairos
