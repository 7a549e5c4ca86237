// Every per-process rule of the protocol (PROTOCOL.md and the layer-1 brief), as a table: each case
// names the rule, gives one dictionary, its dimension index and its buffer extent (-1 unknown), and
// expects success, or a status plus a message that names the dimension (checked for every case) and
// contains the given words (the key and its values).
#include "protocol/dim.hpp"

#include <gtest/gtest.h>

#include "support/dims.hpp"

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr int64_t kMax = INT64_MAX;

using gdap_test::block;
using gdap_test::cyclic;
using gdap_test::padded;
using gdap_test::periodic;
using gdap_test::with;

const int64_t kIdx[] = {19, 1, 0, 12, 2, 15, 4};
const int64_t kDup[] = {3, 7, 3};
const int64_t kNeg[] = {-5, 40, 2};
gdap_dim unstructured(const int64_t* idx, int64_t n, int one_to_one = -1) {
  gdap_dim d = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_dim_set_unstructured(&d, 30, 3, 0, idx, n, one_to_one), GDAP_SUCCESS);
  return d;
}
gdap_dim alias() {
  gdap_dim d = GDAP_DIM_INIT;
  return d;
}

struct Case {
  const char* rule;
  gdap_dim dim;
  int64_t index;  // dimension index: the label must name it
  int64_t extent;
  gdap_status expected;
  std::vector<std::string> words;  // the message must contain each
};

// Written out here rather than taken from gdap::dim_label, so the label format is tested too.
std::string label_of(const gdap_dim& d, int64_t index) {
  switch (d.dist_type) {
    case 0: return "dimension " + std::to_string(index) + " ({})";
    case 'b':
    case 'c':
    case 'u': return "dimension " + std::to_string(index) + " ('" + static_cast<char>(d.dist_type) + "')";
    default: return "dimension " + std::to_string(index) + ":";
  }
}

