// Owned counts and local extents: the protocol's partial-block rule for cyclic dimensions, padding
// for block dimensions, int64 edges, and the property that owned counts over a dimension's grid
// ranks sum to its size, for every layout tried.
#include "core/error.hpp"
#include "protocol/dim.hpp"

#include <gtest/gtest.h>

#include "support/dims.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int64_t kMax = INT64_MAX;

using gdap_test::block;
using gdap_test::padded;
using gdap_test::periodic;

// Grid rank r of a cyclic dimension, with the start the protocol requires.
gdap_dim dealt(int64_t size, int64_t P, int64_t r, int64_t bs) { return gdap_test::cyclic(size, P, r, r * bs, bs); }

int64_t owned(const gdap_dim& d) {
  int64_t n = -1;
  EXPECT_EQ(gdap_dim_owned_count(&n, &d), GDAP_SUCCESS) << gdap_last_error();
  return n;
}

int64_t extent(const gdap_dim& d) {
  int64_t n = -1;
  EXPECT_EQ(gdap_dim_local_extent(&n, &d), GDAP_SUCCESS) << gdap_last_error();
  return n;
}

struct CyclicCase {
  const char* rule;
  int64_t size, P, bs;
  std::vector<int64_t> counts;  // per grid rank
};

TEST(DimOwnedCount, CyclicPartialBlockBelongsToRankNbModP) {
  const CyclicCase cases[] = {
      // nb = 3 full blocks: rank 0 holds blocks 0 and 2 (6), rank 1 block 1 plus the partial block 3 (1).
      // The reference implementation would give the partial block to rank 0: 7 and 3.
      {"partial block to rank nb % P = 1", 10, 2, 3, {6, 4}},
      {"partial block to rank nb % P = 0 (wraps round)", 7, 3, 2, {3, 2, 2}},
      {"an extra full block and the partial block on different ranks", 9, 3, 2, {4, 3, 2}},
      {"no partial block", 12, 2, 3, {6, 6}},
      {"pure cyclic", 10, 3, 1, {4, 3, 3}},
      {"even block distribution (bs = ceil(size / P))", 10, 3, 4, {4, 4, 2}},
      {"fewer blocks than ranks: trailing ranks empty", 5, 4, 2, {2, 2, 1, 0}},
      {"size 0", 0, 3, 2, {0, 0, 0}},
  };
  for (const auto& c : cases) {
    for (int64_t r = 0; r < c.P; ++r) {
      EXPECT_EQ(gdap::cyclic_owned_count(c.size, c.P, c.bs, r), c.counts[r]) << c.rule << ", rank " << r;
      EXPECT_EQ(owned(dealt(c.size, c.P, r, c.bs)), c.counts[r]) << c.rule << ", rank " << r;
      EXPECT_EQ(extent(dealt(c.size, c.P, r, c.bs)), c.counts[r]) << c.rule << ": the buffer holds the owned count";
    }
  }
}

TEST(DimOwnedCount, CyclicCountsMatchDirectCountingExhaustively) {
  for (int64_t size = 0; size <= 60; ++size) {
    for (int64_t bs = 1; bs <= 8; ++bs) {
      for (int64_t P = 1; P <= 7; ++P) {
        int64_t sum = 0;
        for (int64_t r = 0; r < P; ++r) {
          const int64_t n = gdap::cyclic_owned_count(size, P, bs, r);
          int64_t direct = 0;  // index g lives in block g / bs, dealt to rank (g / bs) % P
          for (int64_t g = 0; g < size; ++g) direct += (g / bs) % P == r ? 1 : 0;
          ASSERT_EQ(n, direct) << "size " << size << " bs " << bs << " P " << P << " rank " << r;
          sum += n;
        }
        ASSERT_EQ(sum, size) << "size " << size << " bs " << bs << " P " << P;
      }
    }
  }
}

