#pragma once
// Bounds every reader and generator enforces, an input error naming the field past them.
// Times (arrivals, budgets, robot execution, TUF times) stay within 1e9 s (31.7 years),
// where a double still resolves 0.12 us, so iteration ends always advance the clock; a
// prompt or an output stays within 1e8 tokens, so a context and its reservation stay
// inside 32-bit token counts. (Here, below the model, because the field parsers of
// util/text.h enforce them.)

namespace kairos {

constexpr double kMaxSeconds = 1e9;
constexpr int kMaxRequestTokens = 100000000;

} // namespace kairos
