// Dimension dictionaries for tests, built through the C setters (each asserting success).
#pragma once

#include <gdap/gdap.h>

#include <gtest/gtest.h>

namespace gdap_test {

inline gdap_dim block(int64_t size, int64_t P, int64_t r, int64_t start, int64_t stop) {
  gdap_dim d = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_dim_set_block(&d, size, P, r, start, stop), GDAP_SUCCESS);
  return d;
}

inline gdap_dim padded(gdap_dim d, int64_t lo, int64_t hi) {
  EXPECT_EQ(gdap_dim_set_padding(&d, lo, hi), GDAP_SUCCESS);
  return d;
}

inline gdap_dim periodic(gdap_dim d) {
  EXPECT_EQ(gdap_dim_set_periodic(&d, 1), GDAP_SUCCESS);
  return d;
}

// block_size 0 leaves the optional key out.
inline gdap_dim cyclic(int64_t size, int64_t P, int64_t r, int64_t start, int64_t bs = 0) {
  gdap_dim d = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_dim_set_cyclic(&d, size, P, r, start, bs), GDAP_SUCCESS);
  return d;
}

inline gdap_dim undistributed(int64_t n) {
  gdap_dim d = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_dim_set_undistributed(&d, n), GDAP_SUCCESS);
  return d;
}

// A copy of `d` changed by `change`, for cases that break one field.
template <typename F>
gdap_dim with(gdap_dim d, F change) {
  change(d);
  return d;
}

}  // namespace gdap_test
