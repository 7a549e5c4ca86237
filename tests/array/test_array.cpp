// Layer 3: local arrays. Ownership of DLPack tensors (deleter exactly once, never on failure),
// zero-copy export and import (pointer identity, strides kept), allocation, wrapping, index
// conversion, every rejection, and many threads at once.
#include "dlpack_fixtures.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#if GDAP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using gdap_test::block;
using gdap_test::Producer;
using gdap_test::undistributed;

struct ArrayHandle {
  gdap_array* a = nullptr;
  ~ArrayHandle() { gdap_array_destroy(a); }
};

bool contains(const std::string& text, const char* word) { return text.find(word) != std::string::npos; }

// ----- ownership -----

TEST(Ownership, DeleterRunsOnceWhenArrayGoesFirst) {
  double data[6] = {0, 1, 2, 3, 4, 5};
  Producer p(data, {2, 3});
  gdap_dim dims[2] = {undistributed(2), undistributed(3)};
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_from_dlpack(&a, &p.versioned, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, a), GDAP_SUCCESS);
  EXPECT_EQ(gdap_array_destroy(a), GDAP_SUCCESS);
  EXPECT_EQ(p.deleted, 0) << "the export still refers to the memory";
  EXPECT_EQ(static_cast<double*>(out->dl_tensor.data)[4], 4.0);
  out->deleter(out);
  EXPECT_EQ(p.deleted, 1);
}

TEST(Ownership, DeleterRunsOnceWhenExportsGoFirst) {
  double data[4] = {};
  Producer p(data, {4});
  gdap_dim d = undistributed(4);
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_from_dlpack(&a, &p.versioned, &d, 1, "0.10.0"), GDAP_SUCCESS);
  DLManagedTensorVersioned* v[3];
  DLManagedTensor* u = nullptr;
  for (auto& t : v) ASSERT_EQ(gdap_array_to_dlpack(&t, a), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_to_dlpack_unversioned(&u, a), GDAP_SUCCESS);
  for (auto* t : v) t->deleter(t);
  u->deleter(u);
  EXPECT_EQ(p.deleted, 0);
  gdap_array_destroy(a);
  EXPECT_EQ(p.deleted, 1);
}

TEST(Ownership, FailedImportLeavesTheTensorWithTheCaller) {
  double data[6] = {};
  Producer p(data, {2, 3});
  const DLManagedTensorVersioned before = p.versioned;
  gdap_dim bad[2] = {block(2, 1, 0, 0, 2), block(3, 1, 0, 0, 4)};  // stop 4 > size 3
  gdap_array* a = reinterpret_cast<gdap_array*>(0x1);
  EXPECT_EQ(gdap_array_from_dlpack(&a, &p.versioned, bad, 2, nullptr), GDAP_ERR_PROTOCOL);
  EXPECT_TRUE(contains(gdap_last_error(), "dimension 1 ('b')")) << gdap_last_error();
  EXPECT_EQ(a, reinterpret_cast<gdap_array*>(0x1)) << "out untouched";
  EXPECT_EQ(p.deleted, 0) << "not taken on failure";
  EXPECT_EQ(std::memcmp(&before, &p.versioned, sizeof before), 0) << "tensor unchanged";
}

TEST(Ownership, DeleterMayBeNull) {
  double data[2] = {};
  Producer p(data, {2});
  p.versioned.deleter = nullptr;
  gdap_dim d = undistributed(2);
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_from_dlpack(&a, &p.versioned, &d, 1, nullptr), GDAP_SUCCESS);
  EXPECT_EQ(gdap_array_destroy(a), GDAP_SUCCESS);
}

// ----- zero copy -----

