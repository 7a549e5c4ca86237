// Saves and loads whose ranks disagree (disagree_io.hpp), on the threads of an in-process group of
// 2 and 3 ranks: every rank refused at once, naming rank 1 and the argument; nothing written or read.
#include "io/disagree_io.hpp"
#include "move/rank_runs.hpp"

#include <gtest/gtest.h>

namespace {

void run_cases(int64_t nranks) {
  const disagree_io::fs::path root =
      disagree_io::fs::temp_directory_path() / ("gdap_disagree_io_" + std::to_string(getpid()) + "_" + std::to_string(nranks));
  disagree_io::fs::remove_all(root);
  disagree_io::fs::create_directories(root);
  const std::vector<std::string> failures = rank_runs::run_group(nranks, [&](gdap_comm* comm, int64_t rank, int64_t n) {
    return disagree_io::Rank(comm, rank, n, root).run_all(false);
  });
  for (const std::string& f : failures) ADD_FAILURE() << f;
  disagree_io::fs::remove_all(root);
}

TEST(DisagreeIo, TwoRanks) { run_cases(2); }
TEST(DisagreeIo, ThreeRanks) { run_cases(3); }

}  // namespace
