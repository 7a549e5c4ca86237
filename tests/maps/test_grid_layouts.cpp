// Layer 2, the layout helpers: gdap_map_create_grid, gdap_map_create_unstructured and
// gdap_grid_balance. Each case names the rule it checks and lists, per grid coordinate of each axis,
// the dictionary it must give (written out by hand, not computed), or the error and the words its
// message must hold. Every rank of a made map is compared with the dictionaries of its C-order grid
// coordinates.
#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/dims.hpp"

#include <string>
#include <vector>

namespace {

using gdap_test::block;
using gdap_test::cyclic;
using gdap_test::padded;
using gdap_test::periodic;

gdap_axis_layout blocks(int64_t size, int64_t grid, int64_t halo = 0, bool wraps = false,
                        const int64_t* lengths = nullptr) {
  gdap_axis_layout a = GDAP_AXIS_LAYOUT_INIT;
  a.size = size;
  a.grid_size = grid;
  a.halo = halo;
  a.periodic = wraps ? 1 : 0;
  a.lengths = lengths;
  return a;
}

gdap_axis_layout cycles(int64_t size, int64_t grid, int64_t block_size = 1) {
  gdap_axis_layout a = GDAP_AXIS_LAYOUT_INIT;
  a.dist_type = GDAP_DIST_CYCLIC;
  a.size = size;
  a.grid_size = grid;
  a.block_size = block_size;
  return a;
}

template <typename F>
gdap_axis_layout with(gdap_axis_layout a, F change) {
  change(a);
  return a;
}

const int64_t kIrregular[] = {1, 6, 3};
const int64_t kShort[] = {4, 4};
const int64_t kNegative[] = {11, -1};
const int64_t kEdges[] = {3, 2, 5};

struct Case {
  const char* rule;
  std::vector<gdap_axis_layout> axes;
  std::vector<std::vector<gdap_dim>> expected;  // per axis, per grid coordinate (empty on error)
  gdap_status status = GDAP_SUCCESS;
  std::vector<std::string> words = {};
};

bool same(const gdap_dim& a, const gdap_dim& b) {
  return a.dist_type == b.dist_type && a.size == b.size && a.proc_grid_size == b.proc_grid_size &&
         a.proc_grid_rank == b.proc_grid_rank && a.start == b.start && a.given == b.given &&
         (a.dist_type != GDAP_DIST_BLOCK ||
          (a.stop == b.stop && a.padding[0] == b.padding[0] && a.padding[1] == b.padding[1] && a.periodic == b.periodic)) &&
         (a.dist_type != GDAP_DIST_CYCLIC || a.block_size == b.block_size);
}

std::string text(const gdap_dim& d) {
  return "{'" + std::string(1, static_cast<char>(d.dist_type)) + "' rank " + std::to_string(d.proc_grid_rank) + "/" +
         std::to_string(d.proc_grid_size) + " start " + std::to_string(d.start) + " stop " + std::to_string(d.stop) +
         " padding (" + std::to_string(d.padding[0]) + ", " + std::to_string(d.padding[1]) + ") periodic " +
         std::to_string(d.periodic) + " block_size " + std::to_string(d.block_size) + " given " +
         std::to_string(d.given) + "}";
}

std::vector<Case> cases() {
  return {
      {"even blocks split as ceil(n / P), the last shorter", {blocks(10, 4)},
       {{block(10, 4, 0, 0, 3), block(10, 4, 1, 3, 6), block(10, 4, 2, 6, 9), block(10, 4, 3, 9, 10)}}},
      {"even blocks may leave the last ones empty", {blocks(9, 4)},
       {{block(9, 4, 0, 0, 3), block(9, 4, 1, 3, 6), block(9, 4, 2, 6, 9), block(9, 4, 3, 9, 9)}}},
      {"a grid of one is the whole dimension", {blocks(7, 1)}, {{block(7, 1, 0, 0, 7)}}},
      {"a 2 x 3 grid: ranks in C order over the coordinates", {blocks(4, 2), blocks(6, 3)},
       {{block(4, 2, 0, 0, 2), block(4, 2, 1, 2, 4)}, {block(6, 3, 0, 0, 2), block(6, 3, 1, 2, 4), block(6, 3, 2, 4, 6)}}},
      {"irregular blocks take the given lengths", {blocks(10, 3, 0, false, kIrregular)},
       {{block(10, 3, 0, 0, 1), block(10, 3, 1, 1, 7), block(10, 3, 2, 7, 10)}}},
      {"cyclic starts at the grid coordinate, without a block_size key", {cycles(7, 3)},
       {{cyclic(7, 3, 0, 0), cyclic(7, 3, 1, 1), cyclic(7, 3, 2, 2)}}},
      {"block-cyclic starts at coordinate * block_size", {cycles(10, 2, 3)}, {{cyclic(10, 2, 0, 0, 3), cyclic(10, 2, 1, 3, 3)}}},
      {"block rows, cyclic columns", {blocks(4, 2), cycles(5, 2, 2)},
       {{block(4, 2, 0, 0, 2), block(4, 2, 1, 2, 4)}, {cyclic(5, 2, 0, 0, 2), cyclic(5, 2, 1, 2, 2)}}},
      {"a halo pads towards neighbours only", {blocks(12, 3, 2)},
       {{padded(block(12, 3, 0, 0, 6), 0, 2), padded(block(12, 3, 1, 2, 10), 2, 2), padded(block(12, 3, 2, 6, 12), 2, 0)}}},
      {"a halo on a grid of one gives padding (0, 0) and no neighbour", {blocks(5, 1, 1)}, {{padded(block(5, 1, 0, 0, 5), 0, 0)}}},
      {"periodic: edge blocks add boundary padding inside size, the interior splits evenly", {blocks(10, 2, 1, true)},
       {{periodic(padded(block(10, 2, 0, 0, 6), 1, 1)), periodic(padded(block(10, 2, 1, 4, 10), 1, 1))}}},
      {"periodic on one rank: boundary padding on both sides", {blocks(10, 1, 2, true)},
       {{periodic(padded(block(10, 1, 0, 0, 10), 2, 2))}}},
      {"periodic irregular: the lengths include the boundary cells", {blocks(10, 3, 2, true, kEdges)},
       {{periodic(padded(block(10, 3, 0, 0, 5), 2, 2)), periodic(padded(block(10, 3, 1, 1, 7), 2, 2)),
         periodic(padded(block(10, 3, 2, 3, 10), 2, 2))}}},
      {"periodic without a halo only gives the key", {blocks(6, 2, 0, true)},
       {{periodic(block(6, 2, 0, 0, 3)), periodic(block(6, 2, 1, 3, 6))}}},
      {"size 0 over 3 ranks: every block empty", {blocks(0, 3)},
       {{block(0, 3, 0, 0, 0), block(0, 3, 1, 0, 0), block(0, 3, 2, 0, 0)}}},

      {"ndim >= 1", {}, {}, GDAP_ERR_INVALID_ARGUMENT, {"ndim 0"}},
      {"struct_size is set", {with(blocks(4, 2), [](auto& a) { a.struct_size = 8; })}, {}, GDAP_ERR_INVALID_ARGUMENT,
       {"struct_size is 8", "GDAP_AXIS_LAYOUT_INIT"}},
      {"dist_type is 'b' or 'c'", {with(blocks(4, 2), [](auto& a) { a.dist_type = 'u'; })}, {}, GDAP_ERR_INVALID_ARGUMENT,
       {"axis 0", "dist_type 117"}},
      {"size >= 0", {blocks(4, 1), blocks(-1, 2)}, {}, GDAP_ERR_INVALID_ARGUMENT, {"axis 1", "size (-1) < 0"}},
      {"grid_size >= 1", {blocks(4, 0)}, {}, GDAP_ERR_INVALID_ARGUMENT, {"axis 0", "grid_size (0) < 1"}},
      {"reserved is 0", {with(blocks(4, 2), [](auto& a) { a.reserved = 3; })}, {}, GDAP_ERR_INVALID_ARGUMENT, {"reserved (3)"}},
      {"block_size >= 1 on 'c'", {cycles(4, 2, 0)}, {}, GDAP_ERR_INVALID_ARGUMENT, {"block_size (0) < 1"}},
      {"block_size stays 1 on 'b'", {with(blocks(4, 2), [](auto& a) { a.block_size = 2; })}, {}, GDAP_ERR_INVALID_ARGUMENT,
       {"block_size (2) is for cyclic axes"}},
      {"lengths only on 'b'", {with(cycles(4, 2), [](auto& a) { a.lengths = kShort; })}, {}, GDAP_ERR_INVALID_ARGUMENT,
       {"lengths are for block axes only"}},
      {"halo only on 'b'", {with(cycles(4, 2), [](auto& a) { a.halo = 1; })}, {}, GDAP_ERR_INVALID_ARGUMENT,
       {"halo (1) is for block axes only"}},
      {"periodic only on 'b'", {with(cycles(4, 2), [](auto& a) { a.periodic = 1; })}, {}, GDAP_ERR_INVALID_ARGUMENT,
       {"periodic is for block axes only"}},
      {"lengths sum to size", {blocks(10, 2, 0, false, kShort)}, {}, GDAP_ERR_INVALID_ARGUMENT, {"sum to 8, not to size 10"}},
      {"lengths >= 0", {blocks(10, 2, 0, false, kNegative)}, {}, GDAP_ERR_INVALID_ARGUMENT, {"lengths[1] (-1) < 0"}},
      {"halo >= 0", {blocks(10, 2, -1)}, {}, GDAP_ERR_INVALID_ARGUMENT, {"halo (-1) < 0"}},
      {"a halo reaches at most into a neighbour's whole block", {blocks(10, 4, 2)}, {}, GDAP_ERR_INVALID_ARGUMENT,
       {"halo 2 is wider than the 1 cells that grid coordinate 3 owns"}},
      {"a periodic halo needs an interior of halo cells", {blocks(5, 2, 2, true)}, {}, GDAP_ERR_INVALID_ARGUMENT,
       {"axis 0 ('b'): a periodic halo of 2", "size (5) >= 3 * halo"}},
      {"periodic boundary padding fits in the one block", {blocks(5, 1, 2, true)}, {}, GDAP_ERR_INVALID_ARGUMENT,
       {"size (5) >= 3 * halo"}},
      {"a halo is no wider than size", {blocks(3, 1, 4)}, {}, GDAP_ERR_INVALID_ARGUMENT, {"halo (4) > size (3)"}},
      {"the grid's size fits int64", {blocks(4, int64_t{1} << 40), blocks(4, int64_t{1} << 40)}, {}, GDAP_ERR_OVERFLOW,
       {"process grid"}},
  };
}

TEST(GridLayout, Cases) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.rule);
    gdap_map* map = nullptr;
    const gdap_status s = gdap_map_create_grid(&map, static_cast<int64_t>(c.axes.size()), c.axes.empty() ? nullptr : c.axes.data());
    EXPECT_EQ(s, c.status) << gdap_last_error();
    if (s != c.status) {
      gdap_map_destroy(map);
      continue;
    }
    if (s != GDAP_SUCCESS) {
      EXPECT_EQ(map, nullptr);
      for (const auto& w : c.words) EXPECT_NE(std::string(gdap_last_error()).find(w), std::string::npos) << gdap_last_error();
      continue;
    }
    int64_t nranks = 0;
    ASSERT_EQ(gdap_map_nranks(&nranks, map), GDAP_SUCCESS);
    const auto ndim = static_cast<int64_t>(c.axes.size());
    for (int64_t r = 0; r < nranks; ++r) {
      int64_t rest = r;
      for (int64_t i = ndim - 1; i >= 0; --i) {
        const auto& by_coord = c.expected[static_cast<size_t>(i)];
        const gdap_dim& want = by_coord[static_cast<size_t>(rest % static_cast<int64_t>(by_coord.size()))];
        rest /= static_cast<int64_t>(by_coord.size());
        gdap_dim got = GDAP_DIM_INIT;
        ASSERT_EQ(gdap_map_dim(&got, map, r, i), GDAP_SUCCESS);
        EXPECT_TRUE(same(got, want)) << "rank " << r << " dimension " << i << ": " << text(got) << " != " << text(want);
      }
    }
    gdap_map_destroy(map);
  }
}

