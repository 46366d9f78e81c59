#pragma once
// The names of an enum's values, as one table per enum: the name of a value and the value
// of a name from the same rows, so the two cannot drift apart. Hand-written: C++17 has no
// reflection and magic_enum (which reads compiler-specific function signatures) is not a
// Debian 12 package; a table is also the only place a value's spelling in files is stated.
//
//     constexpr EnumName<Verdict> kVerdictNames[] = {{Verdict::Agrees, "agrees"}, ...};
//     const char* verdictName(Verdict v) { return enumName(kVerdictNames, v); }
#include <cstddef>
#include <string_view>

namespace kairos {

template <class E> struct EnumName {
    E value;
    const char* name;
};

// The value's name; `unknown` for a value the table does not list.
template <class E, std::size_t N>
constexpr const char* enumName(const EnumName<E> (&table)[N], E value, const char* unknown = "?") {
    for (const EnumName<E>& row : table)
        if (row.value == value) return row.name;
    return unknown;
}

// The value named `name`; false (and `out` untouched) when no row has that name.
template <class E, std::size_t N>
bool enumFromName(const EnumName<E> (&table)[N], std::string_view name, E* out) {
    for (const EnumName<E>& row : table)
        if (name == row.name) {
            *out = row.value;
            return true;
        }
    return false;
}

} // namespace kairos
