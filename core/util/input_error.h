#pragma once
// The one error type for bad input: it names the file, the line (1-based; 0 when the
// whole file is at fault) and the field, so a user can go straight to the mistake.
#include <stdexcept>
#include <string>

namespace kairos {

class InputError : public std::runtime_error {
public:
    InputError(std::string file, long line, std::string field, const std::string& message);
    const std::string& file() const { return file_; }
    long line() const { return line_; }
    const std::string& field() const { return field_; }
    const std::string& message() const { return message_; }

private:
    std::string file_;
    long line_;
    std::string field_;
    std::string message_;
};

} // namespace kairos
