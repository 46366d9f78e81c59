#pragma once
// One line of a JSONL file as a JSON object, or InputError naming the file and line.
// Every nlohmann error (syntax, a number out of range, bad UTF-8) becomes an InputError.
#include <nlohmann/json.hpp>
#include <string>

namespace kairos {

nlohmann::json parseJsonObjectLine(const std::string& line, const std::string& file, long lineno);

} // namespace kairos
