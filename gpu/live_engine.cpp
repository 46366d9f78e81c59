#include "live_engine.h"

#include "quality.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <thread>

namespace kairos::gpu {

namespace {
// splitmix64: the prompt's token ids from (seed, request, position).
std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}
} // namespace

TorchBackend::TorchBackend(Transformer& model, const Workload& w, LiveOptions opt)
    : m_(model), w_(w), opt_(opt), reqs_(w.requests.size()),
      start_(std::chrono::steady_clock::now()),
      origin_(w.requests.empty() ? 0.0 : w.requests.front().arrival) {
    const auto& c = m_.config();
    for (const auto& r : w.requests)
        if (r.prompt_tokens + r.output_tokens > c.max_positions)
            throw std::invalid_argument("request " + std::to_string(r.id) + " needs " +
                                        std::to_string(r.prompt_tokens + r.output_tokens) +
                                        " positions; " + c.name + " has " +
                                        std::to_string(c.max_positions));
    if (opt_.length_cue < 0) throw std::invalid_argument("length cue width must be >= 0");
    if (opt_.story_prompts) {
        if (opt_.length_cue > 0)
            throw std::invalid_argument("story prompts and the length cue exclude each other");
        int longest = 1;
        for (const auto& r : w.requests) longest = std::max(longest, r.prompt_tokens);
        stories_ = sampleOpenings(m_, int(w.requests.size()), longest, opt_.prompt_seed);
    }
    if (opt_.stop_at_eos && (c.eos_token < 0 || c.eos_token >= c.vocab))
        throw std::invalid_argument("stop at EOS: " + c.name +
                                    " has no end-of-sequence token (eos_token_id)");
    if (opt_.length_cue > 0) {
        int longest = 1;
        for (const auto& r : w.requests) longest = std::max(longest, r.output_tokens);
        cue_slices_ = (longest + opt_.length_cue - 1) / opt_.length_cue;
        if (c.vocab / cue_slices_ < 2)
            throw std::invalid_argument(
                "length cue: " + std::to_string(cue_slices_) + " length buckets of " +
                std::to_string(opt_.length_cue) + " tokens leave fewer than 2 token ids each in " +
                c.name + "'s vocabulary of " + std::to_string(c.vocab) + "; use a wider bucket");
    }
    // The wall clock starts now, after the story openings were sampled (150 openings of
    // stories260K took 1.7 s, which every early request's TTFT once carried).
    start_ = std::chrono::steady_clock::now();
}

std::string TorchBackend::describe() const {
    const auto& o = m_.options();
    std::string dtype = o.dtype == at::kFloat ? "fp32" : o.dtype == at::kBFloat16 ? "bf16" : "fp16";
    return "live: " + m_.config().name + " on " + o.device.str() + " (" + dtype + ", " +
           (m_.realWeights() ? "real weights from " + o.weights_dir : "synthetic weights") + ")";
}

