// Every per-process rule of the protocol (PROTOCOL.md), as a table: each case names the rule,
// gives one dictionary and its buffer extent, and expects success or the status plus the words
// the message must contain (the dimension and the key).
#include "protocol/dim.hpp"

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
const int64_t kIdx[] = {19, 1, 0, 12, 2, 15, 4};
const int64_t kDup[] = {3, 7, 3};
const int64_t kNeg[] = {-5, 40, 2};
gdap_dim unstructured(const int64_t* idx, int64_t n, int one_to_one = -1) {
  gdap_dim d = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_dim_set_unstructured(&d, 30, 3, 0, idx, n, one_to_one), GDAP_SUCCESS);
  return d;
}
using gdap_test::with;

struct Case {
  const char* rule;
  gdap_dim dim;
  int64_t extent;
  gdap_status expected;
  std::vector<std::string> words;  // the message must contain each
};

std::vector<Case> cases() {
  gdap_dim init = GDAP_DIM_INIT;
  return {
      // common keys
      {"common: a valid block", block(10, 2, 0, 0, 5), 5, GDAP_SUCCESS, {}},
      {"common: dist_type is 'b', 'c' or 'u'", with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.dist_type = 'x'; }), 10,
       GDAP_ERR_PROTOCOL, {"dimension 0", "dist_type 'x'"}},
      {"common: size >= 0", block(-1, 1, 0, 0, 0), -1, GDAP_ERR_PROTOCOL, {"size (-1) < 0"}},
      {"common: proc_grid_size >= 1", block(10, 0, 0, 0, 10), 10, GDAP_ERR_PROTOCOL, {"proc_grid_size (0) < 1"}},
      {"common: proc_grid_rank < proc_grid_size", block(10, 2, 2, 0, 5), 5, GDAP_ERR_PROTOCOL,
       {"proc_grid_rank (2)", "proc_grid_size (2)"}},
      {"common: proc_grid_rank >= 0", block(10, 2, -1, 0, 5), 5, GDAP_ERR_PROTOCOL, {"proc_grid_rank (-1)"}},
      {"common: reserved is 0", with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.reserved = 1; }), 10,
       GDAP_ERR_PROTOCOL, {"reserved"}},
      {"common: keys of another dist_type are refused", with(cyclic(10, 2, 0, 0), [](gdap_dim& d) { d.stop = 4; }), -1,
       GDAP_ERR_PROTOCOL, {"dimension 0 ('c')", "key 'stop' is not a key of dist_type 'c'"}},
      {"common: an optional value needs its given bit", with(cyclic(10, 2, 0, 0), [](gdap_dim& d) { d.block_size = 4; }),
       -1, GDAP_ERR_PROTOCOL, {"block_size 4 is set but GDAP_KEY_BLOCK_SIZE is not in given"}},
      {"common: given holds only keys of the dist_type",
       with(block(10, 1, 0, 0, 10), [](gdap_dim& d) { d.given |= GDAP_KEY_BLOCK_SIZE; }), 10, GDAP_ERR_PROTOCOL,
       {"given holds bits"}},
      {"common: periodic is a boolean", with(periodic(block(10, 1, 0, 0, 10)), [](gdap_dim& d) { d.periodic = 2; }), 10,
       GDAP_ERR_PROTOCOL, {"periodic (2)"}},
      // the empty dictionary
      {"alias: {} resolves from the buffer shape", init, 7, GDAP_SUCCESS, {}},
      {"alias: {} needs the buffer shape", init, -1, GDAP_ERR_PROTOCOL, {"dimension 0 ({})", "needs the buffer shape"}},
      {"alias: {} with keys set is refused", with(init, [](gdap_dim& d) { d.size = 3; }), 3, GDAP_ERR_PROTOCOL,
       {"empty dictionary has keys set"}},
      // block
      {"block: stop <= size", block(10, 1, 0, 0, 12), -1, GDAP_ERR_PROTOCOL, {"dimension 0 ('b')", "stop (12) > size (10)"}},
      {"block: start >= 0", block(10, 2, 1, -1, 10), -1, GDAP_ERR_PROTOCOL, {"start (-1) < 0"}},
      {"block: start <= stop", block(10, 2, 1, 6, 5), -1, GDAP_ERR_PROTOCOL, {"stop (5) < start (6)"}},
      {"block: stop - start == buffer shape", block(10, 2, 0, 0, 5), 4, GDAP_ERR_PROTOCOL,
       {"stop - start (5) != buffer shape (4)"}},
      {"block: grid rank 0 starts at 0", block(10, 2, 0, 1, 5), -1, GDAP_ERR_PROTOCOL, {"grid rank 0 must own from index 0"}},
      {"block: the last grid rank ends at size", block(10, 2, 1, 5, 9), -1, GDAP_ERR_PROTOCOL,
       {"last grid rank must own up to size (10)"}},
      {"block: empty sections are valid", block(10, 3, 2, 10, 10), 0, GDAP_SUCCESS, {}},
      {"block: size 0 is valid", block(0, 2, 1, 0, 0), 0, GDAP_SUCCESS, {}},
      {"block: boundary and communication padding (rank 0 of 2)", padded(block(18, 2, 0, 0, 10), 1, 1), 10, GDAP_SUCCESS,
       {}},
      {"block: communication padding on both sides", padded(block(30, 3, 1, 8, 22), 2, 2), 14, GDAP_SUCCESS, {}},
      {"block: padding >= 0", padded(block(10, 1, 0, 0, 10), -1, 0), 10, GDAP_ERR_PROTOCOL, {"padding (-1, 0)"}},
      {"block: padding fits in stop - start", padded(block(10, 2, 1, 8, 10), 2, 1), 2, GDAP_ERR_PROTOCOL,
       {"padding (2, 1) is wider than stop - start (2)"}},
      {"block: periodic rank 0 starts at -padding[0]", periodic(padded(block(16, 2, 0, -1, 9), 1, 1)), 10, GDAP_SUCCESS,
       {}},
      {"block: periodic last rank stops at size + padding[1]", periodic(padded(block(16, 2, 1, 7, 17), 1, 1)), 10,
       GDAP_SUCCESS, {}},
      {"block: periodic start >= -padding[0]", periodic(padded(block(16, 2, 0, -2, 9), 1, 1)), 11, GDAP_ERR_PROTOCOL,
       {"start (-2) < -padding[0]"}},
      {"block: periodic single rank wraps onto itself", periodic(padded(block(8, 1, 0, -2, 10), 2, 2)), 12, GDAP_SUCCESS,
       {}},
      {"block: sizes near INT64_MAX overflow cleanly", periodic(padded(block(INT64_MAX, 1, 0, -1, INT64_MAX), 1, 1)), -1,
       GDAP_ERR_OVERFLOW, {"overflows"}},
      // cyclic
      {"cyclic: start == proc_grid_rank * block_size", cyclic(10, 2, 1, 2, 2), 4, GDAP_SUCCESS, {}},
      {"cyclic: a wrong start is refused", cyclic(10, 2, 1, 3, 2), -1, GDAP_ERR_PROTOCOL,
       {"dimension 0 ('c')", "start (3) != proc_grid_rank (1) * block_size (2)"}},
      {"cyclic: block_size >= 1", cyclic(10, 2, 0, 0, -2), -1, GDAP_ERR_PROTOCOL, {"block_size (-2) < 1"}},
      {"cyclic: start >= 0", cyclic(10, 2, 0, -1), -1, GDAP_ERR_PROTOCOL, {"start (-1) < 0"}},
      {"cyclic: buffer shape == owned count", cyclic(10, 3, 0, 0), 3, GDAP_ERR_PROTOCOL,
       {"owned count (4) != buffer shape (3)"}},
      {"cyclic: empty section may say start == size", cyclic(4, 4, 3, 4, 2), 0, GDAP_SUCCESS, {}},
      {"cyclic: empty section with start == rank * block_size", cyclic(4, 4, 3, 6, 2), 0, GDAP_SUCCESS, {}},
      {"cyclic: start == size only for empty sections", cyclic(10, 2, 1, 10, 2), -1, GDAP_ERR_PROTOCOL,
       {"start (10) != proc_grid_rank (1)"}},
      {"cyclic: rank * block_size overflow is a clear error", cyclic(10, 3, 2, 0, INT64_MAX), -1, GDAP_ERR_PROTOCOL,
       {"start (0) != proc_grid_rank (2) * block_size"}},
      // unstructured
      {"unstructured: unordered indices", unstructured(kIdx, 7), 7, GDAP_SUCCESS, {}},
      {"unstructured: negative and out-of-order indices are allowed", unstructured(kNeg, 3), 3, GDAP_SUCCESS, {}},
      {"unstructured: indices unique within a process", unstructured(kDup, 3), 3, GDAP_ERR_PROTOCOL,
       {"dimension 0 ('u')", "holds 3 twice (local positions 0 and 2)"}},
      {"unstructured: buffer shape == number of indices", unstructured(kIdx, 7), 6, GDAP_ERR_PROTOCOL,
       {"number of indices (7) != buffer shape (6)"}},
      {"unstructured: NULL indices with a count", unstructured(nullptr, 2), -1, GDAP_ERR_PROTOCOL, {"indices is NULL"}},
      {"unstructured: no indices is an empty section", unstructured(nullptr, 0), 0, GDAP_SUCCESS, {}},
      {"unstructured: one_to_one is a boolean", with(unstructured(kIdx, 7, 1), [](gdap_dim& d) { d.one_to_one = 5; }), 7,
       GDAP_ERR_PROTOCOL, {"one_to_one (5)"}},
  };
}

