// Prefix caching (sim/prefix_cache.h) by hand-derived cases, against counts made
// independently of the engine on Mooncake's real trace, and as a property over every
// registered policy: a run whose cache never hits is the run without a cache.
#include "exec/execution_model.h"
#include "export/requests_csv.h"
#include "export/runlog_jsonl.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "prefix_cache_oracle.h"
#include "random_cases.h"
#include "sched/fcfs.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "test_util.h"
#include "util/input_error.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <QtTest>
#include <cmath>
#include <map>
#include <random>
#include <sstream>

using namespace kairos;
using kairos::test::handModel;
using kairos::test::req;

namespace {

EngineLimits cachingLimits(std::int64_t capacity, int block = 4) {
    EngineLimits lim;
    lim.kv_capacity_tokens = capacity;
    lim.block_size = block;
    lim.prefix_caching = true;
    return lim;
}

Request shared(double arrival, int prompt, int output, std::uint64_t id, int tokens) {
    Request r = req(arrival, prompt, output);
    r.prefix = {{id, tokens}};
    return r;
}

RunLog run(const Workload& w, const EngineLimits& lim, const ExecutionModel& m) {
    FcfsScheduler fcfs;
    return simulate(w, m, fcfs, lim);
}

// The value of the first event `ev` of request `id`, and its time (-1 / NaN if none).
std::pair<int, double> first(const RunLog& log, ReqId id, Ev ev) {
    for (const Event& e : log.events)
        if (e.req == id && e.ev == ev) return {e.value, e.t};
    return {-1, std::nan("")};
}

Workload mooncake(std::size_t limit = 0) {
    ReadOptions ro;
    ro.limit = limit;
    return readWorkload(test::dataPath("mooncake_conversation_trace.jsonl"), ro);
}

// SGLang's radix tree over the requests' prefix spans, in arrival order: the tokens of
// each prompt that an earlier prompt already holds, whole blocks only, at most all but
// one prompt token (what vLLM's block hashes find when nothing is evicted and every
// earlier request is done before the next arrives).
std::int64_t radixTreeHits(const Workload& w, int block) {
    struct Node {
        std::map<std::pair<std::uint64_t, std::int32_t>, int> child;
    };
    std::vector<Node> tree(1);
    std::int64_t hits = 0;
    for (const Request& r : w.requests) {
        int at = 0;
        std::int64_t matched = 0;
        for (const PrefixSpan& s : r.prefix) {
            const auto it = tree[std::size_t(at)].child.find({s.id, s.tokens});
            if (it == tree[std::size_t(at)].child.end()) break;
            at = it->second;
            matched += s.tokens;
        }
        const std::int64_t most = (r.prompt_tokens - 1) / block;
        hits += std::min(matched / block, most) * block;
        at = 0;
        for (const PrefixSpan& s : r.prefix) {
            const auto key = std::make_pair(s.id, s.tokens);
            auto it = tree[std::size_t(at)].child.find(key);
            if (it == tree[std::size_t(at)].child.end()) {
                tree.emplace_back();
                it = tree[std::size_t(at)].child.emplace(key, int(tree.size()) - 1).first;
            }
            at = it->second;
        }
    }
    return hits;
}

} // namespace