std::vector<Case> common_cases() {
  return {
      {"common: a valid block", block(10, 2, 0, 0, 5), 0, 5, GDAP_SUCCESS, {}},
      {"common: dist_type 'x' is refused", with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.dist_type = 'x'; }), 2, 10,
       GDAP_ERR_PROTOCOL, {"dist_type 'x' (120) is not 'b', 'c' or 'u'"}},
      {"common: dist_type 'n' (DAP 0.9's undistributed) is refused, saying what 0.10 writes",
       with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.dist_type = 'n'; }), 0, 10, GDAP_ERR_PROTOCOL,
       {"dist_type 'n' (110) is not 'b', 'c' or 'u'", "DAP 0.9's", "empty dictionary {}"}},
      {"common: dist_type 7 is refused", with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.dist_type = 7; }), 0, 10,
       GDAP_ERR_PROTOCOL, {"dist_type 7 is not"}},
      {"common: size 0 is valid", block(0, 1, 0, 0, 0), 0, 0, GDAP_SUCCESS, {}},
      {"common: size >= 0", block(-1, 1, 0, 0, 0), 1, -1, GDAP_ERR_PROTOCOL, {"size (-1) < 0"}},
      {"common: proc_grid_size 1 is valid", block(3, 1, 0, 0, 3), 0, 3, GDAP_SUCCESS, {}},
      {"common: proc_grid_size >= 1", block(10, 0, 0, 0, 10), 0, 10, GDAP_ERR_PROTOCOL, {"proc_grid_size (0) < 1"}},
      {"common: proc_grid_rank == proc_grid_size - 1 is valid", block(10, 2, 1, 5, 10), 0, 5, GDAP_SUCCESS, {}},
      {"common: proc_grid_rank < proc_grid_size", block(10, 2, 2, 0, 5), 0, 5, GDAP_ERR_PROTOCOL,
       {"proc_grid_rank (2)", "proc_grid_size (2)"}},
      {"common: proc_grid_rank >= 0", block(10, 2, -1, 0, 5), 0, 5, GDAP_ERR_PROTOCOL, {"proc_grid_rank (-1)"}},
      {"common: reserved is 0", with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.reserved = 1; }), 0, 10,
       GDAP_ERR_PROTOCOL, {"reserved (1) must be 0"}},
      // given holds only the dist_type's optional keys
      {"common: given bits of the dist_type with default values are valid",
       with(periodic(padded(block(10, 1, 0, 0, 10), 0, 0)), [](gdap_dim& d) { d.periodic = 0; }), 0, 10,
       GDAP_SUCCESS, {}},
      {"common: given of 'b' holds no GDAP_KEY_BLOCK_SIZE",
       with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.given |= GDAP_KEY_BLOCK_SIZE; }), 1, 10, GDAP_ERR_PROTOCOL,
       {"given holds GDAP_KEY_BLOCK_SIZE, which is not an optional key of dist_type 'b'"}},
      {"common: given of 'c' holds no GDAP_KEY_PADDING",
       with(cyclic(10, 1, 0, 0), [](gdap_dim& d) { d.given |= GDAP_KEY_PADDING; }), 0, 10, GDAP_ERR_PROTOCOL,
       {"given holds GDAP_KEY_PADDING"}},
      {"common: given of 'u' holds no GDAP_KEY_PERIODIC",
       with(unstructured(kIdx, 7), [](gdap_dim& d) { d.given |= GDAP_KEY_PERIODIC; }), 0, 7, GDAP_ERR_PROTOCOL,
       {"given holds GDAP_KEY_PERIODIC"}},
      {"common: given holds no unknown bits", with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.given |= 0x80u; }), 0,
       10, GDAP_ERR_PROTOCOL, {"given holds unknown bits 0x80"}},
      // fields of other dist_types keep their GDAP_DIM_INIT values
      {"common: 'c' may hold start", cyclic(10, 2, 1, 1), 0, 5, GDAP_SUCCESS, {}},
      {"common: 'c' holds no stop", with(cyclic(10, 2, 0, 0), [](gdap_dim& d) { d.stop = 4; }), 1, -1,
       GDAP_ERR_PROTOCOL, {"key 'stop' is not a key of dist_type 'c'"}},
      {"common: 'c' holds no periodic", with(cyclic(10, 2, 0, 0), [](gdap_dim& d) { d.periodic = 1; }), 0, -1,
       GDAP_ERR_PROTOCOL, {"key 'periodic' is not a key of dist_type 'c'"}},
      {"common: 'c' holds no one_to_one", with(cyclic(10, 2, 0, 0), [](gdap_dim& d) { d.one_to_one = 1; }), 0, -1,
       GDAP_ERR_PROTOCOL, {"key 'one_to_one' is not a key of dist_type 'c'"}},
      {"common: 'u' holds no start", with(unstructured(kIdx, 7), [](gdap_dim& d) { d.start = 1; }), 0, 7,
       GDAP_ERR_PROTOCOL, {"key 'start' is not a key of dist_type 'u'"}},
      {"common: 'u' holds no padding", with(unstructured(kIdx, 7), [](gdap_dim& d) { d.padding[1] = 2; }), 0, 7,
       GDAP_ERR_PROTOCOL, {"key 'padding' is not a key of dist_type 'u'"}},
      {"common: 'b' holds no block_size", with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.block_size = 2; }), 0, 10,
       GDAP_ERR_PROTOCOL, {"key 'block_size' is not a key of dist_type 'b'"}},
      {"common: 'b' holds no indices", with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.indices = kIdx; }), 0, 10,
       GDAP_ERR_PROTOCOL, {"key 'indices' is not a key of dist_type 'b'"}},
      {"common: 'b' holds no num_indices", with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.num_indices = 2; }), 0,
       10, GDAP_ERR_PROTOCOL, {"key 'indices' is not a key of dist_type 'b'"}},
      // an optional value that is not the default needs its given bit
      {"common: block_size with GDAP_KEY_BLOCK_SIZE is valid", cyclic(10, 2, 0, 0, 4), 0, 6, GDAP_SUCCESS, {}},
      {"common: block_size needs GDAP_KEY_BLOCK_SIZE", with(cyclic(10, 2, 0, 0), [](gdap_dim& d) { d.block_size = 4; }),
       3, -1, GDAP_ERR_PROTOCOL, {"block_size 4 is set but GDAP_KEY_BLOCK_SIZE is not in given"}},
      {"common: padding needs GDAP_KEY_PADDING",
       with(padded(block(10, 1, 0, 0, 10), 1, 0), [](gdap_dim& d) { d.given = 0; }), 0, 10, GDAP_ERR_PROTOCOL,
       {"padding (1, 0) is set but GDAP_KEY_PADDING is not in given"}},
      {"common: periodic needs GDAP_KEY_PERIODIC",
       with(periodic(block(10, 1, 0, 0, 10)), [](gdap_dim& d) { d.given = 0; }), 0, 10, GDAP_ERR_PROTOCOL,
       {"periodic 1 is set but GDAP_KEY_PERIODIC is not in given"}},
      {"common: one_to_one needs GDAP_KEY_ONE_TO_ONE",
       with(unstructured(kIdx, 7, 1), [](gdap_dim& d) { d.given = 0; }), 0, 7, GDAP_ERR_PROTOCOL,
       {"one_to_one 1 is set but GDAP_KEY_ONE_TO_ONE is not in given"}},
      // booleans
      {"common: periodic 1 is valid", periodic(block(10, 1, 0, 0, 10)), 0, 10, GDAP_SUCCESS, {}},
      {"common: periodic is 0 or 1", with(periodic(block(10, 1, 0, 0, 10)), [](gdap_dim& d) { d.periodic = 2; }), 0, 10,
       GDAP_ERR_PROTOCOL, {"periodic (2) is not 0 or 1"}},
      {"common: one_to_one 1 is valid", unstructured(kIdx, 7, 1), 0, 7, GDAP_SUCCESS, {}},
      {"common: one_to_one is 0 or 1", with(unstructured(kIdx, 7, 1), [](gdap_dim& d) { d.one_to_one = 5; }), 0, 7,
       GDAP_ERR_PROTOCOL, {"one_to_one (5) is not 0 or 1"}},
  };
}

