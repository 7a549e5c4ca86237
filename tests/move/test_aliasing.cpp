// Sections that share memory, on an in-process group (threads): an out-of-place call whose output
// overlaps its input on one rank, and, since the ranks of a group share one address space, a rank
// writing memory that another rank's call reads or writes. Overlap means overlapping byte spans,
// not only equal pointers (as numpy.may_share_memory). Rule for every case: every rank returns an
// error (the rank whose own arguments overlap its own error, the others GDAP_ERR_REMOTE; a clash
// between ranks, GDAP_ERR_INVALID_ARGUMENT on every rank naming both), and no element changes.
// gdap_redistribute(a, a) used to return wrong data without an error.
#include "call_kit.hpp"

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/dims.hpp"
#include "support/group.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using call_kit::Call;
using call_kit::Kit;
using call_kit::Mistake;

bool contains(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

constexpr gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};
constexpr gdap_device kCpu{GDAP_DEVICE_CPU, 0};

// One rank's own output overlaps its own input (the kit's aliased arrays: a destination over the
// first elements of the source), on rank 1 of 3: that rank its own error, the others GDAP_ERR_REMOTE.
struct OwnCase {
  const char* rule;
  Call call;
  const char* words;
};

class OwnOverlap : public ::testing::TestWithParam<OwnCase> {};

TEST_P(OwnOverlap, IsThatRanksErrorAndNothingChanges) {
  constexpr int64_t n = 3;
  const OwnCase c = GetParam();
  gdap_test::Group group(n, 20);
  std::vector<std::unique_ptr<Kit>> kits(n);
  gdap_test::on_threads(n, [&](int64_t r) { kits[static_cast<size_t>(r)] = std::make_unique<Kit>(group[r], r, n); });
  std::vector<gdap_status> got(n);
  std::vector<std::string> said(n);
  gdap_test::on_threads(n, [&](int64_t r) {
    kits[static_cast<size_t>(r)]->fill(3);
    got[static_cast<size_t>(r)] = kits[static_cast<size_t>(r)]->call(c.call, r == 1 ? Mistake::aliased : Mistake::none);
    said[static_cast<size_t>(r)] = gdap_last_error();
  });
  EXPECT_EQ(got[1], GDAP_ERR_INVALID_ARGUMENT) << said[1];
  EXPECT_TRUE(contains(said[1], c.words)) << said[1];
  for (int64_t r : {0, 2}) {
    EXPECT_EQ(got[static_cast<size_t>(r)], GDAP_ERR_REMOTE) << said[static_cast<size_t>(r)];
    EXPECT_TRUE(contains(said[static_cast<size_t>(r)], "rank 1 failed")) << said[static_cast<size_t>(r)];
  }
  for (int64_t r = 0; r < n; ++r) {
    for (const std::string& w : kits[static_cast<size_t>(r)]->wrong(c.call, false)) ADD_FAILURE() << "changed: " << w;
  }
  gdap_test::on_threads(n, [&](int64_t r) { kits[static_cast<size_t>(r)].reset(); });
}

INSTANTIATE_TEST_SUITE_P(
    Calls, OwnOverlap,
    ::testing::Values(OwnCase{"redistribute: dst overlaps src", Call::redistribute,
                              "dst shares memory with src (their bytes overlap): gdap_redistribute works out of place"},
                      OwnCase{"reduce_scatter: result overlaps source", Call::reduce_scatter,
                              "result shares memory with source (their bytes overlap): gdap_reduce_scatter"}),
    [](const ::testing::TestParamInfo<OwnCase>& info) { return std::string(call_kit::name(info.param.call)).substr(5); });

