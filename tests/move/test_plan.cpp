// Redistribution planner: every pair of layouts in the table (block, irregular, padded, periodic,
// cyclic, block-cyclic with partial blocks, unstructured with and without replicas; 1 to 3
// dimensions; different grids and rank counts) moves every owned element to the right place in a
// host simulation and leaves padding alone; a one-rank plan equals its slice of the whole plan;
// both ends of each message agree; counts match hand-computed values; bad pairs are refused.
#include "move_layouts.hpp"

#include "core/error.hpp"
#include "exchange/copy.hpp"
#include "exchange/program.hpp"
#include "plan/planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using gdap::plan::Part;
using gdap::plan::Planner;
using gdap::plan::RankPlan;
using gdap::plan::RankStats;
using move_test::Axis;
using move_test::Layout;
using move_test::MapHandle;
namespace mt = move_test;

struct Case {
  const char* name;
  Layout src;
  Layout dst;
};

// Unstructured axes with negative and unordered indices (the same six on both sides).
Axis scattered_src() { return mt::unstructured(6, {{3, 5, 1}, {4, 2, 0}}, true); }
Axis scattered_dst() { return mt::unstructured(6, {{0, 1}, {5, 4, 3, 2}}, true); }

std::vector<Case> cases() {
  return {
      // 1-d
      {"1d block(3) -> cyclic(4): different rank counts", {{mt::block(13, 3)}}, {{mt::cyclic(13, 4, 1)}}},
      {"1d irregular with an empty rank -> block-cyclic(2) with a partial block", {{mt::irregular(13, {5, 0, 8})}},
       {{mt::cyclic(13, 3, 2)}}},
      {"1d periodic padded -> block: halos are neither read nor written", {{mt::padded(13, {4, 5, 4}, 2, true, 1, 2)}},
       {{mt::block(13, 3)}}},
      {"1d block -> padded with boundary padding", {{mt::block(13, 3)}}, {{mt::padded(13, {4, 5, 4}, 1, false, 1, 2)}}},
      {"1d boundary-padded -> irregular", {{mt::padded(13, {4, 5, 4}, 1, false, 1, 2)}},
       {{mt::irregular(13, {1, 1, 11})}}},
      {"1d block-cyclic(4) -> block-cyclic(3) on fewer ranks", {{mt::cyclic(13, 3, 4)}}, {{mt::cyclic(13, 2, 3)}}},
      {"1d cyclic on one rank -> block: runs merge", {{mt::cyclic(13, 1, 2)}}, {{mt::block(13, 2)}}},
      {"1d unstructured unordered -> block", {{mt::shuffled(13, 3, 1, false)}}, {{mt::block(13, 2)}}},
      {"1d unstructured replicas: the lowest holder sends", {{mt::shuffled(13, 3, 2, true)}},
       {{mt::cyclic(13, 2, 2)}}},
      {"1d block -> unstructured replicas: every replica receives", {{mt::block(13, 2)}},
       {{mt::shuffled(13, 4, 3, true)}}},
      {"1d unstructured -> unstructured, other grid", {{mt::shuffled(13, 2, 4, false)}},
       {{mt::shuffled(13, 3, 5, true)}}},
      {"1d unstructured -> unstructured, indices scattered", {{scattered_src()}}, {{scattered_dst()}}},
      {"1d identical layouts: local copies only", {{mt::cyclic(13, 3, 2)}}, {{mt::cyclic(13, 3, 2)}}},
      {"1d one rank -> four (scatter)", {{mt::block(13, 1)}}, {{mt::block(13, 4)}}},
      {"1d four ranks -> one (gather)", {{mt::cyclic(13, 4, 1)}}, {{mt::block(13, 1)}}},
      {"1d empty dimension", {{mt::block(0, 2)}}, {{mt::cyclic(0, 3, 2)}}},
      // 2-d
      {"2d block 2x2 -> 1x4", {{mt::block(10, 2), mt::block(9, 2)}}, {{mt::block(10, 1), mt::block(9, 4)}}},
      {"2d block 1x4 -> 4x1", {{mt::block(10, 1), mt::block(9, 4)}}, {{mt::block(10, 4), mt::block(9, 1)}}},
      {"2d block 4x1 -> 1x1", {{mt::block(10, 4), mt::block(9, 1)}}, {{mt::block(10, 1), mt::block(9, 1)}}},
      {"2d 1x1 -> cyclic 2x2", {{mt::block(10, 1), mt::block(9, 1)}}, {{mt::cyclic(10, 2, 1), mt::cyclic(9, 2, 1)}}},
      {"2d rows -> columns", {{mt::block(10, 3), mt::block(9, 1)}}, {{mt::block(10, 1), mt::block(9, 3)}}},
      {"2d block-cyclic (3,2) -> (2,4) with partial blocks", {{mt::cyclic(10, 2, 3), mt::cyclic(9, 2, 2)}},
       {{mt::cyclic(10, 2, 2), mt::cyclic(9, 2, 4)}}},
      {"2d periodic padded 2x2 -> cyclic 1x4",
       {{mt::padded(10, {6, 4}, 2, true), mt::padded(9, {4, 5}, 1, true)}}, {{mt::block(10, 1), mt::cyclic(9, 4, 1)}}},
      {"2d irregular 3x1 -> block-cyclic 2x3 (6 ranks)", {{mt::irregular(10, {2, 7, 1}), mt::block(9, 1)}},
       {{mt::cyclic(10, 2, 2), mt::cyclic(9, 3, 2)}}},
      {"2d unstructured x block -> cyclic x unstructured replicas",
       {{mt::shuffled(10, 2, 6, false), mt::block(9, 2)}}, {{mt::cyclic(10, 3, 2), mt::shuffled(9, 1, 7, true)}}},
      {"2d padded rows -> padded columns", {{mt::padded(10, {3, 3, 4}, 1, false), mt::block(9, 1)}},
       {{mt::block(10, 1), mt::padded(9, {2, 3, 4}, 2, false, 1, 1)}}},
      // 3-d
      {"3d block 2x1x2 -> cyclic 1x2x2", {{mt::block(6, 2), mt::block(5, 1), mt::block(4, 2)}},
       {{mt::block(6, 1), mt::cyclic(5, 2, 1), mt::cyclic(4, 2, 1)}}},
      {"3d padded x cyclic x unstructured -> block",
       {{mt::padded(6, {2, 4}, 1, true), mt::cyclic(5, 2, 2), mt::shuffled(4, 2, 8, true)}},
       {{mt::block(6, 2), mt::block(5, 2), mt::block(4, 1)}}},
      {"3d block 2x2x2 -> 1x1x1", {{mt::block(6, 2), mt::block(5, 2), mt::block(4, 2)}},
       {{mt::block(6, 1), mt::block(5, 1), mt::block(4, 1)}}},
      {"3d 1x1x1 -> block-cyclic 3x1x2", {{mt::block(6, 1), mt::block(5, 1), mt::block(4, 1)}},
       {{mt::cyclic(6, 3, 1), mt::block(5, 1), mt::cyclic(4, 2, 3)}}},
  };
}

