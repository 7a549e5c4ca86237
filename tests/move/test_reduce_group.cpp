// gdap_reduce_axes and gdap_reduce_scatter on in-process groups of 1 to 4 ranks (threads), host
// sections (reduce_check.hpp: the layout table, every op and subset of axes, refusals); and the
// refusals a single rank can show alone.
#include "reduce_check.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace {

class ReduceGroup : public ::testing::TestWithParam<int64_t> {};

TEST_P(ReduceGroup, EveryLayoutOpAndAxesElementByElement) {
  const int64_t n = GetParam();
  std::vector<gdap_comm*> comms(static_cast<size_t>(n));
  ASSERT_EQ(gdap_comm_create_group(comms.data(), n), GDAP_SUCCESS) << gdap_last_error();
  std::vector<std::vector<std::string>> failures(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] { failures[static_cast<size_t>(r)] = reduce_test::Rank(comms[static_cast<size_t>(r)], r, n).run(); });
  }
  for (auto& t : threads) t.join();
  for (gdap_comm* c : comms) gdap_comm_destroy(c);
  size_t shown = 0;
  for (const auto& f : failures) {
    for (const std::string& line : f) {
      if (shown++ < 40) ADD_FAILURE() << line;
    }
  }
  EXPECT_EQ(shown, 0u) << "failures in all";
}

INSTANTIATE_TEST_SUITE_P(Ranks, ReduceGroup, ::testing::Values(1, 2, 3, 4));

// Rule: a NULL communicator, and an all-reduce asked for mean, are refused with a clear message.
TEST(Reduce, NullCommAndMeanAllreduceAreRefused) {
  double x[2] = {1, 2}, y = 7;
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_block(&d, 2, 1, 0, 0, 2);
  gdap_array *a = nullptr, *s = nullptr;
  ASSERT_EQ(gdap_array_wrap(&a, x, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, nullptr, &d, 1), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_wrap(&s, &y, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, nullptr, nullptr, 0), GDAP_SUCCESS);
  EXPECT_EQ(gdap_reduce_axes(nullptr, a, s, GDAP_REDUCE_SUM, nullptr, 0), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("comm is NULL"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_reduce_scatter(nullptr, a, a, GDAP_REDUCE_SUM), GDAP_ERR_INVALID_ARGUMENT);
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS);
  EXPECT_EQ(gdap_allreduce(comm, a, GDAP_REDUCE_MEAN), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("op mean is not an element-wise all-reduce"), std::string::npos)
      << gdap_last_error();
  // The whole reduction of a 1-rank array into a 0-d result, and the mean.
  ASSERT_EQ(gdap_reduce_axes(comm, a, s, GDAP_REDUCE_SUM, nullptr, 0), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(y, 3);
  ASSERT_EQ(gdap_reduce_axes(comm, a, s, GDAP_REDUCE_MEAN, nullptr, 0), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(y, 1.5);
  EXPECT_EQ(x[0], 1);
  EXPECT_EQ(x[1], 2);
  gdap_array_destroy(s);
  gdap_array_destroy(a);
  gdap_comm_destroy(comm);
}

}  // namespace
