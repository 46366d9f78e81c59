// kairos-gpu-check: what a user with an NVIDIA GPU runs first, after building the gpu
// preset (README, "On an NVIDIA GPU"). No Qt, no SQLite: it needs what kairos-live needs.
//   1. the CUDA kernels against their host references (kernels/compare.h);
//   2. the transformer on CUDA against the same weights on the CPU (fp32 both, then the
//      GPU's serving dtype): logits and next tokens over a ragged prefill and decode steps;
//   3. decode-step time at batch 1/8/32/128 against the memory-bandwidth bound (every
//      weight and the whole KV cache read once per step), with the bandwidth measured here
//      by a device-to-device copy (or given);
//   4. prefill tokens/s at batch 1.
// Without a GPU, 1 and 2 say why they did not run and 3-4 time the CPU (--device cpu), so
// CI runs the same program against Debian's CPU libtorch. Exit 0 when every check that ran
// passed, 1 when one failed (or --require-gpu without a GPU), 2 on bad input.
#include "kernels/compare.h"
#include "live_profile.h"
#include "llm_config.h"
#include "transformer.h"
#include "util/atomic_file.h"
#include "util/input_error.h"

#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using namespace kairos;
using namespace kairos::gpu;

struct Args {
    std::string model = "qwen2.5-0.5b", weights, device, dtype, json_out;
    std::vector<int> batches{1, 8, 32, 128}, prefill{128, 512, 2048};
    int context = 512, repeats = 5, warmup = 2;
    double bandwidth_gbs = 0;
    bool require_gpu = false;
};

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

at::ScalarType dtypeOf(const std::string& s) {
    if (s == "fp32") return at::kFloat;
    if (s == "bf16") return at::kBFloat16;
    if (s == "fp16") return at::kHalf;
    throw std::invalid_argument("--dtype must be fp32, bf16 or fp16, not '" + s + "'");
}

LlmConfig configOf(const Args& a) {
    if (a.weights.empty()) return builtinConfig(a.model);
    return std::filesystem::is_regular_file(a.weights)
               ? readLlama2cConfig(a.weights)
               : readHfConfig((std::filesystem::path(a.weights) / "config.json").string());
}

Transformer makeModel(const Args& a, at::Device dev, at::ScalarType dt) {
    TransformerOptions o;
    o.device = dev;
    o.dtype = dt;
    o.seed = 1;
    o.weights_dir = a.weights;
    return Transformer(configOf(a), o);
}

// The bytes one second of copying moves on `dev`: a 1 GiB tensor (256 MiB on the CPU)
// copied `n` times, each copy reading and writing it once.
double copyBandwidth(at::Device dev) {
    const std::int64_t n = dev.is_cuda() ? (std::int64_t(1) << 28) : (std::int64_t(1) << 26);
    auto src = at::ones({n}, at::TensorOptions(at::kFloat).device(dev));
    auto dst = at::empty_like(src);
    dst.copy_(src); // warm-up
    (void)dst.sum().item<float>();
    std::vector<double> t;
    for (int r = 0; r < 5; ++r) {
        const double a = now();
        dst.copy_(src);
        (void)dst[0].item<float>(); // synchronises a CUDA stream
        t.push_back(now() - a);
    }
    std::sort(t.begin(), t.end());
    return 2.0 * double(n) * 4.0 / t[t.size() / 2];
}

// Logits of a ragged iteration (three prompts of different lengths prefilled together)
// and then `steps` batched decode steps, each feeding back every request's argmax, or with
// `follow` the tokens `follow` chose (teacher-forced on the reference, so that one early
// disagreement does not make every later step differ). The CPU run in fp32 is the reference.
struct Trace {
    std::vector<at::Tensor> logits; // per iteration [3, vocab] float on the CPU
    std::vector<std::vector<std::int64_t>> next;
};

