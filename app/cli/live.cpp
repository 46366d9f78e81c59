// kairos-cli live: builds the real transformer and its backend for the engine. The only
// translation unit of the CLI that sees libtorch.
#include "checks.h"
#include "commands.h"
#include "exec/execution_model.h"
#include "length_heads.h"
#include "length_study.h"
#include "live_engine.h"
#include "live_profile.h"
#include "metrics/request_metrics.h"
#include "metrics/stats.h"
#include "metrics/summary.h"
#include "profiles.h"
#include "quality.h"
#include "run/live_check.h"
#include "run/pipeline.h"
#include "sched/registry.h"
#include "store/store.h"
#include "util/atomic_file.h"
#include "util/json_line.h"
#include "workload/readers.h"

#include <ATen/Parallel.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <unistd.h>

namespace kairos::cli {

namespace {

// The transformer a command's live options describe; `dtype_out` gets its dtype's name.
std::unique_ptr<gpu::Transformer> buildModel(const LiveArgs& a, std::string* dtype_out) {
    if (a.threads > 0) at::set_num_threads(a.threads);
    // Profiles and live runs time iterations alike (transformer.h says why).
    if (!a.default_allocator) gpu::settleHostAllocator();
    gpu::TransformerOptions o;
    if (a.device == "cpu") {
        o.device = at::kCPU;
    } else if (a.device == "cuda") {
        if (!at::hasCUDA())
            throw std::invalid_argument(
                "--device cuda: this libtorch has no CUDA (Debian's libtorch is CPU-only; "
                "build against PyTorch's libtorch on a GPU machine)");
        o.device = at::Device(at::kCUDA, 0);
    } else {
        throw std::invalid_argument("--device must be cpu or cuda, not '" + a.device + "'");
    }
    const std::string dtype = a.dtype.empty() ? (o.device.is_cuda() ? "bf16" : "fp32") : a.dtype;
    if (dtype == "fp32")
        o.dtype = at::kFloat;
    else if (dtype == "bf16")
        o.dtype = at::kBFloat16;
    else if (dtype == "fp16")
        o.dtype = at::kHalf;
    else
        throw std::invalid_argument("--dtype must be fp32, bf16 or fp16, not '" + dtype + "'");
    o.seed = a.weight_seed;
    gpu::LlmConfig cfg;
    if (!a.weights.empty()) {
        o.weights_dir = a.weights;
        // A file is a llama2.c checkpoint; a folder is Hugging Face's (config.json and
        // safetensors).
        cfg = std::filesystem::is_regular_file(a.weights)
                  ? gpu::readLlama2cConfig(a.weights)
                  : gpu::readHfConfig((std::filesystem::path(a.weights) / "config.json").string());
    } else {
        cfg = gpu::builtinConfig(a.model);
    }
    if (dtype_out) *dtype_out = dtype;
    return std::make_unique<gpu::Transformer>(cfg, o);
}

// The backend options a command's live options describe.
gpu::LiveOptions liveOptions(const LiveArgs& a) {
    gpu::LiveOptions lo;
    lo.snap_window = a.snap_window;
    lo.prompt_seed = a.prompt_seed;
    lo.length_cue = a.length_cue;
    lo.stop_at_eos = a.stop_at_eos;
    lo.temperature = a.temperature;
    lo.top_p = a.top_p;
    lo.sample_seed = a.sample_seed;
    lo.story_prompts = a.prompts == "stories";
    return lo;
}

// --kv-capacity when given, else what 4 GiB of KV holds for this model.
std::int64_t kvCapacityOr(long long given, const gpu::Transformer& m) {
    return given > 0 ? given : gpu::kvCapacityTokens(m, 4.0 * 1073741824.0);
}

class Session final : public LiveSession {
public:
    Session(const LiveArgs& a, const Workload& w, EngineLimits& lim, bool kv_given) {
        std::string dtype;
        model_ = buildModel(a, &dtype);
        const auto& cfg = model_->config();
        const auto& o = model_->options();

        if (a.stop_at_eos && !model_->realWeights())
            throw std::invalid_argument(
                "--stop-at-eos needs real weights (--weights DIR or FILE.bin): a "
                "synthetic model's end-of-sequence token is noise");
        backend_ = std::make_unique<gpu::TorchBackend>(*model_, w, liveOptions(a));
        std::string heads_note;
        if (!a.length_heads.empty()) {
            auto heads =
                std::make_shared<const gpu::LengthHeads>(gpu::LengthHeads::load(a.length_heads));
            predictor_ =
                std::make_shared<gpu::LivePredictor>(heads, a.length_mode, *model_, *backend_);
            heads_note = a.length_mode + " from " + a.length_heads;
            const auto& meta = heads->metadata();
            if (auto it = meta.find("model"); it != meta.end() && it->second != cfg.name)
                std::fprintf(stderr, "warning: %s was trained on %s, this run is on %s\n",
                             a.length_heads.c_str(), it->second.c_str(), cfg.name.c_str());
        }
        if (!kv_given) {
            double budget = a.kv_mem_gib * 1073741824.0;
            if (budget <= 0) budget = (o.device.is_cuda() ? 16.0 : 4.0) * 1073741824.0;
            lim.kv_capacity_tokens = gpu::kvCapacityTokens(*model_, budget);
        }
        config_ = {{"live model", cfg.name},
                   {"device", o.device.str()},
                   {"dtype", dtype},
                   {"weights", o.weights_dir.empty()
                                   ? "synthetic (seed " + std::to_string(o.seed) + ")"
                                   : "real: " + o.weights_dir},
                   {"KV capacity (tokens)", std::to_string(lim.kv_capacity_tokens)}};
        if (a.length_cue > 0)
            config_.push_back(
                {"prompts", "length task: buckets of " + std::to_string(a.length_cue) + " tokens"});
        else if (a.prompts == "stories")
            config_.push_back({"prompts", "openings of the model's own stories (seed " +
                                              std::to_string(a.prompt_seed) + ")"});
        if (!heads_note.empty()) config_.push_back({"length heads", heads_note});
        const auto fmtNum = [](double v) {
            char b[32];
            std::snprintf(b, sizeof b, "%g", v);
            return std::string(b);
        };
        config_.push_back({"decoding", a.temperature > 0
                                           ? "sampled: temperature " + fmtNum(a.temperature) +
                                                 ", top-p " + fmtNum(a.top_p) + ", seed " +
                                                 std::to_string(a.sample_seed)
                                           : std::string("greedy")});
        if (a.stop_at_eos)
            config_.push_back({"answers end", "at EOS (token " + std::to_string(cfg.eos_token) +
                                                  ") or the workload's length"});
    }
    LiveBackend& backend() override { return *backend_; }
    std::shared_ptr<LengthPredictor> predictor() const override { return predictor_; }
    std::vector<std::pair<std::string, std::string>> config() const override { return config_; }

private:
    std::unique_ptr<gpu::Transformer> model_;
    std::unique_ptr<gpu::TorchBackend> backend_;
    std::shared_ptr<gpu::LivePredictor> predictor_;
    std::vector<std::pair<std::string, std::string>> config_;
};

// A progress bar on stderr, redrawn in place (on a terminal; elsewhere a line per tenth).
// --progress-lines: one "progress DONE/TOTAL WHAT" line per step, for a front end (the
// workbench's Live panel reads them).
bool g_progress_lines = false;

void progressBar(int done, int total, const std::string& what) {
    if (g_progress_lines) {
        std::fprintf(stderr, "progress %d/%d %s\n", done, total, what.c_str());
        std::fflush(stderr);
        return;
    }
    if (!isatty(fileno(stderr))) {
        if (total > 0 && (done * 10 / total != (done - 1) * 10 / total || done == total))
            std::fprintf(stderr, "  %d/%d %s\n", done, total, what.c_str());
        return;
    }
    const int width = 30, filled = total > 0 ? done * width / total : width;
    std::fprintf(stderr, "\r[%s%s] %3d/%d %-44.44s", std::string(std::size_t(filled), '#').c_str(),
                 std::string(std::size_t(width - filled), ' ').c_str(), done, total, what.c_str());
    if (done == total) std::fputc('\n', stderr);
    std::fflush(stderr);
}

struct ProfileOutcome {
    gpu::LiveProfile raw;
    EteReport report;
    DeviceProfile profile;
    std::int64_t profile_id = 0, model_id = 0;
};

// Profiles the model, fits ETE, and stores both when `db` is given.
ProfileOutcome profileAndFit(gpu::Transformer& m, const std::string& dtype,
                             const gpu::LiveProfileGrid& grid, store::Store* db,
                             const std::string& name_override) {
    ProfileOutcome out;
    const auto& cfg = m.config();
    const std::string device = gpu::deviceName(m);
    const std::string weights = m.realWeights() ? "real" : "synthetic";
    std::fprintf(stderr, "profiling %s (%s, %s weights) on %s, %s\n", cfg.name.c_str(),
                 dtype.c_str(), weights.c_str(), device.c_str(), gpu::libraryVersions().c_str());
    out.raw = gpu::profileTransformer(m, grid, progressBar);
    std::printf("drift reference (a batch-1 decode step at %d positions, %zu timings): median "
                "%.2f ms, spread %.1f %% of it; points %s; %d timed again (repeats over %.0f %% "
                "apart)\n",
                grid.reference_context + 1, out.raw.speed.size() + 1,
                1e3 * out.raw.reference_seconds, out.raw.reference_spread_pct,
                grid.normalise ? "normalised to the median speed" : "left as measured",
                out.raw.retimed, grid.max_spread_pct);
    const std::string name = name_override.empty()
                                 ? cfg.name + "-" + m.options().device.str() + "-" + dtype
                                 : name_override;
    out.report = fitEteReport(out.raw.measurements, 0.2, 1);
    DeviceProfile& p = out.profile;
    p.name = name;
    p.hardware = device;
    p.description = cfg.name + " (" + dtype + ", " + weights + " weights, Kairos live engine) on " +
                    device + "; " + gpu::libraryVersions();
    p.gpu_count = 1;
    p.gpu_mem_gib = m.options().device.is_cuda() ? 16.0 : 4.0;
    p.mem_fraction = 1.0;
    p.model = cfg.shape(int(c10::elementSize(m.options().dtype)));
    p.ete = out.report.params;
    for (const auto& f : out.report.fits) {
        if (f.name.rfind("prefill, batched", 0) == 0) p.fit_mape_prefill = f.mape_pct;
        if (f.name.rfind("decode step, batched", 0) == 0) p.fit_mape_decode = f.mape_pct;
    }
    p.kv_capacity_tokens = gpu::kvCapacityTokens(m, p.gpu_mem_gib * 1073741824.0);
    p.provenance = "kairos-cli profile: the live engine's transformer measured on " + device +
                   " (" + gpu::libraryVersions() + "), median of " + std::to_string(grid.repeats) +
                   " timings per point after " + std::to_string(grid.warmup) + " warm-up, " +
                   (grid.normalise ? "normalised by a bracketing reference step, " : "") +
                   std::to_string(out.raw.measurements.size()) + " points; " + weights +
                   " weights; KV capacity for " + std::to_string(int(p.gpu_mem_gib)) + " GiB";
    std::string source = "kairos-cli profile on " + device;
#if KAIROS_HAVE_STORE
    if (db) {
        out.profile_id = db->putProfile(p.name, device, cfg.name, weights, p.toJson().dump(),
                                        out.raw.measurements);
        source = db->path() + " profile " + std::to_string(out.profile_id);
        std::printf("stored as profile %lld in %s\n", static_cast<long long>(out.profile_id),
                    db->path().c_str());
    }
#endif
    // The table (and the stored model): the same fit as above, printed once.
    const nlohmann::json g = fitEteGroup(name, out.raw.measurements, source, 0.2, 1, db, nullptr);
    if (g.contains("model_id")) out.model_id = g["model_id"].get<std::int64_t>();
    return out;
}

void addProfile(CLI::App& app) {
    struct Args {
        LiveArgs live;
        std::string db, out, bench_csv, json_out, name;
        bool store = false, quick = false, raw = false;
        int repeats = 0;
    };
    auto a = std::make_shared<Args>();
    auto* c = app.add_subcommand(
        "profile", "Measure the live engine's transformer on this device (prefill over length "
                   "and batch, decode steps over context and batch), fit the ETE models, store "
                   "the raw measurements, and write a throughput table for ALA");
    addLiveModelOptions(c, a->live);
    c->add_flag("--quick", a->quick, "A smaller grid (a first look; tests)");
    c->add_option("--repeats", a->repeats, "Timings per point (median kept; default 5, quick 3)")
        ->check(whole(1, 1000));
    c->add_flag("--no-normalise", a->raw,
                "Keep every timing as measured (by default each is divided by the device's "
                "speed then, from a reference step timed between points)");
    c->add_option("--name", a->name, "Profile name (default MODEL-DEVICE-DTYPE)");
    needsStore(
        c->add_option("--db", a->db, "Store the profile, its measurements and the ETE model here"));
    needsStore(c->add_flag("--store", a->store, "The same in the default database"));
    c->add_option("--out,-o", a->out, "Write the fitted device profile (JSON) here");
    c->add_option("--bench-csv", a->bench_csv,
                  "Write the throughput table in LLM-Inference-Bench's layout (kairos-cli fit "
                  "ala --data reads it)");
    c->add_option("--json", a->json_out, "Write the raw measurements and fits as JSON");
    c->add_flag("--progress-lines", g_progress_lines,
                "Progress as 'progress DONE/TOTAL WHAT' lines on stderr (for front ends)");
    c->callback([a] {
        std::string dtype;
        auto m = buildModel(a->live, &dtype);
        gpu::LiveProfileGrid grid =
            a->quick ? gpu::LiveProfileGrid::quick() : gpu::LiveProfileGrid{};
        if (a->repeats > 0) grid.repeats = a->repeats;
        grid.normalise = !a->raw;
        std::unique_ptr<store::Store> db;
#if KAIROS_HAVE_STORE
        if (!a->db.empty() || a->store)
            db =
                std::make_unique<store::Store>(a->db.empty() ? store::Store::defaultPath() : a->db);
#endif
        const ProfileOutcome r = profileAndFit(*m, dtype, grid, db.get(), a->name);
        if (!a->out.empty())
            writeFileAtomically(a->out,
                                [&](std::ostream& f) { f << r.profile.toJson().dump(2) << "\n"; });
        if (!a->bench_csv.empty())
            writeFileAtomically(a->bench_csv, [&](std::ostream& f) {
                f << "framework,model,hardware,precision,input_len,output_len,batch,throughput\n";
                for (const auto& b : r.raw.bench)
                    f << "kairos-live," << m->config().name << ",\"" << gpu::deviceName(*m) << "\","
                      << dtype << "," << b.input << "," << b.output << "," << b.batch << ","
                      << b.throughput << "\n";
            });
        if (!a->json_out.empty()) {
            nlohmann::json j = {{"profile", r.profile.toJson()},
                                {"seconds_spent", r.raw.seconds_spent},
                                {"normalised", grid.normalise},
                                {"reference_seconds", r.raw.reference_seconds},
                                {"reference_spread_pct", r.raw.reference_spread_pct},
                                {"speed", r.raw.speed},
                                {"spread_pct", r.raw.spread_pct},
                                {"retimed", r.raw.retimed},
                                {"measurements", nlohmann::json::array()},
                                {"throughput", nlohmann::json::array()},
                                {"skipped_fits", r.report.skipped},
                                {"suspect_settings", r.report.suspect}};
            for (const auto& x : r.raw.measurements)
                j["measurements"].push_back({{"kind", x.kind},
                                             {"batch", x.batch},
                                             {"tokens", x.tokens},
                                             {"context", x.context},
                                             {"seconds", x.seconds}});
            for (const auto& b : r.raw.bench)
                j["throughput"].push_back({{"input_len", b.input},
                                           {"output_len", b.output},
                                           {"batch", b.batch},
                                           {"seconds", b.seconds},
                                           {"throughput", b.throughput}});
            for (const auto& f : r.report.fits)
                j["fits"].push_back({{"fit", f.name},
                                     {"mape_pct", f.mape_pct},
                                     {"max_error_pct", f.max_pct},
                                     {"held_out_mape_pct", std::isfinite(f.test_mape_pct)
                                                               ? nlohmann::json(f.test_mape_pct)
                                                               : nlohmann::json()}});
            writeFileAtomically(a->json_out, [&](std::ostream& f) { f << j.dump(2) << "\n"; });
        }
        std::printf("throughput (tokens/s), input = output:\n");
        for (const auto& b : r.raw.bench)
            std::printf("  %4d tokens, batch %3d: %9.1f\n", b.input, b.batch, b.throughput);
        std::printf("%.1f s of measuring\n", r.raw.seconds_spent);
    });
}

void addValidate(CLI::App& app) {
    struct Args {
        LiveArgs live;
        std::string workload, policy = "fcfs", db, json_out;
        std::vector<std::string> params;
        std::int64_t exec_model = 0;
        long long kv_capacity = 0;
        std::size_t limit = 0;
        bool quick = false, chunked = false, recalibrate = false;
        int max_num_seqs = 256, max_num_batched_tokens = 8192, block_size = 0;
        std::string prefix_caching = "off";
    };
    auto a = std::make_shared<Args>();
    auto* c = app.add_subcommand(
        "validate", "Run a workload live and simulate it with the ETE model fitted on this "
                    "device; print the simulator's per-request errors (TTFT, E2EL)");
    c->add_option("--workload,-w", a->workload, "Trace file")->required();
    c->add_option("--policy,-p", a->policy, "Scheduling policy")->capture_default_str();
    c->add_option("--param", a->params, "Policy parameter NAME=VALUE (repeatable)");
    addLiveModelOptions(c, a->live);
    addLiveDecodingOptions(c, a->live);
    needsStore(
        c->add_option("--exec-model", a->exec_model,
                      "A stored ETE model (kairos-cli profile --db) instead of profiling now"));
    needsStore(c->add_option("--db", a->db,
                             "Database of --exec-model, or where the new profile is stored"));
    c->add_flag("--quick", a->quick, "Profile with the quick grid");
    c->add_flag("--recalibrate", a->recalibrate,
                "Right before the live run, time a batch-1 decode step and scale the model by "
                "how far this device's speed has drifted from the profile's");
    c->add_option("--kv-capacity", a->kv_capacity, "KV capacity (tokens; default: 4 GiB of KV)")
        ->check(number(domains::kKvCapacity));
    c->add_option("--limit", a->limit, "Read at most this many requests")
        ->check(number(domains::kLimit));
    c->add_flag("--chunked-prefill", a->chunked, "Mix prefill chunks into decode iterations");
    c->add_option("--max-num-seqs", a->max_num_seqs, "Running requests at most")
        ->capture_default_str()
        ->check(number(domains::kMaxNumSeqs));
    c->add_option("--max-num-batched-tokens", a->max_num_batched_tokens,
                  "Tokens per iteration at most")
        ->capture_default_str()
        ->check(number(domains::kMaxBatchedTokens));
    c->add_option("--prefix-caching", a->prefix_caching,
                  "Automatic prefix caching (on|off) in both runs: the live engine reuses the "
                  "cached blocks' KV, the simulation charges only the uncached prefill")
        ->capture_default_str()
        ->check(CLI::IsMember({"on", "off"}));
    c->add_option("--block-size", a->block_size,
                  "KV block size in tokens (default 1, or 16 with --prefix-caching on)")
        ->check(number(domains::kBlockSize));
    c->add_option("--json", a->json_out, "Write the per-request errors and their summary as JSON");
    c->add_flag("--progress-lines", g_progress_lines,
                "Progress as 'progress DONE/TOTAL WHAT' lines on stderr (for front ends)");
    c->callback([a] {
        // The run pipeline's run: the workload, policy and limits as a RunSpec, prepared
        // once; the simulations and the live run differ only in the execution model (the
        // one measured on this device now, as planned, as bracketed) and the backend.
        RunSpec spec;
        spec.workload.path = a->workload;
        spec.workload.limit = a->limit;
        spec.policy.name = a->policy;
        spec.policy.params = parsePolicyParams(a->params);
        spec.limits.chunked_prefill = a->chunked;
        spec.limits.max_num_seqs = a->max_num_seqs;
        spec.limits.max_num_batched_tokens = a->max_num_batched_tokens;
        spec.limits.prefix_caching = a->prefix_caching == "on";
        spec.limits.block_size = a->block_size > 0            ? a->block_size
                                 : spec.limits.prefix_caching ? kPrefixCacheBlockSize
                                                              : 1;
        checkCliSpec(spec);
        const RunContext ctx = app::runContext();
        PreparedRun prep = prepareRun(spec, ctx); // reads and checks the workload first
        std::string dtype;
        auto m = buildModel(a->live, &dtype);
        std::unique_ptr<store::Store> db;
#if KAIROS_HAVE_STORE
        if (!a->db.empty()) db = std::make_unique<store::Store>(a->db);
#endif
        EteParams ete;
        std::string source;
        double ref_then = 0; // the profile's drift reference (seconds), 0 when it has none
        int ref_ctx = gpu::LiveProfileGrid{}.reference_context;
#if KAIROS_HAVE_STORE
        if (a->exec_model > 0) {
            if (!db) throw std::invalid_argument("--exec-model needs --db");
            const auto mi = db->model(a->exec_model);
            if (!mi || mi->kind != "ete")
                throw std::invalid_argument("no ETE model " + std::to_string(a->exec_model) +
                                            " in " + db->path());
            ete = EteParams::fromModelJson(mi->params);
            source = "ete model " + std::to_string(a->exec_model) + " (" + mi->name + ")";
            const auto tr = parseJsonLenient(mi->training);
            if (tr.is_object() && tr.contains("reference")) {
                ref_then = tr["reference"].value("seconds", 0.0);
                ref_ctx = int(tr["reference"].value("context", std::int64_t(ref_ctx + 1)) - 1);
            }
        } else
#endif
        {
            const auto r = profileAndFit(
                *m, dtype, a->quick ? gpu::LiveProfileGrid::quick() : gpu::LiveProfileGrid{},
                db.get(), "");
            ete = r.profile.ete;
            source = "profiled now: " + r.profile.name;
            ref_then = r.raw.reference_seconds;
        }
        // A machine's speed drifts (shared hosts, clocks): the profile's reference point is
        // re-timed before and after the live run. A profile without one (older models) is
        // compared with its own prediction of that point instead.
        gpu::ReferenceStep reference(*m, ref_ctx);
        const std::string ref_source =
            ref_then > 0 ? "the profile's reference timing" : "the model's prediction";
        if (!(ref_then > 0)) ref_then = EteModel(ete).decodeTime(1, ref_ctx + 1);
        const double ref_before = reference.steadyTime();
        double drift = 1.0;
        if (a->recalibrate) {
            drift = ref_before / ref_then;
            source += " x " + std::to_string(drift).substr(0, 5);
        }
        std::printf("device speed, a batch-1 decode step at %d positions: %.2f ms now, %.2f ms "
                    "by %s (x%.3f)%s\n",
                    ref_ctx + 1, 1e3 * ref_before, 1e3 * ref_then, ref_source.c_str(),
                    ref_before / ref_then, a->recalibrate ? ": the model is scaled by it" : "");
        prep.model = std::make_shared<const EteModel>(scaledEte(ete, drift), source);
        prep.limits.kv_capacity_tokens = kvCapacityOr(a->kv_capacity, *m);
        prep.model_warnings.clear(); // the profile named by the spec is not used
        const Workload& w = *prep.workload;
        gpu::TorchBackend backend(*m, w, liveOptions(a->live));
        std::fprintf(stderr, "running %zu requests live (%.1f s of arrivals)...\n", w.size(),
                     w.span());
        if (g_progress_lines) std::fprintf(stderr, "progress 0/0 running live\n");
        std::vector<Simulator::LiveIteration> live_iterations;
        const RunLog live = simulatePrepared(prep, ctx, &backend, nullptr, &live_iterations);
        LiveCheckInput in;
        in.prep = prep;
        in.ete = ete;
        in.drift = drift;
        in.source = source;
        in.lengths_told = a->live.stop_at_eos;
        in.reference_profile = ref_then;
        in.reference_before = ref_before;
        in.reference_after = reference.steadyTime();
        in.backend_reused_tokens = backend.reusedTokens();
        const LiveCheck check = checkAgainstLive(in, live, live_iterations, ctx);
        const SimErrors& err = check.errors;
        const SimErrors& planned = check.planned;
        const SimErrors& br = check.bracketed;
        const nlohmann::json& iters = check.iterations;
        const nlohmann::json& cache_json = check.prefix_cache;
        const double ref_after = in.reference_after, mean_speed = check.mean_speed;
        if (spec.limits.prefix_caching)
            std::printf("prefix cache (%d-token blocks): live %.1f %% of prompt tokens reused "
                        "(%lld tokens, %lld given by the backend's block store), simulation "
                        "%.1f %% (%lld tokens)\n",
                        spec.limits.block_size, 100 * cache_json["live_hit_rate"].get<double>(),
                        cache_json["live_cached_tokens"].get<long long>(), in.backend_reused_tokens,
                        100 * cache_json["simulated_hit_rate"].get<double>(),
                        cache_json["simulated_cached_tokens"].get<long long>());
        std::printf("simulator (%s) against the live run (%s), %zu requests finished in both:\n",
                    source.c_str(), live.exec_model.c_str(), err.ttft.n);
        std::printf("  %-6s %10s %10s\n", "", "median", "p90");
        std::printf("  %-6s %9.2f%% %9.2f%%\n", "TTFT", 100 * err.ttft.median, 100 * err.ttft.p90);
        std::printf("  %-6s %9.2f%% %9.2f%%\n", "E2EL", 100 * err.e2el.median, 100 * err.e2el.p90);
        if (a->live.stop_at_eos)
            std::printf("  (told each answer's length as generated live; planned on the workload's "
                        "lengths, which are limits here, the errors are TTFT %.2f%% / %.2f%%, E2EL "
                        "%.2f%% / %.2f%%: not a measure of the simulator)\n",
                        100 * planned.ttft.median, 100 * planned.ttft.p90,
                        100 * planned.e2el.median, 100 * planned.e2el.p90);
        // The model scaled to the device's mean speed over the run (timed before and after):
        // the error left when drift is taken out; it explains, it does not forecast.
        std::printf("device speed after the run: %.2f ms (x%.3f of before); the model scaled to "
                    "the run's mean speed (x%.3f):\n",
                    1e3 * ref_after, ref_after / ref_before, mean_speed);
        std::printf("  %-6s %9.2f%% %9.2f%%\n", "TTFT", 100 * br.ttft.median, 100 * br.ttft.p90);
        std::printf("  %-6s %9.2f%% %9.2f%%\n", "E2EL", 100 * br.e2el.median, 100 * br.e2el.p90);
        std::printf("the planning model on the live run's own iterations (signed: + when it "
                    "predicts longer):\n");
        std::printf("  %-9s %6s %14s %14s %12s\n", "", "count", "median signed", "median |err|",
                    "measured");
        for (const auto& [kind, r] : iters["kinds"].items())
            std::printf("  %-9s %6d %13.2f%% %13.2f%% %9.2f ms\n", kind.c_str(),
                        r["count"].get<int>(), 100 * r["median_signed"].get<double>(),
                        100 * r["median_abs"].get<double>(),
                        1e3 * r["median_measured"].get<double>());
        std::printf("  between iterations (engine and scheduler): median %.3f ms\n",
                    1e3 * iters["median_gap"].get<double>());
        if (!a->json_out.empty()) {
            const auto stats = [](const ErrorStats& x) {
                return nlohmann::json{{"median", x.median}, {"p90", x.p90}};
            };
            const nlohmann::json j = {
                {"simulator", source},
                {"recalibration", drift},
                {"live", live.exec_model},
                {"policy", live.policy},
                {"requests", err.rows},
                {"ttft_error", stats(err.ttft)},
                {"e2el_error", stats(err.e2el)},
                {"lengths_told", a->live.stop_at_eos},
                {"planned_lengths", a->live.stop_at_eos
                                        ? nlohmann::json{{"ttft_error", stats(planned.ttft)},
                                                         {"e2el_error", stats(planned.e2el)}}
                                        : nlohmann::json(nullptr)},
                {"iterations", iters},
                {"prefix_cache", cache_json},
                {"reference",
                 {{"context", ref_ctx + 1},
                  {"profile", ref_then},
                  {"profile_source", ref_source},
                  {"before", ref_before},
                  {"after", ref_after}}},
                {"bracketed",
                 {{"scale", mean_speed},
                  {"ttft_error", stats(br.ttft)},
                  {"e2el_error", stats(br.e2el)}}}};
            writeFileAtomically(a->json_out, [&](std::ostream& f) { f << j.dump(2) << "\n"; });
        }
    });
}

// kairos-cli lengths: collect (prompt, length) pairs and embeddings from a live run, train
// the RLP head and the Trail probe, evaluate them on held-out requests, save them.
void addLengths(CLI::App& app) {
    struct Args {
        LiveArgs live;
        std::string workload, policy = "fcfs", out, json_out;
        std::size_t limit = 0;
        double test_fraction = 0.25;
        gpu::LengthHeadOptions heads;
        long long kv_capacity = 0;
        bool choose_temper = false;
        std::vector<int> bucket_sweep;
        int repeats = 0;
    };
    auto a = std::make_shared<Args>();
    auto* c = app.add_subcommand(
        "lengths", "Train length predictors on the live model: run a workload live, collect each "
                   "request's prompt and generated tokens' embeddings, train TimeBill's RLP head "
                   "and Trail's probe, report their held-out errors, save them (--out)");
    c->add_option("--workload,-w", a->workload, "Trace file")->required();
    c->add_option("--policy,-p", a->policy, "Policy of the collecting run")->capture_default_str();
    addLiveModelOptions(c, a->live);
    addLiveDecodingOptions(c, a->live);
    c->add_option("--length-cue", a->live.length_cue,
                  "The synthetic length task: prompt ids tell the output length's bucket of this "
                  "many tokens (0: off)")
        ->check(whole(0, 1 << 20));
    c->add_option("--out,-o", a->out, "Write the trained heads here (safetensors)")->required();
    c->add_option("--json", a->json_out, "Write the evaluation as JSON");
    c->add_option("--limit", a->limit, "Read at most this many requests")
        ->check(number(domains::kLimit));
    c->add_option("--test-fraction", a->test_fraction,
                  "Share of requests held out (the last ones by id)")
        ->capture_default_str()
        ->check(number(0, 1, true));
    auto& h = a->heads;
    c->add_option("--layer", h.layer, "Embeddings after this many layers (default: half)")
        ->check(whole(0, 4096));
    c->add_option("--bucket", h.bucket, "RLP bucket width B (tokens)")
        ->capture_default_str()
        ->check(whole(1, 1 << 20));
    c->add_option("--n-max", h.n_max, "RLP's largest length N_max")
        ->capture_default_str()
        ->check(whole(1, 1 << 24));
    c->add_option("--bins", h.bins, "Probe's bins of remaining length k")
        ->capture_default_str()
        ->check(whole(2, 4096));
    c->add_option("--l-max", h.l_max, "Probe's range of remaining length")
        ->capture_default_str()
        ->check(number(1, 1 << 24));
    c->add_option("--every", h.every, "Probe period s (tokens)")
        ->capture_default_str()
        ->check(whole(1, 1 << 20));
    c->add_option("--rlp-epochs", h.rlp_epochs, "RLP training epochs")
        ->capture_default_str()
        ->check(whole(0, 100000));
    c->add_option("--probe-epochs", h.probe_epochs, "Probe training epochs")
        ->capture_default_str()
        ->check(whole(0, 100000));
    c->add_option("--lr", h.lr, "Adam's learning rate")
        ->capture_default_str()
        ->check(number(0, 10, true));
    c->add_option("--temper", h.temper,
                  "Power on the probe's readings in the smoothing (1: Trail's rule; < 1 weighs "
                  "each reading less)")
        ->capture_default_str()
        ->check(number(0, 1, true));
    c->add_flag("--choose-temper", a->choose_temper,
                "Choose the temper on a validation split (the last 20 % of the training "
                "requests; heads trained on the rest) from 1, 0.5, 0.2, 0.1, 0.05, then train "
                "on all training requests with it");
    c->add_option("--seed", h.seed, "Seed of training")->capture_default_str()->check(seedValue());
    c->add_option("--kv-capacity", a->kv_capacity, "KV capacity (tokens; default: 4 GiB of KV)")
        ->check(number(domains::kKvCapacity));
    c->add_option("--bucket-sweep", a->bucket_sweep,
                  "Also train the RLP alone at these bucket widths B (TimeBill's bucket-count "
                  "comparison) and report each one's held-out MAE, RMSE and R^2")
        ->delimiter(',')
        ->check(CLI::Range(1, 1 << 20));
    c->add_option("--repeats", a->repeats,
                  "With sampling (--temperature): run the workload this many more times with "
                  "other sample seeds and report the best any predictor from the prompt alone "
                  "could do on the held-out requests (the median of a prompt's other answers' "
                  "lengths)")
        ->check(CLI::Range(0, 64));
    c->callback([a] {
        ReadOptions ro;
        ro.limit = a->limit;
        const Workload w = readWorkload(a->workload, ro);
        gpu::heldOutCount(w.size(), a->test_fraction); // before the model is built
        if (a->repeats > 0 && !(a->live.temperature > 0))
            throw std::invalid_argument("--repeats needs sampling (--temperature > 0): a "
                                        "greedy answer is the same every time");
        std::string dtype;
        auto m = buildModel(a->live, &dtype);
        gpu::LengthStudyOptions so;
        so.heads = a->heads;
        if (so.heads.layer == 0) so.heads.layer = (m->config().layers + 1) / 2;
        so.heads.validate();
        if (so.heads.layer > m->config().layers)
            throw std::invalid_argument("--layer " + std::to_string(so.heads.layer) + ": " +
                                        m->config().name + " has " +
                                        std::to_string(m->config().layers) + " layers");
        so.test_fraction = a->test_fraction;
        so.choose_temper = a->choose_temper;
        so.bucket_sweep = a->bucket_sweep;
        so.length_cue = a->live.length_cue;
        PolicyConfig pc;
        pc.name = a->policy;
        EngineLimits lim;
        lim.kv_capacity_tokens = kvCapacityOr(a->kv_capacity, *m);
        std::fprintf(stderr, "collecting: %zu requests live (%.1f s of arrivals)...\n", w.size(),
                     w.span());
        const gpu::LengthCollection got = gpu::collectLengths(*m, w, liveOptions(a->live), pc, lim,
                                                              so.heads.layer, so.heads.every);
        std::fprintf(stderr, "collected on %s\n", got.device.c_str());
        gpu::LengthStudy study = gpu::studyLengths(got.samples, m->config().hidden, so);
        if (a->repeats > 0) {
            // Each held-out prompt answered again with other sample seeds.
            std::vector<std::vector<int>> answers;
            for (int length : study.held_out_lengths) answers.push_back({length});
            for (int k = 1; k <= a->repeats; ++k) {
                LiveArgs again = a->live;
                again.sample_seed = a->live.sample_seed + std::uint64_t(k);
                const std::vector<int> lengths =
                    gpu::answerLengths(*m, w, liveOptions(again), pc, lim, study.held_out);
                for (std::size_t i = 0; i < answers.size(); ++i) answers[i].push_back(lengths[i]);
            }
            study.best_from_prompt = gpu::bestFromPromptMae(answers);
            study.prompt_answers = a->repeats + 1;
        }
        study.heads->save(
            a->out, {{"model", m->config().name},
                     {"weights", m->realWeights() ? "real: " + m->options().weights_dir
                                                  : "synthetic (seed " +
                                                        std::to_string(m->options().seed) + ")"},
                     {"length_cue", std::to_string(a->live.length_cue)},
                     {"trained_on", a->workload},
                     {"train_requests", std::to_string(study.train_requests)}});
        std::fputs(gpu::lengthStudyText(study).c_str(), stdout);
        std::printf("heads written to %s (collecting run: %lld iterations, %.1f s)\n",
                    a->out.c_str(), got.iterations, got.log.sim_wall_ms / 1000.0);
        if (!a->json_out.empty()) {
            const nlohmann::json j = gpu::lengthStudyJson(study, m->config().name);
            writeFileAtomically(a->json_out, [&](std::ostream& f) { f << j.dump(2) << "\n"; });
        }
    });
}

// kairos-cli quality: TimeBill's answer quality against the KV eviction ratio, measured on
// the live model (gpu/quality.h), with a second set of prompts held out to show how far
// the curve moves with the prompts; the curve is what --quality takes.
void addQuality(CLI::App& app) {
    struct Args {
        LiveArgs live;
        gpu::QualityOptions q;
        std::uint64_t holdout_seed = 2;
        std::string out;
    };
    auto a = std::make_shared<Args>();
    auto* c = app.add_subcommand(
        "quality", "Measure answer quality against the KV eviction ratio alpha on the live model "
                   "(TimeBill's trade-off): the full-cache answer's top-1 agreement and "
                   "log-likelihood under an evicted cache; writes a curve for --quality");
    addLiveModelOptions(c, a->live);
    c->add_option("--prompts", a->q.prompts, "Prompts (openings of the model's own stories)")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    c->add_option("--prompt-tokens", a->q.prompt_tokens, "Tokens per prompt")
        ->capture_default_str()
        ->check(CLI::Range(2, 1 << 20));
    c->add_option("--answer-tokens", a->q.answer_tokens, "Tokens per answer")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    c->add_option("--alphas", a->q.alphas, "Eviction ratios measured (each in [0, 1])")
        ->delimiter(',')
        ->check(number(0, 1));
    c->add_option("--snap-window", a->q.snap_window, "SnapKV observation window")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    c->add_option("--seed", a->q.seed, "Seed of the measured prompts")
        ->capture_default_str()
        ->check(seedValue());
    c->add_option("--holdout-seed", a->holdout_seed,
                  "Seed of the held-out prompts (the curve measured again on them)")
        ->capture_default_str()
        ->check(seedValue());
    c->add_option("--out,-o", a->out,
                  "Write the curve and its figures (JSON); --quality FILE "
                  "reads it");
    c->callback([a] {
        if (!a->live.weights.empty() && !std::filesystem::exists(a->live.weights))
            throw InputError(a->live.weights, 0, "--weights", "no such file or folder");
        std::vector<double> alphas = a->q.alphas;
        std::sort(alphas.begin(), alphas.end());
        alphas.erase(std::unique(alphas.begin(), alphas.end()), alphas.end());
        if (alphas.empty() || alphas.front() != 0.0) alphas.insert(alphas.begin(), 0.0);
        a->q.alphas = alphas;
        std::string dtype;
        auto m = buildModel(a->live, &dtype);
        if (!m->realWeights())
            std::fprintf(stderr, "warning: synthetic weights: the curve says nothing about a "
                                 "trained model (--weights)\n");
        const gpu::QualityCurveMeasured fit = gpu::measureQuality(*m, a->q);
        gpu::QualityOptions held = a->q;
        held.seed = a->holdout_seed;
        const gpu::QualityCurveMeasured check = gpu::measureQuality(*m, held);
        std::printf("quality against KV eviction, %s (%s), %d prompts of %d tokens, answers of %d "
                    "tokens, SnapKV window %d\n",
                    m->config().name.c_str(), dtype.c_str(), a->q.prompts, a->q.prompt_tokens,
                    a->q.answer_tokens, a->q.snap_window);
        std::printf("%6s  %10s  %12s  %8s  %18s\n", "alpha", "agreement", "loglik/tok", "prefix",
                    "held-out agreement");
        double worst = 0;
        for (std::size_t i = 0; i < fit.points.size(); ++i) {
            const auto& p = fit.points[i];
            const auto& h = check.points[i];
            worst = std::max(worst, std::abs(p.agreement - h.agreement));
            std::printf("%6.3g  %10.4f  %12.4f  %8.4f  %18.4f\n", p.alpha, p.agreement,
                        p.log_likelihood, p.prefix, h.agreement);
        }
        std::printf("curve (--quality): %s\nheld-out prompts: the agreement moves by %.4f at "
                    "most\n",
                    fit.curve().c_str(), worst);
        if (!a->out.empty()) {
            nlohmann::json j;
            j["kairos_quality"] = 1;
            j["model"] = m->config().name;
            j["weights"] =
                m->options().weights_dir.empty() ? "synthetic" : m->options().weights_dir;
            j["dtype"] = dtype;
            j["prompts"] = a->q.prompts;
            j["prompt_tokens"] = a->q.prompt_tokens;
            j["answer_tokens"] = a->q.answer_tokens;
            j["snap_window"] = a->q.snap_window;
            j["seed"] = a->q.seed;
            j["holdout_seed"] = a->holdout_seed;
            j["quality"] = fit.curve();
            j["holdout_max_difference"] = worst;
            for (std::size_t i = 0; i < fit.points.size(); ++i) {
                const auto& p = fit.points[i];
                j["points"].push_back({{"alpha", p.alpha},
                                       {"agreement", p.agreement},
                                       {"log_likelihood", p.log_likelihood},
                                       {"prefix", p.prefix},
                                       {"holdout_agreement", check.points[i].agreement}});
            }
            writeFileAtomically(a->out, [&](std::ostream& f) { f << j.dump(2) << "\n"; });
            std::printf("wrote %s\n", a->out.c_str());
        }
    });
}

} // namespace

void installLive(CLI::App& app) {
    liveMaker() = [](const LiveArgs& a, const Workload& w, EngineLimits& lim, bool kv_given) {
        return std::unique_ptr<LiveSession>(new Session(a, w, lim, kv_given));
    };
    addProfile(app);
    addValidate(app);
    addLengths(app);
    addQuality(app);
}

} // namespace kairos::cli
