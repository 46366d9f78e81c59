#include "sim/router_tree.h"

#include "util/hash.h"

#include <algorithm>
#include <queue>
#include <tuple>

namespace kairos {

namespace {
// The id of span `id`'s tokens from `k` on (a node split at k, or a span longer than the
// node it passes through).
std::uint64_t rest(std::uint64_t id, std::int64_t k) {
    return splitmix64(id ^ 0x52455354ULL ^ splitmix64(std::uint64_t(k)));
}
// A request's own tokens: only it has them.
std::uint64_t own(ReqId id) {
    return splitmix64(0x4f574e00ULL + std::uint64_t(id) * 0x9E3779B97F4A7C15ULL);
}
} // namespace

void RouterTree::steps(const Request& r, ReqId id,
                       std::vector<std::pair<std::uint64_t, std::int64_t>>& out) {
    out.clear();
    std::int64_t at = 0;
    for (const PrefixSpan& sp : r.prefix) {
        if (at >= r.prompt_tokens) break;
        const std::int64_t n = std::min<std::int64_t>(sp.tokens, r.prompt_tokens - at);
        out.emplace_back(sp.id, n);
        at += n;
    }
    if (at < r.prompt_tokens) out.emplace_back(own(id), r.prompt_tokens - at);
}

bool RouterTree::holds(const Node& n, int tenant) const {
    for (const auto& h : n.holders)
        if (h.first == tenant) return true;
    return false;
}

RouterTree::Match RouterTree::match(const Request& r, ReqId id, double t) {
    steps(r, id, scratch_);
    Match m;
    int at = 0, deepest = 0;
    for (auto [key, left] : scratch_) {
        bool stop = false;
        while (left > 0) {
            const auto it = nodes_[static_cast<std::size_t>(at)].children.find(key);
            if (it == nodes_[static_cast<std::size_t>(at)].children.end()) {
                stop = true;
                break;
            }
            const Node& n = nodes_[static_cast<std::size_t>(it->second)];
            const std::int64_t common = std::min(left, n.tokens);
            m.tokens += common;
            deepest = it->second;
            if (common < n.tokens) { // part-way into the node
                stop = true;
                break;
            }
            at = it->second;
            left -= common;
            key = rest(key, n.tokens);
        }
        if (stop) break;
    }
    if (deepest == 0) return m;
    Node& d = nodes_[static_cast<std::size_t>(deepest)];
    m.tenant = d.sticky >= 0 && holds(d, d.sticky)
                   ? d.sticky
                   : (d.holders.empty() ? -1 : d.holders.front().first);
    if (m.tenant < 0) {
        m.tokens = 0;
        return m;
    }
    // The path's access times for that tenant, refreshed.
    for (int x = deepest; x > 0; x = nodes_[static_cast<std::size_t>(x)].parent)
        for (auto& h : nodes_[static_cast<std::size_t>(x)].holders)
            if (h.first == m.tenant) h.second = t;
    return m;
}

void RouterTree::insert(const Request& r, ReqId id, int tenant, double t) {
    steps(r, id, scratch_);
    int at = 0;
    const auto join = [&](int x) {
        Node& n = nodes_[static_cast<std::size_t>(x)];
        for (auto& h : n.holders)
            if (h.first == tenant) {
                h.second = t;
                return;
            }
        n.holders.emplace_back(tenant, t);
        tokens_[static_cast<std::size_t>(tenant)] += n.tokens;
    };
    const auto make = [&](int parent, std::uint64_t key, std::int64_t tokens) {
        int x;
        if (!free_.empty()) {
            x = free_.back();
            free_.pop_back();
            nodes_[static_cast<std::size_t>(x)] = Node{};
        } else {
            x = static_cast<int>(nodes_.size());
            nodes_.emplace_back();
        }
        Node& n = nodes_[static_cast<std::size_t>(x)];
        n.parent = parent;
        n.id = key;
        n.tokens = tokens;
        n.sticky = tenant;
        nodes_[static_cast<std::size_t>(parent)].children.emplace(key, x);
        return x;
    };
    for (auto [key, left] : scratch_) {
        while (left > 0) {
            const auto it = nodes_[static_cast<std::size_t>(at)].children.find(key);
            if (it == nodes_[static_cast<std::size_t>(at)].children.end()) {
                at = make(at, key, left);
                join(at);
                break;
            }
            const int x = it->second;
            if (left < nodes_[static_cast<std::size_t>(x)].tokens) {
                // Split x at `left`: its tail becomes its only child, with its children and
                // holders (who hold the whole of it); the tenants' counts do not change.
                const std::int64_t n = nodes_[static_cast<std::size_t>(x)].tokens;
                int c;
                if (!free_.empty()) {
                    c = free_.back();
                    free_.pop_back();
                    nodes_[static_cast<std::size_t>(c)] = Node{};
                } else {
                    c = static_cast<int>(nodes_.size());
                    nodes_.emplace_back();
                }
                Node& tail = nodes_[static_cast<std::size_t>(c)];
                Node& head = nodes_[static_cast<std::size_t>(x)];
                tail.parent = x;
                tail.id = rest(key, left);
                tail.tokens = n - left;
                tail.children = std::move(head.children);
                tail.holders = head.holders;
                tail.sticky = head.sticky;
                for (const auto& [k, child] : tail.children)
                    nodes_[static_cast<std::size_t>(child)].parent = c;
                head.children.clear();
                head.children.emplace(tail.id, c);
                head.tokens = left;
            }
            join(x);
            at = x;
            const std::int64_t taken = nodes_[static_cast<std::size_t>(x)].tokens;
            left -= taken;
            key = rest(key, taken);
        }
    }
}

void RouterTree::evict(std::int64_t max_tokens) {
    for (int tenant = 0; tenant < static_cast<int>(tokens_.size()); ++tenant) {
        std::int64_t& held = tokens_[static_cast<std::size_t>(tenant)];
        if (held <= max_tokens) continue;
        // Its leaves (no child holds it), least recently accessed first.
        using Entry = std::tuple<double, int>;
        std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
        const auto access = [&](int x) {
            for (const auto& h : nodes_[static_cast<std::size_t>(x)].holders)
                if (h.first == tenant) return h.second;
            return -1.0;
        };
        const auto leaf = [&](int x) {
            for (const auto& [k, c] : nodes_[static_cast<std::size_t>(x)].children)
                if (holds(nodes_[static_cast<std::size_t>(c)], tenant)) return false;
            return true;
        };
        for (int x = 1; x < static_cast<int>(nodes_.size()); ++x)
            if (nodes_[static_cast<std::size_t>(x)].parent >= 0 &&
                holds(nodes_[static_cast<std::size_t>(x)], tenant) && leaf(x))
                heap.emplace(access(x), x);
        while (held > max_tokens && !heap.empty()) {
            const int x = std::get<1>(heap.top());
            heap.pop();
            Node& n = nodes_[static_cast<std::size_t>(x)];
            n.holders.erase(std::find_if(n.holders.begin(), n.holders.end(),
                                         [&](const auto& h) { return h.first == tenant; }));
            held -= n.tokens;
            const int parent = n.parent;
            if (n.holders.empty() && n.children.empty()) {
                nodes_[static_cast<std::size_t>(parent)].children.erase(n.id);
                n.parent = -1;
                free_.push_back(x);
            }
            if (parent > 0 && holds(nodes_[static_cast<std::size_t>(parent)], tenant) &&
                leaf(parent))
                heap.emplace(access(parent), parent);
        }
    }
}

} // namespace kairos
