#include "weights/safetensors.h"

#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_line.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kairos::safetensors {

namespace {

// The reference implementation refuses headers over 100 MB; so do we (a corrupt size
// field must not make us allocate gigabytes).
constexpr std::uint64_t kMaxHeader = 100'000'000;

struct DTypeRow {
    DType d;
    const char* name;
    std::size_t size;
};
constexpr DTypeRow kDTypes[] = {
    {DType::BOOL, "BOOL", 1}, {DType::U8, "U8", 1},           {DType::I8, "I8", 1},
    {DType::I16, "I16", 2},   {DType::U16, "U16", 2},         {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I32, "I32", 4},         {DType::U32, "U32", 4},
    {DType::F32, "F32", 4},   {DType::F64, "F64", 8},         {DType::I64, "I64", 8},
    {DType::U64, "U64", 8},   {DType::F8_E4M3, "F8_E4M3", 1}, {DType::F8_E5M2, "F8_E5M2", 1},
};

std::uint64_t readU64le(const std::byte* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
    return v;
}

[[noreturn]] void fail(const std::string& file, const std::string& field, const std::string& msg) {
    throw InputError(file, 0, field, msg);
}

} // namespace

const char* dtypeName(DType d) {
    for (const auto& r : kDTypes)
        if (r.d == d) return r.name;
    return "?";
}

std::size_t dtypeSize(DType d) {
    for (const auto& r : kDTypes)
        if (r.d == d) return r.size;
    return 0;
}

std::int64_t TensorInfo::numel() const {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
}

