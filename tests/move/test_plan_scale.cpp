// Planner at scale: 1,024 simulated ranks. Checks properties with exact expected values (every
// byte of the array accounted for once, each rank's peers and runs), not time; the planning
// times are printed for the performance record.
#include "move_layouts.hpp"

#include "plan/planner.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

namespace {

using gdap::plan::Part;
using gdap::plan::Planner;
namespace mt = move_test;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(PlanScale, BlockCyclic64To128On32x32RanksOf65536Squared) {
  // Source: 64 x 64 blocks dealt over a 32 x 32 grid; destination: 128 x 128 blocks. Along a
  // dimension, source coordinate s holds blocks s + 32m, which lie in destination blocks
  // s/2 + 16m: coordinates s/2 and s/2 + 16, 16 blocks of 64 each. So every rank exchanges
  // 1024 x 1024 elements with each of 4 ranks, in 16 x 16 blocks; it keeps its own share only
  // when both coordinates are 0 or 31.
  constexpr int64_t N = 65536, P = 32;
  const mt::Layout src{{mt::cyclic(N, P, 64), mt::cyclic(N, P, 64)}};
  const mt::Layout dst{{mt::cyclic(N, P, 128), mt::cyclic(N, P, 128)}};
  mt::MapHandle sm(src), dm(dst);
  ASSERT_NE(sm.map, nullptr);
  ASSERT_NE(dm.map, nullptr);

  auto t0 = std::chrono::steady_clock::now();
  const Planner planner(*sm.map, *dm.map);
  const double t_planner = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  const auto plan0 = planner.plan_rank(0);
  const double t_rank0 = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  const auto stats = planner.stats(8);
  const double t_stats = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  int64_t sum_send_bytes = 0;
  for (int64_t r = 0; r < 1024; ++r) {
    const auto plan = planner.plan_rank(r);
    const auto s = plan.stats(8);
    ASSERT_EQ(s, stats.ranks[static_cast<size_t>(r)]) << "rank " << r;  // one-rank plan == slice of the whole
    sum_send_bytes += s.send_bytes;
  }
  const double t_each = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  const auto all = planner.plan_all();
  const double t_all = seconds_since(t0);

  std::printf("[ plan ] 1,024 ranks (32x32), 65536^2 float64, block-cyclic 64 -> 128: planner %.3f ms, "
              "plan_rank(0) %.3f ms, stats (whole plan) %.3f ms, plan_rank x 1024 %.3f ms, plan_all %.3f ms\n",
              1e3 * t_planner, 1e3 * t_rank0, 1e3 * t_stats, 1e3 * t_each, 1e3 * t_all);

  constexpr int64_t kMessageElements = 1024 * 1024;
  EXPECT_EQ(stats.total.send_bytes + stats.total.local_bytes, N * N * 8);  // every byte moves once
  EXPECT_EQ(stats.total.recv_bytes, stats.total.send_bytes);
  EXPECT_EQ(sum_send_bytes, stats.total.send_bytes);
  EXPECT_EQ(stats.total.send_messages, 1024 * 4 - 4);
  EXPECT_EQ(stats.total.local_bytes, 4 * kMessageElements * 8);
  EXPECT_EQ(stats.max.send_messages, 4);
  EXPECT_EQ(stats.max.recv_messages, 4);
  for (int64_t r = 0; r < 1024; ++r) {
    const auto& s = stats.ranks[static_cast<size_t>(r)];
    const int64_t a = r / P, b = r % P;
    const bool keeps = (a == 0 || a == P - 1) && (b == 0 || b == P - 1);
    EXPECT_EQ(s.send_messages, keeps ? 3 : 4) << "rank " << r;
    EXPECT_EQ(s.recv_messages, keeps ? 3 : 4) << "rank " << r;
    EXPECT_EQ(s.send_bytes + s.local_bytes, (N / P) * (N / P) * 8) << "rank " << r;
    EXPECT_EQ(s.recv_bytes + s.local_bytes, (N / P) * (N / P) * 8) << "rank " << r;
  }
  ASSERT_EQ(plan0.messages(Part::send).size(), 3u);  // rank 0 keeps its own share
  ASSERT_EQ(plan0.messages(Part::local).size(), 1u);
  for (const auto& m : plan0.messages(Part::send)) {
    EXPECT_EQ(m.elements, kMessageElements);
    EXPECT_EQ(m.blocks, 16 * 16);
    EXPECT_EQ(m.runs, 1024 * 16);  // each of 1024 rows is 16 pieces of 64 in both buffers
    EXPECT_EQ(plan0.segments(Part::send, m, 1).size(), 16u);
  }
  EXPECT_EQ(plan0.messages(Part::send)[0].peer, 16);      // coordinates (0, 16)
  EXPECT_EQ(plan0.messages(Part::send)[2].peer, 16 * 32 + 16);
  ASSERT_EQ(all.size(), 1024u);
  EXPECT_EQ(all[517].stats(8), stats.ranks[517]);
}

TEST(PlanScale, BlockToCyclicOn1024RanksIsAllToAll) {
  // 1-d, 2^20 float32 elements: block (1024 per rank) -> cyclic: rank s sends element 1024 s + d
  // to every rank d, so 1024 x 1023 one-element messages, each one run.
  constexpr int64_t N = int64_t{1} << 20, P = 1024;
  const mt::Layout src{{mt::block(N, P)}}, dst{{mt::cyclic(N, P, 1)}};
  mt::MapHandle sm(src), dm(dst);
  const Planner planner(*sm.map, *dm.map);
  auto t0 = std::chrono::steady_clock::now();
  const auto plan = planner.plan_rank(5);
  const double t_rank = seconds_since(t0);
  t0 = std::chrono::steady_clock::now();
  const auto stats = planner.stats(4);
  const double t_stats = seconds_since(t0);
  std::printf("[ plan ] 1,024 ranks, 1-d 2^20 float32, block -> cyclic (all-to-all): plan_rank(5) %.3f ms, "
              "stats (whole plan, 1,047,552 messages) %.3f ms\n", 1e3 * t_rank, 1e3 * t_stats);
  EXPECT_EQ(stats.total.send_messages, P * (P - 1));
  EXPECT_EQ(stats.total.send_bytes + stats.total.local_bytes, N * 4);
  EXPECT_EQ(stats.total.send_runs, P * (P - 1));
  EXPECT_EQ(plan.messages(Part::send).size(), static_cast<size_t>(P - 1));
  EXPECT_EQ(plan.messages(Part::recv).size(), static_cast<size_t>(P - 1));
  EXPECT_EQ(plan.stats(4), stats.ranks[5]);
  const auto& m = plan.messages(Part::recv)[6];  // from rank 7 (self excluded): element 1024 * 7 + 5
  EXPECT_EQ(m.peer, 7);
  EXPECT_EQ(plan.segments(Part::recv, m, 0)[0], (gdap::plan::Segment{7 * 1024 + 5, 1, 5, 7}));
}

}  // namespace