TEST(GridLayout, ANewerCallersLargerStructIsReadByItsStride) {
  struct Larger {
    gdap_axis_layout axis;
    int64_t appended;
  };
  Larger axes[2] = {{blocks(6, 2), 99}, {cycles(4, 2), 99}};
  axes[0].axis.struct_size = axes[1].axis.struct_size = sizeof(Larger);
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create_grid(&map, 2, &axes[0].axis), GDAP_SUCCESS) << gdap_last_error();
  int64_t grid[2] = {0, 0};
  ASSERT_EQ(gdap_map_grid_shape(grid, map), GDAP_SUCCESS);
  EXPECT_EQ(grid[0], 2);
  EXPECT_EQ(grid[1], 2);
  gdap_map_destroy(map);
}

TEST(GridLayout, NullArgumentsAreNamed) {
  const gdap_axis_layout a = blocks(4, 2);
  gdap_map* map = nullptr;
  EXPECT_EQ(gdap_map_create_grid(nullptr, 1, &a), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("out is NULL"), std::string::npos);
  EXPECT_EQ(gdap_map_create_grid(&map, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("axes is NULL"), std::string::npos);
}

struct BalanceCase {
  const char* rule;
  std::vector<int64_t> grid;  // on entry
  int64_t nranks;
  std::vector<int64_t> expected;  // on return (empty: an error)
  std::string words = "";
};

TEST(GridBalance, Cases) {
  const std::vector<BalanceCase> table = {
      {"12 over two free axes: 4 x 3", {0, 0}, 12, {4, 3}},
      {"16 over two free axes: 4 x 4", {0, 0}, 16, {4, 4}},
      {"a prime stays on one axis", {0, 0}, 7, {7, 1}},
      {"8 over three: 2 x 2 x 2", {0, 0, 0}, 8, {2, 2, 2}},
      {"fixed extents are kept, the rest balanced", {0, 2, 0}, 12, {3, 2, 2}},
      {"one axis takes every rank", {0}, 5, {5}},
      {"every extent fixed and right", {2, 3}, 6, {2, 3}},
      {"one rank", {0, 0}, 1, {1, 1}},
      {"fixed extents must divide nranks", {0, 5}, 12, {}, "multiply to 5, which does not divide 12 ranks"},
      {"every extent fixed and wrong", {2, 2}, 6, {}, "does not divide 6"},
      {"extents >= 0", {-1, 0}, 4, {}, "grid_shape[0] (-1) < 0"},
      {"nranks >= 1", {0}, 0, {}, "nranks (0) < 1"},
  };
  for (const auto& c : table) {
    SCOPED_TRACE(c.rule);
    std::vector<int64_t> grid = c.grid;
    const gdap_status s = gdap_grid_balance(grid.data(), static_cast<int64_t>(grid.size()), c.nranks);
    if (c.expected.empty()) {
      EXPECT_EQ(s, GDAP_ERR_INVALID_ARGUMENT);
      EXPECT_NE(std::string(gdap_last_error()).find(c.words), std::string::npos) << gdap_last_error();
      EXPECT_EQ(grid, c.grid) << "nothing is written on failure";
    } else {
      EXPECT_EQ(s, GDAP_SUCCESS) << gdap_last_error();
      EXPECT_EQ(grid, c.expected);
    }
  }
}

const int64_t kRows[] = {4, 0, 2, 1, 3, 0};

TEST(UnstructuredLayout, RanksHoldTheirSliceOfIndicesAndWholeTails) {
  const int64_t shape[] = {5, 3};
  const int64_t counts[] = {2, 3, 1};
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create_unstructured(&map, 3, 2, shape, counts, kRows, 6, 0), GDAP_SUCCESS) << gdap_last_error();
  const int64_t expected_first[] = {4, 2, 0};
  for (int64_t r = 0; r < 3; ++r) {
    gdap_dim d0 = GDAP_DIM_INIT, d1 = GDAP_DIM_INIT;
    ASSERT_EQ(gdap_map_dim(&d0, map, r, 0), GDAP_SUCCESS);
    ASSERT_EQ(gdap_map_dim(&d1, map, r, 1), GDAP_SUCCESS);
    EXPECT_EQ(d0.dist_type, GDAP_DIST_UNSTRUCTURED);
    EXPECT_EQ(d0.num_indices, counts[r]);
    EXPECT_EQ(d0.indices[0], expected_first[r]);
    EXPECT_EQ(d0.one_to_one, 0);
    EXPECT_TRUE(same(d1, block(3, 1, 0, 0, 3)));
  }
  int64_t owners = 0;
  const int64_t global[] = {0, 1};
  EXPECT_EQ(gdap_map_owners(nullptr, &owners, map, global, 0), GDAP_ERR_BUFFER_TOO_SMALL) << "counting only";
  EXPECT_EQ(owners, 2) << "row 0 is held by ranks 0 and 2 (replicas, one_to_one false)";
  gdap_map_destroy(map);
}