TEST(ZeroCopy, ExportSharesElementZeroAndWritesAreSeen) {
  double data[8] = {};
  Producer p(data, {2, 3}, {kDLFloat, 64, 1}, {}, {kDLCPU, 0});
  p.versioned.dl_tensor.byte_offset = 2 * sizeof(double);  // element 0 is data[2]
  gdap_dim dims[2] = {block(4, 2, 1, 2, 4), undistributed(3)};
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack(&h.a, &p.versioned, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
  void* first = nullptr;
  ASSERT_EQ(gdap_array_data(&first, h.a), GDAP_SUCCESS);
  EXPECT_EQ(first, &data[2]);
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, h.a), GDAP_SUCCESS);
  EXPECT_EQ(static_cast<char*>(out->dl_tensor.data) + out->dl_tensor.byte_offset, reinterpret_cast<char*>(&data[2]));
  EXPECT_EQ(out->version.major, DLPACK_MAJOR_VERSION);
  static_cast<double*>(first)[4] = 42.0;
  EXPECT_EQ(data[6], 42.0) << "one memory, two views";
  double* view = reinterpret_cast<double*>(static_cast<char*>(out->dl_tensor.data) + out->dl_tensor.byte_offset);
  EXPECT_EQ(view[4], 42.0);
  out->deleter(out);
}

TEST(ZeroCopy, StridedViewsKeepTheirStrides) {
  // A transposed 3x4 view of a 4x3 buffer, and a column slice with a row stride of 3.
  float data[12];
  for (int i = 0; i < 12; ++i) data[i] = static_cast<float>(i);
  Producer t(data, {3, 4}, {kDLFloat, 32, 1}, {1, 3});
  gdap_dim dims[2] = {undistributed(3), undistributed(4)};
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack(&h.a, &t.versioned, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
  int64_t strides[2];
  ASSERT_EQ(gdap_array_strides(strides, h.a), GDAP_SUCCESS);
  EXPECT_EQ(strides[0], 1);
  EXPECT_EQ(strides[1], 3);
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, h.a), GDAP_SUCCESS);
  EXPECT_EQ(out->dl_tensor.strides[0], 1);
  EXPECT_EQ(out->dl_tensor.strides[1], 3);
  EXPECT_EQ(static_cast<float*>(out->dl_tensor.data)[2 * 1 + 3 * 3], 11.0f) << "element (2, 3) of the transpose";
  out->deleter(out);
  Producer column(data + 1, {4}, {kDLFloat, 32, 1}, {3});
  gdap_dim d = undistributed(4);
  ArrayHandle c;
  ASSERT_EQ(gdap_array_from_dlpack(&c.a, &column.versioned, &d, 1, nullptr), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_strides(strides, c.a), GDAP_SUCCESS);
  EXPECT_EQ(strides[0], 3);
  Producer reversed(data + 11, {12}, {kDLFloat, 32, 1}, {-1});
  gdap_dim r = undistributed(12);
  ArrayHandle n;
  EXPECT_EQ(gdap_array_from_dlpack(&n.a, &reversed.versioned, &r, 1, nullptr), GDAP_SUCCESS) << "negative strides";
}

TEST(ZeroCopy, UnversionedRoundTrip) {
  int32_t data[5] = {1, 2, 3, 4, 5};
  Producer p(data, {5}, {kDLInt, 32, 1});
  gdap_dim d = block(10, 2, 1, 5, 10);
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack_unversioned(&h.a, &p.unversioned, &d, 1, nullptr), GDAP_SUCCESS);
  DLManagedTensor* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack_unversioned(&out, h.a), GDAP_SUCCESS);
  EXPECT_EQ(out->dl_tensor.data, data);
  EXPECT_EQ(out->dl_tensor.dtype.bits, 32);
  out->deleter(out);
  gdap_array_destroy(h.a);
  h.a = nullptr;
  EXPECT_EQ(p.deleted, 1);
}

TEST(ZeroCopy, ReadOnlyFlagTravels) {
  double data[2] = {};
  Producer p(data, {2});
  p.versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  gdap_dim d = undistributed(2);
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack(&h.a, &p.versioned, &d, 1, nullptr), GDAP_SUCCESS);
  int ro = 0;
  ASSERT_EQ(gdap_array_readonly(&ro, h.a), GDAP_SUCCESS);
  EXPECT_EQ(ro, 1);
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, h.a), GDAP_SUCCESS);
  EXPECT_TRUE(out->flags & DLPACK_FLAG_BITMASK_READ_ONLY);
  out->deleter(out);
}