std::vector<RankPlan> one_by_one(const Planner& planner) {
  std::vector<RankPlan> plans;
  for (int64_t r = 0; r < planner.nranks(); ++r) plans.push_back(planner.plan_rank(r));
  return plans;
}

// Two rank plans hold the same messages with the same segments.
void expect_same_plan(const RankPlan& a, const RankPlan& b) {
  ASSERT_EQ(a.rank(), b.rank());
  for (Part part : {Part::send, Part::recv, Part::local}) {
    const auto ma = a.messages(part), mb = b.messages(part);
    ASSERT_EQ(ma.size(), mb.size()) << "rank " << a.rank() << ", part " << static_cast<int>(part);
    for (size_t k = 0; k < ma.size(); ++k) {
      EXPECT_EQ(ma[k].peer, mb[k].peer);
      EXPECT_EQ(ma[k].elements, mb[k].elements);
      EXPECT_EQ(ma[k].blocks, mb[k].blocks);
      EXPECT_EQ(ma[k].runs, mb[k].runs);
      EXPECT_EQ(ma[k].offset, mb[k].offset);
      for (int64_t i = 0; i < a.ndim(); ++i) {
        const auto sa = a.segments(part, ma[k], i), sb = b.segments(part, mb[k], i);
        EXPECT_TRUE(std::equal(sa.begin(), sa.end(), sb.begin(), sb.end())) << "dimension " << i;
      }
    }
  }
}

// Message r -> p as r sends it equals message r -> p as p receives it, dimension by dimension.
void expect_ends_agree(const std::vector<RankPlan>& plans) {
  for (const RankPlan& sender : plans) {
    for (const auto& m : sender.messages(Part::send)) {
      const RankPlan& receiver = plans[static_cast<size_t>(m.peer)];
      const auto recvs = receiver.messages(Part::recv);
      auto it = std::find_if(recvs.begin(), recvs.end(), [&](const auto& x) { return x.peer == sender.rank(); });
      ASSERT_NE(it, recvs.end()) << sender.rank() << " -> " << m.peer;
      EXPECT_EQ(it->elements, m.elements);
      EXPECT_EQ(it->blocks, m.blocks);
      EXPECT_EQ(it->runs, m.runs);
      for (int64_t i = 0; i < sender.ndim(); ++i) {
        const auto s = sender.segments(Part::send, m, i), r = receiver.segments(Part::recv, *it, i);
        EXPECT_TRUE(std::equal(s.begin(), s.end(), r.begin(), r.end())) << sender.rank() << " -> " << m.peer;
      }
    }
  }
}