Trace trace(Transformer& m, int steps, const Trace* follow = nullptr) {
    const int vocab = m.config().vocab;
    std::vector<SeqCache> caches(3);
    std::vector<Transformer::Step> s;
    std::size_t i = 0;
    for (int len : {17, 64, 200}) {
        std::vector<std::int64_t> p;
        for (int k = 0; k < len; ++k) p.push_back((std::int64_t(k) * 7919 + len) % vocab);
        s.push_back({&caches[i++], p});
    }
    Trace t;
    const std::size_t iterations = follow ? follow->next.size() : std::size_t(steps) + 1;
    for (std::size_t it = 0; it < iterations; ++it) {
        const at::Tensor l = m.forward(s).to(at::kCPU).to(at::kFloat);
        t.logits.push_back(l);
        const at::Tensor best = l.argmax(1);
        std::vector<std::int64_t> nx;
        for (std::int64_t k = 0; k < best.size(0); ++k) nx.push_back(best[k].item<std::int64_t>());
        t.next.push_back(nx);
        const auto& fed = follow ? follow->next[it] : nx;
        s.clear();
        for (std::size_t k = 0; k < 3; ++k) s.push_back({&caches[k], {fed[k]}});
    }
    return t;
}

struct Agreement {
    double max_abs = 0, scale = 0, top1 = 0;
};

Agreement agree(const Trace& ref, const Trace& got) {
    Agreement g;
    int same = 0, n = 0;
    for (std::size_t it = 0; it < ref.logits.size(); ++it) {
        g.max_abs =
            std::max(g.max_abs, (ref.logits[it] - got.logits[it]).abs().max().item<double>());
        g.scale = std::max(g.scale, ref.logits[it].abs().max().item<double>());
        for (std::size_t k = 0; k < ref.next[it].size(); ++k, ++n)
            same += ref.next[it][k] == got.next[it][k];
    }
    g.top1 = n ? double(same) / n : 0;
    return g;
}

