// gdap_reduce_axes and gdap_reduce_scatter on in-process groups of 1 to 4 ranks (threads), host
// sections (reduce_check.hpp: the layout table, every op and subset of axes, refusals); and the
// refusals a single rank can show alone.
#include "rank_runs.hpp"
#include "reduce_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

class ReduceGroup : public ::testing::TestWithParam<int64_t> {};

TEST_P(ReduceGroup, EveryLayoutOpAndAxesElementByElement) {
  const std::vector<std::string> failures = rank_runs::run_group(GetParam(), [](gdap_comm* comm, int64_t rank, int64_t n) {
    return reduce_test::Rank(comm, rank, n).run();
  });
  for (size_t k = 0; k < failures.size() && k < 40; ++k) ADD_FAILURE() << failures[k];
  EXPECT_EQ(failures.size(), 0u) << "failures in all";
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

// Rule: reducing over an axis of size 0 gives the op's identity (sum 0, prod 1, mean NaN), and a
// result of size 0 is nothing to write; every rank agrees (no rank waits on a skipped exchange).
TEST(Reduce, EmptyAxesGiveTheIdentity) {
  const auto failures = rank_runs::run_group(2, [](gdap_comm* comm, int64_t r, int64_t) {
    std::string f;
    gdap_dim d[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT}, none = GDAP_DIM_INIT;
    gdap_dim_set_block(&d[0], 3, 2, r, r * 2, r == 0 ? 2 : 3);  // rows 2 and 1
    gdap_dim_set_undistributed(&d[1], 0);
    gdap_dim_set_block(&none, 0, 2, r, 0, 0);
    gdap_array *source = nullptr, *rows = nullptr, *cols = nullptr;
    const gdap_dtype f64 = {GDAP_DTYPE_FLOAT, 64, 1};
    gdap_array_create(&source, f64, {GDAP_DEVICE_CPU, 0}, d, 2);
    gdap_array_create(&rows, f64, {GDAP_DEVICE_CPU, 0}, d, 1);     // the 3 rows, in blocks
    gdap_array_create(&cols, f64, {GDAP_DEVICE_CPU, 0}, &none, 1);  // the 0 columns, in blocks
    void* data = nullptr;
    gdap_array_data(&data, rows);
    auto* out = static_cast<double*>(data);
    const int64_t axis1[1] = {1}, axis0[1] = {0};
    for (const auto& [op, want] : {std::pair{GDAP_REDUCE_SUM, 0.0}, std::pair{GDAP_REDUCE_PROD, 1.0}}) {
      if (gdap_reduce_axes(comm, source, rows, op, axis1, 1) != GDAP_SUCCESS) f += gdap_last_error();
      if (out[0] != want) f += " identity " + std::to_string(out[0]);
    }
    if (gdap_reduce_axes(comm, source, rows, GDAP_REDUCE_MEAN, axis1, 1) != GDAP_SUCCESS) f += gdap_last_error();
    if (!std::isnan(out[0])) f += " mean over nothing is " + std::to_string(out[0]);
    if (gdap_reduce_axes(comm, source, cols, GDAP_REDUCE_MAX, axis0, 1) != GDAP_SUCCESS) f += gdap_last_error();
    gdap_array_destroy(cols);
    gdap_array_destroy(rows);
    gdap_array_destroy(source);
    return f.empty() ? std::vector<std::string>{} : std::vector<std::string>{"rank " + std::to_string(r) + ":" + f};
  });
  EXPECT_TRUE(failures.empty()) << failures.front();
}

}  // namespace