class PlanCases : public ::testing::TestWithParam<size_t> {};

TEST_P(PlanCases, MovesEveryOwnedElementAndNothingElse) {
  const Case c = cases()[GetParam()];
  SCOPED_TRACE(c.name);
  MapHandle src(c.src), dst(c.dst);
  ASSERT_NE(src.map, nullptr);
  ASSERT_NE(dst.map, nullptr);
  const Planner planner(*src.map, *dst.map);
  const auto each = one_by_one(planner);
  const auto all = planner.plan_all();
  {
    SCOPED_TRACE("one-rank plans");
    mt::simulate(c.src, c.dst, each);
  }
  {
    SCOPED_TRACE("plan_all");
    mt::simulate(c.src, c.dst, all);
  }
  // A one-rank plan is the slice of the whole plan, and the whole counts are the rank counts.
  for (size_t r = 0; r < all.size(); ++r) expect_same_plan(each[r], all[r]);
  expect_ends_agree(each);
  const auto stats = planner.stats(8);
  RankStats sum;
  for (size_t r = 0; r < all.size(); ++r) {
    EXPECT_EQ(stats.ranks[r], each[r].stats(8)) << "rank " << r;
    sum.send_bytes += stats.ranks[r].send_bytes;
    sum.recv_bytes += stats.ranks[r].recv_bytes;
  }
  EXPECT_EQ(stats.total.send_bytes, sum.send_bytes);
  EXPECT_EQ(stats.total.send_messages, stats.total.recv_messages);
  EXPECT_EQ(stats.total.send_bytes, stats.total.recv_bytes);
  EXPECT_EQ(stats.total.send_runs, stats.total.recv_runs);
  // Every element a destination rank owns arrives exactly once (replicas each get their copy).
  int64_t owned = 0;
  for (int64_t r = 0; r < c.dst.nranks(); ++r) {
    int64_t n = 0;
    ASSERT_EQ(gdap_map_owned_count(&n, dst.map, r), GDAP_SUCCESS);
    EXPECT_EQ(stats.ranks[static_cast<size_t>(r)].recv_elements + stats.ranks[static_cast<size_t>(r)].local_elements, n)
        << "rank " << r;
    owned += n;
  }
  EXPECT_EQ(stats.total.recv_elements + stats.total.local_elements, owned);
}

INSTANTIATE_TEST_SUITE_P(Table, PlanCases, ::testing::Range<size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& param) {
                           std::string name = cases()[param.param].name;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return std::to_string(param.param) + "_" + name;
                         });

// Random pairs of layouts of one shape: 1-3 dimensions, each side of any type on its own grid.
Axis random_axis(std::mt19937_64& rng, int64_t size) {
  const int64_t P = 1 + static_cast<int64_t>(rng() % 3);
  std::vector<int64_t> counts(static_cast<size_t>(P), 0);
  for (int64_t k = 0; k < size; ++k) ++counts[rng() % static_cast<uint64_t>(P)];
  const int64_t min_count = *std::min_element(counts.begin(), counts.end());
  switch (rng() % 6) {
    case 0: return mt::irregular(size, counts);
    case 1: return mt::padded(size, counts, std::min<int64_t>(min_count, 1), false, counts[0] > 0 ? 1 : 0, 0);
    case 2: return size > 0 ? mt::padded(size, counts, std::min<int64_t>(min_count, 2), true) : mt::block(size, P);
    case 3: return mt::cyclic(size, P, 1 + static_cast<int64_t>(rng() % 4));
    case 4: return mt::shuffled(size, P, rng(), true);
    default: return mt::shuffled(size, P, rng(), false);
  }
}

