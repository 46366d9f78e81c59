#pragma once
// Option domains for kairos-cli: a value outside its domain is an error naming the
// option (exit 2), never a silent default. CLI11's own Range lets NaN through (every
// comparison with NaN is false), so numbers are parsed here, strictly and finite.
#include "model/domains.h"
#include "util/text.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace kairos::cli {

// The domain of a run's number (model/domains.h), as RunSpec::validate checks it.
inline CLI::Validator number(const domains::Domain& d) {
    const std::string desc = domains::describeOption(d);
    return CLI::Validator(
        [d, desc](std::string& s) -> std::string {
            if (d.inf_ok && (s == "inf" || s == "+inf")) return "";
            double v;
            if (d.integer) {
                std::int64_t i;
                if (s != text::trim(s) || !text::parseInt64(s, &i))
                    return "'" + s + "' is not a whole number";
                v = double(i);
            } else if (!text::parseNumberStrict(s, &v)) {
                return "'" + s + "' is not a finite number";
            }
            if (!domains::inDomain(d, v) || (d.zero_means_default && v == 0))
                return "'" + s + "' is outside " + desc +
                       (d.zero_means_default && v == 0 ? " (leave the option out for the default)"
                                                       : "");
            return "";
        },
        desc, d.integer ? "INT" : "NUMBER");
}

// A finite number in [lo, hi], or (lo, hi] with `lo_open`; `inf_ok` also takes "inf".
inline CLI::Validator number(double lo, double hi, bool lo_open = false, bool inf_ok = false) {
    return number(domains::Domain{"", "", lo, hi, lo_open, inf_ok, false});
}

// A whole number in [lo, hi].
inline CLI::Validator whole(long long lo, long long hi) {
    const std::string desc = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    return CLI::Validator(
        [=](std::string& s) -> std::string {
            std::int64_t v;
            if (s != text::trim(s) || !text::parseInt64(s, &v))
                return "'" + s + "' is not a whole number";
            if (v < lo || v > hi) return "'" + s + "' is outside " + desc;
            return "";
        },
        desc, "INT");
}

// A seed: a whole number in [0, 2^63) (CLI11 would read -1 into an unsigned seed as
// 2^64 - 1 without a word).
inline CLI::Validator seedValue() {
    return whole(0, std::numeric_limits<std::int64_t>::max());
}

// A comma-separated list of names, each one of `allowed` (checked before anything runs:
// a slow command does not start its work to fail at the second item).
inline CLI::Validator commaListOf(std::vector<std::string> allowed) {
    std::string desc;
    for (const auto& a : allowed) desc += (desc.empty() ? "" : ",") + a;
    return CLI::Validator(
        [allowed, desc](std::string& s) -> std::string {
            std::vector<std::string_view> items;
            text::split(s, ',', items);
            for (auto item : items)
                if (std::find(allowed.begin(), allowed.end(), std::string(item)) == allowed.end())
                    return "'" + std::string(item) + "' is not one of " + desc;
            return "";
        },
        "a comma-separated list of " + desc, "LIST");
}

// An option that reads or writes the SQLite store (--db, --store, a stored model or
// profile): a build without the store (KAIROS_WITH_STORE=OFF, the gpu preset) keeps the
// option so that scripts get a clear error naming it (exit 2) before anything runs.
inline CLI::Option* needsStore(CLI::Option* o) {
#if !KAIROS_HAVE_STORE
    o->check(CLI::Validator(
        [](std::string&) {
            return std::string("this build of Kairos has no store (built with "
                               "KAIROS_WITH_STORE=OFF: no SQLite)");
        },
        "", "NEEDS-STORE"));
#endif
    return o;
}

} // namespace kairos::cli
