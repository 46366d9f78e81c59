#include "fit/vidur_fit.h"

#include "util/input_error.h"
#include "util/input_file.h"
#include "util/text.h"
#ifdef KAIROS_HAVE_ALA
#include "fit/xgb.h"
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

namespace kairos::fit {

namespace {

// One operator's measurements: feature rows (one or two features, as Vidur's) and the
// median time (ms). Identical feature rows are averaged (Vidur drops identical rows).
struct Points {
    std::string op, file;
    int dims = 1;
    std::map<std::pair<double, double>, std::pair<double, int>> acc; // x -> (sum y, count)

    void add(double x0, double x1, double y) {
        auto& a = acc[{x0, x1}];
        a.first += y;
        ++a.second;
    }
    std::vector<std::array<double, 3>> rows() const {
        std::vector<std::array<double, 3>> out;
        for (const auto& [x, a] : acc) out.push_back({x.first, x.second, a.first / a.second});
        return out;
    }
};

using Rows = std::vector<std::array<double, 3>>;

// Piecewise linear in one variable through (x, y) points, flat beyond the ends.
class Line {
public:
    void add(double x, double y) { pts_.push_back({x, y}); }
    void finish() { std::sort(pts_.begin(), pts_.end()); }
    bool empty() const { return pts_.empty(); }
    double operator()(double x) const {
        if (x <= pts_.front().first) return pts_.front().second;
        if (x >= pts_.back().first) return pts_.back().second;
        const auto hi = std::lower_bound(pts_.begin(), pts_.end(), std::pair{x, -1e300});
        const auto lo = hi - 1;
        const double w = (x - lo->first) / (hi->first - lo->first);
        return lo->second + w * (hi->second - lo->second);
    }

private:
    std::vector<std::pair<double, double>> pts_;
};

// Interpolation: in one feature, a Line; in two, a Line in the second feature at each
// level of the first, then linear between the two levels around the query.
class Interp {
public:
    explicit Interp(const Rows& rows, int dims) : dims_(dims) {
        for (const auto& r : rows)
            levels_[dims == 1 ? 0.0 : r[0]].add(dims == 1 ? r[0] : r[1], r[2]);
        for (auto& [l, line] : levels_) line.finish();
    }
    double operator()(double x0, double x1) const {
        if (dims_ == 1) return levels_.begin()->second(x0);
        const auto hi = levels_.lower_bound(x0);
        if (hi == levels_.end()) return std::prev(hi)->second(x1);
        if (hi == levels_.begin() || hi->first == x0) return hi->second(x1);
        const auto lo = std::prev(hi);
        const double w = (x0 - lo->first) / (hi->first - lo->first);
        return lo->second(x1) + w * (hi->second(x1) - lo->second(x1));
    }

private:
    int dims_;
    std::map<double, Line> levels_;
};

// Vidur's scorer: mean of |y - yhat| / y over the rows (a row with y == 0 scores 0 when
// predicted exactly, else 100 %).
double mape(const Rows& rows, const std::vector<double>& pred) {
    double s = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const double y = rows[i][2];
        s += y == 0 ? (pred[i] == 0 ? 0 : 100) : 100 * std::abs(y - pred[i]) / y;
    }
    return rows.empty() ? 0 : s / double(rows.size());
}

// A predictor over (x0, x1), trained on rows.
using Predict = std::function<std::vector<double>(const std::vector<std::array<double, 2>>&)>;

Predict trainInterp(const Rows& rows, int dims) {
    auto f = std::make_shared<Interp>(rows, dims);
    return [f](const std::vector<std::array<double, 2>>& q) {
        std::vector<double> out;
        out.reserve(q.size());
        for (const auto& x : q) out.push_back((*f)(x[0], x[1]));
        return out;
    };
}

#ifdef KAIROS_HAVE_ALA
Predict trainXgb(const Rows& rows, int dims, std::uint64_t seed) {
    std::vector<std::vector<float>> x;
    std::vector<float> ys;
    for (const auto& r : rows) {
        x.push_back(dims == 1 ? std::vector<float>{float(r[0])}
                              : std::vector<float>{float(r[0]), float(r[1])});
        ys.push_back(float(r[2]));
    }
    XgbParams p = XgbParams::with(400, 0.05, 6);
    p.subsample = 1.0; // every row: the grids are small and regular
    p.colsample = 1.0;
    p.seed = seed;
    auto m = std::make_shared<XgbRegressor>();
    m->fit(x, ys, p);
    return [m, dims](const std::vector<std::array<double, 2>>& q) {
        std::vector<std::vector<float>> xs;
        xs.reserve(q.size());
        for (const auto& r : q)
            xs.push_back(dims == 1 ? std::vector<float>{float(r[0])}
                                   : std::vector<float>{float(r[0]), float(r[1])});
        const std::vector<float> y = m->predict(xs);
        return std::vector<double>(y.begin(), y.end());
    };
}
#endif

std::vector<std::array<double, 2>> features(const Rows& rows) {
    std::vector<std::array<double, 2>> q;
    for (const auto& r : rows) q.push_back({r[0], r[1]});
    return q;
}

// Held-out choice, then the chosen candidate refitted on every row.
Predict choose(const Points& pts, const VidurFitOptions& o, VidurOpFit& fit) {
    const Rows all = pts.rows();
    fit.op = pts.op;
    fit.file = pts.file;
    fit.rows = static_cast<int>(all.size());
    if (all.size() < 2)
        throw InputError(pts.file, 0, "time_stats." + pts.op + ".median",
                         "fewer than 2 measured points after the model's filters");
    std::vector<std::size_t> idx(all.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::mt19937_64 rng(o.seed ^ std::hash<std::string>{}(pts.op));
    for (std::size_t i = idx.size() - 1; i > 0; --i) // Fisher-Yates, portable
        std::swap(idx[i], idx[rng() % (i + 1)]);
    const auto held = std::max<std::size_t>(1, std::size_t(o.holdout * double(all.size())));
    Rows train, test;
    for (std::size_t i = 0; i < idx.size(); ++i) (i < held ? test : train).push_back(all[idx[i]]);
    fit.interp_mape = mape(test, trainInterp(train, pts.dims)(features(test)));
    fit.chosen = "interpolation";
#ifdef KAIROS_HAVE_ALA
    if (o.xgboost) {
        fit.xgb_mape = mape(test, trainXgb(train, pts.dims, o.seed)(features(test)));
        if (fit.xgb_mape < fit.interp_mape) {
            fit.chosen = "xgboost";
            return trainXgb(all, pts.dims, o.seed);
        }
    }
#endif
    return trainInterp(all, pts.dims);
}

// Six significant digits: the tables are stored as text, and a loaded profile must
// predict what the derived one did.
double sig6(double v) {
    return std::stod(text::formatted("%.6g", std::max(0.0, v)));
}

std::vector<double> tabulate(const Predict& f, const std::vector<std::array<double, 2>>& q) {
    std::vector<double> v = f(q);
    for (double& x : v) x = sig6(x);
    return v;
}

// A table of rows x cols from one prediction call over the grid point(r, c).
template <class Point>
std::vector<std::vector<double>> tabulateGrid(const Predict& f, std::size_t rows, std::size_t cols,
                                              Point point) {
    std::vector<std::array<double, 2>> q;
    q.reserve(rows * cols);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) q.push_back(point(r, c));
    const std::vector<double> v = tabulate(f, q);
    std::vector<std::vector<double>> out(rows);
    for (std::size_t r = 0; r < rows; ++r)
        out[r].assign(v.begin() + std::ptrdiff_t(r * cols),
                      v.begin() + std::ptrdiff_t((r + 1) * cols));
    return out;
}

struct Csv {
    std::string path;
    std::string data;
};

Csv open(const std::string& dir, const char* name) {
    Csv c{dir + "/" + name, {}};
    requireRegularFile(c.path, "(Vidur's profiling output: the folder given names the device "
                               "and model, as data/profiling/compute/a100/<model>/)");
    c.data = readInputFile(c.path, limits::kTable);
    return c;
}

bool needBool(std::string_view s, const std::string& file, long line, const std::string& col) {
    if (s == "True" || s == "true" || s == "1") return true;
    if (s == "False" || s == "false" || s == "0") return false;
    throw InputError(file, line, col, "expected True or False, found '" + text::printable(s) + "'");
}

} // namespace

