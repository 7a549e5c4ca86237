// Layer 2, the cross-process rules gdap_map_create checks: one case per rule, each a set of
// every rank's dictionaries that breaks it (and a valid twin where useful), expecting
// GDAP_ERR_PROTOCOL with the rank and dimension named in gdap_last_error().
#include "layouts.hpp"

#include <gdap/gdap.h>

#include <gtest/gtest.h>

#include "support/dims.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

using gdap_test::Axis;
using gdap_test::Layout;

using gdap_test::block;
using gdap_test::cyclic;
using gdap_test::padded;
using gdap_test::periodic;
// Static index arrays: the dictionaries only borrow them.
const int64_t kU01[] = {0, 1};
const int64_t kU12[] = {1, 2};
const int64_t kU2[] = {2};
const int64_t kU23[] = {2, 3};
const int64_t kU012[] = {0, 1, 2};
const int64_t kU10[] = {1, 0};
const int64_t kUNeg[] = {-1, 0};
const int64_t kU25[] = {2, 5};
gdap_dim unstructured(int64_t size, int64_t P, int64_t r, const int64_t* idx, int64_t n, int one_to_one) {
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_unstructured(&d, size, P, r, idx, n, one_to_one);
  return d;
}

Axis axis(std::vector<gdap_dim> by_coord) {
  Axis a;
  a.by_coord = std::move(by_coord);
  return a;
}

// Every rank's dictionaries for a grid whose axes give one dictionary per coordinate,
// then `edit` applied to the rank-major list (dims[r * ndim + i]).
std::vector<gdap_dim> ranks(std::vector<Axis> axes, const std::function<void(std::vector<gdap_dim>&)>& edit = {}) {
  Layout layout;
  for (const Axis& a : axes) layout.grid.push_back(static_cast<int64_t>(a.by_coord.size()));
  layout.axes = std::move(axes);
  layout.assemble();
  if (edit) edit(layout.ranks);
  return layout.ranks;
}

// Two block axes of 10 over 2 ranks, for 2-d cases.
Axis halves() { return axis({block(10, 2, 0, 0, 5), block(10, 2, 1, 5, 10)}); }
Axis thirds() { return axis({block(9, 3, 0, 0, 3), block(9, 3, 1, 3, 6), block(9, 3, 2, 6, 9)}); }

struct Case {
  const char* rule;
  int64_t nranks;
  int64_t ndim;
  std::vector<gdap_dim> dims;
  gdap_status expected;
  std::vector<std::string> words;  // the message must contain each
};