TEST(PlanRandom, RandomPairsOfOneShapeMoveCorrectly) {
  std::mt19937_64 rng(20240611);
  for (int trial = 0; trial < 60; ++trial) {
    const int ndim = 1 + static_cast<int>(rng() % 3);
    Layout src, dst;
    for (int i = 0; i < ndim; ++i) {
      const int64_t size = static_cast<int64_t>(rng() % 8);
      src.axes.push_back(random_axis(rng, size));
      dst.axes.push_back(random_axis(rng, size));
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    MapHandle sm(src), dm(dst);
    ASSERT_NE(sm.map, nullptr) << gdap_last_error();
    ASSERT_NE(dm.map, nullptr) << gdap_last_error();
    const Planner planner(*sm.map, *dm.map);
    const auto each = one_by_one(planner);
    mt::simulate(src, dst, each);
    const auto all = planner.plan_all();
    for (size_t r = 0; r < all.size(); ++r) expect_same_plan(each[r], all[r]);
    expect_ends_agree(each);
    const auto stats = planner.stats(4);
    for (size_t r = 0; r < all.size(); ++r) EXPECT_EQ(stats.ranks[r], each[r].stats(4)) << "rank " << r;
  }
}

// ---- counts against hand-computed values ----

struct Planned {
  MapHandle src, dst;
  Planner planner;
  Planned(const Layout& s, const Layout& d) : src(s), dst(d), planner(*src.map, *dst.map) {}
};

TEST(PlanStats, TwoRanksRowsToColumnsOf4x4Float32) {
  // Rank 0 holds rows 0-1, rank 1 rows 2-3; afterwards rank 0 holds columns 0-1, rank 1 columns 2-3.
  // Each rank keeps a 2x2 quarter and sends a 2x2 quarter: 2 messages of 16 bytes; each quarter is
  // 2 runs (a row of 2 elements in both buffers, which are 4 and 2 wide).
  Planned p({{mt::block(4, 2), mt::block(4, 1)}}, {{mt::block(4, 1), mt::block(4, 2)}});
  const auto s = p.planner.stats(4);
  EXPECT_EQ(s.total.send_messages, 2);
  EXPECT_EQ(s.total.send_bytes, 32);
  EXPECT_EQ(s.total.local_bytes, 32);
  EXPECT_EQ(s.total.send_runs, 4);
  EXPECT_EQ(s.total.local_runs, 4);
  for (const auto& r : s.ranks) {
    EXPECT_EQ(r.send_messages, 1);
    EXPECT_EQ(r.recv_messages, 1);
    EXPECT_EQ(r.send_bytes, 16);
    EXPECT_EQ(r.recv_bytes, 16);
    EXPECT_EQ(r.local_bytes, 16);
  }
  const auto plan = p.planner.plan_rank(0);
  ASSERT_EQ(plan.messages(Part::send).size(), 1u);
  const auto& m = plan.messages(Part::send)[0];
  EXPECT_EQ(m.peer, 1);
  const auto rows = plan.segments(Part::send, m, 0), cols = plan.segments(Part::send, m, 1);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(cols.size(), 1u);
  EXPECT_EQ(rows[0], (gdap::plan::Segment{0, 2, 0, 0}));
  EXPECT_EQ(cols[0], (gdap::plan::Segment{2, 2, 2, 0}));
}

TEST(PlanStats, BlockToCyclicOf8Float64) {
  // Rank 0 holds 0-3, rank 1 4-7; cyclic: rank 0 the even indices. Rank 0 sends 1 and 3 to rank 1
  // (two runs: 1 sits at local 0, 3 at local 1 of rank 1, but at 1 and 3 of rank 0).
  Planned p({{mt::block(8, 2)}}, {{mt::cyclic(8, 2, 1)}});
  const auto s = p.planner.stats(8);
  EXPECT_EQ(s.total.send_messages, 2);
  EXPECT_EQ(s.total.send_bytes, 32);
  EXPECT_EQ(s.total.local_bytes, 32);
  EXPECT_EQ(s.ranks[0].send_runs, 2);
  const auto plan = p.planner.plan_rank(0);
  const auto segs = plan.segments(Part::send, plan.messages(Part::send)[0], 0);
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[0], (gdap::plan::Segment{1, 1, 1, 0}));
  EXPECT_EQ(segs[1], (gdap::plan::Segment{3, 1, 3, 1}));
}

TEST(PlanStats, Block2x2To1x4ColumnsOf4x4Float32) {
  // Source rank (a, b) holds rows 2a..2a+1 x columns 2b..2b+1 and sends each of its two columns
  // (2 elements, 2 runs) to the destination rank of that column; ranks 0 and 3 keep one of them.
  Planned p({{mt::block(4, 2), mt::block(4, 2)}}, {{mt::block(4, 1), mt::block(4, 4)}});
  const auto s = p.planner.stats(4);
  EXPECT_EQ(s.total.send_messages, 6);
  EXPECT_EQ(s.total.send_bytes, 48);
  EXPECT_EQ(s.total.local_bytes, 16);
  EXPECT_EQ(s.total.send_runs, 12);
  EXPECT_EQ(s.ranks[0].send_messages, 1);
  EXPECT_EQ(s.ranks[1].send_messages, 2);
  EXPECT_EQ(s.ranks[0].recv_messages, 1);  // column 0: rows 2-3 come from rank 2
  EXPECT_EQ(s.max.send_messages, 2);
  EXPECT_EQ(s.max.recv_bytes, 16);  // columns 1 and 2 arrive in two halves from two other ranks
}

