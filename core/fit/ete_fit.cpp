#include "fit/ete_fit.h"

#include "metrics/stats.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/text.h"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

namespace kairos {
namespace {

// Solves min sum_i ((x_i . beta) / y_i - 1)^2 subject to beta >= 0. With three unknowns
// the non-negative least-squares optimum is found exactly by solving the unconstrained
// problem on every subset of free coefficients (the others fixed at 0) and keeping the
// best feasible one: a negative coefficient (decode time falling with context) would let
// large batches take negative time.
// Features per row: up to 3 (unused ones are 0 and ignored when `k` < 3).
using Row3 = std::array<double, 3>;

Eigen::VectorXd relativeLeastSquares(const std::vector<Row3>& x, const std::vector<double>& y,
                                     const std::vector<double>& weight, int k = 3) {
    const auto n = static_cast<Eigen::Index>(x.size());
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, k);
    Eigen::VectorXd b = Eigen::VectorXd::Zero(n);
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (weight[i] <= 0) continue;
        const double w = std::sqrt(weight[i]);
        b(static_cast<Eigen::Index>(i)) = w;
        for (int c = 0; c < k; ++c)
            a(static_cast<Eigen::Index>(i), c) = w * x[i][static_cast<std::size_t>(c)] / y[i];
    }
    // Scale columns so that the solve is well conditioned (sum L^2 reaches 1e9).
    Eigen::VectorXd scale(k);
    for (int c = 0; c < k; ++c) {
        const double nrm = a.col(c).norm();
        scale(c) = nrm > 0 ? nrm : 1.0;
        a.col(c) /= scale(c);
    }
    Eigen::VectorXd best = Eigen::VectorXd::Zero(k);
    double best_err = (b).squaredNorm();
    for (int mask = 1; mask < (1 << k); ++mask) {
        std::vector<int> cols;
        for (int c = 0; c < k; ++c)
            if (mask & (1 << c)) cols.push_back(c);
        Eigen::MatrixXd sub(n, static_cast<Eigen::Index>(cols.size()));
        for (std::size_t c = 0; c < cols.size(); ++c)
            sub.col(static_cast<Eigen::Index>(c)) = a.col(cols[c]);
        const Eigen::VectorXd sol = sub.colPivHouseholderQr().solve(b);
        if ((sol.array() < 0).any()) continue;
        const double err = (sub * sol - b).squaredNorm();
        if (err < best_err) {
            best_err = err;
            best.setZero();
            for (std::size_t c = 0; c < cols.size(); ++c)
                best(cols[c]) = sol(static_cast<Eigen::Index>(c));
        }
    }
    return best.cwiseQuotient(scale);
}

double predict(const Row3& x, const Eigen::VectorXd& beta) {
    double v = 0;
    for (Eigen::Index c = 0; c < beta.size(); ++c) v += beta(c) * x[static_cast<std::size_t>(c)];
    return v;
}

double relErr(const Row3& x, double y, const Eigen::VectorXd& beta) {
    return std::fabs(predict(x, beta) - y) / y;
}

