// Hunt 14, defects 2 and 5: sections whose layout gdap cannot write or read correctly.
// - A destination whose strides give two indices one address (stride 0, strides (1, 1) on 2 x 2)
//   would be written twice per element, silently: every call that writes a section refuses it
//   before writing anything, naming the axis and the strides. As a source it is a legitimate
//   broadcast view and is read as it is.
// - Element data not aligned to its C type (a float64 at an odd address) is refused by
//   gdap_array_wrap and DLPack import, naming the address and the dtype.
#include "dlpack_fixtures.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using gdap_test::Producer;

constexpr gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};
constexpr gdap_dtype kC128{GDAP_DTYPE_COMPLEX, 128, 1};
constexpr gdap_device kHost{GDAP_DEVICE_CPU, 0};

bool contains(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

// One rank's objects for a 2 x 2 float64 array held whole: the map, a plan and a GEMM onto itself.
struct TwoByTwo {
  gdap_comm* comm = nullptr;
  gdap_map* map = nullptr;
  gdap_plan* plan = nullptr;
  gdap_gemm* gemm = nullptr;
  gdap_dim dims[2];
  TwoByTwo() {
    EXPECT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS) << gdap_last_error();
    gdap_axis_layout axes[2] = {GDAP_AXIS_LAYOUT_INIT, GDAP_AXIS_LAYOUT_INIT};
    axes[0].size = axes[1].size = 2;
    EXPECT_EQ(gdap_map_create_grid(&map, 2, axes), GDAP_SUCCESS) << gdap_last_error();
    for (int64_t i = 0; i < 2; ++i) EXPECT_EQ(gdap_map_dim(&dims[i], map, 0, i), GDAP_SUCCESS);
    EXPECT_EQ(gdap_plan_create(&plan, map, map, kF64, 0), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(gdap_gemm_create(&gemm, comm, map, map, map, kF64, nullptr), GDAP_SUCCESS) << gdap_last_error();
  }
  ~TwoByTwo() {
    gdap_gemm_destroy(gemm);
    gdap_plan_destroy(plan);
    gdap_map_destroy(map);
    gdap_comm_destroy(comm);
  }
  gdap_array* wrap(double* data, const int64_t* strides) {
    gdap_array* a = nullptr;
    EXPECT_EQ(gdap_array_wrap(&a, data, kF64, kHost, strides, dims, 2), GDAP_SUCCESS) << gdap_last_error();
    return a;
  }
};

TEST(SelfOverlap, DestinationsWhoseIndicesShareAnAddressAreRefusedBeforeAnyWrite) {
  TwoByTwo t;
  double src[4] = {1, 2, 3, 4}, identity[4] = {1, 0, 0, 1};
  gdap_array* s = t.wrap(src, nullptr);
  gdap_array* b = t.wrap(identity, nullptr);
  const int64_t diagonal[2] = {1, 1}, broadcast[2] = {0, 1};
  for (const int64_t* strides : {diagonal, broadcast}) {
    SCOPED_TRACE("strides (" + std::to_string(strides[0]) + ", " + std::to_string(strides[1]) + ")");
    double dst[3] = {-1, -1, -1};
    gdap_array* d = t.wrap(dst, strides);  // taken: it may be read as a source
    EXPECT_EQ(gdap_redistribute(t.comm, t.plan, s, d), GDAP_ERR_INVALID_ARGUMENT);
    const std::string what = "dst has strides (" + std::to_string(strides[0]) + ", " + std::to_string(strides[1]) +
                             ") on shape 2 x 2: axis ";
    EXPECT_TRUE(contains(gdap_last_error(), what)) << gdap_last_error();
    EXPECT_TRUE(contains(gdap_last_error(), "two indices can address one element")) << gdap_last_error();
    EXPECT_EQ(gdap_gemm_execute(t.comm, t.gemm, 1.0, s, b, 0.0, d), GDAP_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(contains(gdap_last_error(), "C has strides")) << gdap_last_error();
    for (double x : dst) EXPECT_EQ(x, -1) << "a refused call wrote the destination";
    gdap_array_destroy(d);
  }
  gdap_array_destroy(b);
  gdap_array_destroy(s);
}

TEST(SelfOverlap, ABroadcastSourceIsReadAsItIs) {
  TwoByTwo t;
  double row[2] = {5, 7}, dst[4] = {};
  const int64_t broadcast[2] = {0, 1};
  gdap_array* s = t.wrap(row, broadcast);
  gdap_array* d = t.wrap(dst, nullptr);
  EXPECT_EQ(gdap_redistribute(t.comm, t.plan, s, d), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(dst[0], 5);
  EXPECT_EQ(dst[1], 7);
  EXPECT_EQ(dst[2], 5);
  EXPECT_EQ(dst[3], 7);
  gdap_array_destroy(d);
  gdap_array_destroy(s);
}

TEST(SelfOverlap, DistinctLayoutsPassAndInterleavedOnesAreRefusedToo) {
  double buf[32] = {};
  gdap_dim dims[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};
  gdap_dim_set_undistributed(&dims[0], 3);
  gdap_dim_set_undistributed(&dims[1], 2);
  gdap_comm* comm = nullptr;
  ASSERT_EQ(gdap_comm_create_group(&comm, 1), GDAP_SUCCESS);
  const struct {
    int64_t strides[2];
    bool taken;
  } cases[] = {
      {{2, 1}, true},    // C order
      {{1, 3}, true},    // Fortran order
      {{-2, -1}, true},  // reversed
      {{4, 1}, true},    // rows apart
      {{2, 3}, false},   // offsets 0 3 2 5 4 7 are distinct, but the axes interleave: the test refuses it
      {{1, 2}, false},   // (2, 0) and (0, 1) are one element
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("strides (" + std::to_string(c.strides[0]) + ", " + std::to_string(c.strides[1]) + ")");
    gdap_array* a = nullptr;
    ASSERT_EQ(gdap_array_wrap(&a, buf + 8, kF64, kHost, c.strides, dims, 2), GDAP_SUCCESS) << gdap_last_error();
    const gdap_status s = gdap_allreduce(comm, a, GDAP_REDUCE_SUM);  // writes its section in place
    EXPECT_EQ(s, c.taken ? GDAP_SUCCESS : GDAP_ERR_INVALID_ARGUMENT) << gdap_last_error();
    if (!c.taken) EXPECT_TRUE(contains(gdap_last_error(), "the section has strides")) << gdap_last_error();
    gdap_array_destroy(a);
  }
  gdap_comm_destroy(comm);
}

TEST(Misaligned, WrapRefusesElementsOffTheirAlignment) {
  alignas(16) static unsigned char bytes[256];
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_undistributed(&d, 4);
  gdap_array* a = reinterpret_cast<gdap_array*>(0x1);
  EXPECT_EQ(gdap_array_wrap(&a, bytes + 1, kF64, kHost, nullptr, &d, 1), GDAP_ERR_INVALID_ARGUMENT);
  char address[32];
  std::snprintf(address, sizeof address, "%#lx", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(bytes + 1)));
  EXPECT_TRUE(contains(gdap_last_error(), std::string("data ") + address + " is not aligned for float64")) << gdap_last_error();
  EXPECT_TRUE(contains(gdap_last_error(), "a multiple of 8 bytes")) << gdap_last_error();
  EXPECT_EQ(a, reinterpret_cast<gdap_array*>(0x1));
  // complex128 aligns as its double components; float32 and bool as themselves.
  EXPECT_EQ(gdap_array_wrap(&a, bytes + 4, kC128, kHost, nullptr, &d, 1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "complex128: it must be a multiple of 8 bytes")) << gdap_last_error();
  ASSERT_EQ(gdap_array_wrap(&a, bytes + 8, kC128, kHost, nullptr, &d, 1), GDAP_SUCCESS) << gdap_last_error();
  gdap_array_destroy(a);
  ASSERT_EQ(gdap_array_wrap(&a, bytes + 4, gdap_dtype{GDAP_DTYPE_FLOAT, 32, 1}, kHost, nullptr, &d, 1), GDAP_SUCCESS);
  gdap_array_destroy(a);
  ASSERT_EQ(gdap_array_wrap(&a, bytes + 3, gdap_dtype{GDAP_DTYPE_BOOL, 8, 1}, kHost, nullptr, &d, 1), GDAP_SUCCESS);
  gdap_array_destroy(a);
  gdap_dim none = GDAP_DIM_INIT;
  gdap_dim_set_undistributed(&none, 0);
  ASSERT_EQ(gdap_array_wrap(&a, bytes + 1, kF64, kHost, nullptr, &none, 1), GDAP_SUCCESS)
      << "an empty section addresses no element: " << gdap_last_error();
  gdap_array_destroy(a);
}

TEST(Misaligned, DlpackImportRefusesDataPlusByteOffsetOffTheAlignment) {
  alignas(16) static unsigned char bytes[256];
  gdap_dim d = GDAP_DIM_INIT;
  gdap_dim_set_undistributed(&d, 4);
  Producer p(bytes, {4});
  p.versioned.dl_tensor.byte_offset = 3;
  gdap_array* a = nullptr;
  EXPECT_EQ(gdap_array_from_dlpack(&a, &p.versioned, &d, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "DLPack tensor data + byte_offset")) << gdap_last_error();
  EXPECT_TRUE(contains(gdap_last_error(), "is not aligned for float64")) << gdap_last_error();
  EXPECT_EQ(p.deleted, 0) << "a refused tensor stays the caller's";
  p.versioned.dl_tensor.byte_offset = 8;  // an aligned start through byte_offset is fine
  ASSERT_EQ(gdap_array_from_dlpack(&a, &p.versioned, &d, 1, nullptr), GDAP_SUCCESS) << gdap_last_error();
  gdap_array_destroy(a);
}

}  // namespace
