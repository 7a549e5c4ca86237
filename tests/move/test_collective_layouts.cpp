// Gather, scatter, allgather and broadcast through the root and replicated layouts, on in-process
// groups of 1 to 4 ranks (threads); and the layouts' own checks.
#include "collective_layouts.hpp"
#include "rank_runs.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

namespace ct = collectives_test;

class Collectives : public ::testing::TestWithParam<int64_t> {};

TEST_P(Collectives, EveryRankHoldsWhatTheLayoutGivesIt) {
  for (const std::string& f : rank_runs::run_group(GetParam(), [](gdap_comm* comm, int64_t rank, int64_t n) {
         return ct::Rank(comm, rank, n).run_all();
       })) {
    ADD_FAILURE() << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Group, Collectives, ::testing::Values(1, 2, 3, 4));

TEST(CollectiveLayouts, RootHoldsTheWholeArrayAndTheOthersNothing) {
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create_root(&map, 3, 2, ct::kShape, 1), GDAP_SUCCESS) << gdap_last_error();
  int64_t shape[2], count = 0, owner = -1, local[2];
  for (int64_t r = 0; r < 3; ++r) {
    ASSERT_EQ(gdap_map_local_shape(shape, map, r), GDAP_SUCCESS);
    EXPECT_EQ(shape[0], r == 1 ? 7 : 0) << "rank " << r;
    EXPECT_EQ(shape[1], 5);
  }
  const int64_t global[2] = {6, 4};
  ASSERT_EQ(gdap_map_owner(&owner, local, map, global), GDAP_SUCCESS);
  EXPECT_EQ(owner, 1);
  ASSERT_EQ(gdap_map_owned_count(&count, map, 1), GDAP_SUCCESS);
  EXPECT_EQ(count, 35);
  gdap_map_destroy(map);
}

TEST(CollectiveLayouts, ReplicatedGivesEveryRankEveryElement) {
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create_replicated(&map, 4, 2, ct::kShape), GDAP_SUCCESS) << gdap_last_error();
  int64_t owners[8], count = 0, shape[2];
  const int64_t global[2] = {3, 2};
  ASSERT_EQ(gdap_map_owners(owners, &count, map, global, 8), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(count, 4);
  ASSERT_EQ(gdap_map_local_shape(shape, map, 2), GDAP_SUCCESS);
  EXPECT_EQ(shape[0], 7);
  EXPECT_EQ(shape[1], 5);
  gdap_map_destroy(map);
}

TEST(CollectiveLayouts, BadArgumentsAreRefusedNamingThem) {
  gdap_map* map = nullptr;
  const int64_t negative[2] = {7, -1};
  EXPECT_EQ(gdap_map_create_root(&map, 2, 2, ct::kShape, 2), GDAP_ERR_OUT_OF_RANGE);
  EXPECT_NE(std::string(gdap_last_error()).find("root 2"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_map_create_root(&map, 0, 2, ct::kShape, 0), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("nranks 0"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_map_create_replicated(&map, 2, 0, ct::kShape), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("0-d"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_map_create_replicated(&map, 2, 2, negative), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("dimension 1"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_map_create_replicated(&map, 2, 2, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(map, nullptr);
}

}  // namespace