// ----- rejections -----

struct Rejection {
  const char* rule;
  std::function<void(Producer&)> spoil;
  gdap_status expected;
  const char* words;
};

TEST(Import, EveryRejectionNamesTheProblem) {
  const Rejection cases[] = {
      {"DLPack major must match", [](Producer& p) { p.versioned.version.major = 2; }, GDAP_ERR_VERSION, "major version 2"},
      {"ndim must match dim_data", [](Producer& p) { p.versioned.dl_tensor.ndim = 1; }, GDAP_ERR_PROTOCOL,
       "dim_data has 2 dimensions but the buffer has 1"},
      {"shape entries >= 0", [](Producer& p) { p.shape[1] = -3; }, GDAP_ERR_INVALID_ARGUMENT, "shape[1] (-3) < 0"},
      {"element span fits int64", [](Producer& p) { p.shape = {INT64_MAX / 2, 3}; }, GDAP_ERR_OVERFLOW, "overflows"},
      {"stride span fits int64",
       [](Producer& p) {
         p.strides = {INT64_MAX, 1};
         p.versioned.dl_tensor.strides = p.strides.data();
       },
       GDAP_ERR_OVERFLOW, "overflows"},
      {"device types gdap handles", [](Producer& p) { p.versioned.dl_tensor.device = {kDLVulkan, 0}; },
       GDAP_ERR_UNSUPPORTED, "device type 7"},
      {"whole-byte dtypes", [](Producer& p) { p.versioned.dl_tensor.dtype = {kDLInt, 4, 1}; }, GDAP_ERR_UNSUPPORTED,
       "4 bits"},
      {"no lanes", [](Producer& p) { p.versioned.dl_tensor.dtype = {kDLFloat, 32, 0}; }, GDAP_ERR_UNSUPPORTED, "0 lanes"},
      {"data NULL only when empty", [](Producer& p) { p.versioned.dl_tensor.data = nullptr; }, GDAP_ERR_INVALID_ARGUMENT,
       "data is NULL"},
      {"padded sub-byte types", [](Producer& p) { p.versioned.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED; },
       GDAP_ERR_UNSUPPORTED, "sub-byte"},
      {"dims must fit the buffer", [](Producer& p) { p.shape[0] = 3; }, GDAP_ERR_PROTOCOL,
       "dimension 0 ('b'): stop - start (2) != buffer shape (3)"},
  };
  for (const auto& c : cases) {
    double data[6] = {};
    Producer p(data, {2, 3});
    c.spoil(p);
    p.versioned.dl_tensor.shape = p.shape.data();
    gdap_dim dims[2] = {GDAP_DIM_INIT, undistributed(3)};  // {} is resolved from the tensor's shape
    if (std::string(c.rule) == "dims must fit the buffer") dims[0] = block(2, 1, 0, 0, 2);
    gdap_array* a = nullptr;
    EXPECT_EQ(gdap_array_from_dlpack(&a, &p.versioned, dims, 2, nullptr), c.expected) << c.rule << ": " << gdap_last_error();
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << c.rule << ": " << gdap_last_error();
    EXPECT_EQ(a, nullptr) << c.rule;
    EXPECT_EQ(p.deleted, 0) << c.rule;
  }
}