class TestPrefixCache : public QObject {
    Q_OBJECT
private slots:
    // Blocks of 4 tokens. A and B: 14-token prompts whose first 12 tokens are the same
    // (one span), 2 output tokens; B arrives after A is done.
    //   A: prefill 14: 1 + 0.14 + 1e-4 * 196 = 1.1596 s (TTFT), one decode: done at 2.1596.
    //      At its prefill's end blocks 0..2 (tokens 0..11) are cached.
    //   B at 10 s: finds 3 blocks (12 tokens; at most (14 - 1) / 4 = 3), computes 2:
    //      1 + 0.02 + 1e-4 * (14^2 - 12^2) = 1.0252 s.
    //   C at 20 s, a 12-token prompt, the same span: at most (12 - 1) / 4 = 2 blocks (one
    //      prompt token is always computed): 8 cached, 4 computed:
    //      1 + 0.04 + 1e-4 * (12^2 - 8^2) = 1.048 s.
    // Without caching every TTFT is the full prefill. Hit rate: (12 + 8) / 40.
    void sharedPrefixExactTtfts() {
        Workload w;
        w.requests = {shared(0, 14, 2, 7, 12), shared(10, 14, 2, 7, 12), shared(20, 12, 1, 7, 12)};
        const EteModel m = handModel();
        const RunLog on = run(w, cachingLimits(1000), m);
        const auto mon = perRequest(on);
        QCOMPARE(mon[0].ttft(), 1.1596);
        QVERIFY(std::fabs(mon[1].ttft() - 1.0252) < 1e-12);
        QVERIFY(std::fabs(mon[2].ttft() - 1.048) < 1e-12);
        QCOMPARE(first(on, 1, Ev::CacheHit).first, 12);
        QCOMPARE(first(on, 1, Ev::CacheHit).second, 10.0);
        QCOMPARE(first(on, 1, Ev::PrefillStart).first, 2); // tokens to compute
        QCOMPARE(first(on, 2, Ev::CacheHit).first, 8);
        QCOMPARE(first(on, 0, Ev::CacheHit).first, -1);
        const Summary s = summarize(on);
        QVERIFY(s.prefix_caching);
        QCOMPARE(s.prefix_cached_tokens, std::int64_t(20));
        QCOMPARE(s.prefix_cache_hit_rate, 20.0 / 40.0);
        QCOMPARE(s.prefix_cache_evictions, std::int64_t(0));

        EngineLimits off_lim = cachingLimits(1000);
        off_lim.prefix_caching = false;
        const auto moff = perRequest(run(w, off_lim, m));
        QCOMPARE(moff[1].ttft(), 1.1596);
        QVERIFY(!summarize(run(w, off_lim, m)).prefix_caching);

        // The per-request CSV gains the cached columns (only with caching).
        std::stringstream csv;
        writeRequestsCsv(on, nullptr, csv);
        std::string header, row0, row1;
        std::getline(csv, header);
        std::getline(csv, row0);
        std::getline(csv, row1);
        auto endsWith = [](const std::string& line, const std::string& tail) {
            return line.size() >= tail.size() &&
                   line.compare(line.size() - tail.size(), tail.size(), tail) == 0;
        };
        QVERIFY(endsWith(header, ",cached_tokens,recompute_cached_tokens"));
        QVERIFY(endsWith(row0, ",0,0"));
        QVERIFY(endsWith(row1, ",12,0"));
        std::stringstream plain;
        writeRequestsCsv(run(w, off_lim, m), nullptr, plain);
        std::getline(plain, header);
        QVERIFY(header.find("cached") == std::string::npos);

        // The run log keeps it: header, cache hits, the idle cached band.
        std::stringstream io;
        writeRunLogJsonl(on, io);
        const RunLog back = readRunLogJsonl(io, "back.jsonl");
        QVERIFY(back.prefix_caching);
        QCOMPARE(back.cache_block_size, 4);
        QCOMPARE(back.events.size(), on.events.size());
        QCOMPARE(back.iters.size(), on.iters.size());
        for (std::size_t i = 0; i < on.iters.size(); ++i)
            QCOMPARE(back.iters[i].kv_cached, on.iters[i].kv_cached);
        // When C starts (20 s) it holds two of the three cached blocks; the third (tokens
        // 8..11) is cached and held by nobody: 4 tokens in the idle band. B's own fourth
        // block never filled with computed KV (its last token's KV is computed by a decode
        // step that never came), so it is not cached.
        bool seen = false;
        for (const IterSpan& sp : on.iters)
            if (sp.t0 == 20.0) seen = sp.kv_cached == 4;
        QVERIFY(seen);
        for (const IterSpan& sp : on.iters)
            if (sp.t0 < 20.0) QCOMPARE(sp.kv_cached, std::int64_t(0));
    }

    // Four blocks of 4 tokens. A (8-token prompt, span X) runs alone and ends: blocks
    // A0, A1 are cached, its third (partial) block is not; let go tail first, the free
    // queue holds [a2, A1, A0]. B (another span) takes a fresh block, then a2 (nothing
    // evicted), then A1 (evicted: the tail of A's chain goes first). C (9 tokens, span X)
    // finds A0 only: 4 tokens. An allocator that evicted A0 first would leave C nothing.
    void evictionTakesTheChainsTailFirst() {
        Workload w;
        w.requests = {shared(0, 8, 1, 1, 8), shared(10, 8, 1, 2, 8), shared(20, 9, 1, 1, 8)};
        const EteModel m = handModel();
        const RunLog log = run(w, cachingLimits(16), m);
        QCOMPARE(first(log, 1, Ev::CacheHit).first, -1);
        QCOMPARE(first(log, 2, Ev::CacheHit).first, 4);
        // B evicted A1; C evicted B's second block (B1) for its own third.
        QCOMPARE(log.cache_evictions, std::int64_t(2));
    }

