// Owned counts and local extents (the protocol's partial-block rule, padding), and the protocol
// version policy.
#include "protocol/dim.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace {

gdap_dim cyclic(int64_t size, int64_t P, int64_t r, int64_t bs) {
  gdap_dim d = GDAP_DIM_INIT;
  int64_t start = r * bs;
  EXPECT_EQ(gdap_dim_set_cyclic(&d, size, P, r, start, bs), GDAP_SUCCESS);
  return d;
}

int64_t owned(const gdap_dim& d) {
  int64_t n = -1;
  EXPECT_EQ(gdap_dim_owned_count(&n, &d), GDAP_SUCCESS) << gdap_last_error();
  return n;
}

TEST(OwnedCount, PartialBlockBelongsToRankNbModP) {
  // size 10, block 3, 2 ranks: blocks 0,2 (6) on rank 0; block 1 (3) + the partial block 3 (1) on rank 1.
  EXPECT_EQ(owned(cyclic(10, 2, 0, 3)), 6);
  EXPECT_EQ(owned(cyclic(10, 2, 1, 3)), 4);
  // The reference implementation's defect would give the partial block to rank 0: 7 and 3.
  // size 7, block 2, 3 ranks: one full block each, and the partial block 3 goes to rank 3 % 3 = 0.
  EXPECT_EQ(owned(cyclic(7, 3, 0, 2)), 3);
  EXPECT_EQ(owned(cyclic(7, 3, 1, 2)), 2);
  EXPECT_EQ(owned(cyclic(7, 3, 2, 2)), 2);
  // size 9, block 2, 3 ranks: full blocks 0..3, block 3 goes to rank 0, the partial block 4 to rank 4 % 3 = 1.
  EXPECT_EQ(owned(cyclic(9, 3, 0, 2)), 4);
  EXPECT_EQ(owned(cyclic(9, 3, 1, 2)), 3);
  EXPECT_EQ(owned(cyclic(9, 3, 2, 2)), 2);
}

TEST(OwnedCount, CyclicCountsSumToSizeExhaustively) {
  for (int64_t size = 0; size <= 60; ++size) {
    for (int64_t bs = 1; bs <= 8; ++bs) {
      for (int64_t P = 1; P <= 7; ++P) {
        int64_t sum = 0;
        for (int64_t r = 0; r < P; ++r) {
          const int64_t n = gdap::cyclic_owned_count(size, P, bs, r);
          // Check against counting each index's owner directly.
          int64_t direct = 0;
          for (int64_t g = 0; g < size; ++g) direct += (g / bs) % P == r ? 1 : 0;
          ASSERT_EQ(n, direct) << "size " << size << " bs " << bs << " P " << P << " rank " << r;
          sum += n;
        }
        ASSERT_EQ(sum, size);
      }
    }
  }
}

TEST(OwnedCount, PaddingBoundaryOwnedCommunicationNot) {
  gdap_dim r0 = GDAP_DIM_INIT, r1 = GDAP_DIM_INIT;
  gdap_dim_set_block(&r0, 18, 2, 0, 0, 10);
  gdap_dim_set_padding(&r0, 1, 1);
  gdap_dim_set_block(&r1, 18, 2, 1, 8, 18);
  gdap_dim_set_padding(&r1, 1, 1);
  EXPECT_EQ(owned(r0), 9) << "boundary padding (left) is owned, communication padding (right) is not";
  EXPECT_EQ(owned(r1), 9);
  int64_t extent = 0;
  EXPECT_EQ(gdap_dim_local_extent(&extent, &r0), GDAP_SUCCESS);
  EXPECT_EQ(extent, 10) << "the buffer includes every padding";
  gdap_dim p = GDAP_DIM_INIT;
  gdap_dim_set_block(&p, 8, 1, 0, -2, 10);
  gdap_dim_set_padding(&p, 2, 2);
  gdap_dim_set_periodic(&p, 1);
  EXPECT_EQ(owned(p), 8) << "periodic padding is all communication padding";
}

TEST(OwnedCount, BlockAndCyclicCountsSumToSizeOnRandomLayouts) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 500; ++trial) {
    const int64_t P = 1 + static_cast<int64_t>(rng() % 6);
    const int64_t size = static_cast<int64_t>(rng() % 50);
    std::vector<int64_t> cuts{0, size};
    for (int64_t k = 1; k < P; ++k) cuts.push_back(static_cast<int64_t>(rng() % (size + 1)));
    std::sort(cuts.begin(), cuts.end());
    int64_t sum = 0;
    for (int64_t r = 0; r < P; ++r) {
      gdap_dim d = GDAP_DIM_INIT;
      gdap_dim_set_block(&d, size, P, r, cuts[r], cuts[r + 1]);
      ASSERT_EQ(gdap_dim_validate(&d, 0, cuts[r + 1] - cuts[r]), GDAP_SUCCESS) << gdap_last_error();
      sum += owned(d);
    }
    ASSERT_EQ(sum, size);
  }
}

struct VersionCase {
  const char* version;
  gdap_status expected;
};

TEST(ProtocolVersion, Policy) {
  const VersionCase cases[] = {
      {"0.10.0", GDAP_SUCCESS},         {"0.10.7", GDAP_SUCCESS},
      {"0.9.0", GDAP_SUCCESS},          {"0.11.0", GDAP_ERR_VERSION},
      {"1.0.0", GDAP_ERR_VERSION},      {"0.10", GDAP_ERR_INVALID_ARGUMENT},
      {"0.10.0.1", GDAP_ERR_INVALID_ARGUMENT}, {"a.b.c", GDAP_ERR_INVALID_ARGUMENT},
      {"-0.10.0", GDAP_ERR_INVALID_ARGUMENT},  {"0.99999999999999999999.0", GDAP_ERR_INVALID_ARGUMENT},
      {"", GDAP_ERR_INVALID_ARGUMENT},  {"0..0", GDAP_ERR_INVALID_ARGUMENT},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(gdap_protocol_version_check(c.version), c.expected) << "'" << c.version << "': " << gdap_last_error();
  }
  EXPECT_EQ(gdap_protocol_version_check(nullptr), GDAP_ERR_INVALID_ARGUMENT);
  gdap_protocol_version_check("1.2.3");
  EXPECT_NE(std::string(gdap_last_error()).find("1.2.3"), std::string::npos);
}

}  // namespace
