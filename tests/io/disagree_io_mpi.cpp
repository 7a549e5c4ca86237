// Saves and loads whose ranks disagree (disagree_io.hpp), over MPI: run with mpiexec -n 2 or 4 and
// one argument, a folder every process names alike (made here, emptied and removed after). Rank 0
// prints "disagree io mpi: N ranks, F failures".
#include "io/disagree_io.hpp"
#include "move/mpi_main.hpp"

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: disagree_io_mpi FOLDER\n");
    return 2;
  }
  const disagree_io::fs::path root = argv[1];
  return rank_runs::mpi_main(argc, argv, "disagree io mpi", [&](gdap_comm* comm, int64_t rank, int64_t nranks) {
    if (rank == 0) {
      disagree_io::fs::remove_all(root);
      disagree_io::fs::create_directories(root);
    }
    gdap_comm_barrier(comm);
    std::vector<std::string> failures = disagree_io::Rank(comm, rank, nranks, root).run_all(true);
    gdap_comm_barrier(comm);
    if (rank == 0) disagree_io::fs::remove_all(root);
    return failures;
  });
}
