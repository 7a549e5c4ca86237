// The main of an MPI table test (see rank_runs.hpp): runs `body` on every process of
// MPI_COMM_WORLD, prints each failure (the first 40 per rank) and, on rank 0,
// "<name>: N ranks, F failures", which ctest matches; exits non-zero if any rank failed.
#pragma once

#include "rank_runs.hpp"

#include <mpi.h>

#include <gdap/gdap_mpi.h>

#include <cstdio>
#include <cstdlib>

namespace rank_runs {

inline int mpi_main(int argc, char** argv, const char* name, const Body& body) {
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
    // Below ctest's 120 s: a rank stuck in one of gdap's waits fails with an error naming the call
    // and the rank it waits for, instead of a silent kill (the table runs in 3-5 s here).
    gdap_comm_set_timeout(comm, 100.0);
    for (const std::string& f : body(comm, rank, nranks)) {
      if (failures < 40) std::fprintf(stderr, "%s\n", f.c_str());
      ++failures;
    }
    gdap_comm_destroy(comm);
  }
  MPI_Allreduce(&failures, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d ranks, %lld failures\n", name, nranks, total);
  MPI_Finalize();
  return total == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

}  // namespace rank_runs
