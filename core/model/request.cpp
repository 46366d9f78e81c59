#include "model/request.h"

#include <limits>

namespace kairos {

double Tuf::zeroTime() const {
    if (slope >= 0.0) return std::numeric_limits<double>::infinity();
    return ert - beta / slope; // slope*(t-ert)+beta = 0
}

bool Request::operator==(const Request& o) const {
    return id == o.id && arrival == o.arrival && prompt_tokens == o.prompt_tokens &&
           output_tokens == o.output_tokens && cls == o.cls && tuf == o.tuf &&
           budget_s == o.budget_s && segments == o.segments && agent == o.agent &&
           prefix == o.prefix;
}

} // namespace kairos
