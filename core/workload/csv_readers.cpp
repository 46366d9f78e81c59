// Readers for the comma-separated traces: Azure LLM inference 2023, length-only
// (ShareGPT / Vidur processed traces) and BurstGPT.
#include "util/input_error.h"
#include "util/text.h"
#include "workload/readers.h"

#include <cmath>
#include <string_view>

namespace kairos {
namespace {} // namespace

Workload readAzure(std::istream& in, const std::string& name, std::size_t limit) {
    text::CsvHeader h(in, name);
    const auto cT = h.column("TIMESTAMP"), cP = h.column("ContextTokens"),
               cO = h.column("GeneratedTokens");
    Workload w;
    w.name = name;
    w.source = name;
    std::int64_t base = 0;
    double base_frac = 0.0;
    bool first = true;
    text::forCsvRows(in, name, h, limit, [&](const std::vector<std::string_view>& f, long line) {
        std::int64_t whole;
        double frac;
        if (f[cT].empty()) throw InputError(name, line, "TIMESTAMP", "empty");
        if (!text::parseTimestamp(f[cT], &whole, &frac))
            throw InputError(name, line, "TIMESTAMP",
                             "not a timestamp YYYY-MM-DD HH:MM:SS[.fraction]: '" +
                                 std::string(f[cT].substr(0, 40)) + "'");
        if (first) {
            base = whole;
            base_frac = frac;
            first = false;
        }
        Request r;
        r.id = static_cast<std::int64_t>(w.requests.size());
        r.arrival = static_cast<double>(whole - base) + (frac - base_frac);
        if (std::abs(r.arrival) > kMaxSeconds)
            throw InputError(name, line, "TIMESTAMP",
                             "more than 1e9 s (31.7 years) from the first request's");
        r.prompt_tokens = text::needTokens(f[cP], name, line, "ContextTokens", 1);
        r.output_tokens = text::needTokens(f[cO], name, line, "GeneratedTokens", 1);
        w.requests.push_back(std::move(r));
    });
    w.meta["trace_start_unix_s"] = std::to_string(base);
    w.normalise(0.0);
    return w;
}

Workload readLengths(std::istream& in, const std::string& name, std::size_t limit) {
    text::CsvHeader h(in, name);
    const auto cP = h.column("num_prefill_tokens"), cO = h.column("num_decode_tokens");
    Workload w;
    w.name = name;
    w.source = name;
    text::forCsvRows(in, name, h, limit, [&](const std::vector<std::string_view>& f, long line) {
        Request r;
        r.id = static_cast<std::int64_t>(w.requests.size());
        r.prompt_tokens = text::needTokens(f[cP], name, line, "num_prefill_tokens", 1);
        r.output_tokens = text::needTokens(f[cO], name, line, "num_decode_tokens", 1);
        w.requests.push_back(std::move(r));
    });
    return w; // arrivals all 0 until the caller assigns a process
}

Workload readBurstGpt(std::istream& in, const std::string& name, std::size_t limit) {
    text::CsvHeader h(in, name);
    const auto cT = h.column("Timestamp"), cP = h.column("Request tokens"),
               cO = h.column("Response tokens");
    Workload w;
    w.name = name;
    w.source = name;
    long skipped = 0;
    text::forCsvRows(in, name, h, limit, [&](const std::vector<std::string_view>& f, long line) {
        const double t = text::needSeconds(f[cT], name, line, "Timestamp");
        const int p = text::needTokens(f[cP], name, line, "Request tokens", 0);
        const int o = text::needTokens(f[cO], name, line, "Response tokens", 0);
        // BurstGPT logs failed requests with zero tokens; they never reached the model.
        if (p == 0 || o == 0) {
            ++skipped;
            return;
        }
        Request r;
        r.id = line;
        r.arrival = t;
        r.prompt_tokens = p;
        r.output_tokens = o;
        w.requests.push_back(std::move(r));
    });
    w.meta["skipped_zero_token_rows"] = std::to_string(skipped);
    w.normalise(0.0);
    return w;
}

} // namespace kairos