class Rule : public ::testing::TestWithParam<Case> {};

TEST_P(Rule, HoldsOrNamesDimensionAndKey) {
  const Case& c = GetParam();
  const gdap_status s = gdap_dim_validate(&c.dim, 0, c.extent);
  EXPECT_EQ(s, c.expected) << c.rule << ": " << gdap_last_error();
  if (c.expected != GDAP_SUCCESS) {
    const std::string message = gdap_last_error();
    for (const auto& word : c.words) EXPECT_NE(message.find(word), std::string::npos) << c.rule << ": " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(Protocol, Rule, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string name = std::to_string(info.index) + "_";
  for (const char* p = info.param.rule; *p; ++p) name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return name;
});

TEST(Protocol, DimsValidateLabelsTheFailingDimension) {
  gdap_dim dims[2] = {block(4, 1, 0, 0, 4), cyclic(10, 2, 1, 3, 2)};
  const int64_t shape[2] = {4, 4};
  EXPECT_EQ(gdap_dims_validate(dims, 2, shape), GDAP_ERR_PROTOCOL);
  EXPECT_NE(std::string(gdap_last_error()).find("dimension 1 ('c')"), std::string::npos) << gdap_last_error();
  EXPECT_EQ(gdap_dims_validate(nullptr, 0, nullptr), GDAP_SUCCESS) << "a 0-d array has no dictionaries";
  EXPECT_EQ(gdap_dims_validate(dims, -1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
}

TEST(Protocol, StructSizeIsTheArrayStride) {
  struct Bigger {
    gdap_dim dim;
    int64_t future_field;
  };
  Bigger dims[2] = {{block(8, 2, 0, 0, 4), -1}, {block(8, 2, 1, 4, 8), -1}};
  dims[0].dim.struct_size = dims[1].dim.struct_size = sizeof(Bigger);
  EXPECT_EQ(gdap_dims_validate(&dims[0].dim, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
  dims[1].dim.stop = 9;  // found only if element 1 is read at stride sizeof(Bigger)
  EXPECT_EQ(gdap_dims_validate(&dims[0].dim, 2, nullptr), GDAP_ERR_PROTOCOL);
  EXPECT_NE(std::string(gdap_last_error()).find("dimension 1 ('b'): stop (9) > size (8)"), std::string::npos)
      << gdap_last_error();
  gdap_dim small = block(8, 1, 0, 0, 8);
  small.struct_size = 12;
  EXPECT_EQ(gdap_dim_validate(&small, 0, 8), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gdap_last_error()).find("struct_size is 12"), std::string::npos);
}

TEST(Protocol, OutputsUntouchedOnFailure) {
  gdap_dim bad = block(10, 1, 0, 0, 12);
  int64_t count = -7, extent = -7;
  EXPECT_EQ(gdap_dim_owned_count(&count, &bad), GDAP_ERR_PROTOCOL);
  EXPECT_EQ(gdap_dim_local_extent(&extent, &bad), GDAP_ERR_PROTOCOL);
  EXPECT_EQ(count, -7);
  EXPECT_EQ(extent, -7);
  EXPECT_EQ(gdap_dim_owned_count(nullptr, &bad), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_validate(nullptr, 0, 1), GDAP_ERR_INVALID_ARGUMENT);
}

TEST(Protocol, SettersRefuseWhatTheyCannotHold) {
  gdap_dim c = cyclic(10, 2, 0, 0);
  EXPECT_EQ(gdap_dim_set_padding(&c, 1, 1), GDAP_ERR_INVALID_ARGUMENT) << "padding is a key of block dimensions";
  EXPECT_EQ(gdap_dim_set_undistributed(&c, -1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_set_undistributed(&c, 6), GDAP_SUCCESS);
  EXPECT_EQ(c.dist_type, GDAP_DIST_BLOCK);
  EXPECT_EQ(c.size, 6);
  EXPECT_EQ(c.stop, 6);
  EXPECT_EQ(gdap_dim_init(nullptr), GDAP_ERR_INVALID_ARGUMENT);
}

}  // namespace
