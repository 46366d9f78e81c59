// kairos-cli: the headless face of Kairos (simulate, generate, bench, fit-profile).
#include "commands.h"

#ifdef KAIROS_WITH_REPORT
namespace kairos::cli {
void installReportWriter();
}
#endif
#ifdef KAIROS_WITH_LIVE
namespace kairos::cli {
void installLive(CLI::App& app);
}
#endif
#ifdef KAIROS_WITH_MPI
namespace kairos::cli {
void installMpi(int* argc, char*** argv);
}
#endif
#include "path_rules.h"
#include "sched/scheduler.h"
#include "store/store.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/memory.h"
#include "util/text.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {
// CLI11's TOML reader, stricter: a UTF-8 byte-order mark (editors on Windows write one)
// is skipped, and a line with an unterminated string is an error naming the line (CLI11
// 2.1 reads the rest of the line as the value).
class CheckedToml : public CLI::ConfigTOML {
public:
    std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
        // Bounded as every input is (util/input_file.h): the file was checked to be a
        // regular file of at most the settings limit before CLI11 opened it.
        std::string text;
        char buf[1 << 16];
        while (input.read(buf, sizeof buf) || input.gcount() > 0) {
            text.append(buf, std::size_t(input.gcount()));
            if (text.size() > kairos::limits::kSettings.max_bytes)
                throw CLI::ConfigError("line 1: larger than the limit for a settings file");
        }
        try {
            kairos::checkText(text, "", kairos::limits::kSettings);
        } catch (const kairos::InputError& e) {
            throw CLI::ConfigError("line " + std::to_string(std::max(1L, e.line())) + ": " +
                                   e.message());
        }
        if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
        std::istringstream lines(text);
        std::string line;
        // A key given twice in one section: CLI11 would name only the option ("At Most 1
        // required"), or keep one of the two; TOML forbids it.
        std::string section;
        std::set<std::string> keys;
        for (long n = 1; std::getline(lines, line); ++n) {
            char open = 0;
            std::size_t eq = std::string::npos;
            for (std::size_t i = 0; i < line.size(); ++i) {
                const char c = line[i];
                if (open) {
                    if (c == '\\' && open == '"') {
                        ++i;
                        continue;
                    }
                    if (c == open) open = 0;
                } else if (c == '#') {
                    break;
                } else if (c == '"' || c == '\'') {
                    open = c;
                } else if (c == '=' && eq == std::string::npos) {
                    eq = i;
                }
            }
            if (open) throw CLI::ConfigError("line " + std::to_string(n) + ": unterminated string");
            const std::string t = std::string(kairos::text::trim(line));
            // A section names a command ([simulate], [runs.list]) and a key an option: more
            // parts than that are a mistake, and CLI11 builds a table per part (a 40 KB
            // section of 20,000 parts took 12.5 GB).
            auto parts = [](const std::string& name) {
                return 1 + std::count(name.begin(), name.end(), '.');
            };
            if (!t.empty() && t.front() == '[') {
                section = t;
                if (parts(t) > 3)
                    throw CLI::ConfigError("line " + std::to_string(n) +
                                           ": a section of more than 3 dotted parts (a section "
                                           "names a command: [simulate], [runs.list])");
            } else if (eq != std::string::npos) {
                const std::string key = std::string(kairos::text::trim(line.substr(0, eq)));
                if (parts(key) > 3)
                    throw CLI::ConfigError("line " + std::to_string(n) +
                                           ": a key of more than 3 dotted parts (a key names an "
                                           "option of the section's command)");
                if (!keys.insert(section + "\n" + key).second)
                    throw CLI::ConfigError("line " + std::to_string(n) + ": '" + key +
                                           "' is given twice" +
                                           (section.empty() ? "" : " in " + section));
            }
        }
        std::istringstream in(text);
        return CLI::ConfigTOML::from_config(in);
    }
};
} // namespace

namespace {
// The program `name` beside this one (kairos-live, kairos-mpi, kairos-report), or "" when
// this program's own path cannot be read.
[[maybe_unused]] std::string siblingProgram(const char* name) {
    std::string self(4096, '\0');
    const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size() - 1);
    if (n <= 0) return "";
    self.resize(static_cast<std::size_t>(n));
    return self.substr(0, self.find_last_of('/') + 1) + name;
}
} // namespace

