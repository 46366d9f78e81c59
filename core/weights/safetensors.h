#pragma once
// The safetensors checkpoint format, read and written by hand against its specification
// (huggingface/safetensors, "Format"): an 8-byte little-endian header size N, N bytes of
// UTF-8 JSON {"__metadata__": {str: str}, NAME: {"dtype", "shape", "data_offsets":
// [begin, end]}, ...} and then the byte buffer, offsets relative to its start. The
// reference implementation is a Rust crate with Python bindings; no C++ library for it is
// packaged in Debian, and the format is small enough to check completely here: every
// rule the specification states is enforced (offsets inside the buffer, sizes matching
// dtype x shape, no overlaps, no holes, no duplicate names), each with an InputError that
// names the file and the tensor.
//
// Torch-free on purpose: the live engine (gpu/) turns these spans into tensors, and the
// core's fuzzers and tests can exercise the parser without libtorch.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kairos::safetensors {

enum class DType {
    BOOL,
    U8,
    I8,
    I16,
    U16,
    F16,
    BF16,
    I32,
    U32,
    F32,
    F64,
    I64,
    U64,
    F8_E4M3,
    F8_E5M2
};

const char* dtypeName(DType d);
std::size_t dtypeSize(DType d);

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0; // byte offsets in the data buffer
    std::uint64_t end = 0;
    std::int64_t numel() const;
};

struct Header {
    std::map<std::string, std::string> metadata;
    std::vector<TensorInfo> tensors; // in data order
    std::uint64_t data_start = 0;    // file offset of the buffer: 8 + N
};

// Parses and validates a whole file's bytes (or at least its header and, if
// `file_size` > size, checks offsets against the size of the whole file). Throws
// InputError naming `file`.
Header parseHeader(const std::byte* bytes, std::size_t size, std::uint64_t file_size,
                   const std::string& file);

// A file opened read-only and mapped into memory; tensor data stays on disk until touched.
class File {
public:
    explicit File(const std::string& path); // throws InputError
    ~File();
    File(const File&) = delete;
    File& operator=(const File&) = delete;

    const std::string& path() const { return path_; }
    const Header& header() const { return header_; }
    const TensorInfo* find(const std::string& name) const;
    // The tensor's bytes (little-endian, row-major), inside the mapping.
    const std::byte* data(const TensorInfo& t) const;

private:
    std::string path_;
    Header header_;
    std::map<std::string, std::size_t> by_name_;
    void* map_ = nullptr;
    std::size_t map_size_ = 0;
};

// A Hugging Face model directory: `model.safetensors`, or shards named by
// `model.safetensors.index.json`'s weight_map. Every tensor name maps to its shard.
class Checkpoint {
public:
    explicit Checkpoint(const std::string& dir); // throws InputError
    struct Entry {
        const File* file;
        const TensorInfo* info;
    };
    // Throws InputError naming the directory and tensor when absent.
    Entry get(const std::string& name) const;
    bool has(const std::string& name) const { return entries_.count(name) != 0; }
    std::vector<std::string> names() const;
    const std::string& dir() const { return dir_; }

private:
    std::string dir_;
    std::vector<std::unique_ptr<File>> files_;
    std::map<std::string, Entry> entries_;
};

// One tensor to write: its bytes are copied as given.
struct TensorBytes {
    std::string name;
    DType dtype;
    std::vector<std::int64_t> shape;
    const void* data;
    std::size_t nbytes;
};

// Writes a checkpoint atomically (PATH.tmp then rename), tensors in the given order, the
// header padded with spaces to a multiple of 8 bytes as the reference writer does.
void write(const std::string& path, const std::vector<TensorBytes>& tensors,
           const std::map<std::string, std::string>& metadata = {});

// IEEE half and bfloat16 to float (both exact).
float halfToFloat(std::uint16_t h);
float bf16ToFloat(std::uint16_t b);
std::uint16_t floatToBf16(float f); // round to nearest even
std::uint16_t floatToHalf(float f); // round to nearest even, overflow to infinity

} // namespace kairos::safetensors
