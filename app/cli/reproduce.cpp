// kairos-cli reproduce: the papers' experiments, claim by claim (core/repro).
#include "checks.h"
#include "commands.h"
#include "exec/vidur_model.h"
#include "fit/vidur_fit.h"
#include "model/known_models.h"
#include "profiles.h"
#include "repro/derived.h"
#include "repro/experiment.h"
#include "repro/repro.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/parallel.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace kairos::cli {
using app::kDefaultProfile;
using app::resolveProfile;

namespace {
// reproduce --list: the papers' experiments in code and the experiment files, each file
// read whole (a malformed one stops the list with its error, as running it would).
void listExperiments(const std::string& dir) {
    std::printf("Experiments: 'reproduce PAPER' runs a paper's experiments in code, then its "
                "files; 'reproduce FILE' runs one file.\n");
    std::printf("Experiment files: %s\n\n", dir.empty() ? "(none found)" : dir.c_str());
    // Every file read whole; one that does not read is listed with its error (and the
    // command ends with exit 2) rather than hiding the others.
    std::vector<repro::Experiment> files;
    std::vector<std::string> broken;
    for (const auto& file : repro::experimentFiles(dir)) {
        try {
            files.push_back(repro::loadExperiment(file));
        } catch (const InputError& e) {
            broken.push_back(e.what());
        }
    }
    std::printf("  %-9s %-56s %6s %5s  %s\n", "paper", "experiment", "claims", "runs",
                "defined in");
    for (const auto& paper : repro::paperNames()) {
        if (repro::hasExperimentsInCode(paper))
            std::printf("  %-9s %-56s %6s %5s  %s\n", paper.c_str(),
                        (paper + "'s experiments in code").c_str(), "-", "-",
                        ("core/repro/" + paper + ".cpp").c_str());
        for (const auto& e : files)
            if (e.paper == paper)
                std::printf("  %-9s %-56s %6zu %5zu  %s\n", paper.c_str(), e.title.c_str(),
                            e.claims, e.runs, e.path.c_str());
    }
    if (broken.empty()) return;
    std::string all;
    for (const auto& b : broken) all += "\n  " + b;
    throw InputError("reproduce --list", 0, "",
                     std::to_string(broken.size()) + " experiment file(s) do not read:" + all);
}
} // namespace