double TorchBackend::clock() const {
    return origin_ +
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void TorchBackend::sleepUntil(double t) {
    const double wait = t - clock();
    if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
}

std::pair<std::int64_t, std::int64_t> TorchBackend::cueSlice(ReqId id) const {
    const std::int64_t vocab = m_.config().vocab;
    if (cue_slices_ == 0) return {0, vocab};
    // At most kCueIds ids per bucket: random embeddings have no semantic structure, so a
    // bucket is recognisable only as a small set of ids (a topic's words); the mean of a
    // large random slice is the same for every slice.
    const std::int64_t slice = vocab / cue_slices_;
    const Request& r = w_.requests[static_cast<std::size_t>(id)];
    return {std::int64_t((r.output_tokens - 1) / opt_.length_cue) * slice,
            std::min(slice, kCueIds)};
}

// Token `offset` of span `sp`: from the whole vocabulary, as a span's content is the same
// whatever the request's length cue (or its KV would not be).
std::int64_t TorchBackend::tokenOfSpan(const PrefixSpan& sp, std::int64_t offset) const {
    const std::uint64_t base = mix(opt_.prompt_seed ^ mix(sp.id ^ 0x5350414eULL));
    return static_cast<std::int64_t>(mix(base + std::uint64_t(offset)) %
                                     std::uint64_t(m_.config().vocab));
}

std::int64_t TorchBackend::spanToken(ReqId id, std::int64_t pos) const {
    if (share_block_ == 0) return -1;
    std::int64_t start = 0;
    for (const PrefixSpan& sp : w_.requests[static_cast<std::size_t>(id)].prefix) {
        if (pos < start + sp.tokens) return tokenOfSpan(sp, pos - start);
        start += sp.tokens;
    }
    return -1;
}

std::vector<std::int64_t> TorchBackend::promptTokens(ReqId id) const {
    std::vector<std::int64_t> t = ownPromptTokens(id);
    if (share_block_ == 0) return t;
    std::size_t at = 0; // the spans cover the context from its start
    for (const PrefixSpan& sp : w_.requests[static_cast<std::size_t>(id)].prefix)
        for (std::int64_t k = 0; k < sp.tokens && at < t.size(); ++k) t[at++] = tokenOfSpan(sp, k);
    return t;
}

std::vector<std::int64_t> TorchBackend::ownPromptTokens(ReqId id) const {
    const Request& r = w_.requests[static_cast<std::size_t>(id)];
    if (!stories_.empty()) {
        const auto& s = stories_[static_cast<std::size_t>(id)];
        return {s.begin(),
                s.begin() + std::min<std::ptrdiff_t>(r.prompt_tokens, std::ptrdiff_t(s.size()))};
    }
    const auto [first, size] = cueSlice(id);
    std::vector<std::int64_t> t(static_cast<std::size_t>(r.prompt_tokens));
    const std::uint64_t base = mix(opt_.prompt_seed ^ mix(static_cast<std::uint64_t>(id)));
    for (std::size_t i = 0; i < t.size(); ++i)
        t[i] = first + static_cast<std::int64_t>(mix(base + i) % static_cast<std::uint64_t>(size));
    return t;
}

std::vector<std::int64_t> TorchBackend::context(ReqId id, std::int32_t from, std::int32_t n) {
    Req& q = reqs_[static_cast<std::size_t>(id)];
    if (q.prompt.empty()) q.prompt = promptTokens(id);
    std::vector<std::int64_t> out;
    out.reserve(static_cast<std::size_t>(n));
    for (std::int32_t i = from; i < from + n; ++i) {
        const auto p = static_cast<std::size_t>(i);
        if (p < q.prompt.size())
            out.push_back(q.prompt[p]);
        else if (p - q.prompt.size() < q.generated.size())
            out.push_back(q.generated[p - q.prompt.size()]);
        else
            throw std::logic_error("live engine: context position past the generated tokens");
    }
    return out;
}

void TorchBackend::iterate(const std::vector<Chunk>& chunks, const std::vector<ReqId>& decoders,
                           const EngineView& view) {
    uncompressed_.clear(); // the engine cached what it wanted of them after the last one
    std::vector<Transformer::Step> steps;
    std::vector<SnapScores> snaps(chunks.size());
    steps.reserve(chunks.size() + decoders.size());
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        const Chunk& c = chunks[i];
        Req& q = reqs_[static_cast<std::size_t>(c.id)];
        if (c.from == 0) {
            kv_bytes_ -= q.cache.bytes();
            q.cache.clear();
        }
        if (q.cache.next_pos != c.from)
            throw std::logic_error("live engine: request " + std::to_string(c.id) +
                                   "'s chunk starts at " + std::to_string(c.from) +
                                   ", its KV holds " + std::to_string(q.cache.next_pos));
        Transformer::Step s{&q.cache, context(c.id, c.from, c.tokens)};
        if (c.completes && view.state(c.id).alpha > 0) {
            s.snap_window = opt_.snap_window;
            s.snap = &snaps[i];
        }
        steps.push_back(std::move(s));
    }
    // The observer's readings: (request, generated) of the decoders it reads this time.
    std::vector<at::Tensor> readings(decoders.size());
    for (std::size_t j = 0; j < decoders.size(); ++j) {
        Req& q = reqs_[static_cast<std::size_t>(decoders[j])];
        if (q.generated.empty()) throw std::logic_error("live engine: decode before prefill");
        Transformer::Step s{&q.cache, {q.generated.back()}};
        if (observer_ && q.generated.size() % std::size_t(observer_->every()) == 0) {
            s.hidden_layer = observer_->layer();
            s.hidden = &readings[j];
        }
        steps.push_back(std::move(s));
    }
    if (steps.empty()) return;
    // KV held changes only for this iteration's requests (and releases): no scan of all.
    std::int64_t before = 0;
    for (const auto& s : steps) before += s.cache->bytes();
    at::Tensor logits = m_.forward(steps);
    if (cue_slices_ > 0) {
        // The length task: each request's tokens stay in its bucket's slice of the
        // vocabulary (greedy over the slice), so the answer carries the prompt's cue.
        std::vector<ReqId> order;
        for (const auto& c : chunks) order.push_back(c.id);
        for (ReqId id : decoders) order.push_back(id);
        // No token of the last few of the answer again (a repetition ban, as real decoding
        // uses): with tied embeddings a synthetic model's greedy answer is otherwise one
        // token repeated, which names the bucket no better than a single id.
        const float inf = std::numeric_limits<float>::infinity();
        at::Tensor mask = at::full_like(logits, -inf);
        for (std::size_t i = 0; i < order.size(); ++i) {
            const auto [first, size] = cueSlice(order[i]);
            at::Tensor row = mask[std::int64_t(i)];
            row.narrow(0, first, size).zero_();
            const auto& gen = reqs_[static_cast<std::size_t>(order[i])].generated;
            const auto ban = std::min<std::size_t>(
                {gen.size(), kCueNoRepeat, static_cast<std::size_t>(size - 1)});
            for (std::size_t k = gen.size() - ban; k < gen.size(); ++k) row[gen[k]] = -inf;
        }
        logits = logits + mask;
    }
    std::vector<std::int64_t> ids(std::size_t(logits.size(0)));
    if (opt_.temperature > 0) {
        // Seeded sampling on the host: each row with its request's own stream.
        const at::Tensor host = logits.to(at::kCPU, at::kFloat).contiguous(); // waits
        const auto vocab = static_cast<int>(host.size(1));
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const ReqId id = i < chunks.size() ? chunks[i].id : decoders[i - chunks.size()];
            Req& q = reqs_[static_cast<std::size_t>(id)];
            if (!q.sampler)
                q.sampler.emplace(opt_.temperature, opt_.top_p,
                                  mix(opt_.sample_seed ^ mix(static_cast<std::uint64_t>(id) + 1)));
            ids[i] = q.sampler->sample(host.data_ptr<float>() + i * std::size_t(vocab), vocab);
        }
    } else {
        const at::Tensor next = logits.argmax(-1).to(at::kCPU); // waits for the device
        std::copy_n(next.data_ptr<std::int64_t>(), ids.size(), ids.begin());
    }
    // An answer a prefix span covers is the span's (see shareBlocks).
    const auto forced = [&](ReqId id, std::int64_t& token) {
        const Req& q = reqs_[static_cast<std::size_t>(id)];
        const std::int64_t s = spanToken(id, std::int64_t(q.prompt.size() + q.generated.size()));
        if (s >= 0) token = s;
    };
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        const Chunk& c = chunks[i];
        if (!c.completes) continue;
        Req& q = reqs_[static_cast<std::size_t>(c.id)];
        forced(c.id, ids[i]);
        q.generated.push_back(ids[i]);
        const double alpha = view.state(c.id).alpha;
        if (alpha > 0 && share_block_ > 0) {
            // The engine caches the prompt's blocks as computed (sim/prefix_cache.h).
            SeqCache& u = uncompressed_[c.id];
            for (std::size_t l = 0; l < q.cache.k.size(); ++l) {
                u.k.push_back(q.cache.k[l].narrow(1, 0, q.cache.len).clone());
                u.v.push_back(q.cache.v[l].narrow(1, 0, q.cache.len).clone());
            }
            u.len = u.cap = u.next_pos = q.cache.len;
        }
        if (alpha > 0)
            m_.evict(q.cache, alpha, snaps[i],
                     w_.requests[static_cast<std::size_t>(c.id)].prompt_tokens, opt_.snap_pool);
    }
    for (std::size_t j = 0; j < decoders.size(); ++j) {
        auto& gen = reqs_[static_cast<std::size_t>(decoders[j])].generated;
        if (readings[j].defined()) observer_->observe(decoders[j], int(gen.size()), readings[j][0]);
        forced(decoders[j], ids[chunks.size() + j]);
        gen.push_back(ids[chunks.size() + j]);
    }
    ++iterations_;
    for (const auto& s : steps) kv_bytes_ += s.cache->bytes();
    kv_bytes_ -= before;
    peak_kv_bytes_ = std::max(peak_kv_bytes_, kv_bytes_);
}