VidurFit fitVidur(const VidurFitOptions& o) {
    const ModelConfig& m = o.model;
    if (!m.valid() || m.intermediate <= 0)
        throw std::invalid_argument(
            "--model: needs layers, hidden size, heads, KV heads and the MLP width");
    if (m.heads % o.tp != 0 || m.layers < 1)
        throw std::invalid_argument("--tp: must divide the model's " + std::to_string(m.heads) +
                                    " heads");
    VidurFit out;
    VidurTables& t = out.tables;
    t.layers = m.layers;
    t.tensor_parallel = o.tp;

    // Token-keyed operators: mlp.csv rows of this model's shapes at this TP.
    static const char* const kOps[] = {"attn_pre_proj",
                                       "attn_post_proj",
                                       "attn_rope",
                                       "input_layernorm",
                                       "post_attention_layernorm",
                                       "mlp_up_proj",
                                       "mlp_act",
                                       "mlp_down_proj",
                                       "add"};
    // Vidur fills these with 0 where the profiler measured nothing.
    static const char* const kZeroIfMissing[] = {"input_layernorm", "post_attention_layernorm",
                                                 "add"};
    std::vector<Points> token_pts;
    {
        const Csv c = open(o.compute_dir, "mlp.csv");
        std::istringstream in(c.data);
        const text::CsvHeader h(in, c.path);
        const std::size_t c_h = h.column("n_head"), c_kv = h.column("n_kv_head"),
                          c_e = h.column("n_embd"), c_x = h.column("n_expanded_embd"),
                          c_g = h.column("use_gated_mlp"), c_n = h.column("num_tokens"),
                          c_tp = h.column("num_tensor_parallel_workers");
        struct Column {
            std::string name;
            std::size_t at;
            bool zero_if_missing;
        };
        std::vector<Column> cols;
        for (const char* op : kOps) {
            token_pts.push_back({op, c.path, 1, {}});
            std::string name = std::string("time_stats.") + op + ".median";
            const std::size_t at = h.column(name.c_str());
            cols.push_back({std::move(name), at,
                            std::any_of(std::begin(kZeroIfMissing), std::end(kZeroIfMissing),
                                        [&](const char* z) { return std::string(z) == op; })});
        }
        text::forCsvRows(in, c.path, h, 0, [&](const std::vector<std::string_view>& f, long no) {
            auto num = [&](std::size_t col, const char* name) {
                return text::needDouble(f[col], c.path, no, name);
            };
            if (num(c_h, "n_head") != m.heads || num(c_kv, "n_kv_head") != m.kv_heads ||
                num(c_e, "n_embd") != m.hidden || num(c_x, "n_expanded_embd") != m.intermediate ||
                !needBool(f[c_g], c.path, no, "use_gated_mlp") ||
                num(c_tp, "num_tensor_parallel_workers") != o.tp)
                return;
            const double n = double(text::needCount(f[c_n], c.path, no, "num_tokens", 1));
            for (std::size_t i = 0; i < cols.size(); ++i) {
                const Column& col = cols[i];
                const bool missing = text::trim(f[col.at]).empty() && col.zero_if_missing;
                const double y =
                    missing ? 0.0 : text::needDouble(f[col.at], c.path, no, col.name.c_str());
                if (y < 0) throw InputError(c.path, no, col.name, "a time cannot be negative");
                token_pts[i].add(n, 0, y);
            }
        });
    }

    Points decode{"attn_decode", "", 2, {}}, prefill{"attn_prefill", "", 2, {}};
    {
        const Csv c = open(o.compute_dir, "attention.csv");
        decode.file = prefill.file = c.path;
        std::istringstream in(c.data);
        const text::CsvHeader h(in, c.path);
        const std::size_t c_e = h.column("n_embd"), c_q = h.column("n_q_head"),
                          c_kv = h.column("n_kv_head"), c_bs = h.column("block_size"),
                          c_tp = h.column("num_tensor_parallel_workers"),
                          c_b = h.column("batch_size"), c_ch = h.column("prefill_chunk_size"),
                          c_ctx = h.column("kv_cache_size"),
                          c_dec = h.column("time_stats.attn_decode.median"),
                          c_pre = h.column("time_stats.attn_prefill.median");
        text::forCsvRows(in, c.path, h, 0, [&](const std::vector<std::string_view>& f, long no) {
            auto num = [&](std::size_t col, const char* name) {
                return text::needDouble(f[col], c.path, no, name);
            };
            if (num(c_e, "n_embd") != m.hidden || num(c_q, "n_q_head") != m.heads ||
                num(c_kv, "n_kv_head") != m.kv_heads || num(c_bs, "block_size") != o.block_size ||
                num(c_tp, "num_tensor_parallel_workers") != o.tp)
                return;
            const int chunk = text::needCount(f[c_ch], c.path, no, "prefill_chunk_size", 0);
            const int batch = text::needCount(f[c_b], c.path, no, "batch_size", 1);
            const int ctx = text::needCount(f[c_ctx], c.path, no, "kv_cache_size", 0);
            if (chunk > 0) {
                const double y = num(c_pre, "time_stats.attn_prefill.median");
                if (y < 0)
                    throw InputError(c.path, no, "time_stats.attn_prefill.median",
                                     "a time cannot be negative");
                prefill.add(ctx, double(chunk) * chunk, y);
            } else {
                const double y = num(c_dec, "time_stats.attn_decode.median");
                if (y < 0)
                    throw InputError(c.path, no, "time_stats.attn_decode.median",
                                     "a time cannot be negative");
                decode.add(batch, ctx, y);
            }
        });
    }

    Points reduce{"all_reduce", "", 1, {}};
    if (o.tp > 1) {
        const Csv c = open(o.network_dir, "all_reduce.csv");
        reduce.file = c.path;
        std::istringstream in(c.data);
        const text::CsvHeader h(in, c.path);
        const std::size_t c_w = h.column("num_workers"), c_d = h.column("devices_per_node"),
                          c_s = h.column("size"), c_c = h.column("collective"),
                          c_t = h.column("time_stats.all_reduce.median");
        text::forCsvRows(in, c.path, h, 0, [&](const std::vector<std::string_view>& f, long no) {
            if (text::trim(f[c_c]) != "all_reduce") return;
            const int w = text::needCount(f[c_w], c.path, no, "num_workers", 1);
            const int d = text::needCount(f[c_d], c.path, no, "devices_per_node", 1);
            if (w != o.tp || d != o.tp) return;
            const double bytes = text::needDouble(f[c_s], c.path, no, "size");
            if (!(bytes > 0)) throw InputError(c.path, no, "size", "must be above 0 bytes");
            const double y = text::needDouble(f[c_t], c.path, no, "time_stats.all_reduce.median");
            if (y < 0)
                throw InputError(c.path, no, "time_stats.all_reduce.median",
                                 "a time cannot be negative");
            // fp16 hidden states of width n_embd: the token rows the message carries.
            reduce.add(bytes / (2.0 * m.hidden), 0, y);
        });
    }

    // Vidur's lookup grid.
    std::vector<std::array<double, 2>> tokens;
    for (int n = VidurTables::kTokenStep; n <= o.max_tokens; n += VidurTables::kTokenStep)
        tokens.push_back({double(n), 0});
    for (const Points& p : token_pts) {
        out.ops.emplace_back();
        t.token_ops[p.op] = tabulate(choose(p, o, out.ops.back()), tokens);
    }
    if (o.tp > 1) {
        out.ops.emplace_back();
        t.all_reduce = tabulate(choose(reduce, o, out.ops.back()), tokens);
    }
    const auto kv_keys = std::size_t(o.max_kv / VidurTables::kKvStep + 1);
    out.ops.emplace_back();
    t.decode = tabulateGrid(
        choose(decode, o, out.ops.back()), std::size_t(o.max_batch), kv_keys,
        [](std::size_t b, std::size_t k) {
            return std::array<double, 2>{double(b + 1), double(k * VidurTables::kKvStep)};
        });
    out.ops.emplace_back();
    t.prefill =
        tabulateGrid(choose(prefill, o, out.ops.back()), kv_keys,
                     std::size_t(o.max_chunk / t.chunk_step), [&](std::size_t k, std::size_t j) {
                         const double c = double((j + 1) * std::size_t(t.chunk_step));
                         return std::array<double, 2>{double(k * VidurTables::kKvStep), c * c};
                     });
    nlohmann::json rep = nlohmann::json::array();
    for (const VidurOpFit& f : out.ops) {
        nlohmann::json r{{"op", f.op},
                         {"rows", f.rows},
                         {"heldout_mape_pct", {{"interpolation", sig6(f.interp_mape)}}},
                         {"chosen", f.chosen}};
        if (f.xgb_mape >= 0) r["heldout_mape_pct"]["xgboost"] = sig6(f.xgb_mape);
        rep.push_back(r);
    }
    t.fit_report_json = rep.dump();
    t.finish();

    // Vidur's memory planner: what is left of the device's memory less a 10 % margin,
    // after this device's share of the layers' weights (no embeddings), in requests of
    // max_request_tokens each.
    const std::int64_t head = m.hidden / m.heads;
    const std::int64_t q_heads = m.heads / o.tp, kv_heads = (m.kv_heads + o.tp - 1) / o.tp;
    const std::int64_t per_layer = std::int64_t(m.hidden) * head * (q_heads + 2 * kv_heads) +
                                   std::int64_t(m.hidden) * head * q_heads +
                                   3 * std::int64_t(m.hidden) * m.intermediate / o.tp;
    const double weights = 2.0 * double(per_layer) * m.layers;
    const double per_request =
        2.0 * 2 * double(head) * double(kv_heads) * o.max_request_tokens * m.layers;
    const double room = o.gpu_mem_gib * 1073741824.0 * 0.9 - weights;
    out.planner_requests = room > 0 ? int(std::floor(room / per_request)) : 0;
    out.kv_capacity_tokens = std::int64_t(out.planner_requests) * o.max_request_tokens;
    return out;
}

std::string VidurFit::report() const {
    std::ostringstream s;
    s << text::formatted("%-26s %6s %14s %10s  %s\n", "operator", "points", "interpolation",
                         "xgboost", "kept (held-out MAPE %)");
    for (const VidurOpFit& f : ops)
        s << text::formatted("%-26s %6d %14.2f %10s  %s\n", f.op.c_str(), f.rows, f.interp_mape,
                             f.xgb_mape >= 0 ? text::formatted("%.2f", f.xgb_mape).c_str() : "-",
                             f.chosen.c_str());
    return s.str();
}

} // namespace kairos::fit
