#include "repro/experiment.h"

#include "metrics/metric_table.h"
#include "model/domains.h"
#include "predict/trail_predictor.h"
#include "repro/common.h"
#include "repro/derived.h"
#include "run/pipeline.h"
#include "run/sweep.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/object_reader.h"
#include "util/parallel.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace kairos::repro {
// The parsed form of a file (named, not anonymous: Experiment keeps it, see experiment.h).
namespace experiment_file {

using json = nlohmann::json;
constexpr const char* kWorkloadName = "experiment:workload";

// A metric of an arm at one value of its varied parameter (or its only run).
struct Ref {
    std::string text; // as written
    std::string arm;
    bool at_point = false;
    std::string point; // the varied parameter's value, as the sweep writes it
    std::string metric;
    std::size_t arm_index = 0, column = 0;
};

struct Formula {
    enum class Kind {
        Number,
        Metric,
        Ratio,
        Difference,
        Sum,
        Calibration,
        ArgMin,
        ArgMax,
        Spread,
        Mean,
        Rank,
        Figure
    };
    Kind kind = Kind::Number;
    double number = 0;
    Ref a, b;
    std::vector<Ref> others; // Rank: the rivals of `a`
    std::string figure;
    std::string calibration; // Calibration: "NAME.OUTPUT", a calibration's number
    double offset = 0, scale = 1;
    bool reciprocal = false; // 1 / ((x + offset) * scale)
    bool needs_row = false;  // reads a loaded arm at the row it is read at
    // Over a selection of the workload's loads (`over`): the formula at each, then the least
    // (Min), the greatest (Max, the first on ties) or the share of them above `above`.
    enum class Take { None, Min, Max, ShareAbove };
    Take take = Take::None;
    std::string over;
    double above = 0;
};

// The loads of the workload: every arm runs at each (a workload axis), a fraction of a
// measured service rate (a service_rate calibration, `of`) or a rate in req/s, itself read
// as a fraction of that service rate. Points are named "0.8" (a fraction) and "rate=14".
struct LoadsDef {
    std::string of; // "": the workload has one rate (no loads)
    std::vector<double> fractions, rates;
    std::vector<std::string> points;
};

// The loads where `where` (a formula at each load) is at least `at_least`; where there is
// none, the most loaded one (most_loaded) or none.
struct SelectDef {
    Formula where;
    double at_least = 0;
    bool most_loaded = false;
};

// A claim judged at its load again on a longer run (the paper's length: workload.
// paper_length's requests, the workload's conversations taken in turn): where the figure
// there reads otherwise by the band, the run's length decides, not the systems (a premise).
// Only above the baseline's service rate (load > 1); below it nothing grows with the run.
struct AtLengthDef {
    std::string compared, what, why_same, why_differs, why_below;
};

struct Arm {
    std::string id, label;
    json spec; // {"policy": ..., "limits": ...}: a RunSpec's tables, placeholders unexpanded
    std::size_t index = 0;
    double mem_fraction = 0;
    std::string vary;                // the varied parameter ("" : none)
    std::vector<std::string> values; // its values as the sweep writes them
};

struct PremiseDef {
    std::string what, why;
    Formula value;
    double at_least = 0;
};

struct ClaimDef {
    std::string claim, unit, quote, band_origin, paper_value_source, null_model, not_comparable,
        setting, cause;
    std::string at;       // a load's point: the claim's row (else its value's over picks it)
    bool has_bqs = false; // baseline_queue_share given (a formula at the row)
    Formula baseline_queue_share;
    std::vector<AtLengthDef> at_length; // zero or one
    struct ReadingDef {                 // the figure under another reading (rule 11)
        std::string what;
        Formula value;
    };
    std::vector<ReadingDef> readings;
    std::vector<Claim::PaperReading> paper_readings; // the paper's words read otherwise
    bool row() const {
        return !at.empty() || value.take == Formula::Take::Min || value.take == Formula::Take::Max;
    }
    json paper_value;
    Band band;
    Formula value;
    bool has_null = false, calibrated = false;
    Formula null_value;
    std::vector<PremiseDef> premises;
};

// A value computed before the runs, at each seed:
//  trail_predictor: Trail's predictors at the paper's MAE ratio (outputs refined, prompt_only);
//  lognormal_mae: a log-normal length predictor whose MAE on the workload is `mae` (output
//  spec).
//  service_rate: the request throughput of `policy` on the workload with every request at 0
//  (output rate, req/s): what the workload's loads are fractions of.
struct Calibration {
    std::string name, kind;
    double mae_ratio = 0, mae = 0;
    std::size_t requests = 0, requests_quick = 0;
    json policy; // service_rate: a RunSpec's policy table
    // What may stand in a predictor.
    std::vector<std::string> outputs() const {
        if (kind == "trail_predictor") return {"refined", "prompt_only"};
        if (kind == "lognormal_mae") return {"spec"};
        return {};
    }
    // Its numbers (formulas' calibration = "NAME.OUTPUT", texts' ${NAME.OUTPUT}).
    std::vector<std::string> numbers() const {
        if (kind == "trail_predictor") return {"mae_refined", "mae_prompt_only", "mae_ratio"};
        if (kind == "service_rate") return {"rate"};
        return {};
    }
    // A predictor of its kind, standing in while a file is checked.
    std::string standIn() const { return kind == "trail_predictor" ? "trail" : "lognormal:0.5"; }
};

struct WorkloadDef {
    std::string builder, file;
    std::size_t requests = 0, requests_quick = 0;
    double rate = std::numeric_limits<double>::infinity();
    bool has_rate = false; // rate given (a trace keeps its own arrivals otherwise)
    double spacing = 0;    // > 0: request i arrives at i * spacing (one at a time)
    double budget = 0;     // > 0: every request's time budget (s)
    LoadsDef loads;
    std::size_t length = 0, length_quick = 0; // paper_length: a claim's at_length runs
};

struct Parsed {
    bool prefix_caching = false;      // the [limits]' (every arm's unless it says otherwise)
    std::set<std::string> text_names; // textNames(): what a ${...} may name besides formulas
    std::string paper, title, setting, profile;
    std::vector<Substitute> substitutes;
    WorkloadDef workload;
    json limits = json::object();
    std::vector<Calibration> calibrations;
    std::vector<Arm> arms;
    std::map<std::string, Formula> figures;
    std::map<std::string, SelectDef> selects;
    std::vector<std::string> report;
    std::vector<ClaimDef> claims;
};

// What a formula may read of an arm's run: summaryMetrics's names (run/pipeline.h), then the
// arm's KV capacity in tokens (kv_capacity_tokens: its limits', else its device's).
const std::vector<std::string>& metricNames() {
    static const std::vector<std::string> names = [] {
        auto n = summaryMetricNames(RunSpec{}.summary.percentiles);
        n.push_back("kv_capacity_tokens");
        return n;
    }();
    return names;
}

// The values a text may name, besides formulas: the device's, the workload's, the seed, each
// arm's KV capacity and each calibration's outputs.
std::set<std::string> textNames(const Parsed& p) {
    std::set<std::string> names{"profile.provenance", "profile.kv_capacity_tokens",
                                "workload.requests", "seed"};
    for (const Arm& a : p.arms) names.insert("arm." + a.id + ".kv_capacity_tokens");
    for (const Calibration& c : p.calibrations) {
        for (const auto& out : c.outputs()) names.insert(c.name + "." + out);
        for (const auto& out : c.numbers()) names.insert(c.name + "." + out);
    }
    if (p.workload.length > 0) names.insert("length.requests");
    return names;
}

// What a claim's texts may name besides: its row's load, its value there and at the paper's
// length (a claim with a row: `at`, or a value that picks one).
const std::set<std::string> kRowNames{"row.load", "row.value", "row.value_at_length"};

class Reader {
public:
    Reader(const Experiment& e) : e_(e) {}

    [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
        throw InputError(e_.path, tomlLine(e_.lines, field), field, msg);
    }

    Parsed parse() {
        try {
            return parseAll();
        } catch (const InputError& err) {
            if (err.line() > 0 || err.file() != e_.path) throw;
            fail(err.field(), err.message()); // the line put back from the key's path
        }
    }