#ifdef KAIROS_LIVE_FORWARD
namespace {
// The commands that run the real transformer live in kairos-live (app/cli/CMakeLists.txt
// says why). They are handed over before anything is parsed: the same arguments, the same
// standard streams, and kairos-live's exit code is this command's.
struct LiveCommand {
    const char* name;
    const char* about; // for kairos-cli --help (null: kairos-cli registers it itself)
};
const LiveCommand kLiveCommands[] = {
    {"live", nullptr},
    {"profile", "Measure this device's transformer and fit ETE (kairos-live)"},
    {"validate", "Live run against its simulation (kairos-live)"},
    {"lengths", "Train length predictors on the live model (kairos-live)"},
    {"quality", "Measure answer quality against KV eviction on the live model (kairos-live)"}};

// The command named on the line: the first word that is not an option, skipping the value
// of the one top-level option that takes one (--config FILE).
const char* commandOf(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--config") {
            ++i;
            continue;
        }
        if (!a.empty() && a[0] == '-') continue;
        return argv[i];
    }
    return nullptr;
}

void handOverLiveCommands(int argc, char** argv) {
    const char* cmd = commandOf(argc, argv);
    if (!cmd) return;
    bool live = false;
    for (const LiveCommand& c : kLiveCommands) live = live || std::strcmp(cmd, c.name) == 0;
    if (!live) return;
    const std::string live_exe = siblingProgram("kairos-live");
    if (live_exe.empty()) {
        std::fprintf(stderr,
                     "kairos-cli: error: cannot find kairos-live (the program that runs "
                     "'%s'): /proc/self/exe unreadable\n",
                     cmd);
        std::exit(2);
    }
    ::execv(live_exe.c_str(), argv);
    std::fprintf(stderr, "kairos-cli: error: '%s' runs in %s, which could not be started: %s\n",
                 cmd, live_exe.c_str(), std::strerror(errno));
    std::exit(2);
}
} // namespace
#endif

#ifdef KAIROS_MPI_FORWARD
namespace {
// Started by an MPI launcher (mpirun, or srun with PMI/PMIx), `sweep` runs in kairos-mpi,
// which links MPI; kairos-cli itself stays free of it (app/cli/mpi.cpp says why).
bool underMpiLauncher() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
        if (const char* e = std::getenv(v); e && *e) return true;
    return false;
}

void handOverMpiCommands(int argc, char** argv) {
    const char* cmd = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--config") == 0) {
            ++i;
            continue;
        }
        if (argv[i][0] != '-') {
            cmd = argv[i];
            break;
        }
    }
    if (!cmd || std::strcmp(cmd, "sweep") != 0 || !underMpiLauncher()) return;
    const std::string mpi_exe = siblingProgram("kairos-mpi");
    if (mpi_exe.empty()) return; // run without MPI: one rank per process, each the whole sweep
    ::execv(mpi_exe.c_str(), argv);
    std::fprintf(stderr,
                 "kairos-cli: error: 'sweep' under MPI runs in %s, which could not be "
                 "started: %s\n",
                 mpi_exe.c_str(), std::strerror(errno));
    std::exit(2);
}
} // namespace
#endif

#ifdef KAIROS_REPORT_FORWARD
namespace {
// Reports and sweeps drawn as HTML or PDF paint with Qt's widgets, which live in
// kairos-report; kairos-cli links no Qt, so its every other start loads some forty fewer
// libraries (about half its start-up time). The command is handed over once parsed, before
// it does any work: a --config file can ask for --html as well as the command line.
void handOverToReportProgram(char** argv) {
    const std::string exe = siblingProgram("kairos-report");
    if (exe.empty())
        throw std::invalid_argument(
            "cannot find kairos-report (the program that draws charts): /proc/self/exe "
            "unreadable");
    std::cout.flush();
    ::execv(exe.c_str(), argv);
    throw std::invalid_argument("charts are drawn by " + exe +
                                ", which could not be started: " + std::strerror(errno));
}
} // namespace
#endif

namespace {
int run(int argc, char** argv);

// An error message as the terminal gets it: control bytes that came from a file or a
// database (an ESC in a workload's field, a CSV cell) are shown as \xNN, never sent to the
// terminal to act on; line breaks and tabs stay.
std::string safe(const char* what) {
    std::string out;
    for (const char* p = what; *p; ++p) {
        const auto c = static_cast<unsigned char>(*p);
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", c);
            out += b;
        } else {
            out += char(c);
        }
    }
    return out;
}

// What was printed must have reached standard output: a full disk or a closed pipe is an
// error (exit 2) even after the command's work succeeded, as coreutils does.
int checkedStdout(int code) {
    std::cout.flush();
    const bool bad = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
    if (bad) {
        std::fprintf(stderr, "kairos-cli: error: standard output: write failed: %s\n",
                     errno ? std::strerror(errno) : "error");
        return code == 0 ? 2 : code;
    }
    return code;
}
} // namespace

