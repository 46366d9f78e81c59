#pragma once
// Compact field types for Request (model/request.h), which a million-request workload holds
// a million of: the rare parts of a request (its class, TUF, budget, robot plan, prefix
// spans) cost 8 bytes or less each when absent, where std::string, std::optional and
// std::vector cost 32, 16-32 and 24. With them a Request is 64 bytes (was 160).
//
// Written here, not taken from a library: Debian's Boost.Flyweight would intern strings
// (8 bytes, with reference counts on every copy), but the project has no Boost, and none of
// its libraries has an optional or a vector that is one pointer wide. Each type keeps the
// interface of the standard type it replaces, as far as Request's users need it, so code
// reads the same.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kairos {

// A short label interned in a process-wide table: 4 bytes, compared by index. Labels are
// never freed (a workload has a handful of classes; a hostile one with a distinct label
// per request stores each once, as a std::string per request did). Interning takes a
// lock; reading the text does not. At most 2^24 distinct labels (kMaxRequests), past which
// construction throws std::length_error.
class ClassLabel {
public:
    ClassLabel() = default;
    ClassLabel(std::string_view s); // NOLINT(google-explicit-constructor): a string's stand-in
    ClassLabel(const std::string& s) : ClassLabel(std::string_view(s)) {} // NOLINT
    ClassLabel(const char* s) : ClassLabel(std::string_view(s)) {}        // NOLINT

    const std::string& str() const;
    operator const std::string&() const { return str(); } // NOLINT
    bool empty() const { return idx_ == 0; }
    void assign(std::string_view s) { *this = ClassLabel(s); }

    friend bool operator==(const ClassLabel& a, const ClassLabel& b) { return a.idx_ == b.idx_; }
    friend bool operator!=(const ClassLabel& a, const ClassLabel& b) { return a.idx_ != b.idx_; }
    // Comparing with text does not intern it.
    friend bool operator==(const ClassLabel& a, std::string_view b) { return a.str() == b; }
    friend bool operator==(std::string_view a, const ClassLabel& b) { return b.str() == a; }
    friend bool operator==(const ClassLabel& a, const std::string& b) { return a.str() == b; }
    friend bool operator==(const std::string& a, const ClassLabel& b) { return b.str() == a; }
    friend bool operator==(const ClassLabel& a, const char* b) { return a.str() == b; }
    friend bool operator==(const char* a, const ClassLabel& b) { return b.str() == a; }
    friend bool operator!=(const ClassLabel& a, const char* b) { return a.str() != b; }
    friend bool operator!=(const ClassLabel& a, const std::string& b) { return a.str() != b; }
    // Text order (as the std::string it replaces), not interning order.
    friend bool operator<(const ClassLabel& a, const ClassLabel& b) { return a.str() < b.str(); }
    friend std::string operator+(const std::string& a, const ClassLabel& b) { return a + b.str(); }
    friend std::string operator+(const ClassLabel& a, const std::string& b) { return a.str() + b; }
    friend std::string operator+(const char* a, const ClassLabel& b) { return a + b.str(); }
    friend std::string operator+(const ClassLabel& a, const char* b) { return a.str() + b; }

private:
    std::uint32_t idx_ = 0; // 0: the empty label
};