// Robust fit: a least-trimmed-squares search over exact fits of random row triples
// (seeded, so the result is reproducible), scored by the smallest 75 % of squared *log*
// errors. Log error is symmetric: a relative-error fit is dragged by rows it over-predicts
// (their error is unbounded), such as Splitwise's batch-64 prompt rows at TP2 that are 8x
// faster than batch 32. Rows more than 50 % off the best candidate are outliers; the
// relative-error fit is then done without them. If over a quarter would go, none do.
Eigen::VectorXd robustFit(const std::vector<Row3>& x, const std::vector<double>& y,
                          std::size_t* outliers, int k = 3) {
    const std::size_t n = x.size();
    std::vector<double> w(n, 1.0);
    const Eigen::VectorXd plain = relativeLeastSquares(x, y, w, k);
    const std::size_t h = (3 * n + 3) / 4;
    std::vector<double> e2(n);
    auto score = [&](const Eigen::VectorXd& b) {
        for (std::size_t i = 0; i < n; ++i) {
            const double pred = predict(x[i], b);
            e2[i] = pred > 0 ? std::pow(std::log(pred / y[i]), 2) : INFINITY;
        }
        std::nth_element(e2.begin(), e2.begin() + static_cast<std::ptrdiff_t>(h - 1), e2.end());
        double s = 0;
        for (std::size_t i = 0; i < h; ++i) s += e2[i];
        return s;
    };
    Eigen::VectorXd best = plain;
    double best_score = score(plain);
    std::mt19937_64 rng(20240531);
    for (int trial = 0; trial < 400 && n >= std::size_t(k); ++trial) {
        Eigen::MatrixXd m(k, k);
        Eigen::VectorXd r(k);
        for (int j = 0; j < k; ++j) {
            const std::size_t i = static_cast<std::size_t>(rng() % n);
            for (int c = 0; c < k; ++c) m(j, c) = x[i][static_cast<std::size_t>(c)];
            r(j) = y[i];
        }
        Eigen::FullPivLU<Eigen::MatrixXd> lu(m);
        if (!lu.isInvertible()) continue;
        const Eigen::VectorXd b = lu.solve(r);
        if ((b.array() < 0).any()) continue;
        const double sc = score(b);
        if (sc < best_score) {
            best_score = sc;
            best = b;
        }
    }
    *outliers = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const bool out = relErr(x[i], y[i], best) > 0.5;
        w[i] = out ? 0.0 : 1.0;
        *outliers += out;
    }
    if (4 * *outliers > n) {
        *outliers = 0;
        return plain;
    }
    return *outliers ? relativeLeastSquares(x, y, w, k) : plain;
}

// Mean absolute percentage error over the rows whose error is at most `cut`.
double mape(const std::vector<Row3>& x, const std::vector<double>& y, const Eigen::VectorXd& beta,
            double cut) {
    double s = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double e = relErr(x[i], y[i], beta);
        if (e > cut) continue;
        s += e;
        ++n;
    }
    return n == 0 ? 0.0 : 100.0 * s / static_cast<double>(n);
}

} // namespace

EteFit fitEte(const std::vector<PrefillSample>& pre, const std::vector<DecodeSample>& dec) {
    if (pre.size() < 3 || dec.size() < 3)
        throw std::invalid_argument("ETE fit needs at least 3 prefill and 3 decode rows");
    std::vector<std::array<double, 3>> xp, xd;
    std::vector<double> yp, yd;
    for (const auto& s : pre) {
        if (!(s.seconds > 0)) throw std::invalid_argument("prefill time must be > 0");
        xp.push_back({1.0, s.sum_l, s.sum_l2});
        yp.push_back(s.seconds);
    }
    for (const auto& s : dec) {
        if (!(s.seconds > 0)) throw std::invalid_argument("decode time must be > 0");
        xd.push_back({1.0, s.batch, s.sum_kv});
        yd.push_back(s.seconds);
    }
    EteFit f;
    const Eigen::VectorXd bp = robustFit(xp, yp, &f.prefill_outliers),
                          bd = robustFit(xd, yd, &f.decode_outliers);
    f.params.a = bp(0);
    f.params.b = bp(1);
    f.params.c = bp(2);
    f.params.q0 = bd(0);
    f.params.q1 = bd(1);
    f.params.p = bd(2);
    f.mape_prefill_pct = mape(xp, yp, bp, 0.5);
    f.mape_decode_pct = mape(xd, yd, bd, 0.5);
    f.mape_prefill_all_pct = mape(xp, yp, bp, INFINITY);
    f.mape_decode_all_pct = mape(xd, yd, bd, INFINITY);
    f.prefill_rows = pre.size();
    f.decode_rows = dec.size();
    return f;
}

std::vector<Measurement> readMeasurementsCsv(const std::string& path) {
    std::istringstream in(readInputFile(path, limits::kTable));
    const text::CsvHeader h(in, path);
    const auto cK = h.column("kind"), cB = h.column("batch"), cT = h.column("tokens"),
               cC = h.column("context"), cS = h.column("seconds");
    std::vector<Measurement> out;
    text::forCsvRows(in, path, h, 0, [&](const std::vector<std::string_view>& f, long lineno) {
        Measurement m;
        m.kind = std::string(text::trim(f[cK]));
        if (m.kind.empty()) throw InputError(path, lineno, "kind", "empty");
        m.batch = text::needCount(f[cB], path, lineno, "batch", 1);
        m.tokens = text::needCount(f[cT], path, lineno, "tokens", 0);
        m.context = text::needCount(f[cC], path, lineno, "context", 0);
        m.seconds = text::needDouble(f[cS], path, lineno, "seconds");
        if (!(m.seconds > 0)) throw InputError(path, lineno, "seconds", "must be > 0");
        if (m.kind == "prefill" && m.tokens < 1)
            throw InputError(path, lineno, "tokens", "a prefill needs tokens >= 1");
        if (m.kind == "decode" && m.context < 1)
            throw InputError(path, lineno, "context", "a decode step needs context >= 1");
        out.push_back(m);
    });
    if (out.empty()) throw InputError(path, 0, "", "no measurements in the file");
    return out;
}

