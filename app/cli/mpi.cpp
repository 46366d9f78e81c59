// kairos-mpi: kairos-cli's commands with MPI, for sweeps past one machine
// (`mpirun -np N kairos-cli sweep ...`, or srun under Slurm: kairos-cli hands `sweep` to
// this program when it finds itself started by an MPI launcher). Jobs are dealt
// round-robin over the ranks (run/sweep.h); each rank sends its finished jobs to rank 0 as
// text lines with exact (hexadecimal) numbers, and rank 0 alone writes the table.
// Separate from kairos-cli so that every other command starts without loading MPI.
#include "commands.h"

#include <cstdlib>
#include <mpi.h>
#include <string>
#include <vector>

namespace kairos::cli {

namespace {
void finalize() {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
}
} // namespace

void installMpi(int* argc, char*** argv) {
    MPI_Init(argc, argv);
    std::atexit(finalize);
    Distribution& d = distribution();
    MPI_Comm_rank(MPI_COMM_WORLD, &d.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d.size);
    d.gather = [&d](const std::string& text) {
        const int n = static_cast<int>(text.size());
        std::vector<int> sizes(static_cast<std::size_t>(d.size), 0);
        MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
        std::vector<int> displs(sizes.size(), 0);
        long total = 0;
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            displs[i] = static_cast<int>(total);
            total += sizes[i];
        }
        std::vector<char> all(d.rank == 0 ? static_cast<std::size_t>(total) + 1 : 1);
        MPI_Gatherv(text.data(), n, MPI_CHAR, all.data(), sizes.data(), displs.data(), MPI_CHAR, 0,
                    MPI_COMM_WORLD);
        std::vector<std::string> parts;
        if (d.rank == 0)
            for (std::size_t i = 0; i < sizes.size(); ++i)
                parts.emplace_back(all.data() + displs[i], static_cast<std::size_t>(sizes[i]));
        return parts;
    };
    d.abort = [](int code) { MPI_Abort(MPI_COMM_WORLD, code); };
}

} // namespace kairos::cli