// Two ranks' 1-d sections of 4 float64 over one buffer of 8: rank 0's at elements [0, 4), rank 1's
// at [`offset`, `offset` + 4); each rank's second section is its own.
struct Shared {
  std::vector<double> buffer = std::vector<double>(8, 0.0), own0 = std::vector<double>(4, 0.0),
                      own1 = std::vector<double>(4, 0.0);
  gdap_array* over[2] = {nullptr, nullptr};  // the two ranks' sections over `buffer`
  gdap_array* own[2] = {nullptr, nullptr};   // each rank's separate section
  Shared(int64_t offset, const gdap_dim& d0, const gdap_dim& d1) {
    for (size_t k = 0; k < buffer.size(); ++k) buffer[k] = static_cast<double>(k);
    EXPECT_EQ(gdap_array_wrap(&over[0], buffer.data(), kF64, kCpu, nullptr, &d0, 1), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(gdap_array_wrap(&over[1], buffer.data() + offset, kF64, kCpu, nullptr, &d1, 1), GDAP_SUCCESS);
    EXPECT_EQ(gdap_array_wrap(&own[0], own0.data(), kF64, kCpu, nullptr, &d0, 1), GDAP_SUCCESS);
    EXPECT_EQ(gdap_array_wrap(&own[1], own1.data(), kF64, kCpu, nullptr, &d1, 1), GDAP_SUCCESS);
  }
  ~Shared() {
    for (gdap_array* a : {over[0], over[1], own[0], own[1]}) gdap_array_destroy(a);
  }
  bool untouched() const {
    for (size_t k = 0; k < buffer.size(); ++k) {
      if (buffer[k] != static_cast<double>(k)) return false;
    }
    for (double v : own0) {
      if (v != 0.0) return false;
    }
    for (double v : own1) {
      if (v != 0.0) return false;
    }
    return true;
  }
};

// Runs `call(rank)` on both ranks of a group and checks the clash rule: GDAP_ERR_INVALID_ARGUMENT
// on both, the same text naming both ranks' arguments, nothing changed.
void expect_clash(const std::function<gdap_status(gdap_comm*, int64_t)>& call, const Shared& s, const char* words) {
  gdap_test::Group group(2, 20);
  gdap_status got[2];
  std::string said[2];
  gdap_test::on_threads(2, [&](int64_t r) {
    got[r] = call(group[r], r);
    said[r] = gdap_last_error();
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(got[r], GDAP_ERR_INVALID_ARGUMENT) << said[r];
    EXPECT_TRUE(contains(said[r], words)) << said[r];
    EXPECT_TRUE(contains(said[r], "(the ranks share one address space)")) << said[r];
  }
  EXPECT_EQ(said[0], said[1]) << "every rank reports the same";
  EXPECT_TRUE(s.untouched());
}

// Rule: in a group, rank 1's destination over rank 0's source is refused on both ranks.
TEST(Clash, OneRanksDestinationOverAnotherRanksSource) {
  const gdap_dim blocks[2] = {gdap_test::block(8, 2, 0, 0, 4), gdap_test::block(8, 2, 1, 4, 8)};
  const gdap_dim cyclics[2] = {gdap_test::cyclic(8, 2, 0, 0), gdap_test::cyclic(8, 2, 1, 1)};
  gdap_map *src = nullptr, *dst = nullptr;
  ASSERT_EQ(gdap_map_create(&src, 2, 1, blocks), GDAP_SUCCESS);
  ASSERT_EQ(gdap_map_create(&dst, 2, 1, cyclics), GDAP_SUCCESS);
  gdap_plan* plans[2] = {nullptr, nullptr};
  for (int r = 0; r < 2; ++r) ASSERT_EQ(gdap_plan_create(&plans[r], src, dst, kF64, r), GDAP_SUCCESS);
  std::vector<double> src0(4, 0.0), src1(4, 0.0), dst0(4, 0.0);
  // Rank 1's destination is rank 0's source (elements 2 to 5 of the buffer overlap 0 to 3).
  Shared s(2, blocks[0], cyclics[1]);
  expect_clash(
      [&](gdap_comm* comm, int64_t r) {
        return r == 0 ? gdap_redistribute(comm, plans[0], s.over[0], s.own[0])
                      : gdap_redistribute(comm, plans[1], s.own[1], s.over[1]);
      },
      s, "rank 0's src and rank 1's dst share memory");
  for (gdap_plan* p : plans) gdap_plan_destroy(p);
  gdap_map_destroy(dst);
  gdap_map_destroy(src);
}

// Rule: in a group, two ranks all-reducing the same memory (the Python mistake [a] * n) are refused.
TEST(Clash, TwoRanksAllReducingOneSection) {
  const gdap_dim whole = gdap_test::undistributed(4);
  Shared s(0, whole, whole);
  expect_clash([&](gdap_comm* comm, int64_t r) { return gdap_allreduce(comm, s.over[r], GDAP_REDUCE_SUM); }, s,
               "rank 0's section and rank 1's section share memory");
}

// Rule: in a group, two ranks' halo sections over one buffer are refused (each writes its padding
// where the other reads or writes).
TEST(Clash, TwoRanksHaloSectionsOverOneBuffer) {
  const gdap_dim d0 = gdap_test::padded(gdap_test::block(6, 2, 0, 0, 4), 0, 1);
  const gdap_dim d1 = gdap_test::padded(gdap_test::block(6, 2, 1, 2, 6), 1, 0);
  const gdap_dim both[2] = {d0, d1};
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create(&map, 2, 1, both), GDAP_SUCCESS) << gdap_last_error();
  gdap_halo* halos[2] = {nullptr, nullptr};
  for (int r = 0; r < 2; ++r) ASSERT_EQ(gdap_halo_create(&halos[r], map, kF64, r, nullptr), GDAP_SUCCESS);
  Shared s(2, d0, d1);  // rank 1's section starts where rank 0's padding and last owned element are
  expect_clash([&](gdap_comm* comm, int64_t r) { return gdap_halo_exchange(comm, halos[r], s.over[r]); }, s,
               "rank 0's local and rank 1's local share memory");
  for (gdap_halo* h : halos) gdap_halo_destroy(h);
  gdap_map_destroy(map);
}

// Two ranks of a group redistribute a 4 x 6 matrix (global value 10 * row + column) from row blocks
// in buffers of their own into cyclic columns, rank r's destination a view of one shared buffer
// `into` at element `at[r]` with strides `strides[r]` (elements).
struct ColumnsIntoOneBuffer {
  static constexpr int64_t kRows = 4, kCols = 6;
  gdap_map *rows = nullptr, *cols = nullptr;
  gdap_plan* plans[2] = {nullptr, nullptr};
  std::vector<double> src[2] = {std::vector<double>(12), std::vector<double>(12)};
  gdap_array* srcs[2] = {nullptr, nullptr};
  gdap_array* dsts[2] = {nullptr, nullptr};

