#pragma once
// SGLang's cache-aware router's approximate tree (docs/upstream/sglang_router.md, our
// reading in our words): one radix tree shared by every replica ("tenant"), fed only by
// the prompts the router itself sent, at routing time, never told what a replica's real
// cache holds or evicts. Read at these commits of sgl-project/sglang:
//   sgl-model-gateway/src/policies/cache_aware.rs  b93974f140de1e545d9134d87e77f0bd1fbf3014
//   sgl-model-gateway/src/policies/tree.rs         03744dbedc69f4db84d0a6ae6d4400ce252bb6d8
//   sgl-router/src/policies/cache_aware.rs         026f853ba7ae08a457a2e127b85a26256a29e300
//
// SGLang matches the request's text, character by character. Kairos has no text: a prompt
// is its prefix spans (model/request.h: an id names content, the same id the same tokens)
// and then tokens of its own. So a node here is a run of a span's tokens, a tenant's count
// is in tokens (SGLang's in characters: about 4 per token), and a request's own tokens are
// a leaf no other request matches. Two spans with the same id and different lengths share
// the shorter one's tokens: a node is split where they part, as SGLang splits a node's text,
// and a match that stops part-way into a node counts the tokens matched there.
//
//  - match(request): the deepest node reached along its prompt's spans and the tokens
//    matched; the tenant returned is the node's sticky one (the gateway's last_tenant: the
//    tenant that made it, while it still holds it; else its earliest other tenant). The
//    path's last-access times of that tenant are refreshed.
//  - insert(request, tenant, t): the prompt's spans (cut at the prompt's end) and its own
//    tokens, under the tenant, each node's last access for it set to t.
//  - evict(max_tokens): for each tenant holding more than max_tokens, its least recently
//    accessed leaves (nodes where no child holds it) go first, a node's parent becoming a
//    leaf in turn, until it holds no more (SGLang's evict_tenant_by_size, run by a thread
//    every eviction interval; the fleet runs it at those times of the simulated clock).
#include "model/request.h"

#include <cstdint>
#include <map>
#include <vector>

namespace kairos {

class RouterTree {
public:
    explicit RouterTree(int tenants) : tokens_(static_cast<std::size_t>(tenants), 0) {
        nodes_.emplace_back(); // the root
    }
    struct Match {
        std::int64_t tokens = 0; // of the prompt, matched
        int tenant = -1;         // the deepest matched node's (-1: nothing matched)
    };
    Match match(const Request& r, ReqId id, double t);
    void insert(const Request& r, ReqId id, int tenant, double t);
    void evict(std::int64_t max_tokens);
    std::int64_t tenantTokens(int tenant) const {
        return tokens_[static_cast<std::size_t>(tenant)];
    }
    std::size_t nodes() const { return nodes_.size() - free_.size(); }

private:
    struct Node {
        int parent = -1;
        std::uint64_t id = 0;
        std::int64_t tokens = 0;
        std::map<std::uint64_t, int> children;       // by the id of their first tokens
        std::vector<std::pair<int, double>> holders; // (tenant, last access), joined in order
        int sticky = -1;
    };
    // The prompt as (id, tokens) steps: its spans cut at the prompt's end, then its own.
    static void steps(const Request& r, ReqId id,
                      std::vector<std::pair<std::uint64_t, std::int64_t>>& out);
    bool holds(const Node& n, int tenant) const;
    std::vector<Node> nodes_;
    std::vector<int> free_;
    std::vector<std::int64_t> tokens_; // per tenant
    std::vector<std::pair<std::uint64_t, std::int64_t>> scratch_;
};

} // namespace kairos