std::vector<Case> alias_cases() {
  return {
      {"alias: {} resolves from the buffer shape", alias(), 0, 7, GDAP_SUCCESS, {}},
      {"alias: {} of an empty buffer", alias(), 1, 0, GDAP_SUCCESS, {}},
      {"alias: {} needs the buffer shape", alias(), 2, -1, GDAP_ERR_PROTOCOL,
       {"empty dictionary {} needs the buffer shape"}},
      {"alias: {} holds no size", with(alias(), [](gdap_dim& d) { d.size = 3; }), 0, 3, GDAP_ERR_PROTOCOL,
       {"empty dictionary has size (3) set"}},
      {"alias: {} holds no given bits", with(alias(), [](gdap_dim& d) { d.given = GDAP_KEY_PADDING; }), 0, 3,
       GDAP_ERR_PROTOCOL, {"empty dictionary has given (GDAP_KEY_PADDING) set"}},
      {"alias: {} holds no block_size", with(alias(), [](gdap_dim& d) { d.block_size = 0; }), 0, 3, GDAP_ERR_PROTOCOL,
       {"block_size (0)"}},
      {"alias: {} holds no reserved", with(alias(), [](gdap_dim& d) { d.reserved = 9; }), 0, 3, GDAP_ERR_PROTOCOL,
       {"reserved (9)"}},
  };
}