  ColumnsIntoOneBuffer(std::vector<double>& into, const int64_t at[2], const int64_t strides[2][2]) {
    const gdap_dim by_rows[4] = {gdap_test::block(kRows, 2, 0, 0, 2), gdap_test::undistributed(kCols),
                                 gdap_test::block(kRows, 2, 1, 2, 4), gdap_test::undistributed(kCols)};
    const gdap_dim by_cols[4] = {gdap_test::undistributed(kRows), gdap_test::cyclic(kCols, 2, 0, 0),
                                 gdap_test::undistributed(kRows), gdap_test::cyclic(kCols, 2, 1, 1)};
    EXPECT_EQ(gdap_map_create(&rows, 2, 2, by_rows), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(gdap_map_create(&cols, 2, 2, by_cols), GDAP_SUCCESS) << gdap_last_error();
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(gdap_plan_create(&plans[r], rows, cols, kF64, r), GDAP_SUCCESS) << gdap_last_error();
      for (int64_t k = 0; k < 12; ++k) src[r][static_cast<size_t>(k)] = static_cast<double>(10 * (2 * r + k / kCols) + k % kCols);
      EXPECT_EQ(gdap_array_wrap(&srcs[r], src[r].data(), kF64, kCpu, nullptr, &by_rows[2 * r], 2), GDAP_SUCCESS);
      EXPECT_EQ(gdap_array_wrap(&dsts[r], into.data() + at[r], kF64, kCpu, strides[r], &by_cols[2 * r], 2), GDAP_SUCCESS)
          << gdap_last_error();
    }
  }
  ~ColumnsIntoOneBuffer() {
    for (int r = 0; r < 2; ++r) {
      gdap_array_destroy(srcs[r]);
      gdap_array_destroy(dsts[r]);
      gdap_plan_destroy(plans[r]);
    }
    gdap_map_destroy(rows);
    gdap_map_destroy(cols);
  }
  // Both ranks' gdap_redistribute on a group of two: their statuses and errors.
  void run(gdap_status got[2], std::string said[2]) {
    gdap_test::Group group(2, 20);
    gdap_test::on_threads(2, [&](int64_t r) {
      got[r] = gdap_redistribute(group[r], plans[r], srcs[r], dsts[r]);
      said[r] = gdap_last_error();
    });
  }
};

// Rule: two ranks' destinations that are the even and the odd columns of one buffer share no byte:
// the call runs (it used to be refused, byte spans being compared) and every element of the buffer
// is the matrix's.
TEST(Clash, RanksWritingInterleavedColumnsOfOneBufferRun) {
  std::vector<double> into(24, -1.0);
  const int64_t at[2] = {0, 1}, strides[2][2] = {{6, 2}, {6, 2}};
  ColumnsIntoOneBuffer c(into, at, strides);
  gdap_status got[2];
  std::string said[2];
  c.run(got, said);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(got[r], GDAP_SUCCESS) << "rank " << r << ": " << said[r];
  for (int64_t k = 0; k < 24; ++k) {
    EXPECT_EQ(into[static_cast<size_t>(k)], static_cast<double>(10 * (k / 6) + k % 6)) << "element " << k;
  }
}

// Rule: destinations that share one element only are refused on both ranks, naming both; here
// only the last element of each: rank 0's even columns end at element 22, where rank 1's view,
// running backwards from element 44 with the same strides, ends too. Nothing moves.
TEST(Clash, RanksWritingOneSharedLastElementAreRefused) {
  std::vector<double> into(45, -1.0);
  const int64_t at[2] = {0, 44}, strides[2][2] = {{6, 2}, {-6, -2}};
  ColumnsIntoOneBuffer c(into, at, strides);
  gdap_status got[2];
  std::string said[2];
  c.run(got, said);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(got[r], GDAP_ERR_INVALID_ARGUMENT) << said[r];
    EXPECT_TRUE(contains(said[r], "rank 0's dst and rank 1's dst share memory")) << said[r];
  }
  for (double v : into) EXPECT_EQ(v, -1.0) << "nothing moved";
}

