// Gather, scatter, allgather and broadcast (collective_layouts.hpp) over MPI: run with mpirun -np
// 2 or 4. Every rank prints its failures; rank 0 prints "collectives mpi: N ranks, F failures".
#include "collective_layouts.hpp"
#include "mpi_main.hpp"

int main(int argc, char** argv) {
  return rank_runs::mpi_main(argc, argv, "collectives mpi", [](gdap_comm* comm, int64_t rank, int64_t nranks) {
    return collectives_test::Rank(comm, rank, nranks).run_all();
  });
}
