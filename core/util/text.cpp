#include "util/text.h"

#include "util/input_error.h"
#include "util/limits.h"

#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>

namespace kairos::text {

std::string_view trim(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '"')) ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r' || s[e - 1] == '"'))
        --e;
    return s.substr(b, e - b);
}

void split(std::string_view line, char sep, std::vector<std::string_view>& out) {
    out.clear();
    std::size_t start = 0;
    for (;;) {
        const std::size_t pos = line.find(sep, start);
        if (pos == std::string_view::npos) {
            out.push_back(trim(line.substr(start)));
            return;
        }
        out.push_back(trim(line.substr(start, pos - start)));
        start = pos + 1;
    }
}

void splitCsvRow(std::string& line, std::vector<std::string_view>& out, const std::string& file,
                 long lineno) {
    if (line.find('"') == std::string::npos) { // the common case: no quoting at all
        split(line, ',', out);
        return;
    }
    out.clear();
    // Fields are compacted in place: a quoted field's text is written at `w` (never past
    // the read position `r`), so the views below stay valid until the next call.
    std::vector<std::pair<std::size_t, std::size_t>> spans; // (start, length) in `line`
    const std::size_t n = line.size();
    std::size_t r = 0, w = 0;
    auto blank = [](char c) { return c == ' ' || c == '\t'; };
    for (;;) {
        while (r < n && blank(line[r])) ++r;
        const std::size_t start = w;
        if (r < n && line[r] == '"') {
            ++r;
            for (;;) {
                if (r >= n)
                    throw InputError(file, lineno, "",
                                     "a quote left open at the end of the line (a quoted field "
                                     "must end on its line)");
                if (line[r] == '"') {
                    if (r + 1 < n && line[r + 1] == '"') {
                        line[w++] = '"';
                        r += 2;
                        continue;
                    }
                    ++r;
                    break;
                }
                line[w++] = line[r++];
            }
            while (r < n && blank(line[r])) ++r;
            if (r < n && line[r] != ',')
                throw InputError(file, lineno, "",
                                 "text after a closing quote (field " +
                                     std::to_string(spans.size() + 1) + ")");
            spans.emplace_back(start, w - start);
        } else {
            while (r < n && line[r] != ',') {
                if (line[r] == '"')
                    throw InputError(file, lineno, "",
                                     "a quote inside an unquoted field (field " +
                                         std::to_string(spans.size() + 1) +
                                         "; quote the whole field and double the quote)");
                line[w++] = line[r++];
            }
            std::size_t len = w - start;
            while (len > 0 && blank(line[start + len - 1])) --len;
            spans.emplace_back(start, len);
        }
        if (r >= n) break;
        ++r; // the comma
        line[w++] = ',';
        if (r >= n) { // a trailing comma: one more, empty field
            spans.emplace_back(w, 0);
            break;
        }
    }
    line.resize(w);
    for (const auto& [at, len] : spans) out.push_back(std::string_view(line).substr(at, len));
}

bool parseInt64(std::string_view s, std::int64_t* out) {
    s = trim(s);
    if (s.empty()) return false;
    if (s.front() == '+') s.remove_prefix(1);
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, *out);
    if (ec == std::errc() && p == end) return true;
    // Accept integral values written as floats ("128.0"), as some exports do.
    double d;
    if (!parseDouble(s, &d) || d != std::floor(d) || std::fabs(d) > 9.0e15) return false;
    *out = static_cast<std::int64_t>(d);
    return true;
}

bool parseDouble(std::string_view s, double* out) {
    s = trim(s);
    if (s.empty()) return false;
    if (s.front() == '+') s.remove_prefix(1);
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, *out);
    return ec == std::errc() && p == end && std::isfinite(*out);
}

