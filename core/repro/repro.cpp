#include "repro/repro.h"

#include "repro/common.h"
#include "repro/experiment.h"
#include "run/pipeline.h"
#include "sim/engine.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_number.h"
#include "util/parallel.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kairos::repro {

std::vector<Outcome> runAll(const std::vector<Job>& jobs, const ExecutionModel& model,
                            const Options& opt) {
    std::vector<Outcome> out(jobs.size());
    // Each job as a RunSpec through the one run pipeline (prepareRun): its workload and its
    // model, held in memory, stand in a context of their own (inMemory); its policy is the
    // spec's, or the job's own where it carries a trained predictor.
    WorkloadCache cache;
    struct InMemory {
        std::string name;
        RunContext ctx;
    };
    std::map<std::pair<const Workload*, const ExecutionModel*>, InMemory> contexts;
    for (const Job& j : jobs) {
        const ExecutionModel* m = j.model ? j.model : &model;
        if (contexts.count({j.workload, m})) continue;
        const std::string name = "reproduce:run-inputs-" + std::to_string(contexts.size());
        contexts[{j.workload, m}] = {name, inMemory({}, cache, name, *j.workload, *m)};
    }
    // Exceptions other than a loop are programming or input errors: the first escapes
    // (after the threads are joined) rather than a partial table.
    parallelFor(jobs.size(), opt.threads, [&](std::size_t i) {
        const Job& j = jobs[i];
        try {
            const InMemory& in = contexts.at({j.workload, j.model ? j.model : &model});
            RunSpec spec;
            spec.workload.path = in.name;
            spec.policy.name = j.policy.name;
            spec.policy.params = j.policy.params;
            spec.policy.predictor = j.policy.predictor;
            spec.policy.seed = j.policy.seed;
            spec.limits = RunSpec::LimitsPart::of(j.limits);
            const RunContext& ctx = in.ctx;
            const PreparedRun p = prepareRun(spec, ctx);
            SummaryOptions so = j.summary;
            so.workload = j.workload;
            const RunLog log = simulatePrepared(p, ctx, nullptr,
                                                j.policy.predictor_instance ? &j.policy : nullptr);
            out[i].summary = summarize(log, so);
            if (j.authors) out[i].authors = authorsMetric(log, *j.workload, *j.authors);
        } catch (const SchedulerLoop& e) {
            out[i].looped = true;
            out[i].error = e.what();
        }
    });
    return out;
}

double slope(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = static_cast<double>(x.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
    }
    const double d = n * sxx - sx * sx;
    return d != 0 ? (n * sxy - sx * sy) / d : std::nan("");
}

std::string Table::str() const {
    std::vector<std::size_t> w;
    for (const auto& r : rows_)
        for (std::size_t c = 0; c < r.size(); ++c) {
            if (w.size() <= c) w.push_back(0);
            w[c] = std::max(w[c], r[c].size());
        }
    std::string s;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        for (std::size_t c = 0; c < rows_[i].size(); ++c) {
            s += "  ";
            s += rows_[i][c];
            if (c + 1 < rows_[i].size()) s.append(w[c] - rows_[i][c].size(), ' ');
        }
        s += '\n';
        if (i == 0) {
            std::size_t total = 0;
            for (std::size_t c : w) total += c + 2;
            s += "  " + std::string(total - 2, '-') + '\n';
        }
    }
    return s;
}

std::string fmt(double v, int digits) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char b[64];
    std::snprintf(b, sizeof b, "%.*g", digits, v);
    return b;
}

std::string fixed(double v, int decimals) {
    if (!std::isfinite(v)) return fmt(v);
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
    return b;
}

std::string dataFile(const Options& opt, const std::string& name) {
    const std::string path = opt.data_dir + "/" + name;
    // Checked without opening (a FIFO there was waited on for ever), and remembered as an
    // input, so that no output of the command replaces it.
    requireRegularFile(path, "(reproduce and derive-profile read the public traces of "
                             "../shared/data; give their folder with --data)");
    return path;
}

Workload conversationTrace(const Options& opt, double rate, std::size_t n) {
    ReadOptions ro;
    ro.override_arrivals = true;
    ro.arrivals.rate = rate;
    ro.arrivals.seed = opt.seed;
    ro.limit = n;
    return readWorkload(dataFile(opt, "AzureLLMInferenceTrace_conv_2023.csv"), ro);
}

