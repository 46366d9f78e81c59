#include "util/input_error.h"

namespace kairos {
namespace {
std::string compose(const std::string& file, long line, const std::string& field,
                    const std::string& message) {
    std::string s = file.empty() ? std::string("<input>") : file;
    if (line > 0) s += ":" + std::to_string(line);
    s += ": ";
    if (!field.empty()) s += "field '" + field + "': ";
    return s + message;
}
} // namespace

InputError::InputError(std::string file, long line, std::string field, const std::string& message)
    : std::runtime_error(compose(file, line, field, message)), file_(std::move(file)), line_(line),
      field_(std::move(field)), message_(message) {}

} // namespace kairos