TEST(DimOwnedCount, CyclicNearInt64MaxSumsToSizeWithoutOverflow) {
  const int64_t sizes[] = {kMax, kMax - 1, kMax / 2 + 1};
  const int64_t block_sizes[] = {1, 2, 3, 1000003, kMax / 3, kMax - 1, kMax};
  const int64_t grids[] = {1, 2, 3, 7, 64};
  for (int64_t size : sizes) {
    for (int64_t bs : block_sizes) {
      for (int64_t P : grids) {
        int64_t sum = 0;
        for (int64_t r = 0; r < P; ++r) {
          const int64_t n = gdap::cyclic_owned_count(size, P, bs, r);
          ASSERT_GE(n, 0);
          ASSERT_FALSE(__builtin_add_overflow(sum, n, &sum)) << "counts add up past int64";
        }
        ASSERT_EQ(sum, size) << "size " << size << " bs " << bs << " P " << P;
      }
    }
  }
}

TEST(DimOwnedCount, CyclicCountRefusesImpossibleArguments) {
  struct Bad {
    const char* rule;
    int64_t size, P, bs, r;
  };
  const Bad cases[] = {{"block_size >= 1", 10, 2, 0, 0},
                       {"grid size >= 1", 10, 0, 1, 0},
                       {"rank < grid size", 10, 2, 1, 2},
                       {"rank >= 0", 10, 2, 1, -1},
                       {"size >= 0", -1, 2, 1, 0}};
  for (const auto& c : cases) {
    EXPECT_EQ(gdap::guard([&] { (void)gdap::cyclic_owned_count(c.size, c.P, c.bs, c.r); }), GDAP_ERR_INVALID_ARGUMENT)
        << c.rule;
  }
}

struct BlockCase {
  const char* rule;
  gdap_dim dim;
  int64_t owned, extent, lower, upper;  // owned count, buffer extent, communication padding below / above
};

TEST(DimOwnedCount, BlockBoundaryPaddingIsOwnedCommunicationPaddingIsNot) {
  const BlockCase cases[] = {
      {"18 over 2, rank 0: boundary left, communication right", padded(block(18, 2, 0, 0, 10), 1, 1), 9, 10, 0, 1},
      {"18 over 2, rank 1: communication left, boundary right", padded(block(18, 2, 1, 8, 18), 1, 1), 9, 10, 1, 0},
      {"middle rank: both sides communication", padded(block(30, 3, 1, 8, 22), 2, 2), 10, 14, 2, 2},
      {"single rank: both sides boundary", padded(block(8, 1, 0, 0, 8), 2, 2), 8, 8, 0, 0},
      {"periodic single rank: both sides boundary (DAP 0.10)", periodic(padded(block(10, 1, 0, 0, 10), 2, 2)), 10, 10,
       0, 0},
      {"periodic rank 0 of 2: boundary left, communication right", periodic(padded(block(16, 2, 0, 0, 9), 1, 1)), 8,
       9, 0, 1},
      {"periodic rank 1 of 2: communication left, boundary right", periodic(padded(block(16, 2, 1, 7, 16), 1, 1)), 8,
       9, 1, 0},
      {"no padding key", block(10, 2, 1, 4, 10), 6, 6, 0, 0},
      {"empty section", block(10, 3, 1, 4, 4), 0, 0, 0, 0},
      {"size INT64_MAX", padded(block(kMax, 2, 1, 1, kMax), 1, 0), kMax - 2, kMax - 1, 1, 0},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(owned(c.dim), c.owned) << c.rule;
    EXPECT_EQ(extent(c.dim), c.extent) << c.rule << ": the buffer includes every padding";
    EXPECT_EQ(gdap::comm_padding_lower(c.dim), c.lower) << c.rule;
    EXPECT_EQ(gdap::comm_padding_upper(c.dim), c.upper) << c.rule;
    EXPECT_EQ(gdap::boundary_padding_lower(c.dim) + c.lower, c.dim.padding[0]) << c.rule << ": padding[0] is one or the other";
    EXPECT_EQ(gdap::boundary_padding_upper(c.dim) + c.upper, c.dim.padding[1]) << c.rule << ": padding[1] is one or the other";
  }
}

TEST(DimOwnedCount, UnstructuredCountsItsIndices) {
  const int64_t idx[] = {9, -3, 4};
  gdap_dim d = GDAP_DIM_INIT;
  ASSERT_EQ(gdap_dim_set_unstructured(&d, 10, 2, 1, idx, 3, 1), GDAP_SUCCESS);
  EXPECT_EQ(owned(d), 3);
  EXPECT_EQ(extent(d), 3);
  EXPECT_TRUE(gdap::is_one_to_one(d));
}