void addReproduce(CLI::App& app) {
    struct Args {
        std::string paper = "all", json_out, data = KAIROS_SHARED_DATA, workload,
                    profile = "llama3-8b-h100";
        bool quick = false, quiet = false, details = true, uncovered = false, audit = false,
             list = false;
        std::uint64_t seed = 1;
        int seeds = 1;
        int threads = 0;
    };
    auto a = std::make_shared<Args>();
    auto* c = app.add_subcommand(
        "reproduce",
        "Run each paper's experiment on the closest workload here and print, per claim, the "
        "paper's figure next to the one Kairos measures");
    std::vector<std::string> papers = repro::paperNames(); // without ALA in a build without it
    std::string list;
    for (const auto& n : papers) list += n + ", ";
    papers.push_back("all");
    // A paper's name, or an experiment file (repro/experiment.h): one the user wrote, or a
    // shipped one (reproduce --list names them).
    c->add_option("paper", a->paper,
                  list + "or all (each paper's experiments in code, then its files), or an "
                         "experiment file (TOML; reproduce --list shows the shipped ones)")
        ->check(CLI::IsMember(papers) | CLI::ExistingFile);
    c->add_flag("--list", a->list,
                "List the experiments: each paper's in code and the experiment files (title, "
                "claims, runs, path), and exit");
    c->add_option("--json", a->json_out,
                  "Write the claims as a JSON list of {paper, claim, quote, paper_value, "
                  "kairos_value, unit, compared, setting, band, band_origin, seeds (each seed's "
                  "value), ci_low, ci_high, rule, verdict, cause}; for 'timely', an object "
                  "{claims: that list, systems: each arm of the TimelyLLM authors' code by "
                  "their metric}");
    c->add_option("--data", a->data, "Folder of the public traces (../shared/data)")
        ->type_name("FOLDER");
    c->add_option("--workload,-w", a->workload,
                  "timely only: run every TimelyLLM claim made on the authors' WID1 sample on "
                  "this workload instead (their data format: a JSON list of jobs with "
                  "'trigger time', 'tuf', 'exe_time_detail'; the plans from a *trace_set*.json "
                  "beside it)")
        ->check(CLI::ExistingFile);
    c->add_option("--profile", a->profile,
                  "timely only: the device profile the TimelyLLM code's arms run on (the "
                  "'systems' object of --json; default llama3-8b-h100, where the code's real "
                  "runs were made)")
        ->capture_default_str();
    c->add_option("--seed", a->seed, "Seed of arrivals, predictors and random instances")
        ->check(seedValue());
    c->add_option("--seeds", a->seeds,
                  "Run every experiment with this many seeds (--seed, --seed + 1, ...): each "
                  "claim is their mean, with its 95 % interval")
        ->check(CLI::Range(1, 100));
    c->add_flag("--uncovered", a->uncovered,
                "List the papers' headline claims that no row measures, with the reason, and "
                "exit");
    c->add_option("--threads", a->threads, "Simulations run in parallel (0: all cores)")
        ->check(whole(0, kMaxThreads));
    c->add_flag("--audit", a->audit,
                "Print every row as an auditor reads it (the paper's words, each seed's value, "
                "the values compared, the band and its origin, the rule that decided) instead "
                "of the table");
    c->add_flag("--quick", a->quick, "Smaller experiments (a first look; noisier figures)");
    c->add_flag("--quiet", a->quiet, "Print nothing but errors");
    c->add_flag("!--no-details", a->details, "Print only the claims, not the tables behind them");
    c->callback([a, c] {
        if (a->uncovered) {
            std::fputs(repro::uncoveredTable().c_str(), stdout);
            return;
        }
        const std::string experiments = app::experimentsDir();
        if (a->list) return listExperiments(experiments);
        if (repro::isExperimentPath(a->paper) && (c->count("--workload") || c->count("--profile")))
            throw std::invalid_argument("--workload and --profile: only for 'reproduce timely'; "
                                        "an experiment file names its own workload and device");
        if (c->count("--profile") && a->paper != "timely")
            throw std::invalid_argument("--profile: only for 'reproduce timely' (the profile "
                                        "of the TimelyLLM code's arms), not '" +
                                        a->paper + "'");
        if (!a->workload.empty() && a->paper != "timely")
            throw std::invalid_argument("--workload: only for 'reproduce timely' (the other "
                                        "papers' claims are made on their own traces), not '" +
                                        a->paper + "'");
        repro::Options o;
        o.timely_workload = a->workload;
        o.timely_profile = a->profile;
        o.experiments_dir = experiments;
        if (a->paper == "timely") (void)resolveProfile(a->profile); // a bad name fails first
        o.seeds = a->seeds;
        o.data_dir = a->data;
        o.quick = a->quick;
        o.seed = a->seed;
        o.threads = a->threads;
        o.profile = [](const std::string& name) { return resolveProfile(name); };
        const auto t0 = std::chrono::steady_clock::now();
        if (!a->quiet)
            o.progress = [t0](const std::string& line) {
                const double s =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                std::fprintf(stderr, "[%6.1f s] %s\n", s, line.c_str());
            };
        const repro::Report r = repro::reproduce(a->paper, o);
        if (!a->quiet && a->audit) {
            std::fputs(repro::auditText(r.claims).c_str(), stdout);
        } else if (!a->quiet) {
            if (a->details) std::fputs(r.details.c_str(), stdout);
            std::fputs(repro::claimsTable(r.claims).c_str(), stdout);
        }
        if (!a->json_out.empty())
            writeFileAtomically(a->json_out, [&](std::ostream& out) {
                // With the TimelyLLM code's arms: {"claims": [...], "systems": {...}}.
                if (r.systems.is_object() && !r.systems.empty())
                    out << nlohmann::json{{"claims", repro::toJson(r.claims)},
                                          {"systems", r.systems}}
                               .dump(2)
                        << "\n";
                else
                    out << repro::toJson(r.claims).dump(2) << "\n";
            });
    });
}

namespace {

struct DeriveArgs {
    std::string setting, data = KAIROS_SHARED_DATA, out;
    // vidur
    std::string compute, network, model = "llama2-70b";
    int tp = 2, max_request_tokens = 4096;
};

// A profile whose batch times are Vidur's: its operator tables, its GQA and NCCL
// overheads, its memory planner's KV cache (fit/vidur_fit.h).
void deriveVidur(const DeriveArgs& a) {
    fit::VidurFitOptions o;
    o.compute_dir = a.compute.empty() ? a.data + "/vidur/a100/Llama-2-70b-hf" : a.compute;
    o.network_dir = a.network.empty() ? a.data + "/vidur/network/a100_dgx" : a.network;
    o.model = *knownModel(a.model);
    o.tp = a.tp;
    o.max_request_tokens = a.max_request_tokens;
    fit::VidurFit f = fit::fitVidur(o);
    if (f.kv_capacity_tokens <= 0)
        throw std::invalid_argument(
            "--tp: Vidur's memory planner leaves no room for one request of " +
            std::to_string(a.max_request_tokens) + " tokens on " + std::to_string(a.tp) +
            " devices of 80 GiB");
    const std::string device =
        std::filesystem::path(o.compute_dir).lexically_normal().parent_path().filename().string();
    DeviceProfile p;
    p.name = a.model + "-tp" + std::to_string(a.tp) + "-vidur";
    p.description = o.model.name + " at TP " + std::to_string(a.tp) + " on " + device +
                    ", batch times from Vidur's operator profiles";
    p.hardware = std::to_string(a.tp) + "x " + device;
    p.gpu_count = a.tp;
    p.gpu_mem_gib = o.gpu_mem_gib;
    p.mem_fraction = 0.9;
    p.model = o.model;
    p.exec_kind = "vidur";
    p.vidur = std::make_shared<const VidurTables>(std::move(f.tables));
    p.kv_capacity_tokens = f.kv_capacity_tokens;
    p.provenance =
        "kairos-cli derive-profile vidur --model " + a.model + " --tp " + std::to_string(a.tp) +
        " --max-request-tokens " + std::to_string(a.max_request_tokens) + ": per-layer operator " +
        "medians of Vidur's profiler (" + o.compute_dir + "/{mlp,attention}.csv" +
        (a.tp > 1 ? ", " + o.network_dir + "/all_reduce.csv" : std::string()) +
        "), each predicted by the candidate with the lower held-out error (vidur.fit), "
        "tabulated on Vidur's grid (tokens rounded up to 8, KV to 64); KV cache as Vidur's "
        "memory planner: " +
        std::to_string(f.planner_requests) + " requests of " +
        std::to_string(a.max_request_tokens) + " tokens";
    writeFileAtomically(a.out, [&](std::ostream& out) { out << p.toJson().dump(1) << "\n"; });
    std::fputs(f.report().c_str(), stdout);
    std::printf("%s: %d layers, TP %d, KV capacity %lld tokens (%d requests of %d)\n",
                p.name.c_str(), o.model.layers, a.tp, static_cast<long long>(f.kv_capacity_tokens),
                f.planner_requests, a.max_request_tokens);
}

} // namespace