bool parseNumberStrict(std::string_view s, double* out) {
    if (s.empty() || s != trim(s)) return false;
    if (s.front() == '+') s.remove_prefix(1);
    const char* end = s.data() + s.size();
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), end, v, std::chars_format::general);
    if (ec != std::errc() || p != end || !std::isfinite(v)) return false;
    // "1e-400" reads as 0: a value the user did not give.
    if (v == 0) {
        const auto e = s.find_first_of("eE");
        const std::string_view mantissa = s.substr(0, e);
        if (mantissa.find_first_of("123456789") != std::string_view::npos) return false;
    }
    *out = v;
    return true;
}

namespace {
std::string shown(std::string_view s) {
    std::string v(s.substr(0, 40));
    if (s.size() > 40) v += "...";
    return "'" + v + "'";
}
} // namespace

std::int64_t needInt(std::string_view s, const std::string& file, long line, const char* field) {
    std::int64_t v;
    if (s.empty()) throw InputError(file, line, field, "empty");
    if (!parseInt64(s, &v)) throw InputError(file, line, field, "not a whole number: " + shown(s));
    return v;
}

double needDouble(std::string_view s, const std::string& file, long line, const char* field) {
    double v;
    if (s.empty()) throw InputError(file, line, field, "empty");
    if (!parseDouble(s, &v)) throw InputError(file, line, field, "not a number: " + shown(s));
    return v;
}

int needCount(std::string_view s, const std::string& file, long line, const char* field, int lo) {
    const std::int64_t v = needInt(s, file, line, field);
    if (v < lo)
        throw InputError(file, line, field,
                         "must be at least " + std::to_string(lo) + ", got " + std::to_string(v));
    if (v > std::numeric_limits<int>::max() / 4)
        throw InputError(file, line, field, "too large: " + std::to_string(v));
    return static_cast<int>(v);
}

int needTokens(std::string_view s, const std::string& file, long line, const char* field, int lo) {
    const int v = needCount(s, file, line, field, lo);
    if (v > kMaxRequestTokens)
        throw InputError(file, line, field,
                         "more than " + std::to_string(kMaxRequestTokens) +
                             " tokens: " + std::to_string(v));
    return v;
}

double needSeconds(std::string_view s, const std::string& file, long line, const char* field) {
    const double v = needDouble(s, file, line, field);
    if (v < 0) throw InputError(file, line, field, "must be >= 0");
    if (v > kMaxSeconds) throw InputError(file, line, field, "more than 1e9 s (31.7 years)");
    return v;
}

bool nextLine(std::istream& in, std::string& line) {
    if (!std::getline(in, line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
}

namespace {
// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil, public domain).
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool digits(std::string_view s, std::size_t pos, std::size_t n, int* out) {
    if (pos + n > s.size()) return false;
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}
} // namespace

bool parseTimestamp(std::string_view s, std::int64_t* whole, double* fraction) {
    s = trim(s);
    // YYYY-MM-DD[ T]HH:MM:SS[.fraction]
    int y, mo, d, h, mi, se;
    if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
        s[13] != ':' || s[16] != ':')
        return false;
    if (!digits(s, 0, 4, &y) || !digits(s, 5, 2, &mo) || !digits(s, 8, 2, &d) ||
        !digits(s, 11, 2, &h) || !digits(s, 14, 2, &mi) || !digits(s, 17, 2, &se))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return false;
    double frac = 0.0;
    std::size_t pos = 19;
    if (pos < s.size()) {
        if (s[pos] != '.') return false;
        double scale = 0.1;
        if (++pos == s.size()) return false;
        for (; pos < s.size(); ++pos) {
            if (s[pos] < '0' || s[pos] > '9') return false;
            frac += (s[pos] - '0') * scale;
            scale *= 0.1;
        }
    }
    const std::int64_t days = daysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
    *whole = days * 86400 + h * 3600 + mi * 60 + se;
    *fraction = frac;
    return true;
}

std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    auto hex = [&](unsigned char c) {
        static const char* d = "0123456789abcdef";
        out += "\\x";
        out += d[c >> 4];
        out += d[c & 15];
    };
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '\\') {
            out += "\\\\";
            ++i;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            hex(c);
            ++i;
            continue;
        }
        if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        // A UTF-8 sequence: its length from the lead byte, then continuation bytes; no
        // overlong forms, surrogates or code points past U+10FFFF; C1 controls escaped.
        std::size_t n = c >= 0xc2 && c <= 0xdf   ? 2
                        : c >= 0xe0 && c <= 0xef ? 3
                        : c >= 0xf0 && c <= 0xf4 ? 4
                                                 : 0;
        bool ok = n > 0 && i + n <= s.size();
        std::uint32_t cp = n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
        for (std::size_t k = 1; ok && k < n; ++k) {
            const auto b = static_cast<unsigned char>(s[i + k]);
            ok = (b & 0xc0) == 0x80;
            cp = (cp << 6) | (b & 0x3f);
        }
        if (ok)
            ok = !(n == 3 && cp < 0x800) && !(n == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
                 !(cp >= 0xd800 && cp <= 0xdfff) && !(cp >= 0x80 && cp <= 0x9f);
        if (!ok) {
            hex(c);
            ++i;
            continue;
        }
        out.append(s.substr(i, n));
        i += n;
    }
    return out;
}