// Copies of cyclic rows -> row blocks (64 x 8 float64 over 4 ranks): rank 0 sends rank 1
// (rows 16-31) global rows 16, 20, 24 and 28, its local rows 4-7, one after another, which land 4
// rows apart in rank 1's section. The message is 4 one-row blocks; they merge into one run on the
// send side (sent without packing) and one strided copy of 4 rows on the receive side.
TEST(MessageCopies, ConsecutiveBlocksMergeIntoOneRunOrOneStridedCopy) {
  Planned p({{mt::cyclic(64, 4, 1), mt::block(8, 1)}}, {{mt::block(64, 4), mt::block(8, 1)}});
  const int64_t row_bytes = 8 * 8;
  const std::vector<int64_t> section_strides{8, 1};
  using gdap::exchange::End;
  const End section_from{End::sender, section_strides};
  const End section_to{End::receiver, section_strides};
  const End packed{End::packed, {}};

  const RankPlan sender = p.planner.plan_rank(0);
  ASSERT_EQ(sender.messages(Part::send)[0].peer, 1);
  EXPECT_EQ(sender.messages(Part::send)[0].blocks, 4);
  const gdap::exchange::Program sent = sender.program(8, {});
  std::vector<gdap::exchange::Copy2D> send;
  sent.copies(sent.messages(Part::send)[0], section_from, packed, send);
  ASSERT_TRUE(gdap::exchange::single_run(send));
  EXPECT_EQ(send[0].src, 4 * row_bytes);  // local row 4: global row 16
  EXPECT_EQ(send[0].row_bytes, 4 * row_bytes);

  const gdap::exchange::Program received = p.planner.plan_rank(1).program(8, {});
  ASSERT_EQ(received.messages(Part::recv)[0].peer, 0);
  std::vector<gdap::exchange::Copy2D> recv;
  received.copies(received.messages(Part::recv)[0], packed, section_to, recv);
  ASSERT_EQ(recv.size(), 1u);
  EXPECT_EQ(recv[0].rows, 4);
  EXPECT_EQ(recv[0].row_bytes, row_bytes);
  EXPECT_EQ(recv[0].src_pitch, row_bytes);
  EXPECT_EQ(recv[0].dst_pitch, 4 * row_bytes);
  EXPECT_EQ(recv[0].dst, 0);  // global row 16 is rank 1's local row 0
}

// A message cut into pieces at any byte of its packed form (NCCL rounds, nccl_staging.cpp): the
// clipped copies of the pieces touch only their piece's packed bytes, and together they move exactly
// what the whole copies move, in both directions (packing and unpacking), cuts inside rows and
// inside elements included.
TEST(MessageCopies, ClippedPiecesMoveExactlyTheWholeMessage) {
  using gdap::exchange::Copy2D;
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const std::vector<int64_t> shape{pick(1, 6), pick(1, 7), pick(1, 9)};
    const std::vector<int64_t> strides{shape[1] * (shape[2] + 2), shape[2] + 2, 1};  // padded rows
    std::vector<int64_t> extent(3), at(3);
    for (size_t i = 0; i < 3; ++i) extent[i] = pick(1, shape[i]), at[i] = pick(0, shape[i] - extent[i]);
    const std::vector<int64_t> compact{extent[1] * extent[2], extent[2], 1};
    int64_t section_at = 0;
    for (size_t i = 0; i < 3; ++i) section_at += at[i] * strides[i];
    const int64_t packed_at = pick(0, 5), es = 8, bytes = extent[0] * extent[1] * extent[2] * es;
    const int64_t section_bytes = shape[0] * strides[0] * es, packed_bytes = (packed_at * es) + bytes;
    std::vector<int64_t> cuts{packed_at * es, packed_at * es + bytes};
    for (int64_t k = pick(0, 4); k > 0; --k) cuts.push_back(pick(packed_at * es, packed_at * es + bytes));
    std::sort(cuts.begin(), cuts.end());
    for (bool packing : {true, false}) {
      std::vector<Copy2D> whole;
      if (packing) {
        gdap::exchange::box_copies(extent, section_at, strides, packed_at, compact, es, whole);
      } else {
        gdap::exchange::box_copies(extent, packed_at, compact, section_at, strides, es, whole);
      }
      const int64_t from_bytes = packing ? section_bytes : packed_bytes, to_bytes = packing ? packed_bytes : section_bytes;
      std::vector<char> from(static_cast<size_t>(from_bytes)), want(static_cast<size_t>(to_bytes), 0), got = want;
      for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<char>(i * 7 + 3);
      gdap::exchange::run_host_copies(whole, from.data(), want.data());
      for (size_t c = 0; c + 1 < cuts.size(); ++c) {
        std::vector<Copy2D> piece;
        gdap::exchange::clip_packed(whole, /*packed_source=*/!packing, cuts[c], cuts[c + 1], piece);
        int64_t moved = 0;
        for (const Copy2D& p : piece) {
          const int64_t base = packing ? p.dst : p.src, pitch = packing ? p.dst_pitch : p.src_pitch;
          ASSERT_GE(base, cuts[c]) << "trial " << trial;
          ASSERT_LE(base + (p.rows - 1) * pitch + p.row_bytes, cuts[c + 1]) << "trial " << trial;
          moved += p.rows * p.row_bytes;
        }
        EXPECT_EQ(moved, cuts[c + 1] - cuts[c]) << "trial " << trial << ", piece " << c;
        gdap::exchange::run_host_copies(piece, from.data(), got.data());
      }
      ASSERT_EQ(got, want) << "trial " << trial << (packing ? ", packing" : ", unpacking");
    }
  }
}

