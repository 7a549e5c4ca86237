// gdap_allreduce on in-process groups of 1 to 4 ranks (threads), host sections; and its refusals.
#include "allreduce_check.hpp"
#include "rank_runs.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

class AllreduceGroup : public ::testing::TestWithParam<int64_t> {};

TEST_P(AllreduceGroup, EveryDtypeAndOpElementByElement) {
  for (const std::string& line : rank_runs::run_group(GetParam(), [](gdap_comm* comm, int64_t rank, int64_t n) {
         return allreduce_test::Rank(comm, rank, n).run();
       })) {
    ADD_FAILURE() << line;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, AllreduceGroup, ::testing::Values(1, 2, 3, 4));

TEST(Allreduce, BadArgumentsAreRefused) {
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS);
  double x[2] = {1, 2};
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, 2, 1, 0, 0, 2);
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_wrap(&a, x, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, nullptr, &d, 1), GDAP_SUCCESS);
  EXPECT_EQ(gdap_allreduce(comm, nullptr, GDAP_REDUCE_SUM), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("section"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_allreduce(comm, a, static_cast<gdap_reduce_op>(9)), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("op 9"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_allreduce(nullptr, a, GDAP_REDUCE_SUM), GDAP_ERR_INVALID_ARGUMENT);
  gdap_array* f16 = nullptr;
  uint16_t h[2] = {};
  ASSERT_EQ(gdap_array_wrap(&f16, h, {GDAP_DTYPE_FLOAT, 16, 1}, {GDAP_DEVICE_CPU, 0}, nullptr, &d, 1), GDAP_SUCCESS);
  EXPECT_EQ(gdap_allreduce(comm, f16, GDAP_REDUCE_SUM), GDAP_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(gdap_last_error()).find("dtype float16 cannot be reduced"), std::string::npos)
      << gdap_last_error();
  EXPECT_EQ(x[0], 1);
  EXPECT_EQ(x[1], 2);
  gdap_array_destroy(f16);
  gdap_array_destroy(a);
  gdap_comm_destroy(comm);
}

}  // namespace
