// libFuzzer entry for one reader, chosen at compile time, and the whole path behind it:
// what a reader accepts is simulated (FCFS and SPRPT on a small KV cache, an ETE model and
// the unit model) and summarised, and a run log is summarised, because a value a reader
// lets through can still break the arithmetic after it (a 1e308 arrival once did, in the
// inter-token code). Any input must either go through or stop with InputError (a reader)
// or std::invalid_argument (an input error found later, e.g. an inconsistent run log);
// anything else (a crash, a sanitizer report, another exception) is a bug.
#include "exec/execution_model.h"
#include "export/runlog_jsonl.h"
#include "lod/timeline.h"
#include "metrics/explain_view.h"
#include "metrics/request_filter.h"
#include "metrics/summary.h"
#include "run/run_spec.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "util/input_error.h"
#include "weights/safetensors.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

void simulateAndSummarise(const kairos::Workload& w) {
    using namespace kairos;
    if (w.requests.empty() || w.requests.size() > 1000) return;
    EngineLimits lim;
    lim.kv_capacity_tokens = 4096;
    lim.max_num_seqs = 8;
    lim.block_size = 16;
    const EteModel ete(EteParams{0.02, 2e-4, 1e-8, 0.03, 3e-4, 2e-7});
    const UnitModel unit;
    for (const char* policy : {"fcfs", "sprpt_lp"}) {
        auto s = makeScheduler(policy);
        const RunLog log =
            simulate(w, policy[0] == 'f' ? static_cast<const ExecutionModel&>(ete) : unit, *s, lim);
        SummaryOptions so;
        so.workload = &w;
        summarize(log, so);
    }
}

// A small run to search (the workbench's Find): chat requests at an overload on a small
// KV cache (some preempted), once.
struct SearchedRun {
    kairos::Workload w;
    kairos::RunLog log;
    std::vector<kairos::RequestMetrics> m;
    std::vector<kairos::lod::Row> rows;
    SearchedRun() {
        using namespace kairos;
        GenerateSpec g;
        g.count = 40;
        g.arrivals.rate = 20;
        w = generateWorkload(g);
        w.requests[3].cls = "urgent";
        EngineLimits lim;
        lim.kv_capacity_tokens = 3000;
        lim.max_num_seqs = 4;
        auto s = makeScheduler("sprpt_lp");
        log = simulate(w, EteModel(EteParams{0.02, 2e-4, 1e-8, 0.03, 3e-4, 2e-7}), *s, lim);
        m = perRequest(log);
        rows = lod::buildRows(log, &w);
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    try {
#if defined(KAIROS_FUZZ_READER_kairos)
        // The fast path (simdjson) and the reference (nlohmann) read every input alike: the
        // same workload, or the same error.
        const std::string text(reinterpret_cast<const char*>(data), size);
        std::istringstream ref_in(text);
        std::optional<kairos::Workload> ref;
        std::string ref_error;
        try {
            ref = kairos::readKairosReference(ref_in, "fuzz");
        } catch (const kairos::InputError& e) {
            ref_error = e.what();
        }
        std::optional<kairos::Workload> fast;
        try {
            fast = kairos::readKairos(in, "fuzz");
        } catch (const kairos::InputError& e) {
            if (ref || ref_error != e.what()) __builtin_trap(); // they disagree
            throw;
        }
        if (!ref || !(ref->requests == fast->requests) || ref->name != fast->name ||
            ref->meta != fast->meta)
            __builtin_trap(); // they disagree
        simulateAndSummarise(*fast);
#elif defined(KAIROS_FUZZ_READER_formats)
        // Every registered trace format (workload/formats.h), read as --format NAME reads it:
        // the input's first byte picks the row, the rest is the file.
        if (size == 0) return 0;
        const auto& rows = kairos::traceFormats();
        kairos::ReadOptions o;
        o.format = &rows[data[0] % rows.size()];
        std::istringstream body(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
        simulateAndSummarise(kairos::readWorkload(body, "fuzz", o));
#elif defined(KAIROS_FUZZ_READER_timelyllm)
        simulateAndSummarise(
            kairos::readTimelyLlm(in, "fuzz", {{0, "?s('cat')==True{g('cat')}->False"}}));
#elif defined(KAIROS_FUZZ_READER_runlog)
        const kairos::RunLog log = kairos::readRunLogJsonl(in, "fuzz");
        kairos::summarize(log);
        // What kairos-cli explain and the Inspector read from any log the reader accepts:
        // the view at a few instants and a few requests' stories (its index is per request:
        // a header claiming 10^8 requests is memory, not a finding).
        if (log.num_requests > 100000) return 0;
        const kairos::ExplainIndex ix(log);
        const double end = log.events.empty() ? 1.0 : log.events.back().t + 1.0;
        for (double f : {0.0, 0.3, 0.7, 1.0}) (void)kairos::viewAt(ix, f * end);
        for (kairos::ReqId r = 0; r < std::min(log.num_requests, 4); ++r)
            (void)kairos::storyOf(ix, r);
#elif defined(KAIROS_FUZZ_READER_runspec)
        // A RunSpec as TOML, and the same bytes as JSON: either reads to a valid spec whose
        // round trip through both formats is the same spec, or stops with InputError.
        const std::string text(reinterpret_cast<const char*>(data), size);
        std::optional<kairos::RunSpec> spec;
        try {
            spec = kairos::RunSpec::fromToml(text, "fuzz.toml");
        } catch (const kairos::InputError&) {
        }
        if (!spec) {
            const auto j = nlohmann::json::parse(text, nullptr, false);
            if (!j.is_discarded()) spec = kairos::RunSpec::fromJson(j, "fuzz.json");
        }
        if (spec) {
            if (!(kairos::RunSpec::fromJson(spec->toJson()) == *spec) ||
                !(kairos::RunSpec::fromToml(spec->toToml()) == *spec))
                __builtin_trap(); // a spec that does not round-trip is a bug
        }
#elif defined(KAIROS_FUZZ_READER_filter)
        // A search as typed: it parses, or stops with std::invalid_argument naming the
        // term; a parsed one-term search and its negation split the requests.
        static const SearchedRun run;
        kairos::GoodputSlo slo;
        slo.ttft_ms = 500;
        const std::string text(reinterpret_cast<const char*>(data), size);
        const auto f = kairos::RequestFilter::parse(text);
        const auto in = f.apply(run.m, &run.w, &run.rows, slo);
        if (!text.empty() && text[0] != '!' &&
            text.find_first_of(" \t\n\r\f\v") == std::string::npos) {
            const auto out =
                kairos::RequestFilter::parse("!" + text).apply(run.m, &run.w, &run.rows, slo);
            if (in.size() + out.size() != run.m.size()) __builtin_trap();
        }
#elif defined(KAIROS_FUZZ_READER_safetensors)
        kairos::safetensors::parseHeader(reinterpret_cast<const std::byte*>(data), size, size,
                                         "fuzz");
#endif
    } catch (const kairos::InputError&) {
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