int run(const Args& a) {
    bool failed = false;
    nlohmann::json out = nlohmann::json::object();
    out["libraries"] = libraryVersions();
    const bool cuda = at::hasCUDA();
    std::printf("kairos-gpu-check: %s, %s\n", libraryVersions().c_str(),
                cuda ? "CUDA available" : "no CUDA device or a CPU-only libtorch");
    if (a.require_gpu && !cuda) {
        std::printf("--require-gpu: no GPU, nothing checked\n");
        return 1;
    }

    // 1. Kernels.
    const kernels::KernelComparison kc = kernels::compareCudaWithHost();
    std::printf("\n1. CUDA kernels against their host references\n");
    nlohmann::json kj = {{"ran", kc.ran}};
    if (!kc.ran) {
        std::printf("   not run: %s\n", kc.why_not.c_str());
        kj["why_not"] = kc.why_not;
    } else {
        for (const auto& c : kc.cases) {
            std::printf("   %-60s worst %.3g (tolerance %.3g) %s\n", c.name.c_str(), c.worst,
                        c.tolerance, c.passed() ? "ok" : "FAILED");
            kj["cases"].push_back(
                {{"name", c.name}, {"worst", c.worst}, {"tolerance", c.tolerance}});
        }
        if (!kc.error.empty()) std::printf("   CUDA error: %s\n", kc.error.c_str());
        failed |= !kc.passed();
        kj["passed"] = kc.passed();
    }
    out["kernels"] = kj;

    // 2. The transformer on CUDA against the CPU.
    std::printf("\n2. The transformer on CUDA against the CPU, %s\n",
                a.weights.empty() ? (a.model + ", synthetic weights").c_str() : a.weights.c_str());
    nlohmann::json tj = {{"ran", cuda}};
    if (!cuda) {
        std::printf("   not run: no CUDA\n");
    } else {
        Transformer cpu = makeModel(a, at::kCPU, at::kFloat);
        const Trace ref = trace(cpu, 8);
        const std::string serving = a.dtype.empty() ? "bf16" : a.dtype;
        // fp32 against the CPU's fp32: the same arithmetic in another order (rel. 1e-3 of the
        // logits' range, every argmax the same). A 16-bit run is judged against the CPU
        // running the same 16-bit type, on its logits (5e-2 of the range): its gap to fp32 is
        // the type's rounding, which depends on the model, not on the CUDA code (on an H200,
        // stories260K in bf16 was 1.44 of a 14.9 range from fp32, 9.4 times its fp16 gap, as
        // the types' 8-bit and 11-bit significands predict; qwen2.5-0.5b's was 2.31 of 868),
        // so that gap is printed, not judged. Nor are a 16-bit run's argmaxes: where the
        // reference's two best logits lie within twice the tolerance, rounding may swap them
        // (stories260K's flat logits on these synthetic prompts: 5 of 27 swapped against
        // the CPU's bf16 while every logit was within 0.663 of it).
        const auto judge = [&](const std::string& dt, const Agreement& ag, bool f32,
                               const char* against) {
            const double tol = (f32 ? 1e-3 : 5e-2) * std::max(1.0, ag.scale);
            const bool ok = ag.max_abs <= tol && (!f32 || ag.top1 >= 1.0);
            std::printf("   %-5s against the CPU's %-5s max |logit diff| %.3g of range %.3g "
                        "(tolerance %.3g); next token agrees %.1f %% %s %s\n",
                        dt.c_str(), against, ag.max_abs, ag.scale, tol, 100 * ag.top1,
                        f32 ? "(needs 100 %)" : "(reported)", ok ? "ok" : "FAILED");
            failed |= !ok;
            return ok;
        };
        for (const std::string& dt : {std::string("fp32"), serving}) {
            Transformer g = makeModel(a, at::Device(at::kCUDA, 0), dtypeOf(dt));
            const Trace got = trace(g, 0, &ref);
            const Agreement to32 = agree(ref, got);
            if (dt == "fp32") {
                const bool ok = judge(dt, to32, true, "fp32");
                tj[dt] = {{"max_abs", to32.max_abs},
                          {"scale", to32.scale},
                          {"top1", to32.top1},
                          {"ok", ok}};
                continue;
            }
            Transformer c16 = makeModel(a, at::kCPU, dtypeOf(dt));
            const Agreement same = agree(trace(c16, 0, &ref), got);
            const bool ok = judge(dt, same, false, dt.c_str());
            std::printf("   %-5s against the CPU's fp32  max |logit diff| %.3g of range %.3g; "
                        "next token agrees %.1f %% (the type's rounding: reported)\n",
                        dt.c_str(), to32.max_abs, to32.scale, 100 * to32.top1);
            tj[dt] = {{"max_abs", same.max_abs},
                      {"scale", same.scale},
                      {"top1", same.top1},
                      {"ok", ok},
                      {"against_fp32",
                       {{"max_abs", to32.max_abs}, {"scale", to32.scale}, {"top1", to32.top1}}}};
        }
    }
    out["transformer"] = tj;

    // 3 and 4. Timings on the device asked for (default: CUDA when there is one).
    const std::string device = a.device.empty() ? (cuda ? "cuda" : "cpu") : a.device;
    if (device != "cpu" && device != "cuda")
        throw std::invalid_argument("--device must be cpu or cuda, not '" + device + "'");
    if (device == "cuda" && !cuda) throw std::invalid_argument("--device cuda: no CUDA here");
    const at::Device dev = device == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
    const std::string dts = a.dtype.empty() ? (device == "cuda" ? "bf16" : "fp32") : a.dtype;
    if (!cuda && device == "cpu") settleHostAllocator();
    Transformer m = makeModel(a, dev, dtypeOf(dts));
    const LlmConfig& cfg = m.config();
    const double bw = a.bandwidth_gbs > 0 ? a.bandwidth_gbs * 1e9 : copyBandwidth(dev);
    const auto elem = double(at::elementSize(dtypeOf(dts)));
    // Read once per step: every weight but the embedding table (a row per token; when
    // the LM head is tied it is the same table, read whole as the head).
    double weights = double(m.weightBytes());
    if (!cfg.tie_embeddings) weights -= double(cfg.vocab) * cfg.hidden * elem;
    const double kv_per_pos = 2.0 * cfg.layers * cfg.kv_heads * cfg.head_dim * elem;
    std::printf("\n3. Decode step on %s (%s), %s, context %d per request\n   bandwidth %.1f GB/s "
                "(%s); weights read per step %.1f MB\n",
                deviceName(m).c_str(), dts.c_str(), cfg.name.c_str(), a.context, bw / 1e9,
                a.bandwidth_gbs > 0 ? "given" : "measured: device copy", weights / 1e6);
    std::printf("   %6s %12s %12s %10s %14s\n", "batch", "ms/step", "bound ms", "x bound",
                "tokens/s");
    nlohmann::json dj = nlohmann::json::array();
    for (int b : a.batches) {
        std::int64_t kv = 0;
        double spread = 0;
        const double s = timeDecodeStep(m, b, a.context, a.warmup, a.repeats, &kv, &spread);
        const double bound = (weights + double(kv) * kv_per_pos) / bw;
        std::printf("   %6d %12.3f %12.3f %10.2f %14.0f\n", b, 1e3 * s, 1e3 * bound, s / bound,
                    b / s);
        dj.push_back({{"batch", b},
                      {"seconds", s},
                      {"bound_seconds", bound},
                      {"spread_pct", spread},
                      {"kv_positions", kv}});
    }
    out["decode"] = {{"device", deviceName(m)},
                     {"dtype", dts},
                     {"bandwidth_bytes_per_s", bw},
                     {"bandwidth_given", a.bandwidth_gbs > 0},
                     {"weights_read_bytes", weights},
                     {"context", a.context},
                     {"steps", dj}};

    std::printf("\n4. Prefill at batch 1\n   %8s %12s %14s\n", "tokens", "ms", "tokens/s");
    nlohmann::json pj = nlohmann::json::array();
    for (int len : a.prefill) {
        if (len > cfg.max_positions) {
            std::printf("   %8d past the model's %d positions: skipped\n", len, cfg.max_positions);
            continue;
        }
        double spread = 0;
        const double s = timePrefillStep(m, 1, len, a.warmup, a.repeats, &spread);
        std::printf("   %8d %12.3f %14.0f\n", len, 1e3 * s, len / s);
        pj.push_back({{"tokens", len}, {"seconds", s}, {"spread_pct", spread}});
    }
    out["prefill"] = pj;
    out["passed"] = !failed;
    if (!a.json_out.empty())
        writeFileAtomically(a.json_out, [&](std::ostream& f) { f << out.dump(2) << "\n"; });
    std::printf("\n%s\n", failed ? "FAILED" : "every check that ran passed");
    return failed ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
    Args a;
    CLI::App app{"kairos-gpu-check: the CUDA kernels and transformer against their CPU "
                 "references, decode steps against the bandwidth bound, prefill speed"};
    app.add_option("--model", a.model, "Built-in model (tiny, qwen2.5-0.5b, llama-3-8b)")
        ->capture_default_str();
    app.add_option("--weights", a.weights, "A Hugging Face folder or a llama2.c FILE.bin instead");
    app.add_option("--device", a.device, "Where to time: cpu or cuda (default: cuda when present)");
    app.add_option("--dtype", a.dtype, "fp32, bf16 or fp16 (default bf16 on cuda, fp32 on cpu)");
    app.add_option("--batches", a.batches, "Decode batches")
        ->delimiter(',')
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    app.add_option("--context", a.context, "KV positions per request in the decode steps")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--prefill", a.prefill, "Prefill lengths (batch 1)")
        ->delimiter(',')
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("--repeats", a.repeats, "Timings per point (median kept)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    app.add_option("--warmup", a.warmup, "Untimed runs first")
        ->capture_default_str()
        ->check(CLI::Range(0, 1000));
    app.add_option("--bandwidth-gbs", a.bandwidth_gbs,
                   "Memory bandwidth for the bound, GB/s (e.g. 3350 for an H100 SXM; default: "
                   "measured by a device copy)")
        ->check(CLI::Range(1e-3, 1e6));
    app.add_flag("--require-gpu", a.require_gpu, "Fail when there is no GPU");
    app.add_option("--json", a.json_out, "Write every figure as JSON here");
    try {
        app.parse(argc, argv);
        return run(a);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    } catch (const InputError& e) {
        std::fprintf(stderr, "kairos-gpu-check: error: %s\n", e.what());
        return 2;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "kairos-gpu-check: error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kairos-gpu-check: internal error: %s\n", e.what());
        return 3;
    }
}