std::vector<Case> block_cases() {
  return {
      {"block: stop <= size", block(10, 1, 0, 0, 12), 1, -1, GDAP_ERR_PROTOCOL, {"stop (12) > size (10)"}},
      {"block: stop == size on the last rank", block(10, 2, 1, 4, 10), 0, 6, GDAP_SUCCESS, {}},
      {"block: start >= 0", block(10, 2, 1, -1, 10), 0, -1, GDAP_ERR_PROTOCOL, {"start (-1) < 0"}},
      {"block: start <= stop", block(10, 3, 1, 6, 5), 0, -1, GDAP_ERR_PROTOCOL, {"stop (5) < start (6)"}},
      {"block: stop - start == buffer shape", block(10, 2, 0, 0, 5), 0, 5, GDAP_SUCCESS, {}},
      {"block: stop - start != buffer shape", block(10, 2, 0, 0, 5), 1, 4, GDAP_ERR_PROTOCOL,
       {"stop - start (5) != buffer shape (4)"}},
      {"block: grid rank 0 starts at 0", block(10, 2, 0, 1, 5), 0, -1, GDAP_ERR_PROTOCOL,
       {"start (1) != 0", "grid rank 0 starts at index 0"}},
      {"block: the last grid rank ends at size", block(10, 2, 1, 5, 9), 0, -1, GDAP_ERR_PROTOCOL,
       {"stop (9) != size (10)", "the last grid rank (1) stops at size"}},
      {"block: a middle rank may start and stop anywhere", block(10, 3, 1, 2, 9), 0, 7, GDAP_SUCCESS, {}},
      {"block: empty section on the last rank", block(10, 3, 2, 10, 10), 0, 0, GDAP_SUCCESS, {}},
      {"block: empty section on a middle rank", block(10, 3, 1, 4, 4), 0, 0, GDAP_SUCCESS, {}},
      {"block: empty section on rank 0", block(10, 3, 0, 0, 0), 0, 0, GDAP_SUCCESS, {}},
      {"block: size 0 over 2 ranks", block(0, 2, 1, 0, 0), 0, 0, GDAP_SUCCESS, {}},
      // padding: 18 elements over 2 ranks the 0.10 way, and a middle rank of 3
      {"block: padded rank 0 of 2 (boundary left, communication right)", padded(block(18, 2, 0, 0, 10), 1, 1), 0, 10,
       GDAP_SUCCESS, {}},
      {"block: padded rank 1 of 2 (communication left, boundary right)", padded(block(18, 2, 1, 8, 18), 1, 1), 0, 10,
       GDAP_SUCCESS, {}},
      {"block: communication padding on both sides", padded(block(30, 3, 1, 8, 22), 2, 2), 0, 14, GDAP_SUCCESS, {}},
      {"block: padding >= 0", padded(block(10, 1, 0, 0, 10), -1, 0), 0, 10, GDAP_ERR_PROTOCOL,
       {"padding (-1, 0) has a negative width"}},
      {"block: padding[1] >= 0", padded(block(10, 1, 0, 0, 10), 0, -3), 0, 10, GDAP_ERR_PROTOCOL, {"padding (0, -3)"}},
      {"block: padding may fill the whole section", padded(block(10, 3, 1, 4, 6), 1, 1), 0, 2, GDAP_SUCCESS, {}},
      {"block: padding fits in stop - start", padded(block(10, 2, 1, 8, 10), 2, 1), 0, 2, GDAP_ERR_PROTOCOL,
       {"padding (2, 1) is wider than stop - start (2)"}},
      {"block: huge padding does not overflow the width check", padded(block(10, 2, 1, 8, 10), kMax, kMax), 0, -1,
       GDAP_ERR_PROTOCOL, {"is wider than stop - start (2)"}},
      {"block: communication padding on a middle rank", padded(block(10, 3, 1, 2, 7), 1, 1), 0, 5, GDAP_SUCCESS, {}},
      {"block: boundary padding on the last rank is owned", padded(block(10, 2, 1, 4, 10), 1, 2), 0, 6, GDAP_SUCCESS,
       {}},
      {"block: rank 0 with communication padding[1] must still start at 0", padded(block(10, 2, 0, 1, 6), 0, 1), 0,
       -1, GDAP_ERR_PROTOCOL, {"start (1) != 0"}},
      {"block: last rank with communication padding[0] stops at size", padded(block(10, 2, 1, 6, 9), 1, 0), 0, -1,
       GDAP_ERR_PROTOCOL, {"stop (9) != size (10)"}},
      // periodic (DAP 0.10): the flag changes no bound; the edge ranks' outer padding is boundary
      // padding, owned and counted in size, periodic or not
      {"block: periodic single rank with boundary padding (the text's own valid case)",
       periodic(padded(block(10, 1, 0, 0, 10), 2, 2)), 0, 10, GDAP_SUCCESS, {}},
      {"block: periodic rank 0 of 2 starts at 0", periodic(padded(block(16, 2, 0, 0, 9), 1, 1)), 0, 9, GDAP_SUCCESS,
       {}},
      {"block: periodic last rank stops at size", periodic(padded(block(16, 2, 1, 7, 16), 1, 1)), 0, 9, GDAP_SUCCESS,
       {}},
      {"block: periodic start >= 0 (a wrap as start = -padding[0] is refused)",
       periodic(padded(block(16, 2, 0, -1, 9), 1, 1)), 0, 10, GDAP_ERR_PROTOCOL,
       {"start (-1) < 0", "periodic too", "boundary padding, counted in size"}},
      {"block: periodic stop <= size (a wrap as stop = size + padding[1] is refused)",
       periodic(padded(block(16, 2, 1, 7, 17), 1, 1)), 0, 10, GDAP_ERR_PROTOCOL, {"stop (17) > size (16)", "periodic too"}},
      {"block: periodic single rank in the wrap form is refused", periodic(padded(block(8, 1, 0, -2, 10), 2, 2)), 0, 12,
       GDAP_ERR_PROTOCOL, {"start (-2) < 0"}},
      {"block: the wrap hint is for periodic dimensions only", padded(block(16, 2, 0, -1, 9), 1, 1), 0, 10,
       GDAP_ERR_PROTOCOL, {"start (-1) < 0"}},
      {"block: periodic without padding is a plain block", periodic(block(8, 1, 0, 0, 8)), 0, 8, GDAP_SUCCESS, {}},
      // int64 edges: 0 <= start <= stop <= size keeps every difference in range
      {"block: size INT64_MAX on one rank", block(kMax, 1, 0, 0, kMax), 0, kMax, GDAP_SUCCESS, {}},
      {"block: periodic boundary padding INT64_MAX on both sides is wider than the section",
       periodic(padded(block(kMax, 1, 0, 0, kMax), kMax, kMax)), 0, -1, GDAP_ERR_PROTOCOL,
       {"is wider than stop - start (9223372036854775807)"}},
      {"block: periodic boundary padding filling INT64_MAX cells", periodic(padded(block(kMax, 1, 0, 0, kMax), kMax - 1, 1)),
       0, kMax, GDAP_SUCCESS, {}},
      {"block: start INT64_MIN is refused", block(10, 2, 1, INT64_MIN, 10), 0, -1, GDAP_ERR_PROTOCOL,
       {"start (-9223372036854775808) < 0"}},
  };
}