    // Seven blocks of 4 tokens; A and B (8 -> 12 tokens, no shared prefix) arrive
    // together. Both hold 3 blocks after their prefill; at 13 tokens each needs a fourth,
    // one is free: B (the later arrival) is preempted with 4 tokens generated, its full
    // blocks B0, B1 (tokens 0..7; the third holds 8..11 but token 11's KV was not computed)
    // cached. A grows into the unused block and B's uncached one. When A ends (its blocks
    // A0..A3 cached, let go tail first after B's), B comes back with its 12-token context:
    // B0 and B1 are found (8 tokens) and 4 are recomputed; its two new blocks are B's old
    // uncached one and A3 (evicted), and its fifth, as it grows to 20 tokens, A2 (evicted).
    void preemptedRequestReusesItsOwnBlocks() {
        Workload w;
        w.requests = {req(0, 8, 12), req(0, 8, 12)};
        const EteModel m = handModel();
        const RunLog log = run(w, cachingLimits(28), m);
        QCOMPARE(first(log, 1, Ev::Preempt).first, 4);
        QCOMPARE(first(log, 0, Ev::Preempt).first, -1);
        bool resumed = false;
        for (std::size_t i = 0; i + 1 < log.events.size(); ++i) {
            const Event& e = log.events[i];
            if (e.req != 1 || e.ev != Ev::Resume) continue;
            resumed = true;
            QCOMPARE(log.events[i + 1].ev, Ev::CacheHit);
            QCOMPARE(log.events[i + 1].value, 8);
            const auto pf =
                std::find_if(log.events.begin() + long(i), log.events.end(),
                             [](const Event& x) { return x.req == 1 && x.ev == Ev::PrefillStart; });
            QVERIFY(pf != log.events.end());
            QCOMPARE(pf->value, 4);
        }
        QVERIFY(resumed);
        const auto mets = perRequest(log);
        QCOMPARE(mets[1].cached_tokens, 0);
        QCOMPARE(mets[1].recompute_cached_tokens, std::int64_t(8));
        QCOMPARE(log.cache_evictions, std::int64_t(2));
    }

    // Six blocks of 4 tokens. A and B: 14-token prompts sharing 12 tokens, 2 output
    // tokens; B arrives while A prefills. A reserves 15 tokens (4 blocks). At A's prefill
    // end (1.1596 s) B's reservation is 4 blocks of which 3 are A's: it costs one, 5 of 6
    // are in use, and it starts at once. Without caching it needs 4 more: it waits until
    // A ends (2.1596 s). KV in use while both decode: 5 blocks = 20 tokens.
    void sharedBlockCountsOnce() {
        Workload w;
        w.requests = {shared(0, 14, 2, 7, 12), shared(0.5, 14, 2, 7, 12)};
        const EteModel m = handModel();
        const RunLog on = run(w, cachingLimits(24), m);
        QCOMPARE(first(on, 1, Ev::Admit).second, 1.1596);
        QCOMPARE(first(on, 1, Ev::CacheHit).first, 12);
        std::int64_t peak = 0;
        for (const IterSpan& sp : on.iters) peak = std::max(peak, sp.kvPeak());
        QCOMPARE(peak, std::int64_t(20));
        EngineLimits off = cachingLimits(24);
        off.prefix_caching = false;
        QCOMPARE(first(run(w, off, m), 1, Ev::Admit).second, 2.1596);
    }

