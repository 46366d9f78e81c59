#include "quality.h"

#include "weights/llama2c.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace kairos::gpu {

namespace {

// One forward over every sequence: each appends `tokens[i]`; [n, vocab] float on the CPU.
at::Tensor stepAll(Transformer& m, std::vector<SeqCache>& caches,
                   const std::vector<std::vector<std::int64_t>>& tokens,
                   std::vector<SnapScores>* snaps = nullptr, int snap_window = 0) {
    std::vector<Transformer::Step> steps;
    for (std::size_t i = 0; i < caches.size(); ++i) {
        Transformer::Step s{&caches[i], tokens[i]};
        if (snaps) {
            s.snap_window = snap_window;
            s.snap = &(*snaps)[i];
        }
        steps.push_back(std::move(s));
    }
    return m.forward(steps).to(at::kCPU, at::kFloat).contiguous();
}

// The prompts prefilled (scored for SnapKV), `alpha` of each evicted; the prefill's logits.
at::Tensor prefillEvicted(Transformer& m, std::vector<SeqCache>& caches,
                          const std::vector<std::vector<std::int64_t>>& prompts, double alpha,
                          const QualityOptions& opt) {
    caches.assign(prompts.size(), SeqCache{});
    std::vector<SnapScores> snaps(prompts.size());
    const at::Tensor logits = stepAll(m, caches, prompts, &snaps, opt.snap_window);
    for (std::size_t i = 0; i < caches.size(); ++i)
        m.evict(caches[i], alpha, snaps[i], std::int64_t(prompts[i].size()), opt.snap_pool);
    return logits;
}

} // namespace

std::string QualityCurveMeasured::curve() const {
    std::string s;
    for (const QualityPoint& p : points) {
        char b[64];
        std::snprintf(b, sizeof b, "%s%g:%.4f", s.empty() ? "" : ",", p.alpha, p.agreement);
        s += b;
    }
    return s;
}

std::vector<std::vector<std::int64_t>> sampleOpenings(Transformer& m, int count, int tokens,
                                                      std::uint64_t seed) {
    const int bos = llama2c::kBos;
    if (count <= 0 || tokens <= 0) return {};
    std::vector<std::vector<std::int64_t>> out(std::size_t(count), std::vector<std::int64_t>{bos});
    std::vector<SeqCache> caches(static_cast<std::size_t>(count));
    std::vector<llama2c::Sampler> samplers;
    for (int i = 0; i < count; ++i)
        samplers.emplace_back(1.0, 0.9, seed * 1000003u + std::uint64_t(i));
    std::vector<std::vector<std::int64_t>> next(static_cast<std::size_t>(count));
    for (int t = 1; t < tokens; ++t) {
        for (int i = 0; i < count; ++i) next[std::size_t(i)] = {out[std::size_t(i)].back()};
        at::Tensor logits = stepAll(m, caches, next);
        const auto vocab = int(logits.size(1));
        float* data = logits.data_ptr<float>();
        for (int i = 0; i < count; ++i) {
            float* row = data + std::size_t(i) * std::size_t(vocab);
            // One story: its end (BOS) is not drawn inside an opening.
            if (bos < vocab) row[bos] = -std::numeric_limits<float>::infinity();
            out[std::size_t(i)].push_back(samplers[std::size_t(i)].sample(row, vocab));
        }
    }
    return out;
}

QualityCurveMeasured measureQuality(Transformer& m, const QualityOptions& opt) {
    if (opt.prompt_tokens + opt.answer_tokens > m.config().max_positions)
        throw std::invalid_argument(
            "quality: prompt and answer (" + std::to_string(opt.prompt_tokens + opt.answer_tokens) +
            " tokens) exceed the model's context of " + std::to_string(m.config().max_positions));
    if (opt.answer_tokens < 1 || opt.prompts < 1)
        throw std::invalid_argument("quality: nothing to measure");
    const auto prompts = sampleOpenings(m, opt.prompts, opt.prompt_tokens, opt.seed);
    const std::size_t n = prompts.size();
    const int g = opt.answer_tokens;
    // The full-cache answers, greedy.
    std::vector<std::vector<std::int64_t>> answer(n);
    {
        std::vector<SeqCache> caches;
        at::Tensor logits = prefillEvicted(m, caches, prompts, 0.0, opt);
        for (int j = 0; j < g; ++j) {
            const at::Tensor next = logits.argmax(-1);
            std::vector<std::vector<std::int64_t>> feed(n);
            for (std::size_t i = 0; i < n; ++i) {
                answer[i].push_back(next[std::int64_t(i)].item<std::int64_t>());
                feed[i] = {answer[i].back()};
            }
            if (j + 1 < g) logits = stepAll(m, caches, feed);
        }
    }
    QualityCurveMeasured out;
    for (double alpha : opt.alphas) {
        QualityPoint p;
        p.alpha = alpha;
        // Teacher forcing: the full answer fed back; top-1 agreement and log-likelihood.
        std::vector<SeqCache> caches;
        at::Tensor logits = prefillEvicted(m, caches, prompts, alpha, opt);
        double agree = 0, ll = 0;
        for (int j = 0; j < g; ++j) {
            const at::Tensor logp = at::log_softmax(logits, -1);
            const at::Tensor top = logits.argmax(-1);
            std::vector<std::vector<std::int64_t>> feed(n);
            for (std::size_t i = 0; i < n; ++i) {
                const std::int64_t want = answer[i][std::size_t(j)];
                agree += top[std::int64_t(i)].item<std::int64_t>() == want;
                ll += logp[std::int64_t(i)][want].item<double>();
                feed[i] = {want};
            }
            if (j + 1 < g) logits = stepAll(m, caches, feed);
        }
        p.agreement = agree / double(n * std::size_t(g));
        p.log_likelihood = ll / double(n * std::size_t(g));
        // Free running from the evicted cache: the common prefix with the full answer.
        logits = prefillEvicted(m, caches, prompts, alpha, opt);
        std::vector<int> prefix(n, 0);
        std::vector<bool> same(n, true);
        for (int j = 0; j < g; ++j) {
            const at::Tensor next = logits.argmax(-1);
            std::vector<std::vector<std::int64_t>> feed(n);
            for (std::size_t i = 0; i < n; ++i) {
                const std::int64_t tok = next[std::int64_t(i)].item<std::int64_t>();
                if (same[i] && tok == answer[i][std::size_t(j)])
                    ++prefix[i];
                else
                    same[i] = false;
                feed[i] = {tok};
            }
            if (j + 1 < g) logits = stepAll(m, caches, feed);
        }
        double pre = 0;
        for (int x : prefix) pre += double(x) / g;
        p.prefix = pre / double(n);
        out.points.push_back(p);
    }
    return out;
}

} // namespace kairos::gpu
