// Layer 2, one dimension of one process: global <-> local look-ups and owned runs for each
// dist_type (block, irregular, padded, periodic; cyclic, block-cyclic; unstructured), as a table
// of cases each naming its rule; then the process grid's rank <-> coordinates.
#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/dims.hpp"

#include <climits>
#include <string>
#include <vector>

namespace {

using gdap_test::block;
using gdap_test::cyclic;
using gdap_test::padded;
using gdap_test::periodic;
gdap_dim unstructured(const std::vector<int64_t>& idx, int64_t size = 10) {
  gdap_dim d = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_dim_set_unstructured(&d, size, 2, 0, idx.data(), static_cast<int64_t>(idx.size()), -1),
            GDAP_SUCCESS);
  return d;
}

const std::vector<int64_t> kScattered{5, 6, 7, 2, 3, 9, -4};
const std::vector<int64_t> kReversed{3, 2, 1};
const std::vector<int64_t> kNone{};

constexpr int64_t kAbsent = -1;  // global_to_local must answer GDAP_ERR_NOT_FOUND

struct Case {
  const char* rule;
  gdap_dim dim;
  std::vector<std::pair<int64_t, int64_t>> lookups;  // (global, local or kAbsent)
  std::vector<gdap_run> runs;                        // every owned run, in order
};

bool operator==(const gdap_run& a, const gdap_run& b) {
  return a.global_start == b.global_start && a.length == b.length && a.local_start == b.local_start;
}

std::vector<Case> cases() {
  return {
      {"b: regular block, second of two", block(10, 2, 1, 5, 10), {{5, 0}, {9, 4}, {4, kAbsent}, {10, kAbsent}},
       {{5, 5, 0}}},
      {"b: irregular block in the middle", block(10, 3, 1, 2, 9), {{2, 0}, {8, 6}, {1, kAbsent}, {9, kAbsent}},
       {{2, 7, 0}}},
      {"b: communication padding is held (look-up) but not owned (runs)", padded(block(10, 3, 1, 2, 8), 1, 1),
       {{2, 0}, {3, 1}, {7, 5}, {8, kAbsent}},
       {{3, 4, 1}}},
      {"b: boundary padding of grid rank 0 is owned", padded(block(10, 2, 0, 0, 6), 2, 1),
       {{0, 0}, {5, 5}, {6, kAbsent}},
       {{0, 5, 0}}},
      {"b: periodic boundary padding holds its own index and is owned (no wrap)", padded(periodic(block(10, 2, 0, 0, 6)), 1, 1),
       {{0, 0}, {4, 4}, {5, 5}, {9, kAbsent}, {-1, kAbsent}, {6, kAbsent}},
       {{0, 5, 0}}},
      {"b: periodic single rank: every cell its own index", padded(periodic(block(6, 1, 0, 0, 6)), 1, 1),
       {{0, 0}, {5, 5}, {-1, kAbsent}, {6, kAbsent}},
       {{0, 6, 0}}},
      {"b: periodic near the int64 limits: exact, nothing wraps", periodic(block(INT64_MAX, 2, 1, INT64_MAX - 3, INT64_MAX)),
       {{INT64_MIN + 1, kAbsent}, {INT64_MIN, kAbsent}, {INT64_MAX - 3, 0}, {INT64_MAX - 1, 2}, {INT64_MAX, kAbsent}},
       {{INT64_MAX - 3, 3, 0}}},
      {"b: empty section has no runs", block(10, 3, 1, 5, 5), {{5, kAbsent}}, {}},
      {"b: size 0", block(0, 1, 0, 0, 0), {{0, kAbsent}}, {}},
      {"c: cyclic, one run per element", cyclic(10, 3, 1, 1), {{1, 0}, {4, 1}, {7, 2}, {5, kAbsent}, {10, kAbsent}},
       {{1, 1, 0}, {4, 1, 1}, {7, 1, 2}}},
      {"c: block-cyclic, rank 0 holds full blocks", cyclic(10, 2, 0, 0, 3), {{0, 0}, {2, 2}, {6, 3}, {8, 5}, {3, kAbsent}},
       {{0, 3, 0}, {6, 3, 3}}},
      {"c: block-cyclic, the partial block belongs to grid rank (size / bs) % P", cyclic(10, 2, 1, 3, 3),
       {{3, 0}, {5, 2}, {9, 3}, {8, kAbsent}},
       {{3, 3, 0}, {9, 1, 3}}},
      {"c: empty section (start == size)", cyclic(4, 3, 2, 4, 2), {{0, kAbsent}, {3, kAbsent}}, {}},
      {"u: runs step by one in global and local after sorting; negative allowed", unstructured(kScattered),
       {{5, 0}, {9, 5}, {-4, 6}, {2, 3}, {4, kAbsent}},
       {{-4, 1, 6}, {2, 2, 3}, {5, 3, 0}, {9, 1, 5}}},
      {"u: descending indices are runs of one", unstructured(kReversed), {{1, 2}, {3, 0}},
       {{1, 1, 2}, {2, 1, 1}, {3, 1, 0}}},
      {"u: no indices", unstructured(kNone), {{0, kAbsent}}, {}},
  };
}