Header parseHeader(const std::byte* bytes, std::size_t size, std::uint64_t file_size,
                   const std::string& file) {
    file_size = std::max<std::uint64_t>(file_size, size);
    if (size < 8) fail(file, "header size", "file too short for a safetensors header (8 bytes)");
    const std::uint64_t n = readU64le(bytes);
    if (n > kMaxHeader)
        fail(file, "header size", "header of " + std::to_string(n) + " bytes (limit 100 MB)");
    if (n < 2 || 8 + n > file_size)
        fail(file, "header size",
             "header of " + std::to_string(n) + " bytes does not fit in a file of " +
                 std::to_string(file_size));
    if (8 + n > size) fail(file, "header size", "header not read completely");
    const char* text = reinterpret_cast<const char*>(bytes + 8);
    if (text[0] != '{') fail(file, "header", "the JSON header must start with '{'");

    // Duplicate names are an error in the format (nlohmann keeps the last one silently):
    // parseJsonDocument refuses a name given twice in any object of the header.
    nlohmann::json h;
    try {
        h = parseJsonDocument(std::string_view(text, std::size_t(n)), file);
    } catch (const InputError& e) {
        fail(file, e.field().empty() ? "header" : e.field(),
             e.field().empty() ? e.message() : "the name appears twice in the header");
    }
    if (!h.is_object()) fail(file, "header", "the JSON header must be an object");

    Header out;
    out.data_start = 8 + n;
    const std::uint64_t buffer = file_size - out.data_start;
    for (auto it = h.begin(); it != h.end(); ++it) {
        const std::string& name = it.key();
        const auto& v = it.value();
        if (name == "__metadata__") {
            if (!v.is_object()) fail(file, name, "must be an object of strings");
            for (auto m = v.begin(); m != v.end(); ++m) {
                if (!m.value().is_string())
                    fail(file, "__metadata__." + m.key(), "metadata values must be strings");
                out.metadata[m.key()] = m.value().get<std::string>();
            }
            continue;
        }
        if (!v.is_object()) fail(file, name, "a tensor entry must be an object");
        TensorInfo t;
        t.name = name;
        const auto dt = v.find("dtype");
        if (dt == v.end() || !dt->is_string())
            fail(file, name + ".dtype", "missing or not a string");
        const std::string dname = dt->get<std::string>();
        const auto row = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                                      [&](const DTypeRow& r) { return dname == r.name; });
        if (row == std::end(kDTypes)) fail(file, name + ".dtype", "unknown dtype '" + dname + "'");
        t.dtype = row->d;
        const auto sh = v.find("shape");
        if (sh == v.end() || !sh->is_array())
            fail(file, name + ".shape", "missing or not an array");
        // numel * size, saturated just past the buffer size (no overflow on any shape).
        const std::uint64_t cap = buffer + 1;
        std::uint64_t bytes_needed = row->size;
        bool empty = false;
        for (const auto& d : *sh) {
            if (!d.is_number_unsigned())
                fail(file, name + ".shape", "dimensions must be non-negative integers");
            const auto dim = d.get<std::uint64_t>();
            if (dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                fail(file, name + ".shape", "dimension too large");
            t.shape.push_back(static_cast<std::int64_t>(dim));
            if (dim == 0)
                empty = true;
            else
                bytes_needed = bytes_needed > cap / dim ? cap : bytes_needed * dim;
        }
        if (empty) bytes_needed = 0;
        const auto off = v.find("data_offsets");
        if (off == v.end() || !off->is_array() || off->size() != 2 ||
            !(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned())
            fail(file, name + ".data_offsets", "must be [begin, end] with non-negative integers");
        t.begin = (*off)[0].get<std::uint64_t>();
        t.end = (*off)[1].get<std::uint64_t>();
        if (t.begin > t.end) fail(file, name + ".data_offsets", "begin is after end");
        if (t.end > buffer)
            fail(file, name + ".data_offsets",
                 "ends at byte " + std::to_string(t.end) + " of a " + std::to_string(buffer) +
                     "-byte data buffer");
        if (bytes_needed != t.end - t.begin)
            fail(file, name + ".data_offsets",
                 std::to_string(t.end - t.begin) + " bytes do not hold a " + dname +
                     " tensor of that shape");
        out.tensors.push_back(std::move(t));
    }
    std::sort(out.tensors.begin(), out.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    std::uint64_t at = 0;
    for (const auto& t : out.tensors) {
        if (t.begin < at) fail(file, t.name + ".data_offsets", "overlaps another tensor's bytes");
        if (t.begin > at)
            fail(file, t.name + ".data_offsets",
                 "leaves a hole before it (bytes " + std::to_string(at) + ".." +
                     std::to_string(t.begin) + " belong to no tensor)");
        at = t.end;
    }
    if (at != buffer)
        fail(file, "data_offsets",
             "the tensors cover " + std::to_string(at) + " of the " + std::to_string(buffer) +
                 " bytes after the header");
    return out;
}

File::File(const std::string& path) : path_(path) {
    // Without waiting: a FIFO in place of the weights is refused below, never waited on.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) fail(path, "", std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        fail(path, "", "not a regular file");
    }
    map_size_ = static_cast<std::size_t>(st.st_size);
    if (map_size_ > 0) {
        map_ = ::mmap(nullptr, map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map_ == MAP_FAILED) {
            map_ = nullptr;
            ::close(fd);
            fail(path, "", std::string("cannot map: ") + std::strerror(errno));
        }
    }
    ::close(fd);
    try {
        header_ = parseHeader(static_cast<const std::byte*>(map_), map_size_, map_size_, path);
    } catch (...) {
        if (map_) ::munmap(map_, map_size_);
        map_ = nullptr;
        throw;
    }
    for (std::size_t i = 0; i < header_.tensors.size(); ++i) by_name_[header_.tensors[i].name] = i;
}

File::~File() {
    if (map_) ::munmap(map_, map_size_);
}

const TensorInfo* File::find(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &header_.tensors[it->second];
}

const std::byte* File::data(const TensorInfo& t) const {
    return static_cast<const std::byte*>(map_) + header_.data_start + t.begin;
}

Checkpoint::Checkpoint(const std::string& dir) : dir_(dir) {
    namespace fs = std::filesystem;
    const fs::path index = fs::path(dir) / "model.safetensors.index.json";
    const fs::path single = fs::path(dir) / "model.safetensors";
    std::map<std::string, std::string> weight_map; // tensor -> shard file name
    if (fs::exists(index)) {
        const std::string in = readInputFile(index.string(), limits::kSettings);
        nlohmann::json j;
        try {
            j = parseJsonDocument(in, index.string());
        } catch (const nlohmann::json::exception& e) {
            fail(index.string(), "", std::string("not valid JSON: ") + e.what());
        }
        const auto wm = j.find("weight_map");
        if (wm == j.end() || !wm->is_object())
            fail(index.string(), "weight_map", "missing or not an object");
        for (auto it = wm->begin(); it != wm->end(); ++it) {
            if (!it.value().is_string())
                fail(index.string(), "weight_map." + it.key(), "must name a shard file");
            const std::string shard = it.value().get<std::string>();
            if (shard.find('/') != std::string::npos || shard == "..")
                fail(index.string(), "weight_map." + it.key(),
                     "shard names a path outside the folder");
            weight_map[it.key()] = shard;
        }
    } else if (!fs::exists(single)) {
        fail(dir, "", "no model.safetensors or model.safetensors.index.json in the folder");
    }
    std::map<std::string, const File*> opened;
    const auto openShard = [&](const std::string& name) {
        auto it = opened.find(name);
        if (it != opened.end()) return it->second;
        files_.push_back(std::make_unique<File>((fs::path(dir) / name).string()));
        return opened[name] = files_.back().get();
    };
    if (weight_map.empty()) {
        const File* f = openShard("model.safetensors");
        for (const auto& t : f->header().tensors) entries_[t.name] = {f, &t};
        return;
    }
    for (const auto& [tensor, shard] : weight_map) {
        const File* f = openShard(shard);
        const TensorInfo* t = f->find(tensor);
        if (!t)
            fail(index.string(), "weight_map." + tensor,
                 "the shard " + shard + " has no tensor of that name");
        entries_[tensor] = {f, t};
    }
}

Checkpoint::Entry Checkpoint::get(const std::string& name) const {
    const auto it = entries_.find(name);
    if (it == entries_.end()) fail(dir_, name, "the checkpoint has no tensor of that name");
    return it->second;
}

std::vector<std::string> Checkpoint::names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.first);
    return out;
}