TEST(PlanStats, SameLayoutIsOneLocalRunPerRank) {
  Planned p({{mt::block(6, 2), mt::block(4, 1)}}, {{mt::block(6, 2), mt::block(4, 1)}});
  const auto s = p.planner.stats(2);
  EXPECT_EQ(s.total.send_messages, 0);
  EXPECT_EQ(s.total.local_bytes, 48);
  EXPECT_EQ(s.total.local_runs, 2);  // each rank's 3x4 section is contiguous in both buffers
  EXPECT_EQ(s.total.local_blocks, 2);
}

// Block-cyclic to the same block-cyclic (COSTA's "same layout" case): a rank's blocks are apart in
// the global array but one after another in its section on both sides, so its copy is one segment
// per dimension, one block and one run, not one per block row.
TEST(PlanStats, SameBlockCyclicLayoutIsOneLocalRunPerRank) {
  const Layout layout{{mt::cyclic(64, 2, 4), mt::cyclic(48, 2, 8)}};
  Planned p(layout, layout);
  const auto s = p.planner.stats(8);
  EXPECT_EQ(s.total.send_messages, 0);
  EXPECT_EQ(s.total.local_bytes, 64 * 48 * 8);
  EXPECT_EQ(s.total.local_blocks, 4);  // one per rank
  EXPECT_EQ(s.total.local_runs, 4);
  mt::simulate(layout, layout, p.planner.plan_all());
}

TEST(PlanStats, PaddingBreaksRuns) {
  // Same owned cells, but the destination's rows carry a halo cell (communication padding): the
  // copy is one block, contiguous in the source but one run per row in the padded destination.
  Planned p({{mt::block(2, 1), mt::block(6, 2)}}, {{mt::block(2, 1), mt::padded(6, {3, 3}, 1, false)}});
  const auto s = p.planner.stats(1);
  EXPECT_EQ(s.total.send_messages, 0);
  EXPECT_EQ(s.ranks[0].local_runs, 2);  // two rows of 3
  EXPECT_EQ(s.ranks[0].local_blocks, 1);
}

TEST(PlanStats, ZeroDimensionalArrayIsOneLocalElement) {
  Layout scalar;
  Planned p(scalar, scalar);
  const auto s = p.planner.stats(8);
  EXPECT_EQ(s.total.local_bytes, 8);
  EXPECT_EQ(s.total.local_runs, 1);
  mt::simulate(scalar, scalar, p.planner.plan_all());
}

// ---- refusals ----