TEST(Import, VersionStringIsChecked) {
  double data[2] = {};
  Producer p(data, {2});
  gdap_dim d = undistributed(2);
  gdap_array* a = nullptr;
  EXPECT_EQ(gdap_array_from_dlpack(&a, &p.versioned, &d, 1, "1.0.0"), GDAP_ERR_VERSION);
  EXPECT_EQ(gdap_array_from_dlpack(&a, &p.versioned, &d, 1, "zero"), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_array_from_dlpack(nullptr, &p.versioned, &d, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_array_from_dlpack(&a, nullptr, &d, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(p.deleted, 0);
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack(&h.a, &p.versioned, &d, 1, "0.9.1"), GDAP_SUCCESS);
  const char* v = nullptr;
  ASSERT_EQ(gdap_array_version(&v, h.a), GDAP_SUCCESS);
  EXPECT_STREQ(v, "0.9.1");
}

// ----- allocation and wrapping -----

TEST(Create, HostSectionIsZeroedAlignedAndShapedByItsDims) {
  gdap_dim dims[2];
  gdap_dim_set_block(&dims[0], 10, 2, 1, 4, 10);
  gdap_dim_set_padding(&dims[0], 1, 0);
  gdap_dim_set_cyclic(&dims[1], 11, 3, 2, 4, 2);  // blocks 2 (4,5) and 5 (10): 3 elements
  ArrayHandle h;
  ASSERT_EQ(gdap_array_create(&h.a, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, dims, 2), GDAP_SUCCESS)
      << gdap_last_error();
  int64_t shape[2], strides[2];
  gdap_array_shape(shape, h.a);
  gdap_array_strides(strides, h.a);
  EXPECT_EQ(shape[0], 6);
  EXPECT_EQ(shape[1], 3);
  EXPECT_EQ(strides[0], 3);
  EXPECT_EQ(strides[1], 1);
  void* data = nullptr;
  gdap_array_data(&data, h.a);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  for (int k = 0; k < 18; ++k) EXPECT_EQ(static_cast<double*>(data)[k], 0.0);
  gdap_device dev{};
  gdap_array_device(&dev, h.a);
  EXPECT_EQ(dev.type, GDAP_DEVICE_CPU);
}

TEST(Create, RefusesWhatItCannotAllocate) {
  gdap_dim d = block(INT64_MAX, 1, 0, 0, INT64_MAX);
  gdap_array* a = nullptr;
  EXPECT_EQ(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, &d, 1), GDAP_ERR_OVERFLOW)
      << "INT64_MAX doubles overflow the byte count: " << gdap_last_error();
  gdap_dim alias = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, &alias, 1), GDAP_ERR_PROTOCOL)
      << "{} has no extent to allocate";
  gdap_dim ok = block(4, 1, 0, 0, 4);
  EXPECT_EQ(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 12, 1}, {GDAP_DEVICE_CPU, 0}, &ok, 1), GDAP_ERR_UNSUPPORTED);
  EXPECT_EQ(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 64, 1}, {99, 0}, &ok, 1), GDAP_ERR_UNSUPPORTED);
  EXPECT_EQ(a, nullptr);
}

TEST(Create, CudaMemoryWithoutADeviceIsAClearError) {
  gdap_dim d = block(4, 1, 0, 0, 4);
  gdap_array* a = nullptr;
  const gdap_status s = gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 32, 1}, {GDAP_DEVICE_CUDA, 0}, &d, 1);
#if GDAP_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
    EXPECT_EQ(s, GDAP_SUCCESS) << gdap_last_error();
  } else {
    EXPECT_EQ(s, GDAP_ERR_DEVICE);
    EXPECT_TRUE(contains(gdap_last_error(), "allocating 16 bytes on CUDA device 0")) << gdap_last_error();
  }
#else
  EXPECT_EQ(s, GDAP_ERR_UNSUPPORTED);
  EXPECT_TRUE(contains(gdap_last_error(), "built without CUDA")) << gdap_last_error();
#endif
  gdap_array_destroy(a);
}

TEST(Wrap, CallerMemoryIsSharedNeverFreed) {
  std::vector<double> mine(12, 1.5);
  gdap_dim dims[2] = {block(8, 2, 1, 4, 8), undistributed(3)};
  const int64_t strides[2] = {3, 1};
  ArrayHandle h;
  ASSERT_EQ(gdap_array_wrap(&h.a, mine.data(), {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, strides, dims, 2),
            GDAP_SUCCESS)
      << gdap_last_error();
  void* data = nullptr;
  gdap_array_data(&data, h.a);
  EXPECT_EQ(data, mine.data());
  gdap_array_destroy(h.a);
  h.a = nullptr;
  EXPECT_EQ(mine[11], 1.5) << "still ours";
  gdap_array* a = nullptr;
  EXPECT_EQ(gdap_array_wrap(&a, nullptr, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CPU, 0}, nullptr, dims, 2),
            GDAP_ERR_INVALID_ARGUMENT);
}