// std::optional<T> held out of line: one pointer, allocated only when it has a value.
template <class T> class BoxedOptional {
public:
    BoxedOptional() = default;
    BoxedOptional(std::nullopt_t) {}                          // NOLINT
    BoxedOptional(const T& v) : p_(std::make_unique<T>(v)) {} // NOLINT
    BoxedOptional(const std::optional<T>& o) {
        if (o) p_ = std::make_unique<T>(*o);
    } // NOLINT
    BoxedOptional(const BoxedOptional& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
    BoxedOptional(BoxedOptional&&) noexcept = default;
    BoxedOptional& operator=(const BoxedOptional& o) {
        if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
        return *this;
    }
    BoxedOptional& operator=(BoxedOptional&&) noexcept = default;
    BoxedOptional& operator=(std::nullopt_t) {
        p_.reset();
        return *this;
    }
    BoxedOptional& operator=(const T& v) {
        if (p_)
            *p_ = v;
        else
            p_ = std::make_unique<T>(v);
        return *this;
    }

    bool has_value() const { return p_ != nullptr; }
    explicit operator bool() const { return p_ != nullptr; }
    const T& operator*() const { return *p_; }
    T& operator*() { return *p_; }
    const T* operator->() const { return p_.get(); }
    T* operator->() { return p_.get(); }
    const T& value() const {
        if (!p_) throw std::bad_optional_access();
        return *p_;
    }
    T value_or(const T& d) const { return p_ ? *p_ : d; }
    void reset() { p_.reset(); }
    std::optional<T> get() const { return p_ ? std::optional<T>(*p_) : std::nullopt; }

    friend bool operator==(const BoxedOptional& a, const BoxedOptional& b) {
        return a.p_ && b.p_ ? *a.p_ == *b.p_ : a.p_ == b.p_;
    }
    friend bool operator!=(const BoxedOptional& a, const BoxedOptional& b) { return !(a == b); }

private:
    std::unique_ptr<T> p_;
};

// std::optional<double> in one double: NaN stands for "no value". Every reader refuses a
// NaN where a value is given (a budget must be finite and positive), so nothing a file can
// say is lost; assigning NaN empties it.
class OptionalSeconds {
public:
    OptionalSeconds() = default;
    OptionalSeconds(std::nullopt_t) {}                                      // NOLINT
    OptionalSeconds(double v) : v_(v) {}                                    // NOLINT
    OptionalSeconds(const std::optional<double>& o) : v_(o ? *o : kNone) {} // NOLINT
    OptionalSeconds& operator=(std::nullopt_t) {
        v_ = kNone;
        return *this;
    }
    OptionalSeconds& operator=(double v) {
        v_ = v;
        return *this;
    }
    OptionalSeconds& operator=(const std::optional<double>& o) {
        v_ = o ? *o : kNone;
        return *this;
    }

    bool has_value() const { return !std::isnan(v_); }
    explicit operator bool() const { return has_value(); }
    double operator*() const { return v_; }
    double value() const {
        if (!has_value()) throw std::bad_optional_access();
        return v_;
    }
    double value_or(double d) const { return has_value() ? v_ : d; }
    void reset() { v_ = kNone; }
    std::optional<double> get() const {
        return has_value() ? std::optional<double>(v_) : std::nullopt;
    }

    // Two empty ones are equal (NaN != NaN would say otherwise).
    friend bool operator==(const OptionalSeconds& a, const OptionalSeconds& b) {
        return a.has_value() == b.has_value() && (!a.has_value() || a.v_ == b.v_);
    }
    friend bool operator!=(const OptionalSeconds& a, const OptionalSeconds& b) { return !(a == b); }

private:
    static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    double v_ = kNone;
};

// A std::vector<T> that is usually empty, held out of line: one pointer, allocated on the
// first element. Reads as a const std::vector<T>&; the mutators Request's users need
// forward to the vector.
template <class T> class RareVector {
public:
    using value_type = T;
    using const_iterator = typename std::vector<T>::const_iterator;
    using iterator = typename std::vector<T>::iterator;

    RareVector() = default;
    RareVector(std::vector<T> v) { *this = std::move(v); } // NOLINT
    RareVector(std::initializer_list<T> l) : RareVector(std::vector<T>(l)) {}
    RareVector(const RareVector& o)
        : p_(o.p_ ? std::make_unique<std::vector<T>>(*o.p_) : nullptr) {}
    RareVector(RareVector&&) noexcept = default;
    RareVector& operator=(const RareVector& o) {
        if (this != &o) p_ = o.p_ ? std::make_unique<std::vector<T>>(*o.p_) : nullptr;
        return *this;
    }
    RareVector& operator=(RareVector&&) noexcept = default;
    RareVector& operator=(std::initializer_list<T> l) { return *this = std::vector<T>(l); }
    RareVector& operator=(std::vector<T> v) {
        if (v.empty())
            p_.reset();
        else if (p_)
            *p_ = std::move(v);
        else
            p_ = std::make_unique<std::vector<T>>(std::move(v));
        return *this;
    }

    const std::vector<T>& get() const { return p_ ? *p_ : none(); }
    operator const std::vector<T>&() const { return get(); } // NOLINT
    // The vector itself, created if absent (for edits the forwarders below do not cover).
    std::vector<T>& edit() {
        if (!p_) p_ = std::make_unique<std::vector<T>>();
        return *p_;
    }

    bool empty() const { return !p_ || p_->empty(); }
    std::size_t size() const { return p_ ? p_->size() : 0; }
    const_iterator begin() const { return get().begin(); }
    const_iterator end() const { return get().end(); }
    // Iterating an empty one allocates nothing (value-initialised iterators compare equal).
    iterator begin() { return p_ ? p_->begin() : iterator{}; }
    iterator end() { return p_ ? p_->end() : iterator{}; }
    const T& operator[](std::size_t i) const { return (*p_)[i]; }
    T& operator[](std::size_t i) { return (*p_)[i]; }
    const T& front() const { return p_->front(); }
    const T& back() const { return p_->back(); }
    T& front() { return p_->front(); }
    T& back() { return p_->back(); }
    const T* data() const { return p_ ? p_->data() : nullptr; }

    void push_back(const T& v) { edit().push_back(v); }
    template <class... A> T& emplace_back(A&&... a) {
        return edit().emplace_back(std::forward<A>(a)...);
    }
    void reserve(std::size_t n) {
        if (n > 0) edit().reserve(n);
    }
    void clear() { p_.reset(); }
    void pop_back() { p_->pop_back(); }
    void resize(std::size_t n) {
        if (n == 0)
            p_.reset();
        else
            edit().resize(n);
    }
    template <class It> void assign(It first, It last) { *this = std::vector<T>(first, last); }

    friend bool operator==(const RareVector& a, const RareVector& b) { return a.get() == b.get(); }
    friend bool operator!=(const RareVector& a, const RareVector& b) { return !(a == b); }
    friend bool operator==(const RareVector& a, const std::vector<T>& b) { return a.get() == b; }
    friend bool operator==(const std::vector<T>& a, const RareVector& b) { return a == b.get(); }

private:
    static const std::vector<T>& none() {
        static const std::vector<T> empty;
        return empty;
    }
    std::unique_ptr<std::vector<T>> p_;
};

} // namespace kairos
