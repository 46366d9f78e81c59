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

    // Four blocks of 4 tokens (vLLM's accounting: a request holds the slots of the tokens
    // it has computed or computes in this step, no slot for its newest token). A (8-token
    // prompt, span X, one output token) runs alone and ends holding A0, A1, both cached;
    // let go tail first, the free queue holds [A1, A0] after the two never-used blocks. B
    // (12 tokens of span Y) takes the two never-used blocks, then A1 (evicted: the tail of
    // A's chain goes first). C (9 tokens, span X) finds A0 only: 4 tokens, and takes two
    // blocks more, evicting B2 and B1 (B let its blocks go tail first after A's). An
    // allocator that evicted A0 first would leave C nothing.
    void evictionTakesTheChainsTailFirst() {
        Workload w;
        w.requests = {shared(0, 8, 1, 1, 8), shared(10, 12, 1, 2, 12), shared(20, 9, 1, 1, 8)};
        const EteModel m = handModel();
        const RunLog log = run(w, cachingLimits(16), m);
        QCOMPARE(first(log, 1, Ev::CacheHit).first, -1);
        QCOMPARE(first(log, 2, Ev::CacheHit).first, 4);
        QCOMPARE(log.cache_evictions, std::int64_t(3));
    }

    // Seven blocks of 4 tokens; A and B (8-token prompts, 12 output tokens, no shared
    // prefix) arrive together. Each holds the slots of its computed tokens, 8 + g - 1
    // after g generated, and a step feeding the newest token takes its slot. At 12 slots
    // (3 blocks each, g = 5) the next step needs a fourth block each, one is free: B (the
    // later arrival) is preempted with 5 tokens generated; its blocks B0..B2 (tokens 0..11,
    // all computed) were hashed as they filled and go to the free queue's tail, tail first:
    // [B2, B1, B0]. A grows into the never-used block, then into B2 (evicted). A ends at 19
    // slots: A4 (partial, no hash) goes to the queue's head, A3..A0 to its tail:
    // [A4, B1, B0, A3, A2, A1, A0]. B comes back with its 13-token context: B0 and B1 are
    // found (8 tokens), 5 are recomputed; its two new blocks are A4 and A3 (evicted), and
    // its fifth, as it grows to 17 slots, A2 (evicted): three evictions.
    void preemptedRequestReusesItsOwnBlocks() {
        Workload w;
        w.requests = {req(0, 8, 12), req(0, 8, 12)};
        const EteModel m = handModel();
        const RunLog log = run(w, cachingLimits(28), m);
        QCOMPARE(first(log, 1, Ev::Preempt).first, 5);
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
            QCOMPARE(pf->value, 5);
        }
        QVERIFY(resumed);
        const auto mets = perRequest(log);
        QCOMPARE(mets[1].cached_tokens, 0);
        QCOMPARE(mets[1].recompute_cached_tokens, std::int64_t(8));
        QCOMPARE(log.cache_evictions, std::int64_t(3));
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
    // may differ from the run without it but the KV accounting: every registered policy,
    // several seeds. With caching a request holds no slot for its newest token (vLLM's
    // allocation, sim/prefix_cache.h): at most one block less per request in the step.
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
                // Requests holding KV as the iteration starts.
                std::int64_t seqs = 0;
                for (const Event& e : on.events) {
                    if (e.t > on.iters[i].t0) break;
                    if (e.ev == Ev::Admit || e.ev == Ev::Resume) ++seqs;
                    if (e.ev == Ev::Finish || e.ev == Ev::Preempt || e.ev == Ev::Kill) --seqs;
                }
                for (const auto& [a, b] : {std::pair{on.iters[i].kv_first, off.iters[i].kv_first},
                                           std::pair{on.iters[i].kv_last, off.iters[i].kv_last}}) {
                    QVERIFY(a <= b);
                    QVERIFY(b - a <= lim.block_size * seqs);
                }
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

    // Golden cases of current vLLM's prefix cache (sim/prefix_cache.h names the commits),
    // each worked out by hand from vLLM's semantics: blocks of 16 tokens, FCFS, the hand
    // model, every request done before the next arrives unless said otherwise.
    //  - Whole-block prompts: A and B, 64 tokens of span X. B may take at most
    //    (64 - 1) / 16 = 3 blocks (one token is always computed): 48, and computes 16.
    //  - A partial last block: C, 70 tokens of span Y (4 full blocks and 6 tokens); D, 90
    //    tokens starting with the same 70: block 4 (tokens 64..79) holds tokens past the
    //    span, D's own: 64.
    //  - A cached prefix longer than the new prompt: E, 100 tokens of span Z (96); F, a
    //    40-token prompt whose spans name the same 96 tokens (its answer quotes E's): at
    //    most (40 - 1) / 16 = 2 blocks, 32.
    //  - An answer's blocks are hashed as they fill (during decoding, not at the end): G,
    //    40 prompt tokens of span P then 24 output tokens of span Q; H, 74 tokens quoting
    //    G's prompt and answer, arrives while G decodes, after the step that fed G's
    //    47th token (token 40 + 8 - 1, at G's 8th decode step) registered block 2: 48.
    void vllmGoldenCases() {
        const EteModel m = handModel();
        Workload w;
        w.requests = {shared(0, 64, 2, 1, 64),   shared(10, 64, 2, 1, 64),
                      shared(20, 70, 2, 2, 70),  shared(30, 90, 2, 2, 70),
                      shared(40, 100, 2, 3, 96), shared(50, 40, 60, 3, 96)};
        // G at 200 (F, 60 tokens from 50 s, is done): prefill of 40: 1 + 0.4 + 0.16 =
        // 1.56 s; decode steps of 1 s each (alone): step k (k >= 1) starts at 201.56 +
        // (k - 1); step 8 at 208.56. H at 209.
        Request g = req(200, 40, 24);
        g.prefix = {{4, 40}, {5, 24}};
        Request h = req(209, 74, 2);
        h.prefix = {{4, 40}, {5, 24}};
        w.requests.push_back(g);
        w.requests.push_back(h);
        const RunLog log = run(w, cachingLimits(100000, 16), m);
        const std::map<ReqId, int> want = {{0, -1}, {1, 48}, {2, -1}, {3, 64},
                                           {4, -1}, {5, 32}, {6, -1}, {7, 48}};
        for (const auto& [id, tokens] : want) QCOMPARE(first(log, id, Ev::CacheHit).first, tokens);
        // H looked up at the first boundary after its arrival, 209.56 s (step 9 of G).
        QVERIFY(std::fabs(first(log, 7, Ev::CacheHit).second - 209.56) < 1e-9);
        QCOMPARE(first(log, 7, Ev::PrefillStart).first, 74 - 48);
    }

    // Three requests with the same 512-token prefix (600-token prompts) arrive together:
    // the first's blocks are registered as its prefill is scheduled, before the step
    // computes them, and the next two find them in the same step: 0 / 512 / 512. One
    // iteration prefills 600 + 88 + 88 tokens, the quadratic term over the cached prefix
    // (h + L)^2 - h^2: 1 + 0.01 * 776 + 1e-4 * (600^2 + 2 * (600^2 - 512^2)) = 64.3312 s,
    // every first token then.
    void vllmSameStepHits() {
        const EteModel m = handModel();
        Workload w;
        w.requests = {shared(0, 600, 2, 9, 512), shared(0, 600, 2, 9, 512),
                      shared(0, 600, 2, 9, 512)};
        const RunLog log = run(w, cachingLimits(100000, 16), m);
        QCOMPARE(first(log, 0, Ev::CacheHit).first, -1);
        QCOMPARE(first(log, 1, Ev::CacheHit).first, 512);
        QCOMPARE(first(log, 2, Ev::CacheHit).first, 512);
        const auto mets = perRequest(log);
        for (const auto& r : mets) QVERIFY(std::fabs(r.ttft() - 64.3312) < 1e-9);
        const Summary s = summarize(log);
        QCOMPARE(s.prefix_cached_tokens, std::int64_t(1024));
    }

    // A request arriving during another's chunked prefill of the same 8,000-token prefix.
    // A: 8,016 tokens (the prefix and 16 of its own), chunks of 2,048: 2,048, 2,048,
    // 2,048, 1,872. B (8,100 tokens, the same prefix) arrives during the first chunk and
    // is admitted at once, but gets no budget until A's last chunk leaves 176 tokens:
    // vLLM looks it up then, when A's last chunk is registered: 8,000 cached (500 blocks;
    // A's block 500 is its own), 100 computed in that same step, so both first tokens
    // come at its end. Looked up at admission it would find only A's first chunk.
    void vllmInFlightChunkedPrefill() {
        const EteModel m = handModel();
        Workload w;
        Request a = req(0, 8016, 2);
        a.prefix = {{21, 8000}};
        Request b = req(1, 8100, 2);
        b.prefix = {{21, 8000}};
        w.requests = {a, b};
        EngineLimits lim = cachingLimits(100000, 16);
        lim.chunked_prefill = true;
        lim.max_num_batched_tokens = 2048;
        const RunLog log = run(w, lim, m);
        QCOMPARE(first(log, 1, Ev::CacheHit).first, 8000);
        QCOMPARE(first(log, 1, Ev::PrefillStart).first, 100);
        QCOMPARE(first(log, 1, Ev::FirstToken).second, first(log, 0, Ev::FirstToken).second);
        QVERIFY(first(log, 1, Ev::Admit).second < first(log, 1, Ev::CacheHit).second);
    }

    // Duplicates, at the cache itself (blocks of 4, span X of 8 tokens): A and B both
    // compute X's blocks (B admitted before A registered them); both register them, B's
    // as second blocks under the same hashes. A lets go first, then B: the free queue's
    // tail holds [A1, A0, B1, B0]. Taking two blocks evicts A1 and A0, and X is still
    // found, in B's blocks: 8 tokens for a 9-token context. A cache that kept B's copies
    // private (freed without a hash, to the queue's head) would reuse them and find 0.
    void duplicateBlocksAreRegistered() {
        std::vector<Request> rs = {shared(0, 8, 1, 1, 8), shared(0, 8, 1, 1, 8), req(0, 8, 1),
                                   shared(0, 9, 1, 1, 8)};
        PrefixCache c(4, 6, rs);
        c.admit(0, 0);
        c.resize(0, 8);
        c.admit(1, 0);
        c.resize(1, 8);
        c.publish(0, 8);
        c.publish(1, 8);
        QCOMPARE(c.probe(3, 9).blocks, 2);
        c.release(0, 8);
        c.release(1, 8);
        QCOMPARE(c.idleCachedBlocks(), std::int64_t(4));
        c.admit(2, 0);
        c.resize(2, 8); // the two never-used blocks
        QCOMPARE(c.evictions(), std::int64_t(0));
        c.release(2, -1); // hashless: to the head
        c.admit(2, 0);
        c.resize(2, 16); // those two again, then A1 and A0
        QCOMPARE(c.evictions(), std::int64_t(2));
        QCOMPARE(c.probe(3, 9).blocks, 2);
        QCOMPARE(c.probe(3, 9).referenced, 0);
        c.resize(2, 24); // B1, B0: X is gone
        QCOMPARE(c.probe(3, 9).blocks, 0);
    }

    // Two requests let go, one after the other; a third's allocation evicts the first's
    // blocks before the second's (least recently freed first) and of one chain the tail
    // first. Six blocks of 16 tokens: A (32 tokens, span 1) and B (32, span 2) run and end
    // in turn: the free queue holds [2 never used][A1, A0, B1, B0]. D (80 tokens, span 3)
    // takes the two never-used blocks, then A1, A0, B1 (evicted); it ends: [B0, D4..D0].
    // F (33 tokens, span 2) finds B0 (16 tokens), takes two blocks evicting D4, D3, and
    // ends: F2 (one token, no hash) to the head, F1 and B0 to the tail. E (33 tokens, span
    // 1) finds nothing (A's chain is gone) and takes F2, then D2, D1 (evicted): 7.
    void vllmEvictionOrderBetweenTwoFreedRequests() {
        const EteModel m = handModel();
        Workload w;
        w.requests = {shared(0, 32, 1, 1, 32), shared(10, 32, 1, 2, 32), shared(20, 80, 1, 3, 80),
                      shared(30, 33, 1, 2, 32), shared(40, 33, 1, 1, 32)};
        const RunLog log = run(w, cachingLimits(96, 16), m);
        QCOMPARE(first(log, 2, Ev::CacheHit).first, -1);
        QCOMPARE(first(log, 3, Ev::CacheHit).first, 16);
        QCOMPARE(first(log, 4, Ev::CacheHit).first, -1);
        QCOMPARE(log.cache_evictions, std::int64_t(7));
    }

    // The cache (sim/prefix_cache.h) against vLLM's block pool written the plain way
    // (prefix_cache_oracle.h). Random operations on both, as the engine makes them (admit
    // at a probe's hit, extend a hit before the first chunk, grow, publish, shrink,
    // release with or without publishing), on workloads whose spans share prefixes,
    // answers that later prompts quote and spans shorter than a block, into caches small
    // enough to evict all the time: after every operation the counts, every held
    // request's exclusive blocks and a probe of every request agree.
    void cacheEqualsThePlainBlockPool() {
        int evicting = 0;
        std::int64_t ops = 0, hits = 0, extended = 0;
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
            oracle::VllmBlockPool b(bs, cap, w.requests);
            std::vector<std::int64_t> held(w.requests.size(), -1); // tokens; -1: not admitted
            std::vector<char> fresh(w.requests.size(), 0); // admitted, nothing published since
            std::vector<std::int64_t> ctx_of(w.requests.size(), 0);
            for (int step = 0; step < 3000; ++step) {
                const auto id = static_cast<ReqId>(pick(0, int(w.requests.size()) - 1));
                const auto i = std::size_t(id);
                const Request& r = w.requests[i];
                const std::int64_t most = r.prompt_tokens + r.output_tokens;
                const int op = pick(0, 10);
                if (held[i] < 0) {
                    const std::int64_t context = r.prompt_tokens + pick(0, r.output_tokens - 1);
                    const auto ha = a.probe(id, context);
                    const auto hb = b.probe(id, context);
                    QCOMPARE(ha.blocks, hb.blocks);
                    QCOMPARE(ha.referenced, hb.referenced);
                    const std::int64_t need = (context + bs - 1) / bs - ha.referenced;
                    if (need > cap - a.referencedBlocks()) continue;
                    a.admit(id, ha.blocks);
                    b.admit(id, ha.blocks);
                    hits += ha.blocks > 0;
                    a.resize(id, context);
                    b.resize(id, context);
                    held[i] = context;
                    ctx_of[i] = context;
                    fresh[i] = 1;
                } else if (op < 1) { // its first chunk: looked up again
                    if (!fresh[i]) continue;
                    const auto ha = a.probe(id, ctx_of[i]);
                    const auto hb = b.probe(id, ctx_of[i]);
                    QCOMPARE(ha.blocks, hb.blocks);
                    a.extend(id, ha.blocks);
                    b.extend(id, ha.blocks);
                    extended += ha.blocks > 0;
                } else if (op < 5) { // grow
                    const std::int64_t to = std::min(most, held[i] + pick(1, 20));
                    const std::int64_t need = (to + bs - 1) / bs - (held[i] + bs - 1) / bs;
                    if (need > cap - a.referencedBlocks()) continue;
                    a.resize(id, to);
                    b.resize(id, to);
                    held[i] = to;
                } else if (op < 7) { // publish what is scheduled
                    const std::int64_t valid = pick(0, int(held[i]));
                    a.publish(id, valid);
                    b.publish(id, valid);
                    fresh[i] = 0;
                } else if (op < 8) { // shrink
                    const std::int64_t to = pick(1, int(held[i]));
                    a.resize(id, to);
                    b.resize(id, to);
                    held[i] = to;
                    fresh[i] = 0;
                } else { // release
                    const std::int64_t valid =
                        std::array<std::int64_t, 3>{-1, 0, held[i]}[std::size_t(pick(0, 2))];
                    a.release(id, valid);
                    b.release(id, valid);
                    held[i] = -1;
                }
                ++ops;
                QCOMPARE(a.referencedBlocks(), b.referencedBlocks());
                QCOMPARE(a.idleCachedBlocks(), b.idleCachedBlocks());
                QCOMPARE(a.evictions(), b.evictions());
                QCOMPARE(a.unusedBlocks(), b.unusedBlocks());
                for (std::size_t k = 0; k < held.size(); ++k) {
                    const auto rid = static_cast<ReqId>(k);
                    if (held[k] >= 0) {
                        QCOMPARE(a.exclusiveBlocks(rid), b.exclusiveBlocks(rid));
                    } else {
                        const std::int64_t ctx = w.requests[k].prompt_tokens;
                        QCOMPARE(a.probe(rid, ctx).blocks, b.probe(rid, ctx).blocks);
                        QCOMPARE(a.probe(rid, ctx).referenced, b.probe(rid, ctx).referenced);
                    }
                }
            }
            evicting += a.evictions() > 0;
        }
        qInfo("%lld operations, %lld admissions with a hit, %lld hits extended, %d of 60 caches "
              "evicting",
              static_cast<long long>(ops), static_cast<long long>(hits),
              static_cast<long long>(extended), evicting);
        QVERIFY2(evicting >= 50, qPrintable(QString::number(evicting)));
        QVERIFY(hits > 1000);
        QVERIFY(extended > 50);
    }
};

QTEST_GUILESS_MAIN(TestPrefixCache)
#include "tst_prefix_cache.moc"
