// gdap_reduce_axes and gdap_reduce_scatter over MPI (reduce_check.hpp): mpirun -np 2 or 4.
// Rank 0 prints "reduce mpi: N ranks, F failures".
#include "reduce_check.hpp"

#include <mpi.h>

#include <gdap/gdap_mpi.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  gdap_comm* comm = nullptr;
  long long failures = 0, total = 0;
  if (gdap_comm_from_mpi(&comm, MPI_Comm_c2f(MPI_COMM_WORLD)) != GDAP_SUCCESS) {
    std::fprintf(stderr, "rank %d: gdap_comm_from_mpi: %s\n", rank, gdap_last_error());
    failures = 1;
  } else {
    for (const std::string& f : reduce_test::Rank(comm, rank, nranks).run()) {
      if (failures < 40) std::fprintf(stderr, "%s\n", f.c_str());
      ++failures;
    }
    gdap_comm_destroy(comm);
  }
  MPI_Allreduce(&failures, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("reduce mpi: %d ranks, %lld failures\n", nranks, total);
  MPI_Finalize();
  return total == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
