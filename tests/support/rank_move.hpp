// One rank's part of a real redistribution, for tests that need a collective call with arguments
// that are right: a 1-d array of 4 elements per rank, in blocks over n ranks moved to a cyclic
// layout; the two maps, rank `rank`'s plan, and its source (all 1.0) and destination (all -1.0)
// sections over vectors the test reads. Everything is freed with it.
#pragma once

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/dims.hpp"

#include <cstdint>
#include <vector>

namespace gdap_test {

struct RankMove {
  RankMove(int64_t n, int64_t rank) {
    for (int64_t r = 0; r < n; ++r) {
      blocks.push_back(block(4 * n, n, r, 4 * r, 4 * r + 4));
      cyclics.push_back(cyclic(4 * n, n, r, r));
    }
    const gdap_dtype f64{GDAP_DTYPE_FLOAT, 64, 1};
    const auto k = static_cast<size_t>(rank);
    EXPECT_EQ(gdap_map_create(&src, n, 1, blocks.data()), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(gdap_map_create(&dst, n, 1, cyclics.data()), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(gdap_plan_create(&plan, src, dst, f64, rank), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(gdap_array_wrap(&a, from.data(), f64, {GDAP_DEVICE_CPU, 0}, nullptr, &blocks[k], 1), GDAP_SUCCESS);
    EXPECT_EQ(gdap_array_wrap(&b, to.data(), f64, {GDAP_DEVICE_CPU, 0}, nullptr, &cyclics[k], 1), GDAP_SUCCESS);
  }
  ~RankMove() {
    gdap_array_destroy(b);
    gdap_array_destroy(a);
    gdap_plan_destroy(plan);
    gdap_map_destroy(dst);
    gdap_map_destroy(src);
  }
  RankMove(const RankMove&) = delete;
  RankMove& operator=(const RankMove&) = delete;

  std::vector<gdap_dim> blocks, cyclics;
  std::vector<double> from = std::vector<double>(4, 1.0), to = std::vector<double>(4, -1.0);
  gdap_map *src = nullptr, *dst = nullptr;
  gdap_plan* plan = nullptr;
  gdap_array *a = nullptr, *b = nullptr;
};

}  // namespace gdap_test