std::vector<Case> cases() {
  return {
      // valid maps
      {"valid: 2 x 3 block grid", 6, 2, ranks({halves(), thirds()}), GDAP_SUCCESS, {}},
      {"valid: one rank, 0-d", 1, 0, {block(1, 1, 0, 0, 1)}, GDAP_SUCCESS, {}},
      {"valid: replicated unstructured indices with one_to_one false", 2, 1,
       ranks({axis({unstructured(3, 2, 0, kU01, 2, 0), unstructured(3, 2, 1, kU12, 2, 0)})}), GDAP_SUCCESS, {}},

      // arguments
      {"nranks >= 1", 0, 1, {block(1, 1, 0, 0, 1)}, GDAP_ERR_INVALID_ARGUMENT, {"nranks"}},
      {"ndim >= 0", 1, -1, {block(1, 1, 0, 0, 1)}, GDAP_ERR_INVALID_ARGUMENT, {"ndim"}},
      {"dictionaries are read with the caller's struct_size", 1, 1,
       ranks({axis({block(4, 1, 0, 0, 4)})}, [](auto& d) { d[0].struct_size = 8; }), GDAP_ERR_INVALID_ARGUMENT,
       {"struct_size"}},

      // per-process rules, with the rank named
      {"empty dictionaries must be resolved with gdap_dim_set_undistributed", 2, 2,
       ranks({halves(), axis({block(4, 1, 0, 0, 4)})}, [](auto& d) { d[3] = GDAP_DIM_INIT; }), GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 1", "gdap_dim_set_undistributed"}},
      {"each rank's dictionaries pass the per-process rules", 4, 2,
       ranks({halves(), halves()}, [](auto& d) { d[5].stop = 11; }), GDAP_ERR_PROTOCOL,
       {"rank 2, dimension 1 ('b')", "stop"}},

      // the same dist_type, size and proc_grid_size everywhere
      {"dist_type equal on every rank", 2, 1, {block(2, 2, 0, 0, 1), cyclic(2, 2, 1, 1)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0", "dist_type"}},
      {"size equal on every rank", 2, 1, {block(10, 2, 0, 0, 5), block(11, 2, 1, 5, 11)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('b')", "size (11)"}},
      {"proc_grid_size equal on every rank", 2, 1, {cyclic(10, 2, 0, 0), cyclic(10, 3, 1, 1)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('c')", "proc_grid_size (3)"}},

      // the grid
      {"product of proc_grid_size equals nranks", 2, 1, {cyclic(10, 3, 0, 0), cyclic(10, 3, 1, 1)},
       GDAP_ERR_PROTOCOL, {"3 ranks", "but 2 ranks"}},
      {"a grid that does not count the ranks names the rank and dimension that disagree", 2, 1,
       {block(10, 3, 0, 0, 5), block(10, 2, 1, 5, 10)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('b'): proc_grid_size (2) != rank 0's (3)"}},
      {"product of proc_grid_size must fit int64", 1, 2,
       {cyclic(0, int64_t{1} << 40, 0, 0), cyclic(0, int64_t{1} << 40, 0, 0)}, GDAP_ERR_PROTOCOL,
       {"more than int64"}},
      {"proc_grid_rank tuple is the rank's C-order coordinates", 4, 2,
       ranks({halves(), halves()}, [](auto& d) {
         std::swap(d[2], d[4]);
         std::swap(d[3], d[5]);
       }),
       GDAP_ERR_PROTOCOL, {"rank 1, dimension 0 ('b')", "proc_grid_rank (1) != 0"}},

      // identical dictionaries along an axis
      {"ranks sharing a coordinate hold identical dictionaries ('b' communication padding)", 4, 2,
       ranks({halves(), halves()}, [](auto& d) { d[5] = padded(d[5], 0, 1); }), GDAP_ERR_PROTOCOL,
       {"rank 2, dimension 1 ('b')", "rank 0's", "communication padding[1] (1 vs 0)"}},
      {"ranks sharing a coordinate may differ in boundary padding (edge processes)", 4, 2,
       ranks({halves(), halves()}, [](auto& d) { d[5] = padded(d[5], 2, 0); }), GDAP_SUCCESS, {}},
      {"ranks sharing a coordinate: a padding key at its default is the same dictionary", 4, 2,
       ranks({halves(), halves()}, [](auto& d) { d[5] = padded(d[5], 0, 0); }), GDAP_SUCCESS, {}},
      {"ranks sharing a coordinate hold identical dictionaries ('u' indices)", 4, 2,
       ranks({halves(), axis({unstructured(3, 2, 0, kU01, 2, 1), unstructured(3, 2, 1, kU2, 1, 1)})},
             [](auto& d) { d[5].indices = kU10; }),
       GDAP_ERR_PROTOCOL, {"rank 2, dimension 1 ('u')", "rank 0", "indices"}},
      {"ranks sharing a coordinate hold identical dictionaries ('c' block_size)", 4, 2,
       ranks({halves(), axis({cyclic(10, 2, 0, 0), cyclic(10, 2, 1, 1)})},
             [](auto& d) { d[7] = cyclic(10, 2, 1, 2, 2); }),
       GDAP_ERR_PROTOCOL, {"rank 3, dimension 1 ('c')", "rank 1", "start (2 vs 1)"}},

      // 'b': owned ranges tile [0, size)
      {"'b' tiling: grid rank 0 owns from 0", 2, 1, {block(10, 2, 0, 1, 5), block(10, 2, 1, 5, 10)},
       GDAP_ERR_PROTOCOL, {"rank 0, dimension 0 ('b')"}},
      {"'b' tiling: the last grid rank owns up to size", 2, 1, {block(10, 2, 0, 0, 5), block(10, 2, 1, 5, 9)},
       GDAP_ERR_PROTOCOL, {"rank 1, dimension 0 ('b')"}},
      {"'b' tiling: no gap (message names start and stop)", 2, 1, {block(10, 2, 0, 0, 4), block(10, 2, 1, 5, 10)},
       GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('b'): owned range starts at 5 (start 5 + communication padding[0] 0)",
        "grid rank 0's ends at 4 (stop 4 - communication padding[1] 0): a gap, [4, 5) owned by no rank"}},
      {"'b' tiling: no overlap", 2, 1, {block(10, 2, 0, 0, 6), block(10, 2, 1, 5, 10)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('b'): owned range starts at 5", "grid rank 0's ends at 6", "an overlap, [5, 6) owned twice"}},
      {"'b' tiling named by rank on a 2 x 3 grid", 6, 2,
       ranks({halves(), axis({block(9, 3, 0, 0, 3), block(9, 3, 1, 3, 6), block(9, 3, 2, 7, 9)})}),
       GDAP_ERR_PROTOCOL, {"rank 2, dimension 1 ('b')", "a gap, [6, 7) owned by no rank"}},
      {"'b' tiling: empty sections in the middle are fine", 3, 1,
       {block(10, 3, 0, 0, 5), block(10, 3, 1, 5, 5), block(10, 3, 2, 5, 10)}, GDAP_SUCCESS, {}},

      // 'b': communication padding
      {"'b' padding[1] of g equals padding[0] of g + 1", 2, 1,
       {padded(block(10, 2, 0, 0, 6), 0, 1), padded(block(10, 2, 1, 3, 10), 2, 0)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('b')", "padding[0] (2) != padding[1] (1)"}},
      {"'b' matching communication padding is fine", 2, 1,
       {padded(block(10, 2, 0, 0, 6), 0, 1), padded(block(10, 2, 1, 4, 10), 1, 0)}, GDAP_SUCCESS, {}},
      {"'b' communication padding no wider than the neighbour owns", 3, 1,
       {padded(block(10, 3, 0, 0, 6), 0, 2), padded(block(10, 3, 1, 2, 5), 2, 0), padded(block(10, 3, 2, 5, 10), 0, 0)},
       GDAP_ERR_PROTOCOL, {"rank 0, dimension 0 ('b')", "padding[1] (2) is wider", "grid rank 1, owns (1)"}},
      {"'b' periodic: the edges' outer padding is boundary padding, not matched across the wrap", 2, 1,
       {padded(periodic(block(10, 2, 0, 0, 6)), 1, 1), padded(periodic(block(10, 2, 1, 4, 10)), 1, 2)},
       GDAP_SUCCESS, {}},
      {"'b' periodic: a wrap as start = -padding[0] is refused, rank named", 2, 1,
       {padded(periodic(block(10, 2, 0, -1, 6)), 1, 1), padded(periodic(block(10, 2, 1, 4, 11)), 1, 1)},
       GDAP_ERR_PROTOCOL, {"rank 0, dimension 0 ('b')", "start (-1) < 0"}},
      {"'b' periodic on all grid ranks or none", 2, 1, {periodic(block(10, 2, 0, 0, 5)), block(10, 2, 1, 5, 10)},
       GDAP_ERR_PROTOCOL, {"rank 1, dimension 0 ('b')", "periodic (false) differs from grid rank 0's (true)"}},
      {"'b' padding is optional per dictionary (default (0, 0))", 2, 1,
       {padded(block(10, 2, 0, 0, 5), 1, 0), block(10, 2, 1, 5, 10)}, GDAP_SUCCESS, {}},
      {"'b' a missing padding is (0, 0) against the neighbour's communication padding", 2, 1,
       {padded(block(10, 2, 0, 0, 6), 0, 1), block(10, 2, 1, 5, 10)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('b')", "padding[0] (0, 'padding' not given) != padding[1] (1)"}},

      // 'c'
      {"'c' block_size equal everywhere", 2, 1, {cyclic(10, 2, 0, 0, 2), cyclic(10, 2, 1, 3, 3)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('c')", "block_size (3)"}},
      {"'c' default block_size equals an explicit 1", 2, 1, {cyclic(10, 2, 0, 0), cyclic(10, 2, 1, 1, 1)},
       GDAP_SUCCESS, {}},

      // 'u'
      {"'u' one_to_one equal everywhere", 2, 1,
       {unstructured(3, 2, 0, kU01, 2, 1), unstructured(3, 2, 1, kU2, 1, 0)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('u')", "one_to_one"}},
      {"'u' one_to_one: no index on two grid ranks", 2, 1,
       {unstructured(4, 2, 0, kU012, 3, 1), unstructured(4, 2, 1, kU23, 2, 1)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('u')", "indices[0] (2) is also held by grid rank 0"}},
      {"'u' one_to_one: the counts add up to size", 2, 1,
       {unstructured(4, 2, 0, kU01, 2, 1), unstructured(4, 2, 1, kU2, 1, 1)}, GDAP_ERR_PROTOCOL,
       {"dimension 0 ('u')", "global index 3 of [0, size (4)) is held by no rank", "one_to_one"}},
      {"'u' replicas: the distinct indices number size", 2, 1,
       {unstructured(4, 2, 0, kU01, 2, 0), unstructured(4, 2, 1, kU12, 2, 0)}, GDAP_ERR_PROTOCOL,
       {"dimension 0 ('u')", "global index 3 of [0, size (4)) is held by no rank"}},
      {"'u' replicas named on the right rank of a 2 x 2 grid", 4, 2,
       ranks({halves(), axis({unstructured(3, 2, 0, kU012, 3, 1), unstructured(3, 2, 1, kU2, 1, 1)})}),
       GDAP_ERR_PROTOCOL, {"rank 1, dimension 1 ('u')", "indices[0] (2) is also held"}},
      {"'u' one_to_one: an index outside [0, size) is refused up front", 2, 1,
       {unstructured(3, 2, 0, kUNeg, 2, 1), unstructured(3, 2, 1, kU2, 1, 1)}, GDAP_ERR_PROTOCOL,
       {"rank 0, dimension 0 ('u')", "indices[0] (-1) is outside [0, size (3))", "held exactly once"}},
      {"'u' replicas: an index past size is refused up front", 2, 1,
       {unstructured(3, 2, 0, kU01, 2, 0), unstructured(3, 2, 1, kU25, 2, 0)}, GDAP_ERR_PROTOCOL,
       {"rank 1, dimension 0 ('u')", "indices[1] (5) is outside [0, size (3))"}},
  };
}

TEST(MapRules, EveryCollectiveRule) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.rule);
    gdap_map* map = nullptr;
    const gdap_status s = gdap_map_create(&map, c.nranks, c.ndim, c.dims.empty() ? nullptr : c.dims.data());
    EXPECT_EQ(s, c.expected) << gdap_last_error();
    if (s == GDAP_SUCCESS) {
      EXPECT_NE(map, nullptr);
    } else {
      EXPECT_EQ(map, nullptr) << "nothing written on failure";
    }
    const std::string message = gdap_last_error();
    for (const std::string& w : c.words) EXPECT_NE(message.find(w), std::string::npos) << message;
    gdap_map_destroy(map);
  }
}

TEST(MapRules, EachRankKeepsItsOwnBoundaryPaddingAndKeys) {
  // 2 x 2, dimension 1 split in halves: ranks 0 and 2 share its grid coordinate 0, but rank 2
  // gives boundary padding[0] 2 and rank 0 no 'padding' at all (both valid: edge processes).
  const auto dims = ranks({halves(), halves()}, [](auto& d) { d[5] = padded(d[5], 2, 0); });
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create(&map, 4, 2, dims.data()), GDAP_SUCCESS) << gdap_last_error();
  gdap_dim zero = GDAP_DIM_INIT, two = GDAP_DIM_INIT;
  ASSERT_EQ(gdap_map_dim(&zero, map, 0, 1), GDAP_SUCCESS);
  ASSERT_EQ(gdap_map_dim(&two, map, 2, 1), GDAP_SUCCESS);
  EXPECT_EQ(zero.given & GDAP_KEY_PADDING, 0u) << "rank 0 gave no padding";
  EXPECT_EQ(two.given & GDAP_KEY_PADDING, GDAP_KEY_PADDING);
  EXPECT_EQ(two.padding[0], 2) << "rank 2's own boundary padding, not its coordinate's first rank's";
  int64_t owned = 0;
  ASSERT_EQ(gdap_dim_owned_count(&owned, &two), GDAP_SUCCESS);
  EXPECT_EQ(owned, 5) << "boundary padding is owned";
  gdap_map_destroy(map);
}

TEST(MapRules, NullArguments) {
  gdap_map* map = nullptr;
  const gdap_dim d = block(4, 1, 0, 0, 4);
  EXPECT_EQ(gdap_map_create(nullptr, 1, 1, &d), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_map_create(&map, 1, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_map_destroy(nullptr), GDAP_SUCCESS);
}

}  // namespace
