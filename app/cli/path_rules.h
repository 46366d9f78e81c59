#pragma once
// What each option's value is to the file system, in one table for every command: read
// (an input), written (an output), the store (read and written in place), a name that may
// also be a file, or nothing. kairos-cli judges a command's paths by it before the command
// runs; the generated hostile suite reads it (kairos-cli --option-table).
#include <CLI/CLI.hpp>
#include <ostream>

namespace kairos::cli {

// Folder: a folder the command finds its input files in (reproduce and derive-profile's
// --data); each file it reads there is an input as much as one named on the command line.
enum class PathRole { None, Input, Output, Store, NameOrFile, Folder };

PathRole pathRole(const CLI::Option* o);

// The output rules (util/atomic_file.h) over the paths given to the parsed command:
// throws InputError naming the options (an empty path, an output that is an input or the
// file of another output).
void checkCommandPaths(const CLI::App& app);

// Every option of every command as JSON: command, name, flag, positional, required, type,
// multiple, role.
void printOptionTable(const CLI::App& app, std::ostream& os);

} // namespace kairos::cli