int main(int argc, char** argv) {
    // A file past the size limit (ulimit -f) fails its write with EFBIG, which the writers
    // report as a failed write (exit 2, nothing replaced), instead of the signal's default
    // of killing the process with a core dump.
    std::signal(SIGXFSZ, SIG_IGN);
    const int code = checkedStdout(run(argc, argv));
    // For the generated hostile suite (tests/core/tst_hostile.cpp): every file this command
    // read, whether named or found in a folder, so that each is tried missing, as a FIFO, as
    // /dev/zero, empty, binary and as the command's own output.
    if (const char* e = std::getenv("KAIROS_PRINT_INPUTS"); e && std::string(e) == "1")
        for (const std::string& p : kairos::inputsOfThisProcess())
            std::fprintf(stderr, "kairos-cli: input: %s\n", p.c_str());
    return code;
}

namespace {
int run(int argc, char** argv) {
#ifdef KAIROS_LIVE_FORWARD
    handOverLiveCommands(argc, argv);
#endif
#ifdef KAIROS_MPI_FORWARD
    handOverMpiCommands(argc, argv);
#endif
#ifdef KAIROS_WITH_MPI
    kairos::cli::installMpi(&argc, &argv);
#endif
    CLI::App app{"Kairos: latency analysis of LLM serving under deadlines (headless)"};
    app.set_version_flag("--version", std::string("kairos-cli ") + KAIROS_VERSION);
    app.require_subcommand(1);
    // A run configuration: options by their long names in a TOML file, under a section
    // per command ([simulate] policy = "sprpt_lp", param = ["C=0.8"], ...), read by CLI11.
    // Options on the command line win over the file. (CLI11 2.1 reads a configuration
    // only for the top-level app, so it is given before the command.)
    app.set_config("--config", "", "Read options from a TOML run configuration")
        ->check(CLI::Validator(
            [](std::string& path) -> std::string {
                // A regular file within the settings limit: CLI11 opens it with an
                // ifstream, which would wait on a FIFO and read a device without end.
                try {
                    kairos::requireRegularFile(path);
                    // Read once through the bounded reader (size, NUL bytes, line length);
                    // CLI11 then reads the same regular file.
                    (void)kairos::readInputFile(path, kairos::limits::kSettings);
                } catch (const kairos::InputError& e) {
                    return e.what();
                }
                return "";
            },
            "FILE", "CONFIG"));
    app.allow_config_extras(CLI::config_extras_mode::error);
    app.config_formatter(std::make_shared<CheckedToml>());
    kairos::cli::addSimulate(app);
    kairos::cli::addGenerate(app);
    kairos::cli::addBench(app);
    kairos::cli::addFitProfile(app);
    kairos::cli::addProfileCpu(app);
    kairos::cli::addProfiles(app);
    kairos::cli::addPolicies(app);
    kairos::cli::addMetrics(app);
    kairos::cli::addFormats(app);
    kairos::cli::addReproduce(app);
    kairos::cli::addDeriveProfile(app);
    kairos::cli::addReport(app);
    kairos::cli::addExplain(app);
#if KAIROS_HAVE_STORE
    kairos::cli::addRuns(app);
#endif
    kairos::cli::addSweep(app);
    kairos::cli::addCapacity(app);
    kairos::cli::addFit(app);
    kairos::cli::addLive(app);
#ifdef KAIROS_WITH_LIVE
    kairos::cli::installLive(app);
#endif
#ifdef KAIROS_LIVE_FORWARD
    // Listed in --help; never reached (handed to kairos-live above).
    for (const LiveCommand& c : kLiveCommands)
        if (c.about) app.add_subcommand(c.name, c.about)->allow_extras();
#endif
#ifdef KAIROS_WITH_REPORT
    kairos::cli::installReportWriter();
#endif
#ifdef KAIROS_REPORT_FORWARD
    kairos::cli::reportHandOver() = [argv] { handOverToReportProgram(argv); };
#endif
    // --max-memory on every command that does work: the budget its estimates are judged
    // against (util/memory.h), in place of the machine's available memory.
    {
        // The commands that estimate their work (run/memory_estimate.h and the checks beside
        // generate, bench, explain, fit ala and profile-cpu); a command that does not would
        // take the option and ignore it.
        const std::set<std::string> estimates = {"simulate", "report",   "sweep",      "capacity",
                                                 "generate", "bench",    "explain",    "ala",
                                                 "live",     "validate", "profile-cpu"};
        std::function<void(CLI::App*)> add = [&](CLI::App* a) {
            const auto subs = a->get_subcommands([](CLI::App*) { return true; });
            if (subs.empty() && estimates.count(a->get_name()) &&
                !a->get_option_no_throw("--max-memory"))
                a->add_option("--max-memory",
                              "The memory this command may use (4G, 512MiB, bytes): "
                              "work estimated to need more is refused before it "
                              "starts (default: what the machine has available, "
                              "within ulimit and cgroup limits)")
                    ->type_name("SIZE")
                    ->check(CLI::Validator(
                        [](std::string& v) -> std::string {
                            try {
                                kairos::setMaxMemory(kairos::parseMemorySize(v));
                            } catch (const std::invalid_argument& e) {
                                return e.what();
                            }
                            return "";
                        },
                        "SIZE", "MEMORY"));
            for (CLI::App* s : subs) add(s);
        };
        for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; })) add(s);
    }
    // One command per process: an output may not replace a file this process read.
    kairos::guardProcessInputs(true);
    // Every command's paths judged together before it runs (path_rules.h).
    app.parse_complete_callback([&app] { kairos::cli::checkCommandPaths(app); });
    // For the generated hostile suite (tests/core/tst_hostile.cpp): the option table.
    if (argc == 2 && std::strcmp(argv[1], "--option-table") == 0) {
        kairos::cli::printOptionTable(app, std::cout);
        return 0;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ConfigError& e) {
        // CLI11 names the key but not the file or line: say which configuration it was,
        // and find the key's line ("INI was not able to parse simulate.bogus").
        std::string file;
        if (auto* o = app.get_config_ptr(); o && o->count()) file = o->as<std::string>();
        const std::string what = e.what();
        if (what.rfind("line ", 0) == 0) { // ours (CheckedToml): "line N: ..."
            const auto colon = what.find(':');
            std::fprintf(stderr, "kairos-cli: error: %s:%s:%s\n", file.c_str(),
                         what.substr(5, colon - 5).c_str(), what.substr(colon + 1).c_str());
            return 2;
        }
        const auto sp = what.find_last_of(' ');
        const std::string dotted = sp == std::string::npos ? what : what.substr(sp + 1);
        const std::string key = dotted.substr(dotted.find_last_of('.') + 1);
        long line = 0;
        if (!file.empty() && !key.empty()) {
            std::istringstream in;
            try {
                in.str(kairos::readInputFile(file, kairos::limits::kSettings));
            } catch (const kairos::InputError&) {
                // The key's line is a courtesy: the error below names the key without it.
            }
            std::string l;
            for (long n = 1; std::getline(in, l); ++n) {
                const auto k = l.find_first_not_of(" \t");
                if (k != std::string::npos && l.compare(k, key.size(), key) == 0 &&
                    l.find('=', k + key.size()) != std::string::npos &&
                    l.find_first_not_of(" \t", k + key.size()) == l.find('=', k + key.size())) {
                    line = n;
                    break;
                }
            }
        }
        std::fprintf(stderr,
                     "kairos-cli: error: %s:%ld: field '%s': %s (a key names an option of the "
                     "command in its section, e.g. [simulate] policy = \"fcfs\")\n",
                     file.c_str(), line, dotted.c_str(), what.c_str());
        return 2;
    } catch (const kairos::cli::ExitCode& e) {
        return e.code;
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // A mistake in the command line: exit 2 like every user mistake (CLI11's own codes
        // are 101 to 120), naming what CLI11 found and where the options are listed.
        std::fprintf(stderr,
                     "kairos-cli: error: %s (kairos-cli COMMAND --help lists the options)\n",
                     safe(e.what()).c_str());
        return 2;
    } catch (const kairos::InputError& e) {
        std::fprintf(stderr, "kairos-cli: error: %s\n", safe(e.what()).c_str());
        return 2;
    } catch (const kairos::store::StoreError& e) {
        std::fprintf(stderr, "kairos-cli: error: %s\n", safe(e.what()).c_str());
        return 2;
    } catch (const kairos::SchedulerLoop& e) {
        std::fprintf(stderr, "kairos-cli: error: %s\n", safe(e.what()).c_str());
        return 2;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "kairos-cli: error: %s\n", safe(e.what()).c_str());
        return 2;
    } catch (const std::bad_alloc&) {
        // Work is estimated and refused before it starts (util/memory.h); this is the last
        // line for what no estimate foresaw (another program taking the memory meanwhile).
        // Every output is written whole or not at all, so nothing half-written remains.
        const kairos::MemoryBudget b = kairos::memoryBudget();
        std::fprintf(stderr,
                     "kairos-cli: error: out of memory (%s available now, %s): nothing was "
                     "written; give the command less work (--limit, fewer replicas or "
                     "--threads)\n",
                     kairos::bytesText(b.bytes).c_str(), b.source.c_str());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kairos-cli: internal error: %s\n", safe(e.what()).c_str());
        return 3;
    }
    return 0;
}
} // namespace