bool TorchBackend::stopped(ReqId id) const {
    const auto& gen = reqs_[static_cast<std::size_t>(id)].generated;
    return opt_.stop_at_eos && !gen.empty() && gen.back() == m_.config().eos_token;
}

void TorchBackend::release(ReqId id, bool restart) {
    Req& q = reqs_[static_cast<std::size_t>(id)];
    kv_bytes_ -= q.cache.bytes();
    q.cache.clear();
    if (restart) {
        q.generated.clear();
        q.sampler.reset(); // the recompute samples the same answer again
    }
}

void TorchBackend::shareBlocks(std::int32_t block_size) {
    if (block_size < 1) throw std::invalid_argument("live engine: block size must be >= 1");
    if (iterations_ > 0) throw std::logic_error("live engine: shareBlocks after the run began");
    share_block_ = block_size;
    for (auto& q : reqs_) q.prompt.clear(); // drawn again with the spans' tokens
}

void TorchBackend::cacheBlock(ReqId id, std::int32_t index, std::uint64_t hash) {
    const auto u = uncompressed_.find(id);
    const SeqCache& src =
        u != uncompressed_.end() ? u->second : reqs_[static_cast<std::size_t>(id)].cache;
    const std::int64_t from = std::int64_t(index) * share_block_;
    if (share_block_ == 0 || !src.kept.empty() || from + share_block_ > src.len)
        throw std::logic_error("live engine: block " + std::to_string(index) + " of request " +
                               std::to_string(id) + " is cached but its KV is not held");
    SeqCache b;
    for (std::size_t l = 0; l < src.k.size(); ++l) {
        b.k.push_back(src.k[l].narrow(1, from, share_block_).clone());
        b.v.push_back(src.v[l].narrow(1, from, share_block_).clone());
    }
    b.len = b.cap = b.next_pos = share_block_;
    auto [it, fresh] = store_.try_emplace(hash);
    if (!fresh) store_bytes_ -= it->second.bytes();
    it->second = std::move(b);
    store_bytes_ += it->second.bytes();
}