std::vector<Case> cyclic_cases() {
  return {
      {"cyclic: start == proc_grid_rank * block_size", cyclic(10, 2, 1, 2, 2), 0, 4, GDAP_SUCCESS, {}},
      {"cyclic: a wrong start is refused", cyclic(10, 2, 1, 3, 2), 0, -1, GDAP_ERR_PROTOCOL,
       {"start (3) != proc_grid_rank (1) * block_size (2)"}},
      {"cyclic: block_size defaults to 1", cyclic(10, 3, 2, 2), 1, 3, GDAP_SUCCESS, {}},
      {"cyclic: the default block_size is 1 in the start rule", cyclic(10, 3, 2, 4), 1, -1, GDAP_ERR_PROTOCOL,
       {"start (4) != proc_grid_rank (2) * block_size (1)"}},
      {"cyclic: block_size >= 1", cyclic(10, 2, 0, 0, -2), 0, -1, GDAP_ERR_PROTOCOL, {"block_size (-2) < 1"}},
      {"cyclic: a given block_size 0 is refused",
       with(cyclic(10, 2, 0, 0), [](gdap_dim& d) { d.block_size = 0;
         d.given = GDAP_KEY_BLOCK_SIZE; }), 0, -1,
       GDAP_ERR_PROTOCOL, {"block_size (0) < 1"}},
      {"cyclic: start >= 0", cyclic(10, 2, 0, -1), 0, -1, GDAP_ERR_PROTOCOL, {"start (-1) < 0"}},
      {"cyclic: buffer shape == owned count", cyclic(10, 3, 0, 0), 0, 4, GDAP_SUCCESS, {}},
      {"cyclic: buffer shape != owned count", cyclic(10, 3, 0, 0), 0, 3, GDAP_ERR_PROTOCOL,
       {"owned count (4) != buffer shape (3)"}},
      {"cyclic: partial block's owner has the longer buffer", cyclic(10, 2, 1, 3, 3), 0, 4, GDAP_SUCCESS, {}},
      {"cyclic: empty section may say start == size", cyclic(4, 4, 3, 4, 2), 0, 0, GDAP_SUCCESS, {}},
      {"cyclic: empty section with start == rank * block_size", cyclic(4, 4, 3, 6, 2), 0, 0, GDAP_SUCCESS, {}},
      {"cyclic: start == size only for empty sections", cyclic(10, 2, 1, 10, 2), 0, -1, GDAP_ERR_PROTOCOL,
       {"start (10) != proc_grid_rank (1) * block_size (2)"}},
      {"cyclic: size 0", cyclic(0, 3, 2, 2), 0, 0, GDAP_SUCCESS, {}},
      {"cyclic: rank * block_size overflow is a clear error", cyclic(10, 3, 2, 0, kMax), 0, -1, GDAP_ERR_PROTOCOL,
       {"start (0) != proc_grid_rank (2) * block_size (9223372036854775807) (which overflows int64)"}},
      {"cyclic: rank * block_size overflow with start == size is empty", cyclic(10, 3, 2, 10, kMax), 0, 0,
       GDAP_SUCCESS, {}},
      {"cyclic: size INT64_MAX", cyclic(kMax, 2, 1, 1), 0, kMax / 2, GDAP_SUCCESS, {}},
      {"cyclic: size INT64_MAX, block_size INT64_MAX", cyclic(kMax, 2, 0, 0, kMax), 0, kMax, GDAP_SUCCESS, {}},
  };
}