TEST(DimMap, LookupsAndRunsPerDistType) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.rule);
    for (auto [global, local] : c.lookups) {
      int64_t got = -99;
      const gdap_status s = gdap_dim_global_to_local(&got, &c.dim, global);
      if (local == kAbsent) {
        EXPECT_EQ(s, GDAP_ERR_NOT_FOUND) << "global " << global;
        EXPECT_EQ(got, -99) << "output written on failure";
      } else {
        ASSERT_EQ(s, GDAP_SUCCESS) << gdap_last_error();
        EXPECT_EQ(got, local) << "global " << global;
      }
    }
    int64_t n = -1;
    ASSERT_EQ(gdap_dim_num_runs(&n, &c.dim), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(n, static_cast<int64_t>(c.runs.size()));
    std::vector<gdap_run> all(c.runs.size() + 2);
    int64_t written = -1;
    ASSERT_EQ(gdap_dim_runs(all.data(), &written, &c.dim, 0, static_cast<int64_t>(all.size())), GDAP_SUCCESS);
    ASSERT_EQ(written, static_cast<int64_t>(c.runs.size()));
    for (size_t k = 0; k < c.runs.size(); ++k) EXPECT_TRUE(all[k] == c.runs[k]) << "run " << k;
    // Paging: one run at a time gives the same runs, then nothing past the end.
    for (int64_t first = 0; first <= n; ++first) {
      gdap_run one{-1, -1, -1};
      ASSERT_EQ(gdap_dim_runs(&one, &written, &c.dim, first, 1), GDAP_SUCCESS);
      EXPECT_EQ(written, first < n ? 1 : 0);
      if (first < n) EXPECT_TRUE(one == c.runs[static_cast<size_t>(first)]);
    }
    // local -> global -> local: the held position of each local index's global index holds it.
    int64_t extent = 0;
    ASSERT_EQ(gdap_dim_local_extent(&extent, &c.dim), GDAP_SUCCESS);
    for (int64_t l = 0; l < extent; ++l) {
      int64_t g = 0, back = 0, again = 0;
      ASSERT_EQ(gdap_dim_local_to_global(&g, &c.dim, l), GDAP_SUCCESS) << gdap_last_error();
      ASSERT_EQ(gdap_dim_global_to_local(&back, &c.dim, g), GDAP_SUCCESS) << gdap_last_error();
      ASSERT_EQ(gdap_dim_local_to_global(&again, &c.dim, back), GDAP_SUCCESS);
      EXPECT_EQ(again, g) << "local " << l;
    }
  }
}

struct ErrorCase {
  const char* rule;
  gdap_status (*call)();
  gdap_status expected;
  const char* words;
};

const gdap_dim kBlock = block(10, 2, 0, 0, 5);
const gdap_dim kAlias = GDAP_DIM_INIT;
const gdap_dim kBad = block(10, 2, 0, 0, 11);

TEST(DimMap, ErrorsAsTable) {
  const ErrorCase errors[] = {
      {"the empty dictionary needs its extent: resolve it first",
       [] { int64_t l; return gdap_dim_global_to_local(&l, &kAlias, 0); }, GDAP_ERR_PROTOCOL, "dimension 0"},
      {"an invalid dictionary is refused before use",
       [] { int64_t l; return gdap_dim_num_runs(&l, &kBad); }, GDAP_ERR_PROTOCOL, "stop"},
      {"local index past the buffer is out of range",
       [] { int64_t g; return gdap_dim_local_to_global(&g, &kBlock, 5); }, GDAP_ERR_OUT_OF_RANGE, "5"},
      {"negative local index is out of range",
       [] { int64_t g; return gdap_dim_local_to_global(&g, &kBlock, -1); }, GDAP_ERR_OUT_OF_RANGE, "-1"},
      {"NULL output", [] { return gdap_dim_global_to_local(nullptr, &kBlock, 0); }, GDAP_ERR_INVALID_ARGUMENT,
       "local"},
      {"NULL dimension", [] { int64_t n; return gdap_dim_num_runs(&n, nullptr); }, GDAP_ERR_INVALID_ARGUMENT, "dims"},
      {"runs NULL with room for a run", [] { int64_t w; return gdap_dim_runs(nullptr, &w, &kBlock, 0, 1); },
       GDAP_ERR_INVALID_ARGUMENT, "runs"},
      {"negative first", [] { gdap_run r; int64_t w; return gdap_dim_runs(&r, &w, &kBlock, -1, 1); },
       GDAP_ERR_INVALID_ARGUMENT, "first"},
      {"negative capacity", [] { gdap_run r; int64_t w; return gdap_dim_runs(&r, &w, &kBlock, 0, -1); },
       GDAP_ERR_INVALID_ARGUMENT, "capacity"},
  };
  for (const ErrorCase& e : errors) {
    SCOPED_TRACE(e.rule);
    EXPECT_EQ(e.call(), e.expected);
    EXPECT_NE(std::string(gdap_last_error()).find(e.words), std::string::npos) << gdap_last_error();
  }
}