    // "ARM:METRIC" or "ARM@PARAM=VALUE:METRIC".
    Ref ref(const std::string& text, const std::string& field, const Parsed& p) const {
        Ref r;
        r.text = text;
        const auto colon = text.rfind(':');
        if (colon == std::string::npos || colon == 0)
            fail(field, "'" + text + "' is not ARM:METRIC or ARM@PARAM=VALUE:METRIC");
        std::string head = text.substr(0, colon);
        r.metric = text.substr(colon + 1);
        std::string param; // ARM@PARAM=VALUE
        if (const auto at = head.find('@'); at != std::string::npos) {
            r.at_point = true;
            const std::string point = head.substr(at + 1);
            head = head.substr(0, at);
            const auto eq = point.find('=');
            if (eq == std::string::npos)
                fail(field, "'" + text + "': the point must be PARAM=VALUE");
            param = point.substr(0, eq);
            r.point = point.substr(eq + 1);
        }
        r.arm = head;
        const Arm* a = findArm(p, head);
        if (!a) fail(field, "'" + text + "' names no arm '" + head + "' (" + armIds(p) + ")");
        r.arm_index = a->index;
        // The workload's loads: ARM@load=FRACTION, or ARM@rate=RATE for a load given as a rate.
        const bool rate_point = r.at_point && param == "rate" && a->vary == "load";
        if (r.at_point) {
            if (a->vary != param && !rate_point)
                fail(field, "'" + text + "': arm '" + head + "' varies " +
                                (a->vary.empty() ? "nothing" : "'" + a->vary + "'"));
            // The value as the sweep writes it: 0.80 is 0.8.
            // Strictly a number: "1xyz" is not 1.
            std::size_t used = 0;
            double x = NAN;
            try {
                x = std::stod(r.point, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used == 0 || used != r.point.size() || !std::isfinite(x))
                fail(field, "'" + text + "': '" + r.point + "' is not a number");
            r.point = sweep::formatValue(x);
            if (rate_point) r.point = "rate=" + r.point;
            if (std::find(a->values.begin(), a->values.end(), r.point) == a->values.end())
                fail(field,
                     "'" + text + "': arm '" + head + "' has no run at " +
                         (rate_point ? "rate = " + r.point.substr(5) : a->vary + " = " + r.point));
        }
        const auto& names = metricNames();
        r.metric = canonicalMetricKey(r.metric); // an earlier release's name: today's
        const auto it = std::find(names.begin(), names.end(), r.metric);
        if (it == names.end()) {
            std::string known;
            for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
            fail(field, "'" + text + "': no metric '" + r.metric + "' (" + known + ")");
        }
        r.column = static_cast<std::size_t>(it - names.begin());
        return r;
    }

    // `row`: the formula is read at one load of the workload (a claim's row, a selection's
    // test), so a reference may name a loaded arm without a point.
    Formula formula(const json& j, const std::string& field, const Parsed& p,
                    bool row = false) const {
        Formula f;
        if (j.is_number()) {
            f.number = j.get<double>();
            return f;
        }
        if (!j.is_object())
            fail(field, "must be a number or a table with one of metric, ratio, difference, sum, "
                        "calibration, argmin, argmax, spread, mean, rank, figure");
        ObjectReader r(j, e_.path, field + ".");
        if (const json* over = r.find("over")) { // the formula at each load of a selection
            if (!over->is_string() || !p.selects.count(over->get<std::string>()))
                fail(field + ".over",
                     "must name a [select.NAME] table (" + joinedKeys(p.selects) + ")");
            f.over = over->get<std::string>();
            const std::string take = r.text("take", "");
            if (take == "min")
                f.take = Formula::Take::Min;
            else if (take == "max")
                f.take = Formula::Take::Max;
            else if (take == "share_above")
                f.take = Formula::Take::ShareAbove;
            else
                r.fail("take", "must be min, max or share_above (with over), not '" + take + "'");
            f.above = r.number("above", 0);
            if (!std::isfinite(f.above)) r.fail("above", "must be a finite number");
            row = true;
        } else if (r.find("take") || r.find("above")) {
            fail(field, "take and above go with over (a selection of loads)");
        }
        const auto atLoad = [&](const Ref& x) { // unpointed on a loaded arm: read at the row
            return !x.at_point && p.arms[x.arm_index].vary == "load";
        };
        const auto pointed = [&](const Ref& x, const std::string& at) {
            if (atLoad(x)) {
                if (!row)
                    fail(at, "'" + x.text + "': arm '" + x.arm +
                                 "' runs at every load: name one (" + x.arm +
                                 "@load=FRACTION:METRIC), or read it at the claim's row (at, "
                                 "or a value over a selection)");
                f.needs_row = true;
                return;
            }
            if (!p.arms[x.arm_index].vary.empty() && !x.at_point)
                fail(at, "'" + x.text + "': arm '" + x.arm + "' varies " +
                             p.arms[x.arm_index].vary + ": name a point (" + x.arm + "@" +
                             p.arms[x.arm_index].vary + "=VALUE:METRIC)");
        };
        int kinds = 0;
        auto one = [&](const char* key, Formula::Kind k) {
            const json* v = r.find(key);
            if (!v) return;
            ++kinds;
            f.kind = k;
            const std::string at = field + "." + key;
            if (k == Formula::Kind::Ratio || k == Formula::Kind::Difference ||
                k == Formula::Kind::Sum) {
                if (!v->is_array() || v->size() != 2 || !(*v)[0].is_string() ||
                    !(*v)[1].is_string())
                    fail(at, "must be a list of two references [\"ARM:METRIC\", \"ARM:METRIC\"]");
                f.a = ref((*v)[0].get<std::string>(), at, p);
                f.b = ref((*v)[1].get<std::string>(), at, p);
                for (const Ref* x : {&f.a, &f.b}) pointed(*x, at);
            } else if (k == Formula::Kind::Calibration) {
                const std::set<std::string> numbers = calibrationNumbers(p);
                if (!v->is_string() || !numbers.count(v->get<std::string>()))
                    fail(at, "must name a calibration's number (" + joined(numbers) + ")");
                f.calibration = v->get<std::string>();
            } else if (k == Formula::Kind::Rank) {
                // [REF, REF, ...]: the first's rank among all by their means over the varied
                // values (1 = the highest).
                if (!v->is_array() || v->size() < 2)
                    fail(at, "must be a list of at least two references [\"ARM:METRIC\", ...]");
                for (std::size_t i = 0; i < v->size(); ++i) {
                    if (!(*v)[i].is_string()) fail(at, "must be a list of references");
                    Ref x = ref((*v)[i].get<std::string>(), at, p);
                    if (x.at_point)
                        fail(at, "'" + x.text +
                                     "': rank reads an arm's mean: name it without a "
                                     "point");
                    if (i == 0)
                        f.a = std::move(x);
                    else
                        f.others.push_back(std::move(x));
                }
            } else if (k == Formula::Kind::Figure) {
                if (!v->is_string()) fail(at, "must be a figure's name");
                f.figure = v->get<std::string>();
                if (!p.figures.count(f.figure)) fail(at, "no figure '" + f.figure + "'");
                if (p.figures.at(f.figure).needs_row && !row)
                    fail(at, "figure '" + f.figure + "' is read at a load: only at a claim's row");
                f.needs_row = p.figures.at(f.figure).needs_row;
            } else {
                if (!v->is_string()) fail(at, "must be a reference \"ARM:METRIC\"");
                f.a = ref(v->get<std::string>(), at, p);
                const Arm& arm = p.arms[f.a.arm_index];
                const bool over_axis = k != Formula::Kind::Metric && k != Formula::Kind::Mean;
                if (k == Formula::Kind::Mean && f.a.at_point)
                    fail(at, "'" + f.a.text +
                                 "': mean reads over an arm's varied values: name "
                                 "the arm alone");
                if (over_axis && (arm.vary.empty() || f.a.at_point))
                    fail(at, "'" + f.a.text + "': " + key +
                                 " reads over an arm's varied parameter: name the arm alone");
                if (k == Formula::Kind::Metric) pointed(f.a, at);
            }
        };
        one("metric", Formula::Kind::Metric);
        one("ratio", Formula::Kind::Ratio);
        one("difference", Formula::Kind::Difference);
        one("sum", Formula::Kind::Sum);
        one("calibration", Formula::Kind::Calibration);
        one("argmin", Formula::Kind::ArgMin);
        one("argmax", Formula::Kind::ArgMax);
        one("spread", Formula::Kind::Spread);
        one("mean", Formula::Kind::Mean);
        one("rank", Formula::Kind::Rank);
        one("figure", Formula::Kind::Figure);
        if (kinds != 1)
            fail(field, "must hold exactly one of metric, ratio, difference, sum, calibration, "
                        "argmin, argmax, spread, mean, rank, figure");
        f.offset = r.number("offset", 0);
        f.scale = r.number("scale", 1);
        if (!std::isfinite(f.offset) || !std::isfinite(f.scale))
            fail(field, "offset and scale must be finite numbers");
        f.reciprocal = r.flag("reciprocal", false);
        if (!f.over.empty()) {
            if (!f.needs_row)
                fail(field + ".over", "reads the formula at each load: name a loaded arm without "
                                      "a point (ARM:METRIC)");
            f.needs_row = false; // read over the loads, not at one
        }
        r.finish();
        return f;
    }

    // Every ${...} of a text names something (checked before anything runs). `row`: the text
    // is read at a claim's row (row.*, a loaded arm without a point, a figure read at a
    // load); `length`: the claim runs again at the paper's length (row.value_at_length).
    void checkText(const std::string& text, const std::string& field, const Parsed& p,
                   bool row = false, bool length = false) const {
        const auto& names = p.text_names;
        std::size_t pos = 0;
        while ((pos = text.find("${", pos)) != std::string::npos) {
            const auto end = text.find('}', pos);
            if (end == std::string::npos) fail(field, "a '${' without its '}'");
            std::string name = text.substr(pos + 2, end - pos - 2);
            pos = end + 1;
            if (names.count(name)) continue;
            stripDecimals(name);
            if (names.count(name)) continue;
            if (kRowNames.count(name)) {
                if (!row)
                    fail(field, "${" + name + "}: only in a claim with a row (at, or a " +
                                    "value over a selection)");
                if (name == "row.value_at_length" && !length)
                    fail(field, "${" + name + "}: only in a claim with at_length");
                continue;
            }
            if (name.rfind("figure.", 0) == 0) {
                if (!p.figures.count(name.substr(7)))
                    fail(field, "${" + name + "}: no figure '" + name.substr(7) + "'");
                if (p.figures.at(name.substr(7)).needs_row && !row)
                    fail(field, "${" + name + "}: the figure is read at a load: only in a claim " +
                                    "with a row");
                continue;
            }
            if (name.find(':') == std::string::npos)
                fail(field, "${" + name + "} names nothing (a REF ARM:METRIC, figure.NAME, or " +
                                joined(names) + ")");
            const Ref r = ref(name, field, p);
            if (!p.arms[r.arm_index].vary.empty() && !r.at_point &&
                !(row && p.arms[r.arm_index].vary == "load"))
                fail(field, "${" + name + "}: name a point of arm '" + r.arm + "'");
        }
    }

    // "REF:2" -> "REF" (and 2): the decimals a number is written with; -1: none given.
    static int stripDecimals(std::string& name) {
        const auto colon = name.rfind(':');
        if (colon == std::string::npos || colon + 1 == name.size()) return -1;
        const std::string tail = name.substr(colon + 1);
        if (tail.size() > 1 || !std::isdigit(static_cast<unsigned char>(tail[0]))) return -1;
        name = name.substr(0, colon);
        return tail[0] - '0';
    }

private:
    const Experiment& e_;

    static const Arm* findArm(const Parsed& p, const std::string& id) {
        for (const Arm& a : p.arms)
            if (a.id == id) return &a;
        return nullptr;
    }
    static std::string armIds(const Parsed& p) {
        std::string s = "arms:";
        for (const Arm& a : p.arms) s += " " + a.id;
        return s;
    }
    static std::string joined(const std::set<std::string>& names) {
        std::string s;
        for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
        return s;
    }
    // Each table of the array of tables `key` under `at` ([[claim.KEY]]), read by
    // `read(reader, its path)`; its unknown keys refused.
    template <class F>
    void eachTable(ObjectReader& r, const std::string& at, const std::string& key, F read) const {
        const json* list = r.find(key);
        if (!list) return;
        if (!list->is_array()) r.fail(key, "must be tables ([[claim." + key + "]])");
        for (std::size_t k = 0; k < list->size(); ++k) {
            const std::string kat = at + "." + key + "[" + std::to_string(k) + "]";
            ObjectReader kr((*list)[k], e_.path, kat + ".");
            read(kr, kat);
            kr.finish();
        }
    }
    template <class Map> static std::string joinedKeys(const Map& m) {
        std::string s;
        for (const auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k;
        return s.empty() ? "none" : s;
    }
    static std::set<std::string> calibrationNumbers(const Parsed& p) {
        std::set<std::string> out;
        for (const Calibration& c : p.calibrations)
            for (const auto& n : c.numbers()) out.insert(c.name + "." + n);
        return out;
    }

    // A RunSpec made of `parts` (its policy and limits tables) with every placeholder of a
    // calibration replaced by a value of its kind: the arm's policy, parameters and limits
    // are checked before anything runs. `field` prefixes the spec's own key in errors.
    RunSpec checkSpec(json parts, const std::string& field, const Parsed& p) const {
        if (parts.contains("policy") && parts["policy"].is_object() &&
            parts["policy"].contains("predictor") && parts["policy"]["predictor"].is_string()) {
            std::string pred = parts["policy"]["predictor"].get<std::string>();
            for (const Calibration& c : p.calibrations)
                for (const auto& out : c.outputs())
                    if (pred == "${" + c.name + "." + out + "}") pred = c.standIn();
            if (pred.find("${") != std::string::npos)
                fail(field + "policy.predictor",
                     "'" + pred + "': only a calibration's value may stand in a predictor");
            parts["policy"]["predictor"] = pred;
        }
        parts["workload"] = {{"path", kWorkloadName}};
        try {
            return RunSpec::fromJson(parts, e_.path);
        } catch (const InputError& err) {
            fail(field + err.field(), err.message());
        }
    }

    Parsed parseAll() {
        Parsed p;
        ObjectReader top(e_.doc, e_.path, "");
        {
            ObjectReader r(top.table("experiment"), e_.path, "experiment.");
            p.paper = r.text("paper", "");
            const auto papers = paperNames();
            if (std::find(papers.begin(), papers.end(), p.paper) == papers.end()) {
                std::string known;
                for (const auto& n : papers) known += (known.empty() ? "" : ", ") + n;
                r.fail("paper", p.paper.empty() ? "is required (" + known + ")"
                                                : "'" + p.paper + "' is not one of " + known);
            }
            p.title = r.text("title", "");
            if (p.title.empty()) r.fail("title", "is required");
            p.setting = r.text("setting", "");
            if (p.setting.empty()) r.fail("setting", "is required (what the runs are)");
            if (const json* subs = r.find("substitute")) {
                if (!subs->is_array()) r.fail("substitute", "must be [[experiment.substitute]]");
                for (std::size_t i = 0; i < subs->size(); ++i) {
                    ObjectReader s((*subs)[i], e_.path,
                                   "experiment.substitute[" + std::to_string(i) + "].");
                    Substitute x{s.text("paper_used", ""), s.text("measured_instead", "")};
                    if (x.paper_used.empty()) s.fail("paper_used", "is required");
                    if (x.measured_instead.empty()) s.fail("measured_instead", "is required");
                    s.finish();
                    p.substitutes.push_back(std::move(x));
                }
            }
            r.finish();
        }
        {
            ObjectReader r(top.table("workload"), e_.path, "workload.");
            p.workload.builder = r.text("builder", "");
            const std::set<std::string> builders{"short_prompt_conversations", "conversation_trace",
                                                 "trace"};
            if (!builders.count(p.workload.builder))
                r.fail("builder", "must be short_prompt_conversations, conversation_trace or "
                                  "trace, not '" +
                                      p.workload.builder + "'");
            p.workload.requests = static_cast<std::size_t>(r.integer("requests", 0, 0, 100000000));
            p.workload.requests_quick = static_cast<std::size_t>(
                r.integer("requests_quick", std::int64_t(p.workload.requests), 0, 100000000));
            if (p.workload.builder != "trace" && p.workload.requests == 0)
                r.fail("requests", "is required (at least 1)");
            p.workload.has_rate = r.find("rate") != nullptr;
            p.workload.rate = r.number("rate", std::numeric_limits<double>::infinity());
            if (!(p.workload.rate > 0)) r.fail("rate", "must be > 0 (or \"inf\": all at 0)");
            p.workload.file = r.text("file", "");
            if ((p.workload.builder == "trace") != !p.workload.file.empty())
                r.fail("file", p.workload.builder == "trace"
                                   ? "is required (a file of the data folder)"
                                   : "is only for builder = \"trace\"");
            if (p.workload.file.find('/') != std::string::npos ||
                p.workload.file.find("..") != std::string::npos)
                r.fail("file", "must be a file name in the data folder, not a path");
            p.workload.spacing = r.number("spacing", 0);
            if (!(p.workload.spacing >= 0) || !std::isfinite(p.workload.spacing))
                r.fail("spacing", "must be a finite number of seconds >= 0");
            if (p.workload.spacing > 0 && (p.workload.builder != "trace" || p.workload.has_rate))
                r.fail("spacing", "is for builder = \"trace\" without a rate");
            p.workload.budget = r.number("budget", 0);
            if (!(p.workload.budget >= 0) || !std::isfinite(p.workload.budget))
                r.fail("budget", "must be a finite number of seconds >= 0");
            if (const json* loads = r.find("loads")) {
                // Every arm at each load: fractions of a measured service rate, and rates
                // (req/s) read as fractions of it.
                ObjectReader l(*loads, e_.path, "workload.loads.");
                LoadsDef& d = p.workload.loads;
                d.of = l.text("of", "");
                if (d.of.empty())
                    l.fail("of", "is required: the service_rate calibration the loads are "
                                 "fractions of");
                d.fractions = l.numbers("fractions", {});
                d.rates = l.numbers("rates", {});
                if (d.fractions.empty() && d.rates.empty())
                    l.fail("fractions", "at least one load is required (fractions or rates)");
                std::set<std::string> seen;
                for (const auto& [key, list] :
                     {std::pair{"fractions", &d.fractions}, std::pair{"rates", &d.rates}})
                    for (double x : *list) {
                        if (!(x > 0) || !std::isfinite(x))
                            l.fail(key, "must be finite numbers > 0");
                        const std::string point = std::string(key) == "rates"
                                                      ? "rate=" + sweep::formatValue(x)
                                                      : sweep::formatValue(x);
                        if (!seen.insert(point).second) l.fail(key, point + " appears twice");
                        d.points.push_back(point);
                    }
                l.finish();
                if (p.workload.has_rate) r.fail("rate", "the loads give the rates: not both");
                if (p.workload.builder == "trace" || p.workload.spacing > 0)
                    r.fail("loads", "are for the generated workloads (Poisson arrivals)");
            }
            if (const json* length = r.find("paper_length")) {
                ObjectReader l(*length, e_.path, "workload.paper_length.");
                p.workload.length =
                    static_cast<std::size_t>(l.integer("requests", 0, 0, 100000000));
                if (p.workload.length == 0) l.fail("requests", "is required (at least 1)");
                p.workload.length_quick = static_cast<std::size_t>(
                    l.integer("requests_quick", std::int64_t(p.workload.length), 1, 100000000));
                l.finish();
                if (p.workload.loads.of.empty())
                    r.fail("paper_length", "is for claims at a load: give workload.loads");
            }
            r.finish();
        }
        {
            ObjectReader r(top.table("device"), e_.path, "device.");
            p.profile = r.text("profile", "");
            if (p.profile.empty()) r.fail("profile", "is required");
            if (p.profile.rfind("derived:", 0) == 0 && p.profile != "derived:trail" &&
                p.profile != "derived:timelyllm" && p.profile != "derived:h100")
                r.fail("profile", "'" + p.profile +
                                      "': derived profiles are derived:trail, derived:timelyllm "
                                      "and derived:h100");
            r.finish();
        }
        p.limits = top.table("limits");
        p.prefix_caching = checkSpec(json{{"limits", p.limits}}, "", p).limits.prefix_caching;
        {
            const json& cals = top.table("calibrate");
            for (auto it = cals.begin(); it != cals.end(); ++it) {
                ObjectReader r(it.value(), e_.path, "calibrate." + it.key() + ".");
                Calibration c;
                c.name = it.key();
                c.kind = r.text("kind", "");
                if (c.kind == "trail_predictor") {
                    c.mae_ratio = r.number("mae_ratio", 0);
                    if (!(c.mae_ratio > 1) || !std::isfinite(c.mae_ratio))
                        r.fail("mae_ratio", "must be a finite number > 1");
                    c.requests = static_cast<std::size_t>(r.integer("requests", 0, 1, 100000000));
                    if (c.requests == 0) r.fail("requests", "is required");
                    c.requests_quick = static_cast<std::size_t>(
                        r.integer("requests_quick", std::int64_t(c.requests), 1, 100000000));
                } else if (c.kind == "lognormal_mae") {
                    c.mae = r.number("mae", 0);
                    if (!(c.mae > 0) || !std::isfinite(c.mae))
                        r.fail("mae", "must be a finite number > 0 (tokens)");
                } else if (c.kind == "service_rate") {
                    c.policy = r.table("policy"); // checked as a RunSpec's below
                    checkSpec(json{{"policy", c.policy}, {"limits", p.limits}},
                              "calibrate." + c.name + ".", p);
                } else {
                    r.fail("kind", "must be trail_predictor, lognormal_mae or service_rate, not '" +
                                       c.kind + "'");
                }
                r.finish();
                p.calibrations.push_back(std::move(c));
            }
            if (!p.workload.loads.of.empty()) {
                const auto it = std::find_if(
                    p.calibrations.begin(), p.calibrations.end(), [&](const Calibration& c) {
                        return c.name == p.workload.loads.of && c.kind == "service_rate";
                    });
                if (it == p.calibrations.end())
                    fail("workload.loads.of", "'" + p.workload.loads.of +
                                                  "' names no [calibrate.NAME] of kind "
                                                  "service_rate");
            }
        }
        const json* arms = top.find("arm");
        if (!arms || !arms->is_array() || arms->empty())
            fail("arm", "at least one [[arm]] is required");
        for (std::size_t i = 0; i < arms->size(); ++i) {
            const std::string at = "arm[" + std::to_string(i) + "].";
            ObjectReader r((*arms)[i], e_.path, at);
            Arm a;
            a.index = i;
            a.id = r.text("id", "");
            if (a.id.empty() || a.id.find_first_of(":@=.${} ") != std::string::npos)
                r.fail("id", "is required: a name without ':', '@', '=', '.', '$', braces or "
                             "spaces");
            for (const Arm& b : p.arms)
                if (b.id == a.id) r.fail("id", "'" + a.id + "' names two arms");
            a.label = r.text("label", a.id);
            a.spec = json::object();
            a.spec["policy"] = r.table("policy");
            json lim = p.limits;
            lim.update(r.table("limits")); // the arm's own over [limits]
            a.spec["limits"] = lim;
            a.mem_fraction = r.number("mem_fraction", 0);
            if (!(a.mem_fraction >= 0 && a.mem_fraction <= 1))
                r.fail("mem_fraction", "must lie in (0, 1] (0 or absent: the device's)");
            checkSpec(a.spec, at, p);
            const json& vary = r.table("vary");
            if (vary.size() > 1) r.fail("vary", "varies one policy parameter (or budget) at most");
            if (!p.workload.loads.of.empty()) { // every arm runs at each of the loads
                if (!vary.empty())
                    r.fail("vary", "the workload's loads are this experiment's axis: an arm "
                                   "varies nothing beside them");
                a.vary = "load";
                a.values = p.workload.loads.points;
            }
            for (auto it = vary.begin(); it != vary.end(); ++it) {
                a.vary = it.key();
                if (!it.value().is_array() || it.value().empty())
                    r.fail("vary." + a.vary, "must be a list of numbers");
                std::string list;
                std::set<std::string> seen;
                for (const auto& v : it.value()) {
                    if (!v.is_number() || !std::isfinite(v.get<double>()))
                        r.fail("vary." + a.vary, "must be a list of finite numbers");
                    const std::string text = sweep::formatValue(v.get<double>());
                    if (!seen.insert(text).second)
                        r.fail("vary." + a.vary, text + " appears twice");
                    list += (list.empty() ? "" : ",") + text;
                }
                if (a.vary == "budget" && p.workload.budget > 0)
                    r.fail("vary.budget", "the workload gives every request its budget already "
                                          "(workload.budget): vary one or the other");
                if (a.vary == "budget") { // every request's time budget, s (a sweep axis)
                    for (const auto& v : it.value()) {
                        if (!(v.get<double>() > 0) || v.get<double>() > domains::kBudget.hi)
                            r.fail("vary.budget", "budgets must lie in (0, 1e9] s");
                        a.values.push_back(sweep::formatValue(v.get<double>()));
                    }
                    continue;
                }
                try {
                    const std::string name = a.spec["policy"].value("name", "fcfs");
                    a.values = sweep::paramAxis(a.vary + "=" + list, {name}).values;
                } catch (const std::invalid_argument& e) {
                    r.fail("vary." + a.vary, e.what());
                }
            }
            r.finish();
            p.arms.push_back(std::move(a));
        }
        p.text_names = textNames(p); // the arms' and calibrations' names known now
        {
            // Selections of the loads: where a formula read at each load is at least a value.
            const json& sels = top.table("select");
            if (!sels.empty() && p.workload.loads.of.empty())
                fail("select", "selects among the workload's loads: give workload.loads");
            for (auto it = sels.begin(); it != sels.end(); ++it) {
                const std::string at = "select." + it.key();
                ObjectReader r(it.value(), e_.path, at + ".");
                SelectDef d;
                const json* where = r.find("where");
                if (!where) r.fail("where", "is required (a formula read at each load)");
                d.where = formula(*where, at + ".where", p, true);
                if (!d.where.over.empty()) r.fail("where", "is read at one load: no over here");
                d.at_least = r.number("at_least", NAN);
                if (!std::isfinite(d.at_least)) r.fail("at_least", "is required");
                const std::string otherwise = r.text("otherwise", "none");
                if (otherwise != "none" && otherwise != "most_loaded")
                    r.fail("otherwise", "must be none or most_loaded, not '" + otherwise + "'");
                d.most_loaded = otherwise == "most_loaded";
                r.finish();
                p.selects[it.key()] = std::move(d);
            }
        }
        // Figures may name earlier figures only (no cycles): read in the file's order is not
        // kept by JSON, so each may name any figure defined without one.
        {
            const json& figs = top.table("figure");
            for (int pass = 0; pass < 2; ++pass)
                for (auto it = figs.begin(); it != figs.end(); ++it) {
                    const bool names_figure =
                        it.value().is_object() && it.value().contains("figure");
                    if ((pass == 0) == names_figure) continue;
                    p.figures[it.key()] =
                        formula(it.value(), "figure." + it.key(), p, !p.workload.loads.of.empty());
                }
        }
        {
            ObjectReader r(top.table("report"), e_.path, "report.");
            p.report = r.texts("metrics");
            for (auto& m : p.report) m = canonicalMetricKey(m); // earlier releases' names
            const auto& names = metricNames();
            for (const auto& m : p.report)
                if (std::find(names.begin(), names.end(), m) == names.end())
                    r.fail("metrics", "no metric '" + m + "'");
            r.finish();
        }
        const json* claims = top.find("claim");
        if (!claims || !claims->is_array() || claims->empty())
            fail("claim", "at least one [[claim]] is required");
        for (std::size_t i = 0; i < claims->size(); ++i) {
            const std::string at = "claim[" + std::to_string(i) + "]";
            ObjectReader r((*claims)[i], e_.path, at + ".");
            ClaimDef c;
            c.claim = r.text("claim", "");
            if (c.claim.empty()) r.fail("claim", "is required (what is compared, in words)");
            c.unit = r.text("unit", "");
            // The claim's row: a load named by `at`, or the one its value's over picks.
            const std::string at_load = r.text("at", "");
            if (!at_load.empty()) {
                const auto eq = at_load.find('=');
                const std::string kind = at_load.substr(0, eq == std::string::npos ? 0 : eq);
                std::size_t used = 0;
                double x = NAN;
                try {
                    x = eq == std::string::npos ? NAN : std::stod(at_load.substr(eq + 1), &used);
                } catch (const std::exception&) {
                    used = 0;
                }
                if ((kind != "load" && kind != "rate") || used == 0 ||
                    eq + 1 + used != at_load.size() || !std::isfinite(x))
                    r.fail("at", "must be load=FRACTION or rate=RATE, not '" + at_load + "'");
                c.at = kind == "rate" ? "rate=" + sweep::formatValue(x) : sweep::formatValue(x);
                const auto& points = p.workload.loads.points;
                if (std::find(points.begin(), points.end(), c.at) == points.end())
                    r.fail("at", "'" + at_load + "' is not one of the workload's loads");
            }
            const json* value = r.find("value");
            if (!value) r.fail("value", "is required (a formula)");
            c.value = formula(*value, at + ".value", p, !c.at.empty());
            if (!c.at.empty() && !c.value.over.empty())
                r.fail("at", "the value picks its load (over): not both");
            if (c.value.take == Formula::Take::ShareAbove && !c.at.empty())
                r.fail("at", "a share over loads has no row");
            const bool row = c.row();
            if (const json* pv = r.find("paper_value")) {
                const auto finite = [](const json& x) {
                    return x.is_number() && std::isfinite(x.get<double>());
                };
                const bool range = pv->is_array() && pv->size() == 2 && finite((*pv)[0]) &&
                                   finite((*pv)[1]) &&
                                   (*pv)[0].get<double>() <= (*pv)[1].get<double>();
                if (!finite(*pv) && !range)
                    r.fail("paper_value", "must be a finite number or [low, high] (absent: none)");
                c.paper_value = *pv;
            }
            eachTable(r, at, "paper_reading", [&](ObjectReader& rr, const std::string&) {
                Claim::PaperReading pr;
                pr.what = rr.text("what", "");
                if (pr.what.empty()) rr.fail("what", "is required");
                const json* v = rr.find("paper_value");
                if (!v || !v->is_number() || !std::isfinite(v->get<double>()))
                    rr.fail("paper_value", "is required (a finite number)");
                pr.paper_value = *v;
                c.paper_readings.push_back(std::move(pr));
            });
            if (!c.paper_readings.empty() && c.paper_value.is_null())
                r.fail("paper_reading", "reads the paper's value otherwise: give paper_value");
            eachTable(r, at, "reading", [&](ObjectReader& rr, const std::string& rat) {
                ClaimDef::ReadingDef d;
                d.what = rr.text("what", "");
                if (d.what.empty()) rr.fail("what", "is required");
                const json* v = rr.find("value");
                if (!v) rr.fail("value", "is required (a formula)");
                d.value = formula(*v, rat + ".value", p, row);
                c.readings.push_back(std::move(d));
            });
            if (const json* bqs = r.find("baseline_queue_share")) {
                if (!row)
                    r.fail("baseline_queue_share", "is read at the claim's row (at, or a "
                                                   "value over a selection)");
                c.has_bqs = true;
                c.baseline_queue_share = formula(*bqs, at + ".baseline_queue_share", p, true);
            }
            if (const json* len = r.find("at_length")) {
                if (!row || p.workload.length == 0)
                    r.fail("at_length", "needs a claim with a row and workload.paper_length");
                ObjectReader lr(*len, e_.path, at + ".at_length.");
                AtLengthDef d;
                d.compared = lr.text("compared", "value_at_paper_length");
                d.what = lr.text("what", "");
                d.why_same = lr.text("why_same", "");
                d.why_differs = lr.text("why_differs", "");
                d.why_below = lr.text("why_below", "");
                for (const auto& [key, text] :
                     {std::pair{"what", &d.what}, std::pair{"why_same", &d.why_same},
                      std::pair{"why_differs", &d.why_differs},
                      std::pair{"why_below", &d.why_below}}) {
                    if (text->empty()) lr.fail(key, "is required");
                    checkText(*text, at + ".at_length." + key, p, true, true);
                }
                lr.finish();
                c.at_length.push_back(std::move(d));
            }
            c.paper_value_source = r.text("paper_value_source", "");
            c.quote = r.text("quote", "");
            c.band_origin = r.text("band_origin", "");
            c.null_model = r.text("null_model", "");
            if (const json* nv = r.find("null_value")) {
                if (c.null_model.empty())
                    r.fail("null_value", "needs null_model (what the null model is)");
                c.has_null = true;
                c.null_value = formula(*nv, at + ".null_value", p, row);
            }
            c.not_comparable = r.text("not_comparable", "");
            c.calibrated = r.flag("calibrated", false);
            c.setting = r.text("setting", "");
            c.cause = r.text("cause", "");
            for (const auto& [key, text] :
                 {std::pair{"setting", &c.setting}, std::pair{"cause", &c.cause}})
                checkText(*text, at + "." + key, p, row, !c.at_length.empty());
            // The claim's words name the row in every seed: no number of one seed in them.
            if (c.claim.find("${") != std::string::npos)
                r.fail("claim", "names the row in every seed: no ${...} here (put the numbers "
                                "in the cause)");
            c.band = band(r.table("band"), at + ".band");
            if (!c.paper_value.is_null() && c.band.kind == Band::Kind::None && !c.calibrated &&
                c.not_comparable.empty())
                r.fail("band", "is required with paper_value (how close agrees)");
            eachTable(r, at, "premise", [&](ObjectReader& pr, const std::string& pat) {
                PremiseDef d;
                d.what = pr.text("what", "");
                d.why = pr.text("why", "");
                if (d.what.empty()) pr.fail("what", "is required");
                if (d.why.empty()) pr.fail("why", "is required");
                const json* pv = pr.find("value");
                if (!pv) pr.fail("value", "is required (a formula)");
                d.value = formula(*pv, pat + ".value", p, row);
                d.at_least = pr.number("at_least", NAN);
                if (!std::isfinite(d.at_least)) pr.fail("at_least", "is required");
                c.premises.push_back(std::move(d));
            });
            r.finish();
            p.claims.push_back(std::move(c));
        }
        checkText(p.setting, "experiment.setting", p);
        top.finish();
        return p;
    }

    Band band(const json& j, const std::string& field) const {
        if (j.empty()) return {};
        ObjectReader r(j, e_.path, field + ".");
        const std::string kind = r.text("kind", "");
        const double tol = r.number("tol", 0);
        if (!(tol >= 0) || !std::isfinite(tol)) r.fail("tol", "must be a finite number >= 0");
        Band b;
        if (kind == "relative") {
            b = Band::relative(tol);
        } else if (kind == "absolute") {
            b = Band::absolute(tol);
        } else if (kind == "at_least") {
            b = Band::atLeast(tol);
        } else if (kind == "at_most") {
            b = Band::atMost(tol);
        } else if (kind == "direction") {
            b = Band::direction(r.number("pivot", 1));
            if (!std::isfinite(b.pivot)) r.fail("pivot", "must be a finite number");
        } else if (kind == "measured") {
            b = Band::measured(tol, r.number("no_effect", NAN));
            if (r.find("no_effect") && !std::isfinite(b.pivot))
                r.fail("no_effect", "must be a finite number (absent: the figure is not a gain)");
        } else {
            r.fail("kind", "must be relative, absolute, at_least, at_most, direction or "
                           "measured, not '" +
                               kind + "'");
        }
        r.finish();
        return b;
    }
};

// One seed's results: per arm, per point of its varied parameter, summaryMetrics's values.
using Results = std::vector<std::vector<std::vector<double>>>;

// A formula over a selection read at one load (itself where it has no `over`).
Formula atOneLoad(Formula f) {
    f.take = Formula::Take::None;
    f.over.clear();
    return f;
}

class Evaluator {
public:
    static constexpr std::size_t kNoRow = std::numeric_limits<std::size_t>::max();
    // `reader` reads the references a text names (checked when the file was read); `numbers`:
    // the calibrations' numbers and a row's (row.load, ...); `loads`: each load as a fraction
    // of the service rate (empty: the workload has one rate).
    Evaluator(const Parsed& p, const Reader& reader, const Results& res,
              std::map<std::string, std::string> texts, std::map<std::string, double> numbers,
              std::vector<double> loads)
        : p_(p), reader_(reader), res_(&res), texts_(std::move(texts)),
          numbers_(std::move(numbers)), loads_(std::move(loads)) {}

    // The same at one load: a loaded arm named without a point is read there.
    Evaluator at(std::size_t row) const {
        Evaluator e = *this;
        e.row_ = row;
        if (row < loads_.size()) e.numbers_["row.load"] = loads_[row];
        return e;
    }
    // The same on other runs (a claim's runs at the paper's length).
    Evaluator on(const Results& res) const {
        Evaluator e = *this;
        e.res_ = &res;
        return e;
    }
    void set(const std::string& name, double v) { numbers_[name] = v; }
    std::size_t row() const { return row_; }

    double value(const Ref& r) const {
        const Arm& a = p_.arms[r.arm_index];
        std::size_t k = 0;
        if (r.at_point)
            k = static_cast<std::size_t>(std::find(a.values.begin(), a.values.end(), r.point) -
                                         a.values.begin());
        else if (a.vary == "load")
            k = row_; // a claim's row (checked when the file was read)
        if (k >= (*res_)[r.arm_index].size()) return NAN;
        return (*res_)[r.arm_index][k][r.column];
    }

    // The value of the varied parameter at point k: a load's fraction of the service rate.
    double pointValue(const Arm& a, std::size_t k) const {
        if (a.vary == "load") return loads_[k];
        return std::stod(a.values[k]);
    }

    // The loads a selection keeps (computed at each use: a handful of loads).
    std::vector<std::size_t> selection(const std::string& name) const {
        const SelectDef& d = p_.selects.at(name);
        std::vector<std::size_t> out;
        for (std::size_t k = 0; k < loads_.size(); ++k)
            if (at(k).eval(d.where) >= d.at_least) out.push_back(k);
        if (out.empty() && d.most_loaded && !loads_.empty())
            out.push_back(static_cast<std::size_t>(std::max_element(loads_.begin(), loads_.end()) -
                                                   loads_.begin()));
        return out;
    }

    // A formula over a selection: its value and the load it was taken at (kNoRow for a share,
    // or where none qualifies).
    std::pair<double, std::size_t> over(const Formula& f) const {
        const Formula inner = atOneLoad(f);
        const auto rows = selection(f.over);
        if (f.take == Formula::Take::ShareAbove) {
            int above = 0;
            for (std::size_t k : rows) above += at(k).eval(inner) > f.above;
            return {rows.empty() ? NAN : double(above) / double(rows.size()), kNoRow};
        }
        // The first least (greatest); NaN never taken.
        double best = f.take == Formula::Take::Min ? INFINITY : -INFINITY;
        std::size_t where = rows.empty() ? kNoRow : rows.front();
        for (std::size_t k : rows) {
            const double v = at(k).eval(inner);
            if (f.take == Formula::Take::Min ? v < best : v > best) best = v, where = k;
        }
        return {rows.empty() ? NAN : best, where};
    }

    double eval(const Formula& f) const {
        if (f.take != Formula::Take::None) return over(f).first;
        double v = f.number;
        const auto column = [&](const Ref& r) {
            std::vector<double> out;
            for (const auto& point : (*res_)[r.arm_index]) out.push_back(point[r.column]);
            return out;
        };
        switch (f.kind) {
        case Formula::Kind::Number:
            return v;
        case Formula::Kind::Metric:
            v = value(f.a);
            break;
        case Formula::Kind::Ratio:
            v = value(f.a) / value(f.b);
            break;
        case Formula::Kind::Difference:
            v = value(f.a) - value(f.b);
            break;
        case Formula::Kind::Sum:
            v = value(f.a) + value(f.b);
            break;
        case Formula::Kind::Calibration:
            v = numbers_.at(f.calibration);
            break;
        case Formula::Kind::ArgMin:
        case Formula::Kind::ArgMax: {
            // The first value of the parameter at the least (greatest) metric; NaN runs lose.
            const auto c = column(f.a);
            std::size_t best = c.size();
            for (std::size_t i = 0; i < c.size(); ++i)
                if (!std::isnan(c[i]) &&
                    (best == c.size() ||
                     (f.kind == Formula::Kind::ArgMin ? c[i] < c[best] : c[i] > c[best])))
                    best = i;
            v = best == c.size() ? NAN : pointValue(p_.arms[f.a.arm_index], best);
            break;
        }
        case Formula::Kind::Spread: {
            const auto c = column(f.a);
            const auto [lo, hi] = std::minmax_element(c.begin(), c.end());
            const bool any_nan =
                std::any_of(c.begin(), c.end(), [](double x) { return std::isnan(x); });
            v = any_nan ? NAN : *hi / *lo;
            break;
        }
        case Formula::Kind::Mean:
            v = mean(f.a);
            break;
        case Formula::Kind::Rank: {
            const double own = mean(f.a);
            v = 1;
            for (const Ref& r : f.others) v += mean(r) > own;
            break;
        }
        case Formula::Kind::Figure:
            v = eval(p_.figures.at(f.figure));
            break;
        }
        v = (v + f.offset) * f.scale;
        return f.reciprocal ? 1 / v : v;
    }

    // An arm's metric averaged over its varied values (each over their count, summed in
    // their order).
    double mean(const Ref& r) const {
        const auto& points = (*res_)[r.arm_index];
        double m = 0;
        for (const auto& point : points) m += point[r.column] / double(points.size());
        return m;
    }

    std::string text(const std::string& t) const {
        std::string out;
        std::size_t pos = 0;
        while (true) {
            const auto open = t.find("${", pos);
            if (open == std::string::npos) break;
            const auto close = t.find('}', open);
            out += t.substr(pos, open - pos);
            std::string name = t.substr(open + 2, close - open - 2);
            pos = close + 1;
            if (const auto it = texts_.find(name); it != texts_.end()) {
                out += it->second;
                continue;
            }
            const int decimals = Reader::stripDecimals(name);
            double v = NAN;
            if (const auto it = numbers_.find(name); it != numbers_.end())
                v = it->second;
            else if (name.rfind("figure.", 0) == 0)
                v = eval(p_.figures.at(name.substr(7)));
            else if (name.find(':') != std::string::npos)
                v = value(reader_.ref(name, "", p_));
            out += decimals >= 0 ? fixed(v, decimals) : fmt(v);
        }
        return out + t.substr(pos);
    }

private:
    const Parsed& p_;
    const Reader& reader_;
    const Results* res_;
    std::map<std::string, std::string> texts_;
    std::map<std::string, double> numbers_;
    std::vector<double> loads_;
    std::size_t row_ = kNoRow;
};

DeviceProfile deviceOf(const Parsed& p, const Options& opt) {
    if (p.profile == "derived:trail") return llama3_8bA100(opt);
    if (p.profile == "derived:timelyllm") return llama3_8bRtx4090(opt);
    if (p.profile == "derived:h100") return llama3_8bH100(opt);
    return opt.profile(p.profile);
}

// The experiment's workload; at `rate` (a load's) and of `count` requests where given.
Workload workloadOf(const Parsed& p, const Options& opt, double rate = NAN, std::size_t count = 0) {
    const WorkloadDef& d = p.workload;
    const std::size_t n = count > 0 ? count : opt.quick ? d.requests_quick : d.requests;
    if (std::isnan(rate)) rate = d.rate;
    Workload w;
    if (d.builder == "short_prompt_conversations") {
        w = shortPromptConversations(opt, rate, n);
    } else if (d.builder == "conversation_trace") {
        w = conversationTrace(opt, rate, n);
    } else {
        ReadOptions ro;
        ro.limit = n;
        if (d.has_rate) { // "inf": every request at 0
            ro.override_arrivals = true;
            ro.arrivals.rate = d.rate;
            ro.arrivals.seed = opt.seed;
        }
        w = readWorkload(dataFile(opt, d.file), ro);
    }
    for (std::size_t i = 0; i < w.size(); ++i) {
        if (d.spacing > 0) w.requests[i].arrival = static_cast<double>(i) * d.spacing;
        if (d.budget > 0) w.requests[i].budget_s = d.budget;
    }
    return w;
}

// A run of the paper's length at `rate`: `count` requests taken in turn from the workload's
// own (ShareGPT's short-prompt conversations are 5,256: the same lengths, repeated), Poisson
// arrivals at `rate` seeded by the run's seed.
Workload paperLengthOf(const Parsed& p, const Options& opt, double rate, std::size_t count) {
    const Workload distinct = workloadOf(p, opt, rate, count);
    Workload w = distinct;
    w.requests.clear();
    const auto t = generateArrivals({rate, 1.0, opt.seed, 0.0}, count);
    for (std::size_t i = 0; i < count && !distinct.requests.empty(); ++i) {
        Request q = distinct.requests[i % distinct.size()];
        q.id = static_cast<std::int64_t>(i);
        q.arrival = t[i];
        if (p.workload.budget > 0) q.budget_s = p.workload.budget;
        w.requests.push_back(q);
    }
    return w;
}

} // namespace experiment_file

using namespace experiment_file;

bool isExperimentPath(const std::string& name) {
    const auto papers = paperNames();
    return name != "all" && std::find(papers.begin(), papers.end(), name) == papers.end() &&
           name != "ala"; // "ala" in a build without it is still a paper's name, not a file
}

Experiment loadExperiment(const std::string& path) {
    Experiment e;
    e.path = path;
    requireRegularFile(path, "(an experiment file: TOML, see docs/experiments.md)");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "", "cannot be read");
    std::stringstream text;
    text << in.rdbuf();
    e.doc = tomlToJson(text.str(), path, &e.lines);
    e.parsed = std::make_shared<const Parsed>(Reader(e).parse());
    const Parsed& p = *e.parsed;
    e.paper = p.paper;
    e.title = p.title;
    e.arms = p.arms.size();
    for (const Arm& a : p.arms) e.runs += std::max<std::size_t>(1, a.values.size());
    e.claims = p.claims.size();
    return e;
}

std::vector<std::string> experimentFiles(const std::string& dir, const std::string& paper) {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    std::error_code ec;
    if (dir.empty() || !fs::is_directory(dir, ec)) return out;
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.path().extension() == ".toml") out.push_back(entry.path().string());
    std::sort(out.begin(), out.end());
    if (paper.empty()) return out;
    out.clear();
    for (const Experiment& e : loadExperiments(dir, paper)) out.push_back(e.path);
    return out;
}

