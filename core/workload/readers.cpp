#include "workload/readers.h"

#include "model/input_error.h"
#include "workload/text.h"

#include <fstream>
#include <sstream>

namespace kairos {

const char* formatName(TraceFormat f) {
    switch (f) {
    case TraceFormat::Auto:
        return "auto";
    case TraceFormat::Kairos:
        return "kairos";
    case TraceFormat::Azure:
        return "azure";
    case TraceFormat::Mooncake:
        return "mooncake";
    case TraceFormat::Lengths:
        return "lengths";
    case TraceFormat::TimelyLlm:
        return "timelyllm";
    case TraceFormat::BurstGpt:
        return "burstgpt";
    }
    return "?";
}

bool formatFromName(const std::string& s, TraceFormat* out) {
    for (auto f :
         {TraceFormat::Auto, TraceFormat::Kairos, TraceFormat::Azure, TraceFormat::Mooncake,
          TraceFormat::Lengths, TraceFormat::BurstGpt, TraceFormat::TimelyLlm})
        if (s == formatName(f)) {
            *out = f;
            return true;
        }
    return false;
}

TraceFormat detectFormat(const std::string& head, const std::string& path) {
    const std::string_view h = text::trim(head);
    if (!h.empty() && h.front() == '[')
        return h.find("\"trigger time\"") != std::string_view::npos ? TraceFormat::TimelyLlm
                                                                    : TraceFormat::Auto;
    const std::string_view l = text::trim(h.substr(0, h.find('\n')));
    if (!l.empty() && l.front() == '{') {
        if (l.find("\"kairos_workload\"") != std::string_view::npos) return TraceFormat::Kairos;
        if (l.find("\"input_length\"") != std::string_view::npos) return TraceFormat::Mooncake;
        return TraceFormat::Auto;
    }
    if (l.find("ContextTokens") != std::string_view::npos &&
        l.find("GeneratedTokens") != std::string_view::npos)
        return TraceFormat::Azure;
    if (l.find("num_prefill_tokens") != std::string_view::npos) return TraceFormat::Lengths;
    if (l.find("Request tokens") != std::string_view::npos &&
        l.find("Response tokens") != std::string_view::npos)
        return TraceFormat::BurstGpt;
    (void)path;
    return TraceFormat::Auto;
}

Workload readWorkload(std::istream& in, const std::string& name, const ReadOptions& opt) {
    TraceFormat f = opt.format;
    if (f == TraceFormat::Auto) {
        // Peek at the start of the file, then rewind the stream.
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const auto first = all.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
        if (first == std::string::npos) throw InputError(name, 0, "", "empty file");
        const std::string_view body = std::string_view(all).substr(first);
        f = detectFormat(std::string(body.substr(0, 4096)), name);
        if (f == TraceFormat::Auto)
            throw InputError(name, 1, "",
                             "unknown trace format; name it with --format "
                             "(kairos, azure, mooncake, lengths, burstgpt, timelyllm)");
        std::istringstream again(std::move(all));
        ReadOptions o = opt;
        o.format = f;
        return readWorkload(again, name, o);
    }
    Workload w;
    switch (f) {
    case TraceFormat::Kairos:
        w = readKairos(in, name, opt.limit);
        break;
    case TraceFormat::Azure:
        w = readAzure(in, name, opt.limit);
        break;
    case TraceFormat::Mooncake:
        w = readMooncake(in, name, opt.limit);
        break;
    case TraceFormat::Lengths:
        w = readLengths(in, name, opt.limit);
        break;
    case TraceFormat::BurstGpt:
        w = readBurstGpt(in, name, opt.limit);
        break;
    case TraceFormat::TimelyLlm:
        w = readTimelyLlmFile(in, name, opt.limit);
        break;
    case TraceFormat::Auto:
        break;
    }
    if (w.empty()) throw InputError(name, 0, "", "no requests in the file");
    w.meta["format"] = formatName(f);
    if (f == TraceFormat::Lengths || opt.override_arrivals) {
        assignArrivals(w, opt.arrivals);
        w.meta["arrival_rate"] = std::to_string(opt.arrivals.rate);
        w.meta["burstiness"] = std::to_string(opt.arrivals.burstiness);
        w.meta["arrival_seed"] = std::to_string(opt.arrivals.seed);
        w.sortByArrival();
    }
    return w;
}

Workload readWorkload(const std::string& path, const ReadOptions& opt) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "", "cannot open file");
    Workload w = readWorkload(in, path, opt);
    // Name the workload after the file (without folders and extension) unless it has one.
    if (w.name.empty() || w.name == path) {
        auto base = path.substr(path.find_last_of('/') + 1);
        w.name = base.substr(0, base.find_last_of('.'));
    }
    return w;
}

} // namespace kairos