void TorchBackend::uncacheBlock(std::uint64_t hash) {
    const auto it = store_.find(hash);
    if (it == store_.end()) return;
    store_bytes_ -= it->second.bytes();
    store_.erase(it);
}

void TorchBackend::reuseBlocks(ReqId id, const std::vector<std::uint64_t>& hashes) {
    Req& q = reqs_[static_cast<std::size_t>(id)];
    kv_bytes_ -= q.cache.bytes();
    q.cache.clear();
    if (hashes.empty()) return;
    const std::size_t layers = static_cast<std::size_t>(m_.config().layers);
    std::vector<at::Tensor> ks, vs;
    for (std::size_t l = 0; l < layers; ++l) {
        ks.clear();
        vs.clear();
        for (std::uint64_t h : hashes) {
            const auto it = store_.find(h);
            if (it == store_.end() || it->second.k.size() != layers)
                throw std::logic_error("live engine: request " + std::to_string(id) +
                                       " reuses a block whose KV is not cached");
            ks.push_back(it->second.k[l]);
            vs.push_back(it->second.v[l]);
        }
        q.cache.k.push_back(at::cat(ks, 1));
        q.cache.v.push_back(at::cat(vs, 1));
    }
    q.cache.len = q.cache.cap = q.cache.next_pos = std::int64_t(hashes.size()) * share_block_;
    reused_tokens_ += q.cache.len;
    kv_bytes_ += q.cache.bytes();
    peak_kv_bytes_ = std::max(peak_kv_bytes_, kv_bytes_);
}

std::int64_t kvCapacityTokens(const Transformer& m, double budget_bytes) {
    const auto per = m.config().shape(int(c10::elementSize(m.options().dtype))).kvBytesPerToken();
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(budget_bytes / double(per)));
}

} // namespace kairos::gpu