// One dimension's layout over all its grid ranks, built the way a producer would: owned ranges
// that tile [0, size), communication padding equal on both sides of each boundary and no wider
// than either neighbour owns, boundary padding inside the end ranks' owned ranges. A periodic
// flag changes none of it (DAP 0.10).
std::vector<gdap_dim> random_block_layout(std::mt19937_64& rng) {
  auto pick = [&](int64_t hi) { return hi <= 0 ? 0 : static_cast<int64_t>(rng() % static_cast<uint64_t>(hi + 1)); };
  const int64_t P = 1 + pick(5);
  const int64_t size = pick(60);
  const bool wraps = rng() % 3 == 0;
  const bool has_padding = rng() % 4 != 0;
  std::vector<int64_t> cuts{0, size};
  for (int64_t k = 1; k < P; ++k) cuts.push_back(pick(size));
  std::sort(cuts.begin(), cuts.end());
  auto own = [&](int64_t r) { return cuts[r + 1] - cuts[r]; };
  // width[r]: communication padding between rank r and rank r + 1
  std::vector<int64_t> width(P, 0);
  for (int64_t r = 0; r + 1 < P; ++r) {
    if (has_padding) width[r] = pick(std::min(own(r), own(r + 1)));
  }
  const int64_t boundary_lo = has_padding ? pick(own(0) - (P > 1 ? width[0] : 0)) : 0;
  const int64_t boundary_hi = has_padding ? pick(own(P - 1) - (P == 1 ? boundary_lo : width[P - 2])) : 0;
  std::vector<gdap_dim> out;
  for (int64_t r = 0; r < P; ++r) {
    const int64_t lo = r > 0 ? width[r - 1] : boundary_lo;
    const int64_t hi = r + 1 < P ? width[r] : boundary_hi;
    const int64_t start = cuts[r] - (r > 0 ? lo : 0);
    const int64_t stop = cuts[r + 1] + (r + 1 < P ? hi : 0);
    gdap_dim d = GDAP_DIM_INIT;
    gdap_dim_set_block(&d, size, P, r, start, stop);
    if (has_padding) gdap_dim_set_padding(&d, lo, hi);
    if (wraps) gdap_dim_set_periodic(&d, 1);
    out.push_back(d);
  }
  return out;
}

std::vector<gdap_dim> random_cyclic_layout(std::mt19937_64& rng) {
  const auto P = static_cast<int64_t>(1 + rng() % 7);
  const auto size = static_cast<int64_t>(rng() % 80);
  const auto bs = static_cast<int64_t>(1 + rng() % 9);
  std::vector<gdap_dim> out;
  for (int64_t r = 0; r < P; ++r) {
    // An empty section may say start == size instead of rank * block_size.
    const int64_t start = r * bs >= size && rng() % 2 == 0 ? size : r * bs;
    gdap_dim d = GDAP_DIM_INIT;
    gdap_dim_set_cyclic(&d, size, P, r, start, rng() % 3 == 0 && bs == 1 ? 0 : bs);
    out.push_back(d);
  }
  return out;
}

TEST(DimOwnedCount, PropertyOwnedCountsOverGridRanksSumToSize) {
  std::mt19937_64 rng(20261122);
  for (int trial = 0; trial < 2000; ++trial) {
    const auto layout = trial % 2 == 0 ? random_block_layout(rng) : random_cyclic_layout(rng);
    int64_t sum = 0;
    for (const gdap_dim& d : layout) {
      const int64_t n = extent(d);
      ASSERT_EQ(gdap_dim_validate(&d, 0, n), GDAP_SUCCESS)
          << "trial " << trial << ", rank " << d.proc_grid_rank << ": " << gdap_last_error();
      sum += owned(d);
    }
    ASSERT_EQ(sum, layout[0].size) << "trial " << trial << " (" << static_cast<char>(layout[0].dist_type) << ")";
  }
}

}  // namespace
