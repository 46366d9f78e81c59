#include "workload/json_line.h"

#include "model/input_error.h"

namespace kairos {

nlohmann::json parseJsonObjectLine(const std::string& line, const std::string& file, long lineno) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(file, lineno, "", std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw InputError(file, lineno, "", "expected a JSON object");
    return j;
}

} // namespace kairos