TEST(UnstructuredLayout, BadInputIsNamed) {
  const int64_t shape[] = {5};
  const int64_t counts[] = {2, 3, 1};
  const int64_t negative[] = {2, -1, 5};
  struct Bad {
    const char* rule;
    gdap_status status;
    std::string words;
    gdap_status (*call)(gdap_map**, const int64_t*, const int64_t*, const int64_t*);
  };
  const std::vector<Bad> table = {
      {"counts sum to num_indices", GDAP_ERR_INVALID_ARGUMENT, "counts sum to 6 indices, but num_indices is 5",
       [](gdap_map** m, const int64_t* s, const int64_t* c, const int64_t*) { return gdap_map_create_unstructured(m, 3, 1, s, c, kRows, 5, 0); }},
      {"counts >= 0", GDAP_ERR_INVALID_ARGUMENT, "counts[1] (-1) < 0",
       [](gdap_map** m, const int64_t* s, const int64_t*, const int64_t* n) { return gdap_map_create_unstructured(m, 3, 1, s, n, kRows, 6, 0); }},
      {"counts is not NULL", GDAP_ERR_INVALID_ARGUMENT, "counts is NULL",
       [](gdap_map** m, const int64_t* s, const int64_t*, const int64_t*) { return gdap_map_create_unstructured(m, 3, 1, s, nullptr, kRows, 6, 0); }},
      {"one_to_one 1 holds each index once", GDAP_ERR_PROTOCOL, "rank",
       [](gdap_map** m, const int64_t* s, const int64_t* c, const int64_t*) { return gdap_map_create_unstructured(m, 3, 1, s, c, kRows, 6, 1); }},
      {"nranks >= 1", GDAP_ERR_INVALID_ARGUMENT, "nranks 0",
       [](gdap_map** m, const int64_t* s, const int64_t* c, const int64_t*) { return gdap_map_create_unstructured(m, 0, 1, s, c, kRows, 6, 0); }},
  };
  for (const auto& b : table) {
    SCOPED_TRACE(b.rule);
    gdap_map* map = nullptr;
    EXPECT_EQ(b.call(&map, shape, counts, negative), b.status);
    EXPECT_EQ(map, nullptr);
    EXPECT_NE(std::string(gdap_last_error()).find(b.words), std::string::npos) << gdap_last_error();
  }
}

}  // namespace