    // Mooncake's conversation trace, one request at a time (arrivals 10^4 s apart, so each
    // is done before the next) and a cache nothing is evicted from: the cached tokens are
    // what an independent count finds. The counts were made outside Kairos (a Python
    // script over the JSONL: a set of (span chain, block index) keys, vLLM's limit of
    // (prompt - 1) / block whole blocks) and are written here; the radix tree below
    // (SGLang's structure) gives the same. 512-token blocks: the trace's own.
    void mooncakeMatchesAnIndependentCount() {
        struct Setting {
            int block;
            std::size_t limit;
            std::int64_t prompt_tokens, cached; // counted outside Kairos
        };
        const Setting settings[] = {{512, 0, 144793823, 54063104}, {16, 2000, 27441774, 8070832}};
        for (const Setting& st : settings) {
            Workload w = mooncake(st.limit);
            QCOMPARE(w.totalPromptTokens(), st.prompt_tokens);
            for (std::size_t i = 0; i < w.requests.size(); ++i) w.requests[i].arrival = 1e4 * i;
            const std::int64_t radix = radixTreeHits(w, st.block);
            QCOMPARE(radix, st.cached);
            EteParams p;
            p.a = 0.01;
            p.b = 1e-6;
            p.q0 = 0.01;
            const EteModel m(p);
            const RunLog log = run(w, cachingLimits(std::int64_t(1) << 40, st.block), m);
            const Summary s = summarize(log);
            QCOMPARE(s.prefix_cached_tokens, st.cached);
            QCOMPARE(s.prefix_cache_evictions, std::int64_t(0));
            QCOMPARE(s.completed, std::int64_t(w.size()));
            qInfo("Mooncake, %d-token blocks, %zu requests: %lld of %lld prompt tokens from the "
                  "cache (%.1f %%)",
                  st.block, w.size(), static_cast<long long>(s.prefix_cached_tokens),
                  static_cast<long long>(st.prompt_tokens), 100.0 * s.prefix_cache_hit_rate);
        }
    }

    // With no prefix shared and nothing preempted, the cache never hits, and then nothing
    // may differ from the run without it: every registered policy, several seeds.
    void cachingWithoutHitsChangesNothing_data() { test::policyRows(); }
    void cachingWithoutHitsChangesNothing() {
        QFETCH(QString, policy);
        int compared = 0;
        for (std::uint64_t seed = 1; seed <= 6; ++seed) {
            GenerateSpec g;
            g.count = 60;
            g.arrivals.rate = 4;
            g.arrivals.seed = seed;
            g.length_seed = seed + 1;
            Workload w = generateWorkload(g);
            for (auto& r : w.requests) r.budget_s = 30;
            EteParams p{0.02, 2e-4, 1e-8, 0.02, 1e-4, 1e-7}; // a, b, c, q0, q1, p
            const EteModel m(p);
            EngineLimits lim;
            lim.block_size = 16;
            lim.kv_capacity_tokens = 200000;
            lim.chunked_prefill = seed % 2 == 0;
            PolicyConfig pc;
            pc.name = policy.toStdString();
            pc.seed = seed;
            auto a = makeScheduler(pc);
            const RunLog off = simulate(w, m, *a, lim);
            lim.prefix_caching = true;
            auto b = makeScheduler(pc);
            const RunLog on = simulate(w, m, *b, lim);
            if (std::any_of(on.events.begin(), on.events.end(),
                            [](const Event& e) { return e.ev == Ev::CacheHit; }))
                continue;
            ++compared;
            QCOMPARE(on.events.size(), off.events.size());
            for (std::size_t i = 0; i < on.events.size(); ++i) {
                QCOMPARE(on.events[i].ev, off.events[i].ev);
                QCOMPARE(on.events[i].req, off.events[i].req);
                QCOMPARE(on.events[i].value, off.events[i].value);
                QCOMPARE(on.events[i].t, off.events[i].t);
            }
            QCOMPARE(on.iters.size(), off.iters.size());
            for (std::size_t i = 0; i < on.iters.size(); ++i) {
                QCOMPARE(on.iters[i].t0, off.iters[i].t0);
                QCOMPARE(on.iters[i].n, off.iters[i].n);
                QCOMPARE(on.iters[i].kv_first, off.iters[i].kv_first);
                QCOMPARE(on.iters[i].kv_last, off.iters[i].kv_last);
            }
        }
        QVERIFY2(compared >= 3, "too few runs without a cache hit to compare");
    }