std::map<std::string, std::vector<Measurement>> splitwiseMeasurements(const std::string& path) {
    std::istringstream in(readInputFile(path, limits::kTable));
    const text::CsvHeader h(in, path);
    const auto cM = h.column("model"), cH = h.column("hardware"), cP = h.column("prompt_size"),
               cB = h.column("batch_size"), cT = h.column("token_size"),
               cPT = h.column("prompt_time"), cTT = h.column("token_time"),
               cTP = h.column("tensor_parallel");
    std::map<std::string, std::vector<Measurement>> out;
    text::forCsvRows(in, path, h, 0, [&](const std::vector<std::string_view>& f, long lineno) {
        const auto tp = text::needInt(f[cTP], path, lineno, "tensor_parallel");
        const std::int64_t p = text::needCount(f[cP], path, lineno, "prompt_size", 1);
        const std::int64_t b = text::needCount(f[cB], path, lineno, "batch_size", 1);
        const std::int64_t t = text::needCount(f[cT], path, lineno, "token_size", 1);
        const double pt = text::needDouble(f[cPT], path, lineno, "prompt_time") / 1e3;
        const double tt = text::needDouble(f[cTT], path, lineno, "token_time") / 1e3;
        if (!(pt > 0)) throw InputError(path, lineno, "prompt_time", "must be > 0");
        if (!(tt > 0)) throw InputError(path, lineno, "token_time", "must be > 0");
        auto& g = out[std::string(f[cM]) + " " + std::string(f[cH]) + " tp" + std::to_string(tp)];
        g.push_back({"prefill", b, p, 0, pt});
        g.push_back({"decode", b, 0, std::int64_t(std::llround(double(b) * (p + t / 2.0))), tt});
    });
    if (out.empty()) throw InputError(path, 0, "", "no rows");
    return out;
}

bool poorFit(double held_out_median_pct, double held_out_p90_pct) {
    return held_out_median_pct > kPoorMedianPct || held_out_p90_pct > kPoorP90Pct;
}

bool LinearFit::poor() const {
    return poorFit(test_median_pct, test_p90_pct);
}

