// The layer-1 C entry points: reading caller arrays at the stride of struct_size, the setters,
// whole-dim_data validation, NULL pointers, and outputs left untouched by a failing call.
#include "core/error.hpp"
#include "protocol/dim.hpp"
#include "protocol/dim_data.hpp"

#include <gtest/gtest.h>

#include "support/dims.hpp"

#include <cstdint>
#include <cstring>
#include <string>

namespace {

bool contains(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

using gdap_test::block;
using gdap_test::cyclic;

TEST(DimCapi, ExampleTwoByOneBlockGrid) {
  // A 4 x 6 array on a 2 x 1 process grid: rows split in two blocks, columns whole ({} on rank 1).
  gdap_dim rank0[2] = {block(4, 2, 0, 0, 2), block(6, 1, 0, 0, 6)};
  gdap_dim rank1[2] = {block(4, 2, 1, 2, 4), GDAP_DIM_INIT};
  const int64_t shape[2] = {2, 6};
  EXPECT_EQ(gdap_dims_validate(rank0, 2, shape), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(gdap_dims_validate(rank1, 2, shape), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(gdap_dims_validate(rank1, 2, nullptr), GDAP_ERR_PROTOCOL) << "{} cannot be resolved without the shape";
  EXPECT_TRUE(contains(gdap_last_error(), "dimension 1 ({})")) << gdap_last_error();
  const int64_t wrong[2] = {3, 6};
  EXPECT_EQ(gdap_dims_validate(rank1, 2, wrong), GDAP_ERR_PROTOCOL);
  EXPECT_TRUE(contains(gdap_last_error(), "dimension 0 ('b'): stop - start (2) != buffer shape (3)"))
      << gdap_last_error();
}

TEST(DimCapi, DimsValidateLabelsTheFailingDimension) {
  gdap_dim dims[2] = {block(4, 1, 0, 0, 4), cyclic(10, 2, 1, 3, 2)};
  const int64_t shape[2] = {4, 4};
  EXPECT_EQ(gdap_dims_validate(dims, 2, shape), GDAP_ERR_PROTOCOL);
  EXPECT_TRUE(contains(gdap_last_error(), "dimension 1 ('c'): start (3) != proc_grid_rank (1) * block_size (2)"))
      << gdap_last_error();
  EXPECT_EQ(gdap_dims_validate(nullptr, 0, nullptr), GDAP_SUCCESS) << "a 0-d array has no dictionaries";
  EXPECT_EQ(gdap_dims_validate(dims, -1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dims_validate(nullptr, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  const int64_t negative[2] = {4, -2};
  EXPECT_EQ(gdap_dims_validate(dims, 2, negative), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "shape[1] (-2) < 0")) << gdap_last_error();
}

TEST(DimCapi, StructSizeIsTheArrayStride) {
  struct Bigger {  // what a caller compiled against a newer, larger gdap_dim passes
    gdap_dim dim;
    int64_t future_field;
  };
  Bigger dims[2] = {{block(8, 2, 0, 0, 4), -1}, {block(8, 2, 1, 4, 8), -1}};
  dims[0].dim.struct_size = dims[1].dim.struct_size = sizeof(Bigger);
  EXPECT_EQ(gdap_dims_validate(&dims[0].dim, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
  const gdap_dim read = gdap::read_dim(&dims[0].dim, 1);
  EXPECT_EQ(read.struct_size, sizeof(gdap_dim)) << "read_dim hands out this release's struct";
  EXPECT_EQ(read.start, 4);
  dims[1].dim.stop = 9;  // found only if element 1 is read at stride sizeof(Bigger)
  EXPECT_EQ(gdap_dims_validate(&dims[0].dim, 2, nullptr), GDAP_ERR_PROTOCOL);
  EXPECT_TRUE(contains(gdap_last_error(), "dimension 1 ('b'): stop (9) > size (8)")) << gdap_last_error();
}

TEST(DimCapi, StructSizeMistakesAreInvalidArguments) {
  struct Case {
    const char* rule;
    uint32_t struct_size;
    const char* words;
  };
  const Case cases[] = {
      {"struct_size below this release's gdap_dim", 12,
       "dims[0].struct_size is 12; set it with GDAP_DIM_INIT or gdap_dim_init"},
      {"struct_size 0 (an uninitialised struct)", 0, "dims[0].struct_size is 0"},
      {"struct_size not a multiple of 8", sizeof(gdap_dim) + 4, "a multiple of 8"},
  };
  for (const auto& c : cases) {
    gdap_dim d = block(8, 1, 0, 0, 8);
    d.struct_size = c.struct_size;
    int64_t count = -7;
    EXPECT_EQ(gdap_dim_validate(&d, 0, 8), GDAP_ERR_INVALID_ARGUMENT) << c.rule;
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << c.rule << ": " << gdap_last_error();
    EXPECT_EQ(gdap_dim_owned_count(&count, &d), GDAP_ERR_INVALID_ARGUMENT) << c.rule;
    EXPECT_EQ(count, -7) << c.rule;
  }
  gdap_dim d = block(8, 1, 0, 0, 8);
  EXPECT_EQ(gdap::guard([&] { (void)gdap::read_dim(&d, INT64_MAX / 8); }), GDAP_ERR_INVALID_ARGUMENT)
      << "an offset i * struct_size that overflows is refused before any read";
  EXPECT_EQ(gdap::guard([&] { (void)gdap::read_dim(&d, -1); }), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap::guard([&] { (void)gdap::read_dim(nullptr, 0); }), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "dims is NULL"));
}

TEST(DimCapi, SettersFillTheWholeStruct) {
  gdap_dim d;
  std::memset(&d, 0x5a, sizeof d);  // garbage in every field
  const int64_t idx[] = {4, 2};
  ASSERT_EQ(gdap_dim_set_block(&d, 10, 2, 1, 5, 10), GDAP_SUCCESS);
  EXPECT_EQ(gdap_dim_validate(&d, 0, 5), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(d.struct_size, sizeof(gdap_dim));
  EXPECT_EQ(d.given, 0u);
  ASSERT_EQ(gdap_dim_set_padding(&d, 1, 0), GDAP_SUCCESS);
  ASSERT_EQ(gdap_dim_set_periodic(&d, 7), GDAP_SUCCESS);
  EXPECT_EQ(d.given, GDAP_KEY_PADDING | GDAP_KEY_PERIODIC);
  EXPECT_EQ(d.periodic, 1) << "any non-zero periodic is stored as 1";

  std::memset(&d, 0x5a, sizeof d);
  ASSERT_EQ(gdap_dim_set_cyclic(&d, 10, 2, 1, 1, 0), GDAP_SUCCESS);
  EXPECT_EQ(d.given, 0u) << "block_size 0 leaves the key out";
  EXPECT_EQ(d.block_size, 1);
  EXPECT_EQ(gdap_dim_validate(&d, 0, 5), GDAP_SUCCESS) << gdap_last_error();
  ASSERT_EQ(gdap_dim_set_cyclic(&d, 10, 2, 1, 1, 1), GDAP_SUCCESS);
  EXPECT_EQ(d.given, GDAP_KEY_BLOCK_SIZE) << "block_size 1 given explicitly is given";

  std::memset(&d, 0x5a, sizeof d);
  ASSERT_EQ(gdap_dim_set_unstructured(&d, 10, 2, 0, idx, 2, -1), GDAP_SUCCESS);
  EXPECT_EQ(d.given, 0u);
  EXPECT_EQ(d.indices, idx) << "indices are retained, not copied";
  EXPECT_EQ(gdap_dim_validate(&d, 0, 2), GDAP_SUCCESS) << gdap_last_error();
  ASSERT_EQ(gdap_dim_set_unstructured(&d, 10, 2, 0, idx, 2, 0), GDAP_SUCCESS);
  EXPECT_EQ(d.given, GDAP_KEY_ONE_TO_ONE);
  EXPECT_EQ(d.one_to_one, 0);

  std::memset(&d, 0x5a, sizeof d);
  ASSERT_EQ(gdap_dim_set_undistributed(&d, 6), GDAP_SUCCESS);
  const gdap_dim resolved = gdap::resolve_alias(GDAP_DIM_INIT, 6);
  EXPECT_EQ(std::memcmp(&d, &resolved, sizeof d), 0);
  EXPECT_EQ(d.dist_type, GDAP_DIST_BLOCK);
  EXPECT_EQ(d.size, 6);
  EXPECT_EQ(d.stop, 6);

  std::memset(&d, 0x5a, sizeof d);
  ASSERT_EQ(gdap_dim_init(&d), GDAP_SUCCESS);
  const gdap_dim init = GDAP_DIM_INIT;
  EXPECT_EQ(std::memcmp(&d, &init, sizeof d), 0);
}

TEST(DimCapi, FailingCallsLeaveOutputsUntouched) {
  const gdap_dim bad = block(10, 1, 0, 0, 12);
  int64_t count = -7, extent = -7;
  EXPECT_EQ(gdap_dim_owned_count(&count, &bad), GDAP_ERR_PROTOCOL);
  EXPECT_TRUE(contains(gdap_last_error(), "dimension 0 ('b'): stop (12) > size (10)")) << gdap_last_error();
  EXPECT_EQ(gdap_dim_local_extent(&extent, &bad), GDAP_ERR_PROTOCOL);
  EXPECT_EQ(count, -7);
  EXPECT_EQ(extent, -7);

  const gdap_dim alias = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_dim_owned_count(&count, &alias), GDAP_ERR_PROTOCOL) << "{} has no count before it is resolved";
  EXPECT_TRUE(contains(gdap_last_error(), "needs the buffer shape")) << gdap_last_error();
  EXPECT_EQ(count, -7);

  gdap_dim c = cyclic(10, 2, 0, 0, 2);
  const gdap_dim before = c;
  EXPECT_EQ(gdap_dim_set_padding(&c, 1, 1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "key 'padding' is a key of dist_type 'b', but dim has dist_type 'c'"))
      << gdap_last_error();
  EXPECT_EQ(gdap_dim_set_periodic(&c, 1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_set_undistributed(&c, -1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(std::memcmp(&c, &before, sizeof c), 0);
}

TEST(DimCapi, NullPointersAreInvalidArguments) {
  const gdap_dim d = block(4, 1, 0, 0, 4);
  int64_t n = 0;
  EXPECT_EQ(gdap_dim_init(nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_set_block(nullptr, 4, 1, 0, 0, 4), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_set_padding(nullptr, 1, 1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_set_periodic(nullptr, 1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_set_cyclic(nullptr, 4, 1, 0, 0, 1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_set_unstructured(nullptr, 4, 1, 0, nullptr, 0, -1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_set_undistributed(nullptr, 4), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_validate(nullptr, 0, 4), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_owned_count(nullptr, &d), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "count is NULL")) << gdap_last_error();
  EXPECT_EQ(gdap_dim_owned_count(&n, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_local_extent(nullptr, &d), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_dim_local_extent(&n, nullptr), GDAP_ERR_INVALID_ARGUMENT);
}

TEST(DimCapi, DimDataOwnsAndRepointsItsIndices) {
  int64_t idx[] = {5, 1, 3};
  gdap_dim dims[2] = {block(4, 1, 0, 0, 4), GDAP_DIM_INIT};
  ASSERT_EQ(gdap_dim_set_unstructured(&dims[1], 6, 2, 0, idx, 3, 1), GDAP_SUCCESS);
  gdap::DimData a = gdap::DimData::copy_from(dims, 2);
  idx[0] = 99;  // the caller's array changes: the copy does not
  ASSERT_EQ(a.ndim(), 2);
  EXPECT_NE(a[1].indices, idx);
  EXPECT_EQ(a[1].indices[0], 5);
  gdap::DimData b = a;  // copy: its own storage
  EXPECT_NE(b[1].indices, a[1].indices);
  EXPECT_EQ(b[1].indices[2], 3);
  gdap::DimData c;
  c = b;
  EXPECT_NE(c[1].indices, b[1].indices);
  const int64_t* before_move = c[1].indices;
  gdap::DimData d = std::move(c);  // move: the same storage
  EXPECT_EQ(d[1].indices, before_move);
  d.set(0, dims[1]);
  EXPECT_EQ(d[0].indices[0], 99);
  EXPECT_NE(d[0].indices, idx);
  EXPECT_EQ(gdap::guard([&] { d.set(2, dims[0]); }), GDAP_ERR_OUT_OF_RANGE);
  EXPECT_EQ(gdap::guard([&] { (void)gdap::DimData::copy_from(dims, -1); }), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap::DimData::copy_from(nullptr, 0).ndim(), 0);
}

}  // namespace