void addDeriveProfile(CLI::App& app) {
    using Args = DeriveArgs;
    auto a = std::make_shared<Args>();
    auto* c = app.add_subcommand(
        "derive-profile",
        "Write the profile of a paper's own machine, derived from the public data (no "
        "measurement of that machine is here): timelyllm (Llama3-8B on an RTX 4090, fitted to "
        "the TimelyLLM authors' plan times), trail (Llama3-8B on an A100), h100 (Llama3-8B "
        "on an H100, where the TimelyLLM code's real runs were made) or vidur (a model's batch "
        "times built from Vidur's operator profiles as Vidur builds them: MC-SF's Llama2-70B on "
        "two A100s by default)");
    c->add_option("setting", a->setting, "timelyllm, trail, h100 or vidur")
        ->required()
        ->check(CLI::IsMember({"timelyllm", "trail", "h100", "vidur"}));
    c->add_option("--data", a->data, "Folder of the public traces (../shared/data)")
        ->type_name("FOLDER")
        ->capture_default_str();
    c->add_option("--out,-o", a->out, "Output JSON")->required();
    c->add_option("--compute", a->compute,
                  "vidur: folder of Vidur's mlp.csv and attention.csv for the model on its "
                  "device (default: DATA/vidur/a100/Llama-2-70b-hf)")
        ->type_name("FOLDER");
    c->add_option("--network", a->network,
                  "vidur: folder of Vidur's all_reduce.csv (default: DATA/vidur/network/a100_dgx)")
        ->type_name("FOLDER");
    c->add_option("--model", a->model, "vidur: the model (its shape filters the profiles' rows)")
        ->check(CLI::IsMember(knownModelNames()))
        ->capture_default_str();
    c->add_option("--tp", a->tp, "vidur: tensor-parallel degree")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    c->add_option("--max-request-tokens", a->max_request_tokens,
                  "vidur: KV reserved per request by Vidur's memory planner (its "
                  "max_request_tokens), which sizes the KV cache")
        ->check(CLI::Range(16, 1 << 20))
        ->capture_default_str();
    c->callback([a] {
        if (a->setting == "vidur") return deriveVidur(*a);
        repro::Options o;
        o.data_dir = a->data;
        DeviceProfile p = a->setting == "timelyllm" ? repro::llama3_8bRtx4090(o)
                          : a->setting == "h100"    ? repro::llama3_8bH100(o)
                                                    : repro::llama3_8bA100(o);
        // A shipped profile is found by its name: the file's stem, without "(derived)" (the
        // description and the provenance say it is derived).
        p.name = a->setting == "timelyllm" ? "llama3-8b-rtx4090"
                 : a->setting == "h100"    ? "llama3-8b-h100"
                                           : "llama3-8b-a100";
        p.provenance = "kairos-cli derive-profile " + a->setting + ": " + p.provenance;
        writeFileAtomically(a->out, [&](std::ostream& out) { out << p.toJson().dump(2) << "\n"; });
        std::printf("%s: prefill a=%.6g b=%.6g, decode q0=%.6g q1=%.6g p=%.6g, KV capacity %lld "
                    "tokens\n",
                    p.name.c_str(), p.ete.a, p.ete.b, p.ete.q0, p.ete.q1, p.ete.p,
                    static_cast<long long>(p.kvCapacityTokens()));
    });
}

} // namespace kairos::cli