std::vector<std::string> suspectSettings(const std::vector<Measurement>& m) {
    struct Setting {
        bool prefill;
        double w1, w2; // prefill: sum L, sum L^2; decode: batch, context
        std::vector<double> times;
        double t = 0;
        std::string label;
    };
    std::map<std::array<std::int64_t, 4>, std::size_t> index;
    std::vector<Setting> settings;
    std::vector<std::size_t> of(m.size(), SIZE_MAX);
    for (std::size_t i = 0; i < m.size(); ++i) {
        const Measurement& x = m[i];
        if (x.kind != "prefill" && x.kind != "decode") continue;
        const std::array<std::int64_t, 4> k{x.kind == "prefill", x.batch, x.tokens, x.context};
        auto it = index.find(k);
        if (it == index.end()) {
            Setting s;
            s.prefill = x.kind == "prefill";
            const double b = double(x.batch), n = double(x.tokens);
            s.w1 = s.prefill ? b * n : b;
            s.w2 = s.prefill ? b * n * n : double(x.context);
            s.label = s.prefill ? "prefill of " + std::to_string(x.batch) + " x " +
                                      std::to_string(x.tokens) + " tokens"
                                : "decode step of " + std::to_string(x.batch) + " requests over " +
                                      std::to_string(x.context) + " KV tokens";
            it = index.emplace(k, settings.size()).first;
            settings.push_back(s);
        }
        settings[it->second].times.push_back(x.seconds);
        of[i] = it->second;
    }
    for (auto& s : settings) {
        std::sort(s.times.begin(), s.times.end());
        const std::size_t n = s.times.size();
        s.t = n % 2 ? s.times[n / 2] : (s.times[n / 2 - 1] + s.times[n / 2]) / 2;
    }
    const std::size_t n = settings.size();
    // Contradicting pairs: (light, heavy) where heavy does at least light's work in less
    // than half its time.
    std::vector<std::vector<std::size_t>> with(n);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t s = 0; s < n; ++s) {
            if (r == s || settings[r].prefill != settings[s].prefill) continue;
            const Setting &light = settings[r], &heavy = settings[s];
            if (heavy.w1 >= light.w1 && heavy.w2 >= light.w2 && heavy.t < light.t / 2) {
                with[r].push_back(s);
                with[s].push_back(r);
            }
        }
    std::vector<char> out(n, 0);
    std::vector<std::string> why(n);
    while (true) {
        std::size_t worst = n, most = 1;
        for (std::size_t i = 0; i < n; ++i) {
            if (out[i]) continue;
            std::size_t c = 0;
            for (std::size_t j : with[i]) c += !out[j];
            if (c > most) most = c, worst = i;
        }
        if (worst == n) break;
        out[worst] = 1;
        const Setting& s = settings[worst];
        std::string others;
        std::size_t listed = 0;
        for (std::size_t j : with[worst]) {
            if (out[j] || listed == 2) continue;
            char b[160];
            std::snprintf(b, sizeof b, "%s%s took %.3g s", listed ? ", " : "",
                          settings[j].label.c_str(), settings[j].t);
            others += b;
            ++listed;
        }
        char b[512];
        std::snprintf(b, sizeof b,
                      "%s: %.3g s (%zu measurement%s), contradicted by %zu other settings "
                      "(%s%s)",
                      s.label.c_str(), s.t, s.times.size(), s.times.size() == 1 ? "" : "s", most,
                      others.c_str(), most > listed ? ", ..." : "");
        why[worst] = b;
    }
    std::vector<std::string> res(m.size());
    for (std::size_t i = 0; i < m.size(); ++i)
        if (of[i] != SIZE_MAX && out[of[i]]) res[i] = why[of[i]];
    return res;
}

