// disagreeing_ranks.hpp's table over MPI (mpirun -np 2 and 4). Rank 0 prints
// "disagreeing mpi: N ranks, F failures", which ctest matches.
#include "disagreeing_ranks.hpp"
#include "mpi_main.hpp"

int main(int argc, char** argv) { return rank_runs::mpi_main(argc, argv, "disagreeing mpi", disagreeing::body); }