Workload shortPromptConversations(const Options& opt, double rate, std::size_t n) {
    const Workload all = readWorkload(dataFile(opt, "sharegpt_8k_lengths_llama2.csv"));
    Workload w = all;
    w.requests.clear();
    for (const Request& r : all.requests) {
        if (r.prompt_tokens > 256) continue;
        w.requests.push_back(r);
        if (w.requests.size() == n) break;
    }
    const auto t = generateArrivals({rate, 1.0, opt.seed, 0.0}, w.requests.size());
    for (std::size_t i = 0; i < w.requests.size(); ++i) w.requests[i].arrival = t[i];
    return w;
}

std::string precisionOrigin(const std::string& precision) {
    return "the paper's stated precision (" + precision +
           ") around Kairos's 95 % interval over the seeds: agreement is a figure the "
           "measurement cannot tell from the paper's";
}

void restOn(std::vector<Claim>& rows, std::size_t from, const std::vector<Substitute>& what) {
    for (std::size_t i = from; i < rows.size(); ++i)
        rows[i].substitutes.insert(rows[i].substitutes.end(), what.begin(), what.end());
}

std::string readsInBand(const Band& band, const nlohmann::json& paper, double value) {
    return band.contains(paper, value) ? " (agrees)" : " (still disagrees)";
}

void say(const Options& opt, const std::string& line) {
    if (opt.progress) opt.progress(line);
}

std::vector<std::string> paperNames() {
#if KAIROS_HAVE_ALA
    return {"mcsf", "trail", "timely", "timebill", "ala"};
#else
    return {"mcsf", "trail", "timely", "timebill"}; // built without ALA (KAIROS_WITH_ALA=OFF)
#endif
}

bool hasExperimentsInCode(const std::string& paper) {
    return paper != "trail";
}

namespace {
Report reproduceInCode(const std::string& paper, const Options& opt) {
    if (paper == "mcsf") return reproduceMcsf(opt);
    if (paper == "trail") return {}; // every experiment of Trail's is a file
    if (paper == "timely") return reproduceTimely(opt);
    if (paper == "timebill") return reproduceTimebill(opt);
#if KAIROS_HAVE_ALA
    if (paper == "ala") return reproduceAla(opt);
#else
    if (paper == "ala")
        throw std::invalid_argument("reproduce: this build has no ALA (KAIROS_WITH_ALA=OFF)");
#endif
    std::string names;
    for (const auto& n : paperNames()) names += n + ", ";
    throw std::invalid_argument("reproduce: unknown paper '" + paper + "' (" + names + "all)");
}

// The engine's prefix caching, said at the end of a row's setting.
std::string cachingNote(bool on) {
    return on ? " Engine: prefix caching on (vLLM's automatic prefix caching)."
              : " Engine: prefix caching off (every prompt computed in full).";
}

// One seed of a paper (its experiments in code, then its files) or of one file.
Report reproduceOnce(const std::string& paper, const Options& opt) {
    if (isExperimentPath(paper)) return runExperiment(loadExperiment(paper), opt);
    // The files read (and checked) before the experiments in code run: a malformed one stops
    // the command before minutes of work, not after.
    const std::vector<Experiment> files = loadExperiments(opt.experiments_dir, paper);
    Report rep = reproduceInCode(paper, opt);
    for (const Experiment& e : files) {
        Report r = runExperiment(e, opt);
        if (!rep.prefix_caching)
            rep.prefix_caching = r.prefix_caching;
        else if (r.prefix_caching && *r.prefix_caching != *rep.prefix_caching)
            for (Claim& c : r.claims) c.setting += cachingNote(*r.prefix_caching);
        rep.claims.insert(rep.claims.end(), r.claims.begin(), r.claims.end());
        rep.details += r.details;
    }
    return rep;
}
} // namespace

