#include "export/requests_csv.h"

#include "export/request_columns.h"
#include "metrics/request_metrics.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/text.h"

#include <cmath>
#include <cstdio>
#include <fstream>

namespace kairos {

void writeRequestsCsv(const RunLog& log, const Workload* w, std::ostream& out) {
    const std::vector<RequestMetrics> metrics = perRequest(log);
    const RequestColumns table(log, metrics, w);
    const auto& cols = table.columns();
    for (std::size_t c = 0; c < cols.size(); ++c) out << (c ? "," : "") << cols[c].name;
    out << '\n';
    for (std::size_t i = 0; i < table.rows(); ++i) {
        for (std::size_t c = 0; c < cols.size(); ++c) {
            if (c) out << ',';
            const std::string cell = table.text(i, c);
            out << (cols[c].kind == RequestColumns::Kind::Text && !cell.empty()
                        ? text::csvField(cell)
                        : cell);
        }
        out << '\n';
    }
}

void writeRequestsCsvFile(const RunLog& log, const Workload* w, const std::string& path) {
    writeFileAtomically(path, [&](std::ostream& out) { writeRequestsCsv(log, w, out); });
}

} // namespace kairos
