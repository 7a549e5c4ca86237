// gdap_allreduce over MPI (allreduce_check.hpp): mpirun -np 2 or 4. Rank 0 prints
// "allreduce mpi: N ranks, F failures".
#include "allreduce_check.hpp"
#include "mpi_main.hpp"

int main(int argc, char** argv) {
  return rank_runs::mpi_main(argc, argv, "allreduce mpi", [](gdap_comm* comm, int64_t rank, int64_t nranks) {
    return allreduce_test::Rank(comm, rank, nranks).run();
  });
}