    // The native format's prefix field: numbers, names and written-back ids round-trip;
    // bad spans name the field.
    void nativePrefixField() {
        const std::string text =
            "{\"kairos_workload\":1}\n"
            "{\"arrival\":0,\"prompt\":100,\"output\":5,\"prefix\":[[\"system\",40],[7,50]]}\n"
            "{\"arrival\":1,\"prompt\":100,\"output\":5,\"prefix\":[[\"system\",40]]}\n";
        std::istringstream in(text);
        const Workload w = readKairos(in, "p.jsonl", 0);
        QCOMPARE(w.requests[0].prefix.size(), std::size_t(2));
        QCOMPARE(w.requests[0].prefix[0], w.requests[1].prefix[0]);
        QCOMPARE(w.requests[0].prefix[1].id, std::uint64_t(7));
        QVERIFY(w.requests[0].prefix[0].id >= (1ULL << 63)); // a name, apart from numbers
        std::stringstream io;
        writeKairos(w, io);
        const Workload back = readKairos(io, "back.jsonl", 0);
        QCOMPARE(back.requests, w.requests);
        const std::pair<const char*, const char*> bad[] = {{"[[\"x\",0]]", "prefix[0]"},
                                                           {"[[-1,4]]", "prefix[0]"},
                                                           {"[[\"#12\",4]]", "prefix[0]"},
                                                           {"[[1,60],[2,60]]", "prefix"},
                                                           {"{\"a\":1}", "prefix"}};
        for (const auto& [spans, field] : bad) {
            std::istringstream b(std::string("{\"kairos_workload\":1}\n") +
                                 "{\"arrival\":0,\"prompt\":100,\"output\":5,\"prefix\":" + spans +
                                 "}\n");
            try {
                readKairos(b, "bad.jsonl", 0);
                QFAIL(qPrintable(QString("accepted ") + spans));
            } catch (const InputError& e) {
                QCOMPARE(QString::fromStdString(e.field()), QString(field));
                QCOMPARE(e.line(), 2L);
            }
        }
    }

    // Mooncake's hash_ids become 512-token spans, the last one partial.
    void mooncakeSpans() {
        const Workload w = mooncake(3);
        const Request& r = w.requests[0]; // 6758 tokens, 14 ids
        QCOMPARE(r.prompt_tokens, 6758);
        QCOMPARE(r.prefix.size(), std::size_t(14));
        QCOMPARE(r.prefix.front().tokens, 512);
        QCOMPARE(r.prefix.back().tokens, 6758 - 13 * 512);
        QCOMPARE(w.requests[1].prefix.front(), r.prefix.front()); // both start with block 0
        std::istringstream in("{\"timestamp\":0,\"input_length\":600,\"output_length\":1,"
                              "\"hash_ids\":[1,2,3]}\n");
        try {
            readMooncake(in, "m.jsonl");
            QFAIL("three blocks for 600 tokens accepted");
        } catch (const InputError& e) {
            QCOMPARE(QString::fromStdString(e.field()), QString("hash_ids"));
        }
    }

