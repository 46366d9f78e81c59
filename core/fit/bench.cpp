#include "fit/bench.h"

#include "util/input_error.h"
#include "util/input_file.h"
#include "util/text.h"

#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

namespace kairos::ala {

std::string BenchRow::group() const {
    return framework + " | " + model + " | " + hardware + " | " + precision;
}

std::vector<BenchRow> readBench(const std::string& path, bool need_throughput, bool average) {
    std::istringstream in(readInputFile(path, limits::kTable));
    const text::CsvHeader h(in, path);
    const auto cF = h.column("framework"), cM = h.column("model"), cH = h.column("hardware"),
               cP = h.column("precision"), cI = h.column("input_len"), cO = h.column("output_len"),
               cB = h.column("batch");
    const bool has_t = need_throughput || h.has("throughput");
    const auto cT = has_t ? h.column("throughput") : 0;
    // Repeated keys: averaged, in the order the keys first appear.
    std::map<std::tuple<std::string, std::string, std::string, std::string, int, int, int>,
             std::size_t>
        index;
    std::vector<BenchRow> out;
    std::vector<int> count;
    text::forCsvRows(in, path, h, 0, [&](const std::vector<std::string_view>& f, long lineno) {
        BenchRow r;
        // The four columns that name a configuration: an empty one would make a
        // configuration of its own ("vLLM |  | ...") that no model was measured as.
        auto name = [&](std::size_t c, const char* field) {
            if (f[c].empty())
                throw InputError(path, lineno, field,
                                 "empty: each row names its configuration (framework, model, "
                                 "hardware, precision)");
            return std::string(f[c]);
        };
        r.framework = name(cF, "framework");
        r.model = name(cM, "model");
        r.hardware = name(cH, "hardware");
        r.precision = name(cP, "precision");
        r.ii = text::needCount(f[cI], path, lineno, "input_len", 1);
        r.oo = text::needCount(f[cO], path, lineno, "output_len", 1);
        r.bb = text::needCount(f[cB], path, lineno, "batch", 1);
        if (has_t && (need_throughput || !text::trim(f[cT]).empty())) {
            r.thpt = text::needDouble(f[cT], path, lineno, "throughput");
            if (!(r.thpt > 0)) throw InputError(path, lineno, "throughput", "must be > 0");
            if (r.thpt > kMaxThroughput)
                throw InputError(path, lineno, "throughput",
                                 "above 1e6 tokens/s, the largest throughput a fit can reach");
        }
        if (!average) {
            out.push_back(r);
            return;
        }
        const auto key =
            std::make_tuple(r.framework, r.model, r.hardware, r.precision, r.ii, r.oo, r.bb);
        const auto it = index.find(key);
        if (it == index.end()) {
            index.emplace(key, out.size());
            out.push_back(r);
            count.push_back(1);
        } else { // running mean
            const std::size_t i = it->second;
            ++count[i];
            out[i].thpt += (r.thpt - out[i].thpt) / count[i];
        }
    });
    if (out.empty()) throw InputError(path, 0, "", "no rows");
    return out;
}

} // namespace kairos::ala