TEST(DimMap, RunsNullWithZeroCapacityCounts) {
  int64_t written = -1;
  ASSERT_EQ(gdap_dim_runs(nullptr, &written, &kBlock, 0, 0), GDAP_SUCCESS);
  EXPECT_EQ(written, 0);
}

// ------------------------------------------------------------------------------------------
// Process grid: C order, like MPI_Cart_create.

TEST(Grid, RoundTripInCOrder) {
  const std::vector<std::vector<int64_t>> shapes{{}, {1}, {5}, {2, 3}, {2, 1, 4}, {3, 3, 3}};
  for (const auto& shape : shapes) {
    const auto ndim = static_cast<int64_t>(shape.size());
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<int64_t> previous;
    for (int64_t r = 0; r < n; ++r) {
      std::vector<int64_t> c(shape.size() + 1, -7);
      ASSERT_EQ(gdap_grid_rank_to_coords(c.data(), ndim, shape.data(), r), GDAP_SUCCESS) << gdap_last_error();
      c.resize(shape.size());
      if (r > 0) EXPECT_LT(previous, c) << "C order: coordinates grow lexicographically with the rank";
      previous = c;
      int64_t back = -1;
      ASSERT_EQ(gdap_grid_coords_to_rank(&back, ndim, shape.data(), c.data()), GDAP_SUCCESS);
      EXPECT_EQ(back, r);
    }
  }
  const int64_t shape[] = {2, 3};
  int64_t c[2];
  ASSERT_EQ(gdap_grid_rank_to_coords(c, 2, shape, 5), GDAP_SUCCESS);
  EXPECT_EQ(c[0], 1);
  EXPECT_EQ(c[1], 2);
  ASSERT_EQ(gdap_grid_rank_to_coords(c, 2, shape, 1), GDAP_SUCCESS);
  EXPECT_EQ(c[0], 0);
  EXPECT_EQ(c[1], 1) << "the last coordinate is the fastest";
}

TEST(Grid, ErrorsAsTable) {
  struct GridCase {
    const char* rule;
    std::vector<int64_t> shape;
    int64_t rank;                 // for rank_to_coords, or -100 to call coords_to_rank instead
    std::vector<int64_t> coords;  // for coords_to_rank
    gdap_status expected;
  };
  const GridCase errors[] = {
      {"rank below 0", {2, 3}, -1, {}, GDAP_ERR_OUT_OF_RANGE},
      {"rank past the grid", {2, 3}, 6, {}, GDAP_ERR_OUT_OF_RANGE},
      {"0-d grid has only rank 0", {}, 1, {}, GDAP_ERR_OUT_OF_RANGE},
      {"grid entries are >= 1", {2, 0}, 0, {}, GDAP_ERR_INVALID_ARGUMENT},
      {"grid product must fit int64", {INT64_MAX, 2}, 0, {}, GDAP_ERR_OVERFLOW},
      {"coordinate past its axis", {2, 3}, -100, {0, 3}, GDAP_ERR_OUT_OF_RANGE},
      {"negative coordinate", {2, 3}, -100, {-1, 0}, GDAP_ERR_OUT_OF_RANGE},
      {"grid product checked for coordinates too", {INT64_MAX, 2}, -100, {0, 0}, GDAP_ERR_OVERFLOW},
  };
  for (const GridCase& e : errors) {
    SCOPED_TRACE(e.rule);
    const auto ndim = static_cast<int64_t>(e.shape.size());
    int64_t out[3] = {-7, -7, -7};
    if (e.rank != -100) {
      EXPECT_EQ(gdap_grid_rank_to_coords(out, ndim, e.shape.data(), e.rank), e.expected);
    } else {
      EXPECT_EQ(gdap_grid_coords_to_rank(out, ndim, e.shape.data(), e.coords.data()), e.expected);
    }
    EXPECT_EQ(out[0], -7) << "nothing written on failure";
  }
  int64_t c[1];
  EXPECT_EQ(gdap_grid_rank_to_coords(c, -1, nullptr, 0), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_grid_rank_to_coords(nullptr, 1, std::vector<int64_t>{2}.data(), 0), GDAP_ERR_INVALID_ARGUMENT);
}

}  // namespace
