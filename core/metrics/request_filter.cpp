#include "metrics/request_filter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>

namespace kairos {

namespace {

double number(const std::string& term, const std::string& s) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !std::isfinite(v))
        throw std::invalid_argument("filter term '" + term + "': '" + s + "' is not a number");
    return v;
}

} // namespace

RequestFilter RequestFilter::parse(const std::string& text) {
    static const std::map<std::string, Kind> flags = {
        {"killed", Kind::Killed},         {"finished", Kind::Finished},
        {"unfinished", Kind::Unfinished}, {"preempted", Kind::Preempted},
        {"suspended", Kind::Suspended},   {"slo", Kind::Slo}};
    static const std::map<std::string, Kind> keys = {
        {"id", Kind::Id},         {"agent", Kind::Agent},     {"class", Kind::Class},
        {"phase", Kind::Phase},   {"ttft", Kind::Ttft},       {"tpot", Kind::Tpot},
        {"e2el", Kind::E2el},     {"queue", Kind::Queue},     {"prompt", Kind::Prompt},
        {"output", Kind::Output}, {"replica", Kind::Replica}, {"cached", Kind::Cached},
        {"row", Kind::Row}};
    RequestFilter f;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
        std::size_t j = i;
        while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        if (j == i) break;
        const std::string term = text.substr(i, j - i);
        i = j;
        Term t;
        std::string body = term;
        if (body[0] == '!') {
            t.negate = true;
            body.erase(0, 1);
        }
        if (!body.empty() && (std::isdigit(static_cast<unsigned char>(body[0])))) {
            t.kind = Kind::Id;
            t.number = number(term, body);
            f.terms_.push_back(t);
            continue;
        }
        if (const auto it = flags.find(body); it != flags.end()) {
            t.kind = it->second;
            f.terms_.push_back(t);
            continue;
        }
        const std::size_t op = body.find_first_of("=<>");
        if (op == std::string::npos || op == 0)
            throw std::invalid_argument(
                "filter term '" + term +
                "': expected a request id, a word (killed, finished, unfinished, preempted, "
                "suspended, slo) or KEY=VALUE / KEY>VALUE (id, agent, class, phase, ttft, "
                "tpot, e2el, queue, prompt, output, replica, cached)");
        const std::string key = body.substr(0, op);
        const auto k = keys.find(key);
        if (k == keys.end())
            throw std::invalid_argument("filter term '" + term + "': unknown key '" + key +
                                        "' (id, agent, class, phase, ttft, tpot, e2el, queue, "
                                        "prompt, output, replica, cached)");
        t.kind = k->second;
        std::size_t v = op + 1;
        if (body[op] == '=') {
            t.op = Op::Eq;
        } else {
            const bool eq = v < body.size() && body[v] == '=';
            t.op = body[op] == '>' ? (eq ? Op::Ge : Op::Gt) : (eq ? Op::Le : Op::Lt);
            if (eq) ++v;
        }
        const std::string value = body.substr(v);
        if (value.empty())
            throw std::invalid_argument("filter term '" + term + "': no value after '" +
                                        body.substr(op, v - op) + "'");
        const bool text_key = t.kind == Kind::Class || t.kind == Kind::Phase;
        if (text_key && t.op != Op::Eq)
            throw std::invalid_argument("filter term '" + term + "': " + key + " takes '=' only");
        if (t.kind == Kind::Class) {
            t.text = value;
        } else if (t.kind == Kind::Phase) {
            static const std::map<std::string, lod::SpanKind> phases = {
                {"queued", lod::SpanKind::Queued},       {"prefill", lod::SpanKind::Prefill},
                {"decoding", lod::SpanKind::Decode},     {"decode", lod::SpanKind::Decode},
                {"preempted", lod::SpanKind::Preempted}, {"suspended", lod::SpanKind::Suspended}};
            const auto p = phases.find(value);
            if (p == phases.end())
                throw std::invalid_argument("filter term '" + term + "': unknown phase '" + value +
                                            "' (queued, prefill, decoding, preempted, suspended)");
            t.phase = p->second;
        } else {
            t.number = number(term, value);
        }
        f.terms_.push_back(t);
    }
    return f;
}

bool RequestFilter::matches(const RequestMetrics& m, const Request* q, const lod::Row* row,
                            const GoodputSlo& slo) const {
    auto compare = [](double x, Op op, double y) {
        if (std::isnan(x)) return false;
        switch (op) {
        case Op::Eq:
            return x == y;
        case Op::Gt:
            return x > y;
        case Op::Ge:
            return x >= y;
        case Op::Lt:
            return x < y;
        case Op::Le:
            return x <= y;
        }
        return false;
    };
    for (const Term& t : terms_) {
        bool ok = false;
        switch (t.kind) {
        case Kind::Id: // the trace's own id; the row where the workload is not known
            ok = compare(double(q ? q->id : m.id), t.op, t.number);
            break;
        case Kind::Row:
            ok = compare(double(m.id), t.op, t.number);
            break;
        case Kind::Agent:
            ok = q && compare(double(q->agent), t.op, t.number);
            break;
        case Kind::Class:
            ok = q && q->cls == t.text;
            break;
        case Kind::Phase:
            ok = row && std::any_of(row->spans.begin(), row->spans.end(),
                                    [&](const lod::Span& s) { return s.kind == t.phase; });
            break;
        case Kind::Killed:
            ok = m.killed;
            break;
        case Kind::Finished:
            ok = m.finished;
            break;
        case Kind::Unfinished:
            ok = !m.finished && !m.killed;
            break;
        case Kind::Preempted:
            ok = m.preemptions > 0;
            break;
        case Kind::Suspended:
            ok = m.suspensions > 0;
            break;
        case Kind::Slo:
            ok = slo.any() && (!m.finished || !slo.meets(m));
            break;
        case Kind::Ttft:
            ok = compare(m.ttft() * 1e3, t.op, t.number);
            break;
        case Kind::Tpot:
            ok = compare(m.tpot() * 1e3, t.op, t.number);
            break;
        case Kind::E2el:
            ok = compare(m.e2el() * 1e3, t.op, t.number);
            break;
        case Kind::Queue:
            ok = compare(m.queue_delay * 1e3, t.op, t.number);
            break;
        case Kind::Prompt:
            ok = compare(double(m.prompt_tokens), t.op, t.number);
            break;
        case Kind::Output:
            ok = compare(double(m.output_tokens), t.op, t.number);
            break;
        case Kind::Replica: // a request of a fleet (one engine: no replica)
            ok = row && row->replica >= 0 && compare(double(row->replica), t.op, t.number);
            break;
        case Kind::Cached:
            ok = compare(double(m.cached_tokens), t.op, t.number);
            break;
        }
        if (ok == t.negate) return false;
    }
    return true;
}

std::vector<ReqId> RequestFilter::apply(const std::vector<RequestMetrics>& per_request,
                                        const Workload* w, const std::vector<lod::Row>* rows,
                                        const GoodputSlo& slo) const {
    std::vector<ReqId> out;
    for (const RequestMetrics& m : per_request) {
        const auto i = static_cast<std::size_t>(m.id);
        const Request* q = w && i < w->size() ? &w->requests[i] : nullptr;
        const lod::Row* row = rows && i < rows->size() ? &(*rows)[i] : nullptr;
        if (matches(m, q, row, slo)) out.push_back(m.id);
    }
    return out;
}

} // namespace kairos
