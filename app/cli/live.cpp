// kairos-cli live: builds the real transformer and its backend for the engine. The only
// translation unit of the CLI that sees libtorch.
#include "commands.h"
#include "live_engine.h"

#include <ATen/Parallel.h>
#include <filesystem>
#include <stdexcept>

namespace kairos::cli {

namespace {

class Session final : public LiveSession {
public:
    Session(const LiveArgs& a, const Workload& w, EngineLimits& lim, bool kv_given) {
        if (a.threads > 0) at::set_num_threads(a.threads);
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
        const std::string dtype =
            a.dtype.empty() ? (o.device.is_cuda() ? "bf16" : "fp32") : a.dtype;
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
            cfg = gpu::readHfConfig((std::filesystem::path(a.weights) / "config.json").string());
        } else {
            cfg = gpu::builtinConfig(a.model);
        }
        model_ = std::make_unique<gpu::Transformer>(cfg, o);
        gpu::LiveOptions lo;
        lo.snap_window = a.snap_window;
        lo.prompt_seed = a.prompt_seed;
        backend_ = std::make_unique<gpu::TorchBackend>(*model_, w, lo);
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
    }
    LiveBackend& backend() override { return *backend_; }
    std::vector<std::pair<std::string, std::string>> config() const override { return config_; }

private:
    std::unique_ptr<gpu::Transformer> model_;
    std::unique_ptr<gpu::TorchBackend> backend_;
    std::vector<std::pair<std::string, std::string>> config_;
};

} // namespace

void installLive() {
    liveMaker() = [](const LiveArgs& a, const Workload& w, EngineLimits& lim, bool kv_given) {
        return std::unique_ptr<LiveSession>(new Session(a, w, lim, kv_given));
    };
}

} // namespace kairos::cli