    // The cache keeps runs of blocks per prefix node; the pool of single blocks it replaced
    // (prefix_cache_oracle.h) is the specification. Random operations on both, as the
    // engine makes them (admit at a probe's hit, grow, publish, shrink, release with or
    // without publishing), on workloads whose spans share prefixes, answers that later
    // prompts quote and spans shorter than a block, into caches small enough to evict all
    // the time: after every operation the counts, every held request's exclusive blocks
    // and a probe of every request agree.
    void runsEqualTheBlockPool() {
        int evicting = 0;
        std::int64_t ops = 0, hits = 0;
        for (std::uint64_t seed = 1; seed <= 60; ++seed) {
            std::mt19937_64 rng(seed);
            const auto pick = [&](int lo, int hi) {
                return std::uniform_int_distribution<int>(lo, hi)(rng);
            };
            const int bs = std::array<int, 4>{2, 3, 4, 16}[std::size_t(pick(0, 3))];
            Workload w;
            for (int i = 0; i < 24; ++i) {
                Request r = req(0.0, 1, pick(1, 40));
                // A chain from a small tree: 1-4 spans, each from 3 choices, some short.
                const int spans = pick(0, 4);
                for (int k = 0; k < spans; ++k)
                    r.prefix.push_back(
                        {std::uint64_t(pick(1, 3)), pick(0, 3) == 0 ? pick(1, 3) : 4 * pick(1, 8)});
                int covered = 0;
                for (const auto& sp : r.prefix) covered += sp.tokens;
                // The spans may run past the prompt (an answer a later turn quotes).
                r.prompt_tokens = std::max(1, covered + pick(-10, 20));
                r.output_tokens = std::max(r.output_tokens, covered - r.prompt_tokens);
                w.requests.push_back(r);
            }
            const std::int64_t cap = pick(8, 80);
            PrefixCache a(bs, cap, w.requests);
            oracle::BlockPoolCache b(bs, cap, w.requests.size());
            std::vector<std::int64_t> held(w.requests.size(), -1); // tokens; -1: not admitted
            const auto referenced = [&] { return a.referencedBlocks(); };
            for (int step = 0; step < 3000; ++step) {
                const auto id = static_cast<ReqId>(pick(0, int(w.requests.size()) - 1));
                const Request& r = w.requests[std::size_t(id)];
                const std::int64_t most = r.prompt_tokens + r.output_tokens;
                const int op = pick(0, 9);
                if (held[std::size_t(id)] < 0) {
                    const std::int64_t context = r.prompt_tokens + pick(0, r.output_tokens - 1);
                    const auto ha = a.probe(id, context);
                    const auto hb = b.probe(id, r, context);
                    QCOMPARE(ha.blocks, hb.blocks);
                    QCOMPARE(ha.referenced, hb.referenced);
                    const std::int64_t need = (context + 1 + bs - 1) / bs - ha.referenced;
                    if (need > cap - referenced()) continue;
                    a.admit(id, ha.blocks);
                    b.admit(id, r, hb.blocks);
                    hits += ha.blocks > 0;
                    a.resize(id, context + 1);
                    b.resize(id, context + 1);
                    held[std::size_t(id)] = context + 1;
                } else if (op < 4) { // grow
                    const std::int64_t to = std::min(most, held[std::size_t(id)] + pick(1, 20));
                    const std::int64_t need =
                        (to + bs - 1) / bs - (held[std::size_t(id)] + bs - 1) / bs;
                    if (need > cap - referenced()) continue;
                    a.resize(id, to);
                    b.resize(id, to);
                    held[std::size_t(id)] = to;
                } else if (op < 6) { // publish what is computed
                    const std::int64_t valid = pick(0, int(held[std::size_t(id)]));
                    a.publish(id, valid);
                    b.publish(id, r, valid);
                } else if (op < 7) { // shrink
                    const std::int64_t to = pick(1, int(held[std::size_t(id)]));
                    a.resize(id, to);
                    b.resize(id, to);
                    held[std::size_t(id)] = to;
                } else { // release
                    const std::int64_t valid = std::array<std::int64_t, 3>{
                        -1, 0, held[std::size_t(id)] - 1}[std::size_t(pick(0, 2))];
                    a.release(id, valid);
                    b.release(id, r, valid);
                    held[std::size_t(id)] = -1;
                }
                ++ops;
                QCOMPARE(a.referencedBlocks(), b.referencedBlocks());
                QCOMPARE(a.idleCachedBlocks(), b.idleCachedBlocks());
                QCOMPARE(a.evictions(), b.evictions());
                QCOMPARE(a.unusedBlocks(), b.unusedBlocks());
                for (std::size_t i = 0; i < held.size(); ++i) {
                    const auto rid = static_cast<ReqId>(i);
                    if (held[i] >= 0)
                        QCOMPARE(a.exclusiveBlocks(rid), b.exclusiveBlocks(rid));
                    else {
                        const std::int64_t ctx = w.requests[i].prompt_tokens;
                        QCOMPARE(a.probe(rid, ctx).blocks, b.probe(rid, w.requests[i], ctx).blocks);
                        QCOMPARE(a.probe(rid, ctx).referenced,
                                 b.probe(rid, w.requests[i], ctx).referenced);
                    }
                }
            }
            evicting += a.evictions() > 0;
        }
        qInfo("%lld operations, %lld admissions with a hit, %d of 60 caches evicting",
              static_cast<long long>(ops), static_cast<long long>(hits), evicting);
        QVERIFY2(evicting >= 50, qPrintable(QString::number(evicting)));
        QVERIFY(hits > 1000);
    }
};

QTEST_GUILESS_MAIN(TestPrefixCache)
#include "tst_prefix_cache.moc"