void write(const std::string& path, const std::vector<TensorBytes>& tensors,
           const std::map<std::string, std::string>& metadata) {
    nlohmann::ordered_json h = nlohmann::ordered_json::object();
    if (!metadata.empty()) h["__metadata__"] = metadata;
    std::uint64_t at = 0;
    for (const auto& t : tensors) {
        std::size_t expect = dtypeSize(t.dtype);
        for (auto s : t.shape) expect *= static_cast<std::size_t>(s);
        if (expect != t.nbytes) fail(path, t.name, "byte count does not match dtype and shape");
        h[t.name] = {{"dtype", dtypeName(t.dtype)},
                     {"shape", t.shape},
                     {"data_offsets", {at, at + t.nbytes}}};
        at += t.nbytes;
    }
    std::string text = h.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    writeFileAtomically(path, [&](std::ostream& out) {
        char len[8];
        std::uint64_t n = text.size();
        for (char& c : len) {
            c = static_cast<char>(n & 0xFF);
            n >>= 8;
        }
        out.write(len, 8);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        for (const auto& t : tensors)
            out.write(static_cast<const char*>(t.data), static_cast<std::streamsize>(t.nbytes));
    });
}

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000U) << 16;
    std::uint32_t exp = (h >> 10) & 0x1FU;
    std::uint32_t mant = h & 0x3FFU;
    std::uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { // subnormal: normalise
            exp = 127 - 15 + 1;
            while ((mant & 0x400U) == 0) {
                mant <<= 1;
                --exp;
            }
            mant &= 0x3FFU;
            bits = sign | (exp << 23) | (mant << 13);
        }
    } else if (exp == 0x1F) {
        bits = sign | 0x7F800000U | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

float bf16ToFloat(std::uint16_t b) {
    const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::uint16_t floatToBf16(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 0x7F800000U) == 0x7F800000U && (bits & 0x7FFFFFU))
        return static_cast<std::uint16_t>((bits >> 16) | 0x40U); // quiet NaN
    bits += 0x7FFFU + ((bits >> 16) & 1U);
    return static_cast<std::uint16_t>(bits >> 16);
}

std::uint16_t floatToHalf(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000U);
    const std::uint32_t abs = bits & 0x7FFFFFFFU;
    if (abs >= 0x7F800000U) // infinity or NaN
        return static_cast<std::uint16_t>(sign | 0x7C00U | (abs > 0x7F800000U ? 0x200U : 0U));
    if (abs >= 0x477FF000U) return static_cast<std::uint16_t>(sign | 0x7C00U); // rounds past 65504
    if (abs < 0x38800000U) {
        // Subnormal half (or zero): value / 2^-24 rounded to nearest even.
        if (abs < 0x33000000U) return sign; // below half the smallest subnormal
        const std::uint32_t mant = (abs & 0x7FFFFFU) | 0x800000U;
        const int shift = 126 - static_cast<int>(abs >> 23); // 14..24 for this range
        std::uint32_t v = mant >> shift;
        const std::uint32_t rem = mant & ((1U << shift) - 1U), halfway = 1U << (shift - 1);
        if (rem > halfway || (rem == halfway && (v & 1U))) ++v;
        return static_cast<std::uint16_t>(sign | v);
    }
    std::uint32_t v = abs - 0x38000000U; // rebias 127 -> 15
    v += 0xFFFU + ((v >> 13) & 1U);
    return static_cast<std::uint16_t>(sign | (v >> 13));
}

} // namespace kairos::safetensors
