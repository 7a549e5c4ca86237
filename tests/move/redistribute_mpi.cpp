// gdap_redistribute over MPI (run with mpirun -np 2 or 4): the table of redistribute_check.hpp
// for a group of MPI_Comm_size ranks, in each of the executor's exchange modes, element by
// element; then one rank's bad arguments (every rank fails, nothing moves) and global views no
// rank may accept (the same error on every rank).
//
// A plain program rather than gtest: an assertion that returned early on one rank would leave the
// others waiting in a collective. Each rank records its failures and keeps pace; at the end every
// rank prints its own, rank 0 a summary, and the exit code is non-zero if any rank failed.
#include "redistribute_check.hpp"

#include <mpi.h>

#include <gdap/gdap.h>
#include <gdap/gdap_mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

namespace rt = redist_test;

// A gdap communicator over the first `size` ranks of MPI_COMM_WORLD, for building a map that
// spans fewer ranks than the world; NULL on the other ranks, and on all when `size` is the whole
// world (whose communicator serves then). Collective over the world.
class FirstRanks {
 public:
  FirstRanks(int size, int rank, int nranks) {
    if (size == nranks) return;
    MPI_Comm_split(MPI_COMM_WORLD, rank < size ? 0 : MPI_UNDEFINED, rank, &mpi_);
    if (mpi_ != MPI_COMM_NULL && gdap_comm_from_mpi(&gdap_, MPI_Comm_c2f(mpi_)) != GDAP_SUCCESS) {
      std::fprintf(stderr, "rank %d: gdap_comm_from_mpi: %s\n", rank, gdap_last_error());
    }
  }
  ~FirstRanks() {
    gdap_comm_destroy(gdap_);  // frees gdap's duplicate: collective over these ranks
    if (mpi_ != MPI_COMM_NULL) MPI_Comm_free(&mpi_);
  }
  FirstRanks(const FirstRanks&) = delete;
  FirstRanks& operator=(const FirstRanks&) = delete;
  gdap_comm* get() const { return gdap_; }

 private:
  MPI_Comm mpi_ = MPI_COMM_NULL;
  gdap_comm* gdap_ = nullptr;
};

// The table once per exchange mode: each packs and addresses the sections differently.
int64_t run_table(gdap_comm* world, int rank, int nranks, rt::Report& report) {
  const std::vector<rt::Case> table = rt::cases(nranks);
  for (const char* mode : {"p2p", "alltoallv", "datatype"}) {
    setenv("GDAP_MPI_EXCHANGE", mode, 1);
    report.context = mode;
    for (size_t i = 0; i < table.size(); ++i) {
      const rt::Case& c = table[i];
      auto map_comm = [&](const rt::Layout& layout, const FirstRanks& own) {
        return layout.nranks() == nranks ? world : own.get();
      };
      const FirstRanks src_ranks(static_cast<int>(c.src.nranks()), rank, nranks),
          dst_ranks(static_cast<int>(c.dst.nranks()), rank, nranks);
      rt::run_case(c, i, rank, {world, map_comm(c.src, src_ranks), map_comm(c.dst, dst_ranks)}, report);
    }
  }
  unsetenv("GDAP_MPI_EXCHANGE");
  report.context.clear();
  return static_cast<int64_t>(table.size()) * 3;
}

// Rank 0's text, on every rank.
std::string rank0_text(const std::string& mine) {
  int length = static_cast<int>(mine.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string text = mine;
  text.resize(static_cast<size_t>(length));
  MPI_Bcast(text.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}

void run_refusals(gdap_comm* world, int rank, int nranks, rt::Report& report) {
  const int bad = nranks - 1;
  for (rt::Spoil spoil : rt::kSpoils) rt::run_refused(world, rank, nranks, spoil, bad, report);
  for (bool overlap : {true, false}) {
    const std::string text = rt::run_bad_view(world, rank, nranks, overlap, bad, report);
    if (text != rank0_text(text)) report.fail(rt::cat("bad view: rank ", rank, " says '", text, "', rank 0 otherwise"));
  }
  rt::run_unusable_view(world, rank, nranks, 0, report);
  // The refusals leave the communicator usable.
  rt::run_case(rt::cases(nranks)[0], 0, rank, {world, world, world}, report);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const auto start = std::chrono::steady_clock::now();
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  rt::Report report;
  gdap_comm* world = nullptr;
  int64_t cases = 0;
  if (gdap_comm_from_mpi(&world, MPI_Comm_c2f(MPI_COMM_WORLD)) != GDAP_SUCCESS) {
    report.fail(rt::cat("gdap_comm_from_mpi: ", gdap_last_error()));
  } else {
    cases = run_table(world, rank, nranks, report);
    run_refusals(world, rank, nranks, report);
    gdap_comm_destroy(world);
  }
  long long failures = static_cast<long long>(report.failures.size()) + report.dropped, total = 0;
  long long counts[2] = {report.moves, report.elements}, sums[2] = {};
  MPI_Allreduce(&failures, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(counts, sums, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (const std::string& f : report.failures) std::fprintf(stderr, "[rank %d] %s\n", rank, f.c_str());
  if (report.dropped > 0) {
    std::fprintf(stderr, "[rank %d] ... and %lld more\n", rank, static_cast<long long>(report.dropped));
  }
  if (rank == 0) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%d ranks: %lld cases (3 exchange modes), %lld redistributions, %lld elements checked, "
                "%lld failures, %.2f s\n",
                nranks, static_cast<long long>(cases), sums[0], sums[1], total, seconds);
  }
  MPI_Finalize();
  return total == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
