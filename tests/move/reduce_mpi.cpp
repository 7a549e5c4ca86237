// gdap_reduce_axes and gdap_reduce_scatter over MPI (reduce_check.hpp): mpirun -np 2 or 4.
// Rank 0 prints "reduce mpi: N ranks, F failures".
#include "mpi_main.hpp"
#include "reduce_check.hpp"

int main(int argc, char** argv) {
  return rank_runs::mpi_main(argc, argv, "reduce mpi", [](gdap_comm* comm, int64_t rank, int64_t nranks) {
    return reduce_test::Rank(comm, rank, nranks).run();
  });
}