Report reproduce(const std::string& paper, const Options& opt) {
    if (!opt.profile) throw std::invalid_argument("reproduce: no profile resolver");
    if (opt.seeds < 1) throw std::invalid_argument("reproduce: seeds must be at least 1");
    if (paper == "all") {
        Report all;
        for (const auto& p : paperNames()) {
            Report r = reproduce(p, opt);
            all.claims.insert(all.claims.end(), r.claims.begin(), r.claims.end());
            all.details += r.details;
        }
        return all;
    }
    // Every row over seeds seed .. seed + seeds - 1: its mean and 95 % interval; the
    // tables behind the rows are the first seed's.
    std::vector<std::vector<Claim>> runs;
    Report first;
    for (int k = 0; k < opt.seeds; ++k) {
        Options o = opt;
        o.seed = opt.seed + static_cast<std::uint64_t>(k);
        if (opt.seeds > 1) say(opt, paper + ": seed " + std::to_string(o.seed));
        Report r = reproduceOnce(paper, o);
        runs.push_back(r.claims);
        if (k == 0) first = std::move(r);
    }
    first.claims = aggregate(runs);
    if (first.prefix_caching)
        for (Claim& c : first.claims)
            if (c.setting.find(" Engine: prefix caching") == std::string::npos)
                c.setting += cachingNote(*first.prefix_caching);
    if (opt.seeds > 1)
        first.details += "  (tables above: seed " + std::to_string(opt.seed) +
                         "; the claims below are means over " + std::to_string(opt.seeds) +
                         " seeds)\n\n";
    return first;
}

namespace {
// Each seed's value (one seed: the value itself).
nlohmann::json seedValues(const Claim& c) {
    nlohmann::json a = nlohmann::json::array();
    if (c.seed_values.empty())
        a.push_back(jsonNumber(c.kairos_value));
    else
        for (double v : c.seed_values) a.push_back(jsonNumber(v));
    return a;
}

// Why the row reads as it does: a not-comparable row's reason, with the cause the experiment
// measured beside it when it has one (a premise that failed says how far; the cause, what
// the setting does instead); any other row's measured cause.
std::string reasonOf(const Claim& c) {
    if (c.verdict != Verdict::NotComparable) return c.cause;
    if (c.cause.empty() || c.not_comparable.find(c.cause) != std::string::npos)
        return c.not_comparable;
    return c.not_comparable + ". Measured: " + c.cause;
}

// A row's quote and band origin, or what stands for them where the row has none to give: a
// row without a paper figure quotes nothing, a row without a band is not judged by one.
// Empty: not given yet (the audit says so).
std::string quoteOf(const Claim& c) {
    if (!c.quote.empty() || !c.paper_value.is_null()) return c.quote;
    return "none: the paper gives no figure for this (a measurement of Kairos's)";
}
std::string bandOriginOf(const Claim& c) {
    if (!c.band_origin.empty() || c.band.kind != Band::Kind::None) return c.band_origin;
    return "no band: the row is not judged by one";
}

nlohmann::json substitutesJson(const Claim& c) {
    nlohmann::json a = nlohmann::json::array();
    for (const Substitute& x : c.substitutes)
        a.push_back({{"paper_used", x.paper_used}, {"measured_instead", x.measured_instead}});
    return a;
}

nlohmann::json premisesJson(const Claim& c) {
    nlohmann::json a = nlohmann::json::array();
    for (const Premise& p : c.premises)
        a.push_back({{"what", p.what},
                     {"value", jsonNumber(p.value)},
                     {"at_least", jsonNumber(p.at_least)},
                     {"why", p.why}});
    return a;
}

nlohmann::json readingsJson(const std::vector<Claim::Reading>& readings) {
    nlohmann::json a = nlohmann::json::array();
    for (const Claim::Reading& r : readings)
        a.push_back({{"what", r.what}, {"value", jsonNumber(r.value)}});
    return a;
}
nlohmann::json paperReadingsJson(const std::vector<Claim::PaperReading>& readings) {
    nlohmann::json a = nlohmann::json::array();
    for (const Claim::PaperReading& r : readings)
        a.push_back({{"what", r.what}, {"paper_value", r.paper_value}});
    return a;
}
} // namespace

