#pragma once
// Strict reading of one JSON object (a RunSpec's tables, an experiment file's): every key
// read is ticked off; what is left over at the end is an unknown key, an error naming it.
// Errors are InputError(where, 0, prefix + key): a TOML reader puts the line back from the
// key's path (tomlLine, run/run_spec.h).
#include "util/input_error.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kairos {

class ObjectReader {
public:
    using json = nlohmann::json;
    ObjectReader(const json& j, std::string where, std::string prefix)
        : j_(j), where_(std::move(where)), prefix_(std::move(prefix)) {
        if (!j_.is_object()) fail("", "must be a table/object");
    }
    [[noreturn]] void fail(const std::string& key, const std::string& msg) const {
        throw InputError(where_, 0, prefix_ + key, msg);
    }
    const json* find(const std::string& key) {
        seen_.push_back(key);
        auto it = j_.find(key);
        return it == j_.end() ? nullptr : &*it;
    }
    double number(const std::string& key, double dflt) {
        const json* v = find(key);
        if (!v) return dflt;
        if (v->is_null()) return std::numeric_limits<double>::infinity();
        if (v->is_string() && (v->get<std::string>() == "inf"))
            return std::numeric_limits<double>::infinity();
        if (!v->is_number()) fail(key, "must be a number");
        return v->get<double>();
    }
    std::int64_t integer(const std::string& key, std::int64_t dflt, std::int64_t lo,
                         std::int64_t hi) {
        const json* v = find(key);
        if (!v) return dflt;
        if (!v->is_number()) fail(key, "must be a whole number");
        const double d = v->get<double>();
        if (d != std::floor(d) || d < double(lo) || d > double(hi))
            fail(key, "must be a whole number in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
        return v->is_number_unsigned() ? std::int64_t(v->get<std::uint64_t>())
                                       : v->get<std::int64_t>();
    }
    std::uint64_t seed(const std::string& key, std::uint64_t dflt) {
        const json* v = find(key);
        if (!v) return dflt;
        if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<std::int64_t>() < 0))
            fail(key, "must be a whole number >= 0");
        return v->get<std::uint64_t>();
    }
    bool flag(const std::string& key, bool dflt) {
        const json* v = find(key);
        if (!v) return dflt;
        if (!v->is_boolean()) fail(key, "must be true or false");
        return v->get<bool>();
    }
    std::string text(const std::string& key, const std::string& dflt) {
        const json* v = find(key);
        if (!v) return dflt;
        if (!v->is_string()) fail(key, "must be a string");
        // "\u0000" is valid JSON, but a path (or name) with a NUL byte would be cut there
        // by the system: "a.jsonl\u0000x" would read a.jsonl.
        if (v->get_ref<const std::string&>().find('\0') != std::string::npos)
            fail(key, "holds a NUL byte (\\u0000): no path or name may");
        return v->get<std::string>();
    }
    std::vector<std::string> texts(const std::string& key) {
        const json* v = find(key);
        if (!v) return {};
        if (!v->is_array()) fail(key, "must be a list of strings");
        std::vector<std::string> out;
        for (const auto& e : *v) {
            if (!e.is_string()) fail(key, "must be a list of strings");
            out.push_back(e.get<std::string>());
        }
        return out;
    }
    std::vector<double> numbers(const std::string& key, std::vector<double> dflt) {
        const json* v = find(key);
        if (!v) return dflt;
        if (!v->is_array()) fail(key, "must be a list of numbers");
        std::vector<double> out;
        for (const auto& e : *v) {
            if (!e.is_number()) fail(key, "must be a list of numbers");
            out.push_back(e.get<double>());
        }
        return out;
    }
    // A sub-table, or an empty object when absent.
    const json& table(const std::string& key) {
        static const json empty = json::object();
        const json* v = find(key);
        if (!v) return empty;
        if (!v->is_object()) fail(key, "must be a table/object");
        return *v;
    }
    void finish() const {
        for (auto it = j_.begin(); it != j_.end(); ++it)
            if (std::find(seen_.begin(), seen_.end(), it.key()) == seen_.end())
                fail(it.key(), "unknown key");
    }
    const std::string& where() const { return where_; }

private:
    const nlohmann::json& j_;
    std::string where_, prefix_;
    std::vector<std::string> seen_;
};

} // namespace kairos