// ----- index conversion -----

TEST(Indices, GlobalAndLocalForEachDistType) {
  const int64_t idx[] = {9, 4, 7};
  gdap_dim dims[3];
  gdap_dim_set_block(&dims[0], 18, 2, 1, 8, 18);
  gdap_dim_set_padding(&dims[0], 1, 1);
  gdap_dim_set_cyclic(&dims[1], 10, 2, 1, 2, 2);
  gdap_dim_set_unstructured(&dims[2], 10, 1, 0, idx, 3, -1);
  ArrayHandle h;
  ASSERT_EQ(gdap_array_create(&h.a, {GDAP_DTYPE_INT, 8, 1}, {GDAP_DEVICE_CPU, 0}, dims, 3), GDAP_SUCCESS)
      << gdap_last_error();
  const int64_t global[3] = {8, 7, 7};  // a halo cell, block 3's second element, the third index
  int64_t local[3] = {-1, -1, -1}, back[3];
  ASSERT_EQ(gdap_array_global_to_local(local, h.a, global), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(local[0], 0);
  EXPECT_EQ(local[1], 3);
  EXPECT_EQ(local[2], 2);
  ASSERT_EQ(gdap_array_local_to_global(back, h.a, local), GDAP_SUCCESS);
  EXPECT_EQ(back[0], 8);
  EXPECT_EQ(back[1], 7);
  EXPECT_EQ(back[2], 7);
  const int64_t absent[3] = {8, 4, 7};
  EXPECT_EQ(gdap_array_global_to_local(local, h.a, absent), GDAP_ERR_NOT_FOUND);
  EXPECT_TRUE(contains(gdap_last_error(), "dimension 1 ('c'): global index 4")) << gdap_last_error();
  const int64_t outside[3] = {0, 0, 3};
  EXPECT_EQ(gdap_array_local_to_global(back, h.a, outside), GDAP_ERR_OUT_OF_RANGE);
  gdap_dim copy = GDAP_DIM_INIT;
  ASSERT_EQ(gdap_array_dim(&copy, h.a, 2), GDAP_SUCCESS);
  EXPECT_EQ(copy.num_indices, 3);
  EXPECT_NE(copy.indices, idx) << "the array keeps its own copy of the indices";
  EXPECT_EQ(copy.indices[0], 9);
  EXPECT_EQ(gdap_array_dim(&copy, h.a, 3), GDAP_ERR_OUT_OF_RANGE);
}

TEST(Indices, ZeroDimensionalArray) {
  double x = 3.0;
  Producer p(&x, {});
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack(&h.a, &p.versioned, nullptr, 0, nullptr), GDAP_SUCCESS) << gdap_last_error();
  int64_t ndim = -1;
  gdap_array_ndim(&ndim, h.a);
  EXPECT_EQ(ndim, 0);
  EXPECT_EQ(gdap_array_global_to_local(nullptr, h.a, nullptr), GDAP_SUCCESS);
}

// ----- threads -----

TEST(Threads, ManyThreadsCreateExportAndDestroyTheirOwnArrays) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &failures] {
      for (int k = 0; k < 200; ++k) {
        gdap_dim d = block(100, 4, t % 4, 25 * (t % 4), 25 * (t % 4) + 25);
        gdap_array* a = nullptr;
        DLManagedTensorVersioned* out = nullptr;
        if (gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 32, 1}, {GDAP_DEVICE_CPU, 0}, &d, 1) != GDAP_SUCCESS ||
            gdap_array_to_dlpack(&out, a) != GDAP_SUCCESS) {
          failures++;
        }
        gdap_dim bad = block(10, 1, 0, 0, 11);
        if (gdap_dim_validate(&bad, 0, -1) != GDAP_ERR_PROTOCOL || !contains(gdap_last_error(), "stop (11)")) failures++;
        gdap_array_destroy(a);
        if (out != nullptr) out->deleter(out);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, 0);
}

}  // namespace
