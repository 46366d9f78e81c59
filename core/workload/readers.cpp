#include "workload/readers.h"

#include "util/input_error.h"
#include "util/input_file.h"
#include "util/memory.h"
#include "util/text.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kairos {

bool parseTraceFormat(std::string_view name, const TraceFormat** out) {
    *out = name == "auto" ? nullptr : findTraceFormat(name);
    return name == "auto" || *out;
}

namespace {

// The file's bytes served to the readers in 64 KiB pieces; at each piece the progress is
// published and the cancel flag checked. (A streambuf: every reader takes an istream, so
// none of them needs to know.)
class ProgressBuf : public std::streambuf {
public:
    ProgressBuf(std::string data, std::atomic<double>* progress, const std::atomic<bool>* cancel)
        : data_(std::move(data)), progress_(progress), cancel_(cancel) {}

protected:
    int_type underflow() override {
        if (gptr() && gptr() < egptr()) return traits_type::to_int_type(*gptr());
        const std::size_t at = gptr() ? std::size_t(gptr() - data_.data()) : 0;
        if (cancel_ && cancel_->load()) throw ReadCancelled();
        if (progress_) progress_->store(data_.empty() ? 1.0 : double(at) / double(data_.size()));
        if (at >= data_.size()) return traits_type::eof();
        char* b = data_.data() + at;
        setg(b, b, b + std::min<std::size_t>(kPiece, data_.size() - at));
        return traits_type::to_int_type(*gptr());
    }

private:
    static constexpr std::size_t kPiece = 64 * 1024;
    std::string data_;
    std::atomic<double>* progress_;
    const std::atomic<bool>* cancel_;
};

} // namespace

namespace {
// The format named by `all`'s first bytes (or `f` if already named); an empty file, or one
// whose format cannot be told, is an error naming it.
const TraceFormat* formatOf(const std::string& all, const TraceFormat* f, const std::string& name) {
    const auto first = all.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    if (first == std::string::npos) throw InputError(name, 0, "", "empty file");
    if (f) return f;
    f = detectTraceFormat(std::string_view(all).substr(first, 4096));
    if (!f) {
        // Kairos's own rows without their header: said, since that is nearly always why (an
        // outside test's headerless file was told only "unknown trace format").
        const std::string_view line =
            std::string_view(all).substr(first, all.find('\n', first) - first);
        const bool rows =
            line.front() == '{' && line.find("\"arrival\"") != line.npos &&
            (line.find("\"prompt\"") != line.npos || line.find("\"output\"") != line.npos);
        throw InputError(
            name, 1, "",
            "unknown trace format; name it with --format (" + traceFormatNames() +
                "; kairos-cli formats describes them)" +
                (rows ? std::string("; rows of a Kairos trace follow its header line, such as "
                                    "{\"kairos_workload\":1}, which this file lacks")
                      : std::string()));
    }
    return f;
}
} // namespace

Workload readWorkload(std::istream& in, const std::string& name, const ReadOptions& opt) {
    const TraceFormat* f = opt.format;
    const bool watched = opt.progress || opt.cancel;
    if (!f || (watched && !dynamic_cast<ProgressBuf*>(in.rdbuf()))) {
        // Peek at the start of the file, then rewind the stream.
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        ReadOptions o = opt;
        o.format = formatOf(all, f, name);
        if (watched) {
            ProgressBuf buf(std::move(all), opt.progress, opt.cancel);
            std::istream again(&buf);
            again.exceptions(std::ios::badbit); // rethrow ReadCancelled, not swallow it
            return readWorkload(again, name, o);
        }
        std::istringstream again(std::move(all));
        return readWorkload(again, name, o);
    }
    Workload w = f->read(in, name, opt.limit);
    if (w.empty()) throw InputError(name, 0, "", "no requests in the file");
    if (w.size() > static_cast<std::size_t>(kMaxRequests))
        throw InputError(name, 0, "",
                         "holds " + std::to_string(w.size()) + " requests; a run takes at most " +
                             std::to_string(kMaxRequests) + " (--limit reads fewer)");
    w.meta["format"] = std::string(f->name);
    if (f->needs_arrivals || opt.override_arrivals) {
        try {
            assignArrivals(w, opt.arrivals);
        } catch (const std::invalid_argument& e) {
            throw InputError(name, 0, "--rate", e.what());
        }
        w.meta["arrival_rate"] = std::to_string(opt.arrivals.rate);
        w.meta["burstiness"] = std::to_string(opt.arrivals.burstiness);
        w.meta["arrival_seed"] = std::to_string(opt.arrivals.seed);
        w.sortByArrival();
    }
    return w;
}

Workload readWorkload(const std::string& path, const ReadOptions& opt) {
    // Bounded, never waiting on a FIFO, refused at the first NUL (util/input_file.h).
    std::string data = readInputFile(path, limits::kWorkload);
    {
        // Its requests as they will sit in memory, at most one a line, while the text is
        // still held (a vector that doubles: twice 64 bytes a request); and a long line's
        // parse: its JSON values (16 B each, and as much again for nlohmann to free them),
        // the prefix spans they become (a Mooncake line of 190,000 hash ids, 1.7 MB, took
        // 5 times its length; an allocation that fails while nlohmann frees a document
        // aborts the process, so this is judged before, not caught after).
        double need = 0;
        std::size_t lines = 0;
        const char* p = data.data();
        const char* end = p + data.size();
        while (p < end) {
            const char* nl = static_cast<const char*>(std::memchr(p, '\n', std::size_t(end - p)));
            const std::size_t len = std::size_t((nl ? nl : end) - p);
            need += 2.0 * sizeof(Request) + (len > 200 ? 5.0 * double(len - 200) : 0.0);
            ++lines;
            if (!nl) break;
            p = nl + 1;
        }
        checkMemoryNeed(need, "reading the " + std::to_string(lines) + " lines of " + path,
                        "give a smaller workload");
    }
    ReadOptions o = opt;
    o.format = formatOf(data, opt.format, path);
    ProgressBuf buf(std::move(data), opt.progress, opt.cancel);
    std::istream in(&buf);
    in.exceptions(std::ios::badbit); // rethrow ReadCancelled, not swallow it
    Workload w = readWorkload(in, path, o);
    // Name the workload after the file (without folders and extension) unless it has one.
    if (w.name.empty() || w.name == path) {
        auto base = path.substr(path.find_last_of('/') + 1);
        w.name = base.substr(0, base.find_last_of('.'));
    }
    return w;
}

} // namespace kairos