// Runs `body`, expecting a gdap::Error with `status` whose message contains `text`.
void expect_error(const std::function<void()>& body, gdap_status status, const std::string& text) {
  try {
    body();
    ADD_FAILURE() << "no error; expected " << gdap_status_string(status);
  } catch (const gdap::Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(PlanErrors, ShapeMismatchNamesTheDimension) {
  MapHandle a(Layout{{mt::block(4, 2), mt::block(4, 1)}}), b(Layout{{mt::block(4, 1), mt::block(5, 2)}});
  expect_error([&] { Planner(*a.map, *b.map); }, GDAP_ERR_INVALID_ARGUMENT,
               "dimension 1: the source's size (4) != the destination's (5)");
}

TEST(PlanErrors, DimensionCountMismatch) {
  MapHandle a(Layout{{mt::block(4, 2), mt::block(4, 1)}}), b(Layout{{mt::block(16, 2)}});
  expect_error([&] { Planner(*a.map, *b.map); }, GDAP_ERR_INVALID_ARGUMENT,
               "the source has 2 dimensions (4 x 4) but the destination has 1 (16)");
}

// Rule: a planner never meets an index one side lacks: both sides hold [0, size), and a map whose
// unstructured indices leave it is refused before any plan (issue 27: such indices reached the
// reductions, which failed there with GDAP_ERR_INTERNAL).
TEST(PlanErrors, UnstructuredIndexOutsideZeroToSizeNeverReachesAPlanner) {
  for (const Layout& bad : {Layout{{mt::unstructured(4, {{0, 1}, {2, 5}}, true)}},
                            Layout{{mt::unstructured(4, {{0, 7}, {2, 1}}, false)}}}) {
    const auto dims = bad.all_dims();
    gdap_map* map = nullptr;
    EXPECT_EQ(gdap_map_create(&map, bad.nranks(), bad.ndim(), dims.data()), GDAP_ERR_PROTOCOL);
    EXPECT_NE(std::string(gdap_last_error()).find("is outside [0, size (4))"), std::string::npos) << gdap_last_error();
    EXPECT_EQ(map, nullptr);
  }
}

TEST(PlanErrors, BadRankElementSizeAndForeignMessage) {
  Planned p({{mt::block(4, 2)}}, {{mt::cyclic(4, 2, 1)}});
  expect_error([&] { p.planner.plan_rank(2); }, GDAP_ERR_OUT_OF_RANGE, "rank 2 is outside [0, 2)");
  expect_error([&] { p.planner.plan_rank(-1); }, GDAP_ERR_OUT_OF_RANGE, "rank -1");
  expect_error([&] { p.planner.stats(0); }, GDAP_ERR_INVALID_ARGUMENT, "element size (0 bytes)");
  const auto r0 = p.planner.plan_rank(0), r1 = p.planner.plan_rank(1);
  expect_error([&] { r0.segments(Part::send, r1.messages(Part::send)[0], 0); }, GDAP_ERR_INVALID_ARGUMENT,
               "not one of rank 0's messages");
  expect_error([&] { r0.segments(Part::send, r0.messages(Part::send)[0], 1); }, GDAP_ERR_OUT_OF_RANGE,
               "dimension 1");
}

TEST(PlanReuse, PlansOutliveTheirMapsAndPlanner) {
  std::vector<RankPlan> plans;
  const Layout src{{mt::cyclic(9, 3, 2), mt::block(5, 1)}}, dst{{mt::block(9, 2), mt::cyclic(5, 2, 1)}};
  {
    MapHandle a(src), b(dst);
    plans = Planner(*a.map, *b.map).plan_all();
  }
  for (int run = 0; run < 2; ++run) mt::simulate(src, dst, plans);  // executed twice from one plan
}

// ---- roles (COSTA's relabeling: planner.hpp, "Roles") ----

// Row blocks of 4 rows each, dealt to the 4 ranks in the order 2, 0, 3, 1 (an unstructured first
// dimension), to ordinary row blocks: without roles every row crosses ranks; with the keeping
// roles nothing crosses, and the plan is one local copy per rank.
Layout permuted_rows() {
  return Layout{{mt::unstructured(16, {{8, 9, 10, 11}, {0, 1, 2, 3}, {12, 13, 14, 15}, {4, 5, 6, 7}}, true),
                 mt::block(3, 1)}};
}

TEST(PlanRoles, RankPermutedRedistributionMovesNothingWithKeepingRoles) {
  const Layout src = permuted_rows(), dst{{mt::block(16, 4), mt::block(3, 1)}};
  Planned plain(src, dst);
  EXPECT_EQ(plain.planner.stats(8).total.send_bytes, 16 * 3 * 8);
  const std::vector<int64_t> roles = plain.planner.keeping_roles();
  EXPECT_EQ(roles, (std::vector<int64_t>{2, 0, 3, 1}));  // rank r keeps the block it holds
  MapHandle s(src), d(dst);
  const Planner relabeled(*s.map, *d.map, roles);
  const auto stats = relabeled.stats(8);
  EXPECT_EQ(stats.total.send_bytes, 0);
  EXPECT_EQ(stats.total.local_bytes, 16 * 3 * 8);
  EXPECT_EQ(stats.total.local_runs, 4);  // each rank's 4 x 3 rows are one run on both sides
  mt::simulate(src, dst, relabeled.plan_all(), roles);
  for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(relabeled.plan_rank(r).stats(8), stats.ranks[static_cast<size_t>(r)]);
}

// Identity: the keeping roles are the identity; an all-to-all that keeps the same amount on every
// pairing (rows to columns) keeps the identity too (ties go to the lowest role).
TEST(PlanRoles, IdentityAndUniformAllToAllKeepTheIdentity) {
  const Layout rows{{mt::block(8, 4), mt::block(8, 1)}}, cols{{mt::block(8, 1), mt::block(8, 4)}};
  EXPECT_EQ(Planned(rows, rows).planner.keeping_roles(), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(Planned(rows, cols).planner.keeping_roles(), (std::vector<int64_t>{0, 1, 2, 3}));
}

// Roles move what they can keep and send the rest correctly: random layouts of one shape and
// random roles, every element checked; the stats of the whole plan match the rank plans'.
TEST(PlanRoles, RandomRolesMoveCorrectly) {
  std::mt19937_64 rng(7);
  const std::vector<Layout> layouts{
      Layout{{mt::block(12, 2), mt::cyclic(10, 2, 3)}}, Layout{{mt::cyclic(12, 4, 1), mt::block(10, 1)}},
      Layout{{mt::shuffled(12, 2, 5, false), mt::block(10, 2)}}, Layout{{mt::block(12, 1), mt::block(10, 4)}}};
  for (int trial = 0; trial < 24; ++trial) {
    SCOPED_TRACE(trial);
    const Layout& src = layouts[rng() % layouts.size()];
    const Layout& dst = layouts[rng() % layouts.size()];
    std::vector<int64_t> roles(4);
    for (int64_t r = 0; r < 4; ++r) roles[static_cast<size_t>(r)] = r;
    std::shuffle(roles.begin(), roles.end(), rng);
    if (trial % 3 == 0) roles = Planned(src, dst).planner.keeping_roles();
    MapHandle s(src), d(dst);
    const Planner planner(*s.map, *d.map, roles);
    mt::simulate(src, dst, planner.plan_all(), roles);
    const auto stats = planner.stats(4);
    for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(planner.plan_rank(r).stats(4), stats.ranks[static_cast<size_t>(r)]);
    const int64_t kept = Planner(*s.map, *d.map, Planned(src, dst).planner.keeping_roles()).stats(4).total.local_bytes;
    EXPECT_GE(kept, Planned(src, dst).planner.stats(4).total.local_bytes) << "the keeping roles keep at least the identity's";
  }
}

// Rank counts differ: 2 source ranks, 4 destination ranks; roles relabel all 4.
TEST(PlanRoles, DifferentRankCounts) {
  const Layout src{{mt::block(8, 2), mt::block(6, 1)}}, dst{{mt::block(8, 4), mt::block(6, 1)}};
  const std::vector<int64_t> roles = Planned(src, dst).planner.keeping_roles();
  EXPECT_EQ(roles, (std::vector<int64_t>{0, 2, 1, 3}));  // rank 1 holds rows 4-7, destination rank 2's first
  MapHandle s(src), d(dst);
  mt::simulate(src, dst, Planner(*s.map, *d.map, roles).plan_all(), roles);
}

TEST(PlanRoles, RolesThatAreNoPermutationAreRefusedByEntry) {
  MapHandle a(Layout{{mt::block(8, 4)}}), b(Layout{{mt::cyclic(8, 4, 1)}});
  expect_error([&] { Planner(*a.map, *b.map, {0, 1, 2}); }, GDAP_ERR_INVALID_ARGUMENT,
               "roles has 3 entries but the plan has 4 ranks");
  expect_error([&] { Planner(*a.map, *b.map, {0, 4, 2, 1}); }, GDAP_ERR_INVALID_ARGUMENT, "roles[1] = 4 is outside [0, 4)");
  expect_error([&] { Planner(*a.map, *b.map, {0, 2, 2, 1}); }, GDAP_ERR_INVALID_ARGUMENT,
               "roles[2] = 2 repeats roles[1] (roles must be a permutation)");
}

// The C entry points: the keeping roles written into the caller's array; plans with roles; the
// refusals name what was wrong and leave *out untouched.
TEST(PlanRoles, CFunctionsWriteTheRolesAndRefuseBadArguments) {
  MapHandle s(permuted_rows()), d(Layout{{mt::block(16, 4), mt::block(3, 1)}});
  std::vector<int64_t> roles(4, -1);
  ASSERT_EQ(gdap_plan_roles_keeping(roles.data(), 4, s.map, d.map), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(roles, (std::vector<int64_t>{2, 0, 3, 1}));
  std::vector<int64_t> untouched(5, -1);
  EXPECT_EQ(gdap_plan_roles_keeping(untouched.data(), 5, s.map, d.map), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("nroles is 5 but the plan has 4 ranks"), std::string::npos);
  EXPECT_EQ(untouched, std::vector<int64_t>(5, -1));
  EXPECT_EQ(gdap_plan_roles_keeping(nullptr, 4, s.map, d.map), GDAP_ERR_INVALID_ARGUMENT);

  const gdap_dtype f64{GDAP_DTYPE_FLOAT, 64, 1};
  for (int64_t r = 0; r < 4; ++r) {
    gdap_plan* plan = nullptr;
    ASSERT_EQ(gdap_plan_create_with_roles(&plan, s.map, d.map, f64, r, roles.data(), 4), GDAP_SUCCESS) << gdap_last_error();
    gdap_plan_stats st = GDAP_PLAN_STATS_INIT;
    ASSERT_EQ(gdap_plan_stats_get(&st, plan), GDAP_SUCCESS);
    EXPECT_EQ(st.send_bytes, 0) << "rank " << r;
    EXPECT_EQ(st.local_bytes, 4 * 3 * 8) << "rank " << r;
    gdap_plan_destroy(plan);
  }
  gdap_plan* plan = nullptr;
  const int64_t repeated[] = {0, 1, 1, 3};
  EXPECT_EQ(gdap_plan_create_with_roles(&plan, s.map, d.map, f64, 0, repeated, 4), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("roles[2] = 1 repeats roles[1]"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_plan_create_with_roles(&plan, s.map, d.map, f64, 0, roles.data(), 3), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("nroles is 3 but the plan has 4 ranks"), std::string::npos);
  EXPECT_EQ(plan, nullptr);
}

}  // namespace