nlohmann::json toJson(const std::vector<Claim>& claims) {
    nlohmann::json a = nlohmann::json::array();
    for (const Claim& c : claims)
        a.push_back(
            {{"paper", c.paper},
             {"claim", c.claim},
             {"paper_value", c.paper_value},
             {"kairos_value", jsonNumber(c.kairos_value)},
             {"unit", c.unit},
             {"setting", c.setting},
             {"band", c.band.text()},
             {"verdict", verdictName(c.verdict)},
             {"cause", reasonOf(c)},
             {"seeds", seedValues(c)},
             {"ci_low", jsonNumber(c.ci_low)},
             {"ci_high", jsonNumber(c.ci_high)},
             {"quote", quoteOf(c).empty() ? nlohmann::json(nullptr) : nlohmann::json(quoteOf(c))},
             {"compared", c.compared},
             {"band_origin",
              bandOriginOf(c).empty() ? nlohmann::json(nullptr) : nlohmann::json(bandOriginOf(c))},
             {"load", jsonNumber(c.load)},
             {"baseline_queue_share", jsonNumber(c.baseline_queue_share)},
             {"premises", premisesJson(c)},
             {"missing_data", substitutesJson(c)},
             {"null_model",
              c.null_model.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.null_model)},
             {"null_value", jsonNumber(c.null_value)},
             {"null_verdict", c.null_model.empty() ? nlohmann::json(nullptr)
                                                   : nlohmann::json(verdictName(c.null_verdict))},
             {"paper_value_source", !c.paper_value_source.empty() ? c.paper_value_source
                                    : c.paper_value.is_null() ? "none: the paper gives no figure"
                                                              : "the paper's text"},
             {"readings", readingsJson(c.readings)},
             {"paper_readings", paperReadingsJson(c.paper_readings)},
             {"device_readings", readingsJson(c.device_readings)},
             {"rule", c.rule}});
    return a;
}

std::string auditText(const std::vector<Claim>& claims) {
    std::string s;
    for (const Claim& c : claims) {
        s += "[" + c.paper + "] " + c.claim + "\n";
        const std::string quote = quoteOf(c), origin = bandOriginOf(c);
        s += "  quote:    " + (quote.empty() ? std::string("(not quoted yet)") : quote) + "\n";
        std::string pv = c.paper_value.is_null() ? "none" : c.paper_value.dump();
        s += "  paper:    " + pv + " " + c.unit + "\n";
        s += "  kairos:   " + fmt(c.kairos_value, 6) + " " + c.unit;
        if (c.seeds > 1) {
            s += " (mean of " + std::to_string(c.seeds) + " seeds:";
            for (double v : c.seed_values) s += " " + fmt(v, 4);
            s += c.ci_low == c.ci_high
                     ? std::string("; alike at every seed: no spread, not an interval)")
                     : "; 95 % interval " + fmt(c.ci_low, 4) + " .. " + fmt(c.ci_high, 4) + ")";
        }
        s += "\n";
        if (!c.compared.empty()) {
            s += "  compared:";
            for (auto it = c.compared.begin(); it != c.compared.end(); ++it)
                s += " " + it.key() + " = " +
                     (it->is_number() ? fmt(it->get<double>(), 6) : it->dump());
            s += "\n";
        }
        if (!std::isnan(c.load))
            s += "  load:     " + fmt(c.load, 3) + " of the baseline's service rate" +
                 (std::isnan(c.baseline_queue_share)
                      ? std::string()
                      : "; it queues " + fmt(100 * c.baseline_queue_share, 3) +
                            " % of its mean latency there") +
                 "\n";
        for (const Premise& p : c.premises)
            s += "  premise:  " + p.what + " = " + fmt(p.value, 4) + " (needs at least " +
                 fmt(p.at_least, 4) + ": " + p.why + ")\n";
        for (const Substitute& x : c.substitutes)
            s += "  missing:  " + x.paper_used + "; measured instead: " + x.measured_instead + "\n";
        if (!c.null_model.empty())
            s += "  null:     " + c.null_model + " = " + fmt(c.null_value, 6) +
                 (c.null_seed_values.size() > 1 ? " (95 % interval " + fmt(c.null_ci_low, 4) +
                                                      " .. " + fmt(c.null_ci_high, 4) + ")"
                                                : std::string()) +
                 ": by the band it " + verdictName(c.null_verdict) + "\n";
        else if (c.verdict == Verdict::Agrees || c.verdict == Verdict::Disagrees)
            s += "  null:     (none named)\n";
        if (!c.paper_value_source.empty()) s += "  source:   " + c.paper_value_source + "\n";
        for (const Claim::Reading& r : c.readings)
            s += "  reading:  " + r.what + " = " + fmt(r.value, 4) + "\n";
        for (const Claim::PaperReading& r : c.paper_readings)
            s += "  reading:  " + r.what + ": the paper's " + r.paper_value.dump() + "\n";
        for (const Claim::Reading& r : c.device_readings)
            s += "  device:   " + r.what + " = " + fmt(r.value, 4) + "\n";
        s += "  setting:  " + c.setting + "\n";
        s += "  band:     " + c.band.text() +
             "; from: " + (origin.empty() ? std::string("(not stated yet)") : origin) + "\n";
        s += "  rule:     " + c.rule + "\n";
        s += "  verdict:  " + std::string(verdictName(c.verdict));
        const std::string why = reasonOf(c);
        if (!why.empty()) s += " (" + why + ")";
        s += "\n\n";
    }
    return s;
}