std::vector<Experiment> loadExperiments(const std::string& dir, const std::string& paper) {
    std::vector<Experiment> out;
    for (const std::string& file : experimentFiles(dir)) {
        Experiment e = loadExperiment(file);
        if (paper.empty() || e.paper == paper) out.push_back(std::move(e));
    }
    return out;
}

Report runExperiment(const Experiment& e, const Options& opt) {
    if (!e.parsed)
        throw std::logic_error("runExperiment: an experiment not read by loadExperiment");
    const Parsed& p = *e.parsed;
    const Reader reader(e);
    say(opt, p.paper + ": " + p.title);
    // What only running finds wrong (a profile or data file that is not there, a workload
    // the engine refuses) is said with the file's key and line.
    const auto named = [&](const std::string& field, const auto& make) {
        try {
            return make();
        } catch (const InputError& x) {
            throw InputError(e.path, tomlLine(e.lines, field), field,
                             (x.file().empty() ? "" : x.file() + ": ") + x.message());
        } catch (const std::invalid_argument& x) {
            throw InputError(e.path, tomlLine(e.lines, field), field, x.what());
        }
    };
    const DeviceProfile prof = named("device.profile", [&] { return deviceOf(p, opt); });
    const auto model = makeExecutionModel(prof);
    std::map<std::string, std::string> texts{
        {"profile.provenance", prof.provenance},
        {"profile.kv_capacity_tokens", std::to_string(prof.kvCapacityTokens())},
        {"seed", std::to_string(opt.seed)}};
    std::map<std::string, double> numbers;
    const std::size_t length = opt.quick ? p.workload.length_quick : p.workload.length;
    if (length > 0) texts["length.requests"] = std::to_string(length);
    // Each arm at each point a RunSpec run through prepareRun on workloads and a model held
    // in memory (the workloads named in `cache`).
    WorkloadCache cache;
    RunContext ctx;
    ctx.keep_log = false;
    const auto holding = [&](const std::string& name, const Workload& w) {
        ctx = inMemory(ctx, cache, name, w, *model);
        ctx.keep_log = false;
    };
    // An arm's RunSpec (its policy and limits tables, a calibration's values filled in) on
    // the workload `name`, its KV capacity the device's where its limits give none.
    const Results none;
    const auto specOf = [&](json parts, const std::string& name, double mem_fraction) {
        parts["workload"] = {{"path", name}};
        if (parts["policy"].contains("predictor")) { // a calibration's value, filled in
            const Evaluator calibrated(p, reader, none, texts, numbers, {});
            parts["policy"]["predictor"] =
                calibrated.text(parts["policy"]["predictor"].get<std::string>());
        }
        RunSpec spec = RunSpec::fromJson(parts, e.path);
        spec.policy.seed = opt.seed;
        DeviceProfile arm_prof = prof;
        if (mem_fraction > 0) arm_prof.mem_fraction = mem_fraction;
        if (spec.limits.kv_capacity_tokens == 0)
            spec.limits.kv_capacity_tokens = arm_prof.kvCapacityTokens();
        return spec;
    };

    // The calibrations: predictors first, then service rates (whose policy may use one).
    const Workload w = named("workload", [&] { return workloadOf(p, opt); });
    for (const Calibration& c : p.calibrations) {
        if (c.kind == "lognormal_mae") { // on the workload's own lengths (common.h)
            texts[c.name + ".spec"] = lognormalAtMae(opt, w, c.mae);
        } else if (c.kind == "trail_predictor") {
            // Trail's prediction model with the per-token classifier's noise set so that the
            // refined predictions' MAE is mae_ratio times below the prompt-only ones' on a
            // sample of the workload's kind (trailPredictors, common.h).
            const TrailPredictors tp =
                trailPredictors(opt, c.mae_ratio, opt.quick ? c.requests_quick : c.requests);
            texts[c.name + ".refined"] = tp.refined;
            texts[c.name + ".prompt_only"] = tp.prompt_only;
            numbers[c.name + ".mae_refined"] = tp.mae.refined;
            numbers[c.name + ".mae_prompt_only"] = tp.mae.prompt_only;
            numbers[c.name + ".mae_ratio"] = tp.mae.ratio();
        }
    }
    std::vector<Workload> flood; // kept while ctx names them
    flood.reserve(p.calibrations.size());
    for (const Calibration& c : p.calibrations) {
        if (c.kind != "service_rate") continue;
        // What the policy serves with every request waiting from the start: its service rate.
        flood.push_back(named("workload", [&] { return workloadOf(p, opt, INFINITY); }));
        const std::string name = std::string(kWorkloadName) + "@flood:" + c.name;
        holding(name, flood.back());
        const RunSpec spec = specOf(json{{"policy", c.policy}, {"limits", p.limits}}, name, 0);
        numbers[c.name + ".rate"] = runSpec(spec, ctx).summary.request_throughput;
    }

    // The loads: each a fraction of the service rate (a rate in req/s read as one), every
    // arm run at each on its own Poisson arrivals.
    std::vector<double> loads, rates;
    std::vector<Workload> at_load;
    if (!p.workload.loads.of.empty()) {
        const double mu = numbers.at(p.workload.loads.of + ".rate");
        for (double f : p.workload.loads.fractions) loads.push_back(f);
        for (double r : p.workload.loads.rates) loads.push_back(r / mu);
        at_load.reserve(loads.size());
        for (double f : loads) {
            rates.push_back(f * mu);
            at_load.push_back(named("workload", [&] { return workloadOf(p, opt, f * mu); }));
        }
        for (std::size_t k = 0; k < loads.size(); ++k)
            holding(std::string(kWorkloadName) + "@" + p.workload.loads.points[k], at_load[k]);
    } else {
        holding(kWorkloadName, w);
    }
    texts["workload.requests"] = std::to_string(at_load.empty() ? w.size() : at_load[0].size());

    struct ArmRun {
        std::size_t arm, point;
        RunSpec spec;
    };
    std::vector<ArmRun> jobs;
    for (const Arm& a : p.arms) {
        if (a.vary == "load") {
            for (std::size_t k = 0; k < loads.size(); ++k)
                jobs.push_back({a.index, k,
                                specOf(a.spec, std::string(kWorkloadName) + "@" + a.values[k],
                                       a.mem_fraction)});
            texts["arm." + a.id + ".kv_capacity_tokens"] =
                std::to_string(jobs.back().spec.limits.kv_capacity_tokens);
            continue;
        }
        // A sweep over its varied parameter (one point when none).
        sweep::Definition d;
        d.base = specOf(a.spec, kWorkloadName, a.mem_fraction);
        texts["arm." + a.id + ".kv_capacity_tokens"] =
            std::to_string(d.base.limits.kv_capacity_tokens);
        if (!a.vary.empty()) {
            sweep::Axis x;
            x.kind = a.vary == "budget" ? sweep::AxisKind::Budget : sweep::AxisKind::Param;
            x.name = a.vary;
            x.values = a.values;
            d.axes.push_back(std::move(x));
        }
        const auto points = sweep::expand(d);
        for (std::size_t k = 0; k < points.size(); ++k)
            jobs.push_back({a.index, k, sweep::jobSpec(d, points, k)});
    }
    const std::size_t columns = metricNames().size();
    const auto runJobs = [&](const std::vector<ArmRun>& todo, Results& res) {
        res.assign(p.arms.size(), {});
        for (const Arm& a : p.arms)
            res[a.index].assign(std::max<std::size_t>(1, a.values.size()),
                                std::vector<double>(columns, NAN));
        for (const ArmRun& j : todo) // known even where the policy cycles
            res[j.arm][j.point].back() = double(j.spec.limits.kv_capacity_tokens);
        parallelFor(todo.size(), opt.threads, [&](std::size_t i) {
            std::vector<double>& out = res[todo[i].arm][todo[i].point];
            try {
                const RunResult r = runSpec(todo[i].spec, ctx);
                std::size_t c = 0;
                for (const auto& [name, v] : summaryMetrics(r.summary)) out[c++] = v;
            } catch (const SchedulerLoop&) {
                // A policy that cycles: its metrics stay NaN (as a sweep's "loop" row).
            }
        });
    };
    say(opt, p.paper + ": " + std::to_string(jobs.size()) + " runs");
    Results res;
    runJobs(jobs, res);

    const Evaluator ev(p, reader, res, texts, numbers, loads);
    // Each claim's row: the load `at` names, or the one its value's over picks.
    std::vector<std::size_t> rows;
    for (const ClaimDef& d : p.claims) {
        std::size_t row = Evaluator::kNoRow;
        if (!d.at.empty())
            row = static_cast<std::size_t>(
                std::find(p.workload.loads.points.begin(), p.workload.loads.points.end(), d.at) -
                p.workload.loads.points.begin());
        else if (d.row())
            row = ev.over(d.value).second;
        rows.push_back(row);
    }
    // The claims judged again at the paper's length, above the service rate: the arms their
    // value reads, at their row's load, on the longer run.
    Results long_res;
    {
        std::set<std::pair<std::size_t, std::size_t>> wanted; // (arm, load)
        for (std::size_t i = 0; i < p.claims.size(); ++i) {
            const ClaimDef& d = p.claims[i];
            if (d.at_length.empty() || rows[i] == Evaluator::kNoRow || !(loads[rows[i]] > 1))
                continue;
            std::vector<const Ref*> refs{&d.value.a, &d.value.b};
            for (const Ref& r : d.value.others) refs.push_back(&r);
            for (const Ref* r : refs)
                if (!r->text.empty()) wanted.insert({r->arm_index, rows[i]});
        }
        std::map<std::size_t, Workload> long_runs;
        for (const auto& want : wanted) {
            const std::size_t k = want.second; // (a structured binding is not captured)
            if (!long_runs.count(k))
                long_runs.emplace(k, named("workload.paper_length", [&] {
                                      return paperLengthOf(p, opt, rates[k], length);
                                  }));
        }
        for (const auto& [k, lw] : long_runs)
            holding(std::string(kWorkloadName) + "@length:" + p.workload.loads.points[k], lw);
        std::vector<ArmRun> long_jobs;
        for (const auto& [arm, k] : wanted)
            long_jobs.push_back(
                {arm, k,
                 specOf(p.arms[arm].spec,
                        std::string(kWorkloadName) + "@length:" + p.workload.loads.points[k],
                        p.arms[arm].mem_fraction)});
        if (!long_jobs.empty())
            say(opt,
                p.paper + ": " + std::to_string(long_jobs.size()) + " runs of the paper's length");
        runJobs(long_jobs, long_res);
    }

    Report rep;
    rep.prefix_caching = p.prefix_caching;
    const std::string setting = ev.text(p.setting);
    {
        std::vector<std::string> header{"arm"};
        bool varies = false;
        for (const Arm& a : p.arms) varies = varies || !a.vary.empty();
        if (varies) header.push_back("value");
        for (const auto& m : p.report) header.push_back(m);
        Table t(header);
        const auto& names = metricNames();
        for (const Arm& a : p.arms)
            for (std::size_t k = 0; k < res[a.index].size(); ++k) {
                std::vector<std::string> row{a.label};
                if (a.vary == "load") // a load: its fraction of the service rate, its rate
                    row.push_back("load " + fixed(loads[k], 2) + " (" + fixed(rates[k], 2) +
                                  " req/s)");
                else if (varies)
                    row.push_back(a.vary.empty() ? "-" : a.vary + "=" + a.values[k]);
                for (const auto& m : p.report) {
                    const auto col = static_cast<std::size_t>(
                        std::find(names.begin(), names.end(), m) - names.begin());
                    row.push_back(fmt(res[a.index][k][col], 6));
                }
                t.add(std::move(row));
            }
        rep.details += "\n  " + p.title + " (" + e.path + ")\n" + t.str();
    }
    for (std::size_t i = 0; i < p.claims.size(); ++i) {
        const ClaimDef& d = p.claims[i];
        const std::size_t row = rows[i];
        Evaluator ce = row == Evaluator::kNoRow ? ev : ev.at(row);
        const Formula at_row = atOneLoad(d.value); // the value at its row
        const double value = ce.eval(at_row);
        const double kept = d.row() && row == Evaluator::kNoRow ? NAN : value;
        ce.set("row.value", kept);
        double at_length = NAN;
        if (!d.at_length.empty() && row != Evaluator::kNoRow && loads[row] > 1) {
            at_length = ce.on(long_res).eval(at_row);
        }
        ce.set("row.value_at_length", at_length);
        Claim c =
            makeClaim(p.paper, ev.text(d.claim), d.paper_value,
                      d.value.take == Formula::Take::ShareAbove ? ev.eval(d.value) : kept, d.unit,
                      d.setting.empty() ? setting : setting + "; " + ce.text(d.setting));
        if (d.value.kind == Formula::Kind::Ratio && d.value.offset == 0 && d.value.scale == 1 &&
            !d.value.reciprocal && d.value.take != Formula::Take::ShareAbove)
            c.ratio(ce.value(d.value.a), ce.value(d.value.b));
        if (row != Evaluator::kNoRow) c.load = loads[row];
        if (d.has_bqs) c.baseline_queue_share = ce.eval(d.baseline_queue_share);
        c.band = d.band;
        c.band_origin = d.band_origin;
        c.quote = d.quote;
        c.paper_value_source = d.paper_value_source;
        c.not_comparable = d.not_comparable;
        c.calibrated = d.calibrated;
        c.cause = ce.text(d.cause);
        c.null_model = d.null_model;
        if (d.has_null) c.null_value = ce.eval(d.null_value);
        for (const PremiseDef& pd : d.premises)
            c.premises.push_back({pd.what, ce.eval(pd.value), pd.at_least, pd.why});
        for (const AtLengthDef& l : d.at_length) {
            // Above the service rate the figure moves with the run's length: judged only
            // where at the paper's length it reads as here by the band (inside it, or outside
            // on the same side), a premise over seeds (every one of 10: 0.95). Below it
            // nothing grows with the run.
            if (row == Evaluator::kNoRow || !(loads[row] > 1)) {
                c.compared[l.compared] = NAN; // not run: nothing to measure
                c.premises.push_back({ce.text(l.what), 1.0, 0.95, ce.text(l.why_below)});
                continue;
            }
            double lo = NAN, hi = NAN;
            paperRange(c.paper_value, lo, hi);
            const auto side = [&](double g) {
                return c.band.contains(c.paper_value, g) ? 0 : g < lo ? -1 : 1;
            };
            const bool same = side(at_length) == side(kept);
            c.compared[l.compared] = at_length;
            c.premises.push_back({ce.text(l.what), same ? 1.0 : 0.0, 0.95,
                                  ce.text(same ? l.why_same : l.why_differs)});
        }
        for (const ClaimDef::ReadingDef& r : d.readings)
            c.readings.push_back({r.what, ce.eval(r.value)});
        c.paper_readings = d.paper_readings;
        c.substitutes = p.substitutes;
        rep.claims.push_back(std::move(c));
    }
    return rep;
}

} // namespace kairos::repro