namespace {
struct DurationUnit {
    const char* name;
    double seconds;
};
// The units a duration is written in, largest first (below the last: µs).
constexpr DurationUnit kUnits[] = {{"h", 3600}, {"min", 60}, {"s", 1}, {"ms", 1e-3}};
// The largest unit of which `a` (>= 0) is at least 1, after rounding to three digits.
DurationUnit durationUnit(double a) {
    for (const DurationUnit& c : kUnits)
        if (a >= c.seconds * (1 - 5e-4)) return c; // 0.99995 s is "1.00 s", not "1000 ms"
    return {"µs", 1e-6};
}
} // namespace

std::string duration(double seconds) {
    if (!std::isfinite(seconds)) return "–";
    if (seconds == 0) return "0 s";
    const DurationUnit u = durationUnit(std::fabs(seconds));
    const double v = seconds / u.seconds, av = std::fabs(v);
    const int decimals = av >= 99.95 ? 0 : av >= 9.995 ? 1 : 2;
    char b[48];
    std::snprintf(b, sizeof b, "%.*f %s", decimals, v, u.name);
    return b;
}

std::string durationTick(double seconds) {
    if (!std::isfinite(seconds)) return "–";
    if (seconds == 0) return "0";
    // A tick is a round number of some unit: the largest unit in which it is one exactly
    // (100 s reads "100 s", not "1.67 min"; 600 s "10 min"), else three digits of the
    // largest unit it is at least 1 of.
    char b[48];
    const DurationUnit first = durationUnit(std::fabs(seconds));
    bool below = false;
    for (const DurationUnit& u : kUnits) {
        below = below || u.seconds == first.seconds;
        if (!below) continue;
        const double v = seconds / u.seconds;
        std::snprintf(b, sizeof b, "%.4g", v); // four significant digits at most
        if (std::fabs(std::strtod(b, nullptr) - v) <= 1e-9 * std::fabs(v)) {
            if (std::fabs(v) < 1e15 && v == std::round(v))
                std::snprintf(b, sizeof b, "%.0f %s", v, u.name); // 10000, not 1e+04
            else
                std::snprintf(b, sizeof b, "%.4g %s", v, u.name);
            return b;
        }
    }
    std::snprintf(b, sizeof b, "%.3g %s", seconds / first.seconds, first.name);
    return b;
}

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string formatted(const char* fmt, ...) {
    std::va_list ap;
    va_start(ap, fmt);
    std::va_list again;
    va_copy(again, ap);
    const int n = std::vsnprintf(nullptr, 0, fmt, ap);
    va_end(ap);
    std::string out(n > 0 ? std::size_t(n) : 0, '\0');
    if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, again);
    va_end(again);
    return out;
}

} // namespace kairos::text