std::string claimsTable(const std::vector<Claim>& claims) {
    const bool several =
        std::any_of(claims.begin(), claims.end(), [](const Claim& c) { return c.seeds > 1; });
    std::vector<std::string> head{"paper", "claim", "paper", "kairos"};
    if (several) head.push_back("95 % interval");
    head.insert(head.end(), {"unit", "band", "verdict"});
    Table t(head);
    for (const Claim& c : claims) {
        std::string pv = "-";
        if (c.paper_value.is_number()) pv = fmt(c.paper_value.get<double>(), 4);
        if (c.paper_value.is_array())
            pv = fmt(c.paper_value[0].get<double>(), 4) + "-" +
                 fmt(c.paper_value[1].get<double>(), 4);
        std::vector<std::string> row{c.paper, c.claim, pv, fmt(c.kairos_value, 4)};
        if (several)
            // A run every seed makes alike (a fixed file) has no spread: said so, not as an
            // interval of zero width.
            row.push_back(c.seeds <= 1            ? "-"
                          : c.ci_low == c.ci_high ? "alike at every seed"
                                                  : fmt(c.ci_low, 4) + " .. " + fmt(c.ci_high, 4));
        row.insert(row.end(), {c.unit, c.band.text(), verdictName(c.verdict)});
        t.add(row);
    }
    std::string s = t.str();
    const Tally n = tally(claims);
    s += "\n" + std::to_string(n.agree) + " of " + std::to_string(n.comparable) +
         " comparable claims agree";
    if (several) s += " (means over " + std::to_string(claims.front().seeds) + " seeds)";
    s += "; " + std::to_string(n.calibrated) + " calibrated (tuned to the paper's figure, not " +
         "counted), " + std::to_string(n.not_comparable) + " not comparable (not counted)";
    if (n.untallied_agree + n.untallied_disagree > 0) // said beside the headline
        s += "; of these, " + std::to_string(n.untallied_disagree) + " disagree and " +
             std::to_string(n.untallied_agree) + " agree as run but a rule sets them aside (" +
             std::to_string(n.by_source) + " on a figure not in the paper's text, " +
             std::to_string(n.by_reading) + " flipped by another reading, " +
             std::to_string(n.by_device) + " by the derived card's own error)";
    s += "\n";
    // The rows of one verdict with their reason, under a heading (nothing when none).
    auto section = [&](Verdict v, const char* heading, auto reason) {
        std::string lines;
        for (const Claim& c : claims)
            if (c.verdict == v) lines += "  [" + c.paper + "] " + c.claim + ": " + reason(c) + "\n";
        if (!lines.empty()) s += std::string("\n") + heading + "\n" + lines;
    };
    section(Verdict::Disagrees, "Why Kairos disagrees:", [](const Claim& c) {
        return c.cause.empty() ? std::string("cause not measured yet") : c.cause;
    });
    section(Verdict::NotComparable, "Not comparable:", reasonOf);
    // What is not here that the judged rows rest on, and how many of each verdict rest on it:
    // the data that would settle the disagreements.
    {
        std::vector<std::string> order;
        std::map<std::string, std::pair<int, int>> rows; // agree, disagree
        for (const Claim& c : claims) {
            if (c.verdict != Verdict::Agrees && c.verdict != Verdict::Disagrees) continue;
            for (const Substitute& x : c.substitutes) {
                const std::string key = "[" + c.paper + "] " + x.paper_used;
                if (!rows.count(key)) order.push_back(key);
                (c.verdict == Verdict::Agrees ? rows[key].first : rows[key].second) += 1;
            }
        }
        if (!order.empty()) {
            s += "\nNot here, and what the judged rows rest on instead (rows agreeing / "
                 "disagreeing):\n";
            for (const std::string& k : order)
                s += "  " + k + ": " + std::to_string(rows[k].first) + " / " +
                     std::to_string(rows[k].second) + "\n";
        }
    }
    s += "\nSettings:\n";
    std::string last;
    for (const Claim& c : claims) {
        if (c.setting == last) continue;
        last = c.setting;
        s += "  [" + c.paper + "] " + c.setting + "\n";
    }
    return s;
}

} // namespace kairos::repro
