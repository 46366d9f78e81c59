// The paths a command reads and writes, judged together before the command runs (the
// output rules of util/atomic_file.h), and the option table that the generated hostile
// suite (tests/core/tst_hostile.cpp) reads: every option of every command with its kind,
// its domain and, for a path, whether it is read or written.
#include "path_rules.h"

#include "store/store.h"
#include "util/atomic_file.h"
#include "util/input_error.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

namespace kairos::cli {

namespace {

const std::set<std::string>& outputNames() {
    static const std::set<std::string> s = {
        "--json", "--runlog", "--requests-csv", "--perfetto", "--save-spec",
        "--html", "--pdf",    "--csv",          "--out",      "--bench-csv"};
    return s;
}
const std::set<std::string>& inputNames() {
    static const std::set<std::string> s = {
        "--workload", "--spec",    "--config",       "--lengths", "--splitwise", "--measurements",
        "--predict",  "--weights", "--length-heads", "--data",    "runlog",      "--calibrate"};
    return s;
}
// A name or a file: an input only when the value names something on disk.
const std::set<std::string>& nameOrFileNames() {
    // --hardware: a profile's hardware name, or fit ala's table of accelerators or models;
    // paper: reproduce's paper, or an experiment file.
    static const std::set<std::string> s = {"--profile", "--decode-profile", "--quality",
                                            "--traces",  "--hardware",       "paper"};
    return s;
}

std::string longName(const CLI::Option* o) {
    if (!o->get_lnames().empty()) return "--" + o->get_lnames().front();
    if (o->get_positional()) return o->get_name();
    return o->get_name();
}

std::vector<std::string> valuesOf(const CLI::Option* o) {
    std::vector<std::string> out;
    for (const auto& r : o->results()) out.push_back(r);
    return out;
}

void collect(const CLI::App* app, std::vector<NamedPath>& in, std::vector<NamedPath>& out) {
    for (const CLI::Option* o : app->get_options()) {
        if (o->count() == 0) continue;
        const std::string name = longName(o);
#if KAIROS_HAVE_STORE
        if (name == "--store") in.push_back({"--store", store::Store::defaultPath()});
#endif
        const PathRole role = pathRole(o);
        if (role == PathRole::None) continue;
        for (const auto& v : valuesOf(o)) {
            if (role == PathRole::Output) {
                out.push_back({name, v});
            } else if (role == PathRole::Input || role == PathRole::Store ||
                       role == PathRole::Folder) {
                in.push_back({name, v});
            } else if (role == PathRole::NameOrFile) {
                std::error_code ec;
                if (!v.empty() && std::filesystem::exists(v, ec)) in.push_back({name, v});
            }
        }
    }
    for (const CLI::App* sub : app->get_subcommands()) collect(sub, in, out);
}

} // namespace

PathRole pathRole(const CLI::Option* o) {
    const std::string name = longName(o);
    if (o->get_expected_max() == 0 && !o->get_positional()) return PathRole::None; // a flag
    if (name == "--db") return PathRole::Store;
    // A folder of input files is typed FOLDER where it is declared (reproduce's --data).
    if (o->get_type_name() == "FOLDER") return PathRole::Folder;
    if (outputNames().count(name)) return PathRole::Output;
    if (inputNames().count(name)) return PathRole::Input;
    if (nameOrFileNames().count(name)) return PathRole::NameOrFile;
    return PathRole::None;
}

namespace {
// No option's value may hold a control character (an ESC would reach the terminal in every
// message and table that shows the value; a name, a label or a path has no use for one).
void checkControlCharacters(const CLI::App* app) {
    for (const CLI::Option* o : app->get_options())
        for (const auto& v : o->results())
            for (unsigned char c : v)
                if (c < 0x20 || c == 0x7f) {
                    char b[8];
                    std::snprintf(b, sizeof b, "\\x%02x", c);
                    throw InputError(longName(o), 0, "",
                                     std::string("the value holds a control character (") + b +
                                         "): not a name, number or path");
                }
    for (const CLI::App* sub : app->get_subcommands()) checkControlCharacters(sub);
}
} // namespace

void checkCommandPaths(const CLI::App& app) {
    checkControlCharacters(&app);
    std::vector<NamedPath> in, out;
    collect(&app, in, out);
    checkOutputRules(in, out);
}

void printOptionTable(const CLI::App& app, std::ostream& os) {
    nlohmann::json all = nlohmann::json::array();
    std::function<void(const CLI::App*, const std::string&)> walk = [&](const CLI::App* a,
                                                                        const std::string& cmd) {
        for (const CLI::Option* o : a->get_options()) {
            const std::string name = longName(o);
            if (name == "--help" || name == "--help-all" || name == "--version") continue;
            nlohmann::json j;
            j["command"] = cmd;
            j["name"] = name;
            j["flag"] = o->get_expected_max() == 0 && !o->get_positional();
            j["positional"] = o->get_positional();
            j["required"] = o->get_required();
            j["type"] = o->get_type_name();
            j["help"] = o->get_description();
            j["multiple"] = o->get_items_expected_max() > 1 || o->get_expected_max() > 1;
            const PathRole r = pathRole(o);
            j["role"] = r == PathRole::Output       ? "output"
                        : r == PathRole::Input      ? "input"
                        : r == PathRole::Store      ? "store"
                        : r == PathRole::NameOrFile ? "name-or-file"
                        : r == PathRole::Folder     ? "folder"
                                                    : "";
            all.push_back(j);
        }
        for (const CLI::App* sub :
             const_cast<CLI::App*>(a)->get_subcommands([](CLI::App*) { return true; }))
            walk(sub, cmd.empty() ? sub->get_name() : cmd + " " + sub->get_name());
    };
    walk(&app, "");
    os << all.dump(1) << "\n";
}

} // namespace kairos::cli