EteReport fitEteReport(const std::vector<Measurement>& m, double test_fraction,
                       std::uint64_t seed) {
    if (!(test_fraction >= 0 && test_fraction < 1))
        throw std::invalid_argument("the held-out fraction must be in [0, 1)");
    // Hold out whole settings: every repeat of (kind, batch, tokens, context) on one side.
    std::vector<std::array<std::int64_t, 4>> keys;
    std::map<std::array<std::int64_t, 4>, bool> test;
    for (const auto& x : m) {
        if (x.kind != "prefill" && x.kind != "decode") continue;
        const std::array<std::int64_t, 4> k{x.kind == "prefill", x.batch, x.tokens, x.context};
        if (!test.count(k)) {
            test[k] = false;
            keys.push_back(k);
        }
    }
    std::mt19937_64 rng(seed);
    std::shuffle(keys.begin(), keys.end(), rng);
    const auto n_test = static_cast<std::size_t>(std::ceil(test_fraction * double(keys.size())));
    for (std::size_t i = 0; i < n_test && i < keys.size(); ++i) test[keys[i]] = true;
    auto held = [&](const Measurement& x) {
        return test[{x.kind == "prefill", x.batch, x.tokens, x.context}];
    };

    EteReport rep;
    rep.test_fraction = test_fraction;
    rep.seed = seed;
    const std::vector<std::string> suspect = suspectSettings(m);
    for (std::size_t i = 0; i < m.size(); ++i) {
        if (suspect[i].empty()) continue;
        ++rep.suspect_rows;
        if (std::find(rep.suspect.begin(), rep.suspect.end(), suspect[i]) == rep.suspect.end())
            rep.suspect.push_back(suspect[i]);
    }
    struct Spec {
        const char* name;
        std::vector<std::string> terms;
        bool prefill, batch1;
    };
    const Spec specs[] = {
        {"prefill, batch 1: a*N^2 + b*N + c", {"c", "b", "a"}, true, true},
        {"decode step, batch 1: p*N_kv + q", {"q", "p"}, false, true},
        {"prefill, batched: a + b*sum L + c*sum L^2", {"a", "b", "c"}, true, false},
        {"decode step, batched: q0 + q1*B + p*sum N_kv", {"q0", "q1", "p"}, false, false},
    };
    for (const Spec& sp : specs) {
        const int k = int(sp.terms.size());
        std::vector<Row3> xtr, xte;
        std::vector<double> ytr, yte;
        for (std::size_t i = 0; i < m.size(); ++i) {
            const Measurement& x = m[i];
            if (x.kind != (sp.prefill ? "prefill" : "decode")) continue;
            if (sp.batch1 && x.batch != 1) continue;
            if (!suspect[i].empty()) continue;
            const double b = double(x.batch), n = double(x.tokens), c = double(x.context);
            Row3 row = sp.prefill ? Row3{1.0, b * n, b * n * n}
                                  : (sp.batch1 ? Row3{1.0, c, 0.0} : Row3{1.0, b, c});
            (held(x) ? xte : xtr).push_back(row);
            (held(x) ? yte : ytr).push_back(x.seconds);
        }
        if (xtr.size() < std::size_t(k) + 1) { // too few rows for this form
            rep.skipped.push_back(std::string(sp.name) + ": " + std::to_string(xtr.size()) +
                                  " training rows, needs " + std::to_string(k + 1));
            continue;
        }
        LinearFit f;
        f.name = sp.name;
        f.terms = sp.terms;
        const Eigen::VectorXd beta = robustFit(xtr, ytr, &f.outliers, k);
        f.beta.assign(beta.data(), beta.data() + beta.size());
        f.rows = xtr.size();
        f.test_rows = xte.size();
        auto errors = [&](const std::vector<Row3>& x, const std::vector<double>& y, double* mean,
                          double* mx, std::vector<double>* res,
                          std::vector<std::pair<double, double>>* pts) {
            double s = 0;
            *mx = 0;
            for (std::size_t i = 0; i < x.size(); ++i) {
                const double pred = predict(x[i], beta);
                pts->emplace_back(y[i], pred);
                const double r = (pred - y[i]) / y[i];
                s += std::fabs(r);
                *mx = std::max(*mx, std::fabs(r) * 100);
                if (res) res->push_back(100 * r);
            }
            *mean = x.empty() ? std::nan("") : 100 * s / double(x.size());
            if (x.empty()) *mx = std::nan("");
        };
        errors(xtr, ytr, &f.mape_pct, &f.max_pct, &f.residuals_pct, &f.points);
        errors(xte, yte, &f.test_mape_pct, &f.test_max_pct, nullptr, &f.test_points);
        {
            std::vector<double> abs_pct;
            for (const auto& [meas, pred] : f.test_points)
                abs_pct.push_back(100 * std::fabs(pred - meas) / meas);
            const Stats st = describe(std::move(abs_pct), {50, 90});
            f.test_median_pct = st.percentile(50);
            f.test_p90_pct = st.percentile(90);
        }
        if (!sp.batch1) {
            (sp.prefill ? rep.batched_prefill : rep.batched_decode) = true;
            if (sp.prefill) {
                rep.params.a = f.beta[0];
                rep.params.b = f.beta[1];
                rep.params.c = f.beta[2];
            } else {
                rep.params.q0 = f.beta[0];
                rep.params.q1 = f.beta[1];
                rep.params.p = f.beta[2];
            }
        }
        rep.fits.push_back(std::move(f));
    }
    if (rep.fits.empty())
        throw std::invalid_argument("too few prefill/decode measurements to fit any ETE form");
    return rep;
}

SplitwiseRows readSplitwise(const std::string& path, const std::string& model,
                            const std::string& hardware, int tensor_parallel) {
    const auto groups = splitwiseMeasurements(path);
    const auto it = groups.find(model + " " + hardware + " tp" + std::to_string(tensor_parallel));
    if (it == groups.end())
        throw InputError(path, 0, "model",
                         "no rows for --model '" + model + "', --hardware '" + hardware +
                             "', --tp " + std::to_string(tensor_parallel));
    SplitwiseRows rows;
    for (const Measurement& m : it->second) {
        const double b = double(m.batch), l = double(m.tokens);
        if (m.kind == "prefill")
            rows.prefill.push_back({b * l, b * l * l, m.seconds});
        else
            rows.decode.push_back({b, double(m.context), m.seconds});
    }
    return rows;
}

} // namespace kairos
