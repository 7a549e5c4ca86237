// core/footprint.hpp: whether two strided sections share a byte. Exact answers are checked against
// brute force (every byte of both listed); where the bounded search cannot decide, "may share".
#include "core/footprint.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace {

using gdap::Footprint;

// Every byte of `f`, listed.
std::set<uint64_t> bytes_of(const Footprint& f) {
  std::set<uint64_t> out;
  std::vector<int64_t> index(f.shape.size(), 0);
  for (int64_t n : f.shape) {
    if (n == 0) return out;
  }
  while (true) {
    int64_t at = static_cast<int64_t>(f.base);
    for (size_t k = 0; k < index.size(); ++k) at += index[k] * f.strides[k];
    for (int64_t b = 0; b < f.itemsize; ++b) out.insert(static_cast<uint64_t>(at + b));
    size_t k = index.size();
    while (k > 0 && ++index[k - 1] == f.shape[k - 1]) index[--k] = 0;
    if (k == 0) return out;
  }
}

bool brute_force(const Footprint& a, const Footprint& b) {
  const std::set<uint64_t> x = bytes_of(a);
  for (uint64_t byte : bytes_of(b)) {
    if (x.count(byte) != 0) return true;
  }
  return false;
}

// A matrix of `rows` x `cols` float64 at 1000 (C order), columns from `first` every `step`.
Footprint columns(int64_t rows, int64_t cols, int64_t first, int64_t step) {
  return Footprint{1000 + static_cast<uint64_t>(first) * 8, 8, {rows, (cols - first + step - 1) / step},
                   {cols * 8, step * 8}};
}

TEST(Footprint, InterleavedColumnsShareNoByte) {
  const Footprint even = columns(6, 8, 0, 2), odd = columns(6, 8, 1, 2);
  EXPECT_FALSE(brute_force(even, odd));
  EXPECT_FALSE(gdap::may_share_bytes(even, odd)) << "rule: even and odd columns are apart";
  EXPECT_FALSE(gdap::may_share_bytes(odd, even));
  // A 4096 x 4096 matrix: decided by arithmetic, not by listing its 16 million elements.
  EXPECT_FALSE(gdap::may_share_bytes(columns(4096, 4096, 0, 2), columns(4096, 4096, 1, 2)));
  EXPECT_FALSE(gdap::may_share_bytes(columns(4096, 4096, 0, 3), columns(4096, 4096, 2, 3)));
}

TEST(Footprint, OneSharedElementIsFound) {
  // Every third column against every second: column 0 is in both.
  EXPECT_TRUE(gdap::may_share_bytes(columns(6, 8, 0, 3), columns(6, 8, 0, 2)));
  // Column 3 only (odd against every third from 0): shares.
  EXPECT_TRUE(gdap::may_share_bytes(columns(6, 8, 1, 2), columns(6, 8, 0, 3)));
  // Only at the last element: a contiguous block of 10 and a strided view whose last element is its last.
  const Footprint block{2000, 8, {10}, {8}};
  const Footprint tail{2000 + 9 * 8 - 4 * 40, 8, {5}, {40}};  // elements 9 - 4*5 .. 9 in steps of 5
  ASSERT_TRUE(brute_force(block, tail));
  EXPECT_TRUE(gdap::may_share_bytes(block, tail));
  // Only one byte: the first's last byte is the second's first.
  const Footprint low{3000, 8, {4}, {16}}, high{3000 + 3 * 16 + 7, 4, {3}, {16}};
  ASSERT_TRUE(brute_force(low, high));
  EXPECT_TRUE(gdap::may_share_bytes(low, high));
}

TEST(Footprint, AgreesWithBruteForce) {
  // Small layouts, shifted, reversed and of other item sizes: every answer exact.
  int checked = 0, shared = 0;
  for (int64_t shift = -40; shift <= 40; shift += 3) {
    for (int64_t s0 : {24, -24, 40}) {
      for (int64_t s1 : {8, 16, -8}) {
        for (int64_t item : {4, 8}) {
          const Footprint a{5000, 8, {3, 3}, {s0, s1}};
          const Footprint b{static_cast<uint64_t>(5000 + shift), item, {2, 4}, {s1 * 3, 16}};
          const bool truth = brute_force(a, b);
          EXPECT_EQ(gdap::may_share_bytes(a, b), truth)
              << "shift " << shift << ", strides " << s0 << ", " << s1 << ", item " << item;
          ++checked;
          shared += truth ? 1 : 0;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(shared, 10) << "both answers occur";
  EXPECT_GT(checked - shared, 10) << "both answers occur";
}

TEST(Footprint, EmptyAndApartShareNothing) {
  EXPECT_FALSE(gdap::may_share_bytes(Footprint{0, 8, {0, 5}, {40, 8}}, Footprint{0, 8, {5}, {8}}));
  EXPECT_FALSE(gdap::may_share_bytes(Footprint{0, 8, {4}, {8}}, Footprint{32, 8, {4}, {8}}));
  EXPECT_TRUE(gdap::may_share_bytes(Footprint{0, 8, {4}, {8}}, Footprint{31, 1, {}, {}}));
}

TEST(Footprint, UndecidedWithinTheBudgetMayShare) {
  // Bytes of one: a at even offsets only (strides 6 and 4), b at odd ones (an odd base, stride 10):
  // apart by parity, which the search does not see; over long ranges it runs out of steps and
  // answers "may share" (the safe answer, as numpy.shares_memory with a small max_work).
  const Footprint a{0, 1, {100000, 100000}, {6, 4}};
  const Footprint b{1, 1, {100000}, {10}};
  EXPECT_TRUE(gdap::may_share_bytes(a, b));
  // The same on a small scale is decided, exactly.
  const Footprint small_a{0, 1, {5, 5}, {6, 4}}, small_b{1, 1, {5}, {10}};
  ASSERT_FALSE(brute_force(small_a, small_b));
  EXPECT_FALSE(gdap::may_share_bytes(small_a, small_b));
}

}  // namespace