// Rule: overlap is a shared byte (core/footprint.hpp), not overlapping byte spans: a destination
// that is the odd elements of the buffer whose even elements are the source shares no byte and the
// call runs (it used to be refused, as numpy.may_share_memory would), as does a destination just
// past the source's last byte; one whose last element is the source's last is refused.
TEST(Spans, InterleavedViewsAndAdjacentOnesRunOneSharedElementIsRefused) {
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS);
  const gdap_dim d = gdap_test::block(4, 1, 0, 0, 4);
  gdap_map* map = nullptr;
  gdap_plan* plan = nullptr;
  ASSERT_EQ(gdap_map_create(&map, 1, 1, &d), GDAP_SUCCESS);
  ASSERT_EQ(gdap_plan_create(&plan, map, map, kF64, 0), GDAP_SUCCESS);
  std::vector<double> buffer(8);
  for (size_t k = 0; k < buffer.size(); ++k) buffer[k] = static_cast<double>(k);
  const int64_t every_other = 2;
  gdap_array *even = nullptr, *odd = nullptr, *low = nullptr, *high = nullptr;
  ASSERT_EQ(gdap_array_wrap(&even, buffer.data(), kF64, kCpu, &every_other, &d, 1), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_wrap(&odd, buffer.data() + 1, kF64, kCpu, &every_other, &d, 1), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_wrap(&low, buffer.data(), kF64, kCpu, nullptr, &d, 1), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_wrap(&high, buffer.data() + 4, kF64, kCpu, nullptr, &d, 1), GDAP_SUCCESS);
  EXPECT_EQ(gdap_redistribute(comm, plan, even, odd), GDAP_SUCCESS) << gdap_last_error();
  for (size_t k = 0; k < buffer.size(); ++k) {
    EXPECT_EQ(buffer[k], static_cast<double>(k - k % 2)) << "element " << k << ": the odd ones are the even ones'";
  }
  for (size_t k = 0; k < buffer.size(); ++k) buffer[k] = static_cast<double>(k);
  EXPECT_EQ(gdap_redistribute(comm, plan, low, high), GDAP_SUCCESS) << gdap_last_error();
  for (size_t k = 0; k < buffer.size(); ++k) EXPECT_EQ(buffer[k], static_cast<double>(k % 4)) << "element " << k;
  // One shared element, the last of both: src elements 0..3, dst elements 12, 9, 6, 3 (stride -3).
  std::vector<double> wide(13);
  for (size_t k = 0; k < wide.size(); ++k) wide[k] = static_cast<double>(k);
  const int64_t back_three = -3;
  gdap_array *first_four = nullptr, *down = nullptr;
  ASSERT_EQ(gdap_array_wrap(&first_four, wide.data(), kF64, kCpu, nullptr, &d, 1), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_wrap(&down, wide.data() + 12, kF64, kCpu, &back_three, &d, 1), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(gdap_redistribute(comm, plan, first_four, down), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "dst shares memory with src (their bytes overlap)")) << gdap_last_error();
  for (size_t k = 0; k < wide.size(); ++k) EXPECT_EQ(wide[k], static_cast<double>(k)) << "nothing moved";
  for (gdap_array* a : {even, odd, low, high, first_four, down}) gdap_array_destroy(a);
  gdap_plan_destroy(plan);
  gdap_map_destroy(map);
  gdap_comm_destroy(comm);
}

// Rule: gdap_reduce_axes's result may not overlap its source either.
TEST(Spans, ReduceAxesResultOverItsSource) {
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS);
  const gdap_dim d = gdap_test::block(4, 1, 0, 0, 4);
  std::vector<double> buffer = {1, 2, 3, 4};
  gdap_array *source = nullptr, *total = nullptr;
  ASSERT_EQ(gdap_array_wrap(&source, buffer.data(), kF64, kCpu, nullptr, &d, 1), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_wrap(&total, buffer.data() + 3, kF64, kCpu, nullptr, nullptr, 0), GDAP_SUCCESS);
  EXPECT_EQ(gdap_reduce_axes(comm, source, total, GDAP_REDUCE_SUM, nullptr, 0), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "result shares memory with source")) << gdap_last_error();
  EXPECT_EQ(buffer, (std::vector<double>{1, 2, 3, 4}));
  gdap_array_destroy(total);
  gdap_array_destroy(source);
  gdap_comm_destroy(comm);
}

}  // namespace