std::vector<Case> unstructured_cases() {
  return {
      {"unstructured: unordered indices", unstructured(kIdx, 7), 0, 7, GDAP_SUCCESS, {}},
      {"unstructured: negative and out-of-range indices are allowed", unstructured(kNeg, 3), 0, 3, GDAP_SUCCESS, {}},
      {"unstructured: indices unique within a process", unstructured(kDup, 3), 1, 3, GDAP_ERR_PROTOCOL,
       {"indices holds 3 twice (local positions 0 and 2)"}},
      {"unstructured: buffer shape == num_indices", unstructured(kIdx, 7), 0, 6, GDAP_ERR_PROTOCOL,
       {"num_indices (7) != buffer shape (6)"}},
      {"unstructured: NULL indices with a count", unstructured(nullptr, 2), 0, -1, GDAP_ERR_PROTOCOL,
       {"indices is NULL but num_indices is 2"}},
      {"unstructured: num_indices >= 0", with(unstructured(kIdx, 7), [](gdap_dim& d) { d.num_indices = -1; }), 0, -1,
       GDAP_ERR_PROTOCOL, {"num_indices (-1) < 0"}},
      {"unstructured: no indices is an empty section", unstructured(nullptr, 0), 0, 0, GDAP_SUCCESS, {}},
      {"unstructured: extreme index values", with(unstructured(kIdx, 2), [](gdap_dim& d) {
         static const int64_t extremes[] = {INT64_MIN, kMax};
         d.indices = extremes;
       }), 0, 2, GDAP_SUCCESS, {}},
  };
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (auto part : {common_cases(), alias_cases(), block_cases(), cyclic_cases(), unstructured_cases()}) {
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}

class Rule : public ::testing::TestWithParam<Case> {};

TEST_P(Rule, HoldsOrNamesDimensionAndKey) {
  const Case& c = GetParam();
  const gdap_status s = gdap_dim_validate(&c.dim, c.index, c.extent);
  ASSERT_EQ(s, c.expected) << c.rule << ": " << gdap_last_error();
  if (c.expected == GDAP_SUCCESS) return;
  const std::string message = gdap_last_error();
  EXPECT_EQ(message.rfind(label_of(c.dim, c.index), 0), 0u) << c.rule << ": " << message;
  for (const auto& word : c.words) EXPECT_NE(message.find(word), std::string::npos) << c.rule << ": " << message;
}

INSTANTIATE_TEST_SUITE_P(Protocol, Rule, ::testing::ValuesIn(cases()), [](const auto& param_info) {
  std::string name = std::to_string(param_info.index) + "_";
  for (const char* p = param_info.param.rule; *p; ++p) name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return name;
});

}  // namespace
