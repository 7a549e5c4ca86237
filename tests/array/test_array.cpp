// Layer 3: local arrays. Ownership of DLPack tensors (deleter exactly once, in every order, never
// on failure), zero-copy export and import (pointer identity, strides kept), allocation, wrapping,
// index conversion, every rejection, and many threads at once.
#include "dlpack_fixtures.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#if GDAP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

using gdap_test::block;
using gdap_test::cyclic;
using gdap_test::padded;
using gdap_test::Producer;
using gdap_test::Snapshot;
using gdap_test::undistributed;

constexpr gdap_dtype kF64{GDAP_DTYPE_FLOAT, 64, 1};
constexpr gdap_dtype kF32{GDAP_DTYPE_FLOAT, 32, 1};
constexpr gdap_device kHost{GDAP_DEVICE_CPU, 0};

// Destroys the array it holds when the test ends, whatever happened.
struct ArrayHandle {
  gdap_array* a = nullptr;
  ArrayHandle() = default;
  ArrayHandle(const ArrayHandle&) = delete;
  ArrayHandle& operator=(const ArrayHandle&) = delete;
  ~ArrayHandle() { gdap_array_destroy(a); }
  void reset() {
    gdap_array_destroy(a);
    a = nullptr;
  }
};

bool contains(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

gdap_array* const kUntouched = reinterpret_cast<gdap_array*>(0x1);  // an `out` value a failure must keep

// ----- ownership: the producer's deleter runs exactly once, after the last user -----

// One way of sharing an imported array's memory and letting go of it. `release_all` drops every
// reference in the scenario's order and checks the deleter ran only after the last one.
struct OwnershipCase {
  const char* rule;
  std::function<void(gdap_array* a, Producer& p)> run;
};

void import_both_ways(const OwnershipCase& c, bool versioned) {
  SCOPED_TRACE(std::string(c.rule) + (versioned ? " (versioned producer)" : " (unversioned producer)"));
  double data[6] = {0, 1, 2, 3, 4, 5};
  Producer p(data, {2, 3});
  gdap_dim dims[2] = {undistributed(2), undistributed(3)};
  gdap_array* a = nullptr;
  const gdap_status s = versioned ? gdap_array_from_dlpack(&a, &p.versioned, dims, 2, nullptr)
                                  : gdap_array_from_dlpack_unversioned(&a, &p.unversioned, dims, 2, nullptr);
  ASSERT_EQ(s, GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(p.deleted, 0) << "taken, not released";
  c.run(a, p);
  EXPECT_EQ(p.deleted, 1) << "exactly once, at the end";
}

TEST(Ownership, DeleterRunsExactlyOnceInEveryOrder) {
  const OwnershipCase cases[] = {
      {"no export: destroy releases", [](gdap_array* a, Producer&) { EXPECT_EQ(gdap_array_destroy(a), GDAP_SUCCESS); }},
      {"array destroyed first: the export keeps the memory",
       [](gdap_array* a, Producer& p) {
         DLManagedTensorVersioned* out = nullptr;
         ASSERT_EQ(gdap_array_to_dlpack(&out, a), GDAP_SUCCESS);
         EXPECT_EQ(gdap_array_destroy(a), GDAP_SUCCESS);
         EXPECT_EQ(p.deleted, 0);
         EXPECT_EQ(static_cast<double*>(out->dl_tensor.data)[4], 4.0) << "still readable";
         out->deleter(out);
       }},
      {"export deleted first: the array keeps the memory",
       [](gdap_array* a, Producer& p) {
         DLManagedTensorVersioned* out = nullptr;
         ASSERT_EQ(gdap_array_to_dlpack(&out, a), GDAP_SUCCESS);
         out->deleter(out);
         EXPECT_EQ(p.deleted, 0);
         gdap_array_destroy(a);
       }},
      {"several exports of both kinds, the array destroyed in between",
       [](gdap_array* a, Producer& p) {
         DLManagedTensorVersioned* v[3] = {};
         DLManagedTensor* u[2] = {};
         for (auto*& t : v) ASSERT_EQ(gdap_array_to_dlpack(&t, a), GDAP_SUCCESS);
         for (auto*& t : u) ASSERT_EQ(gdap_array_to_dlpack_unversioned(&t, a), GDAP_SUCCESS);
         v[1]->deleter(v[1]);
         u[0]->deleter(u[0]);
         gdap_array_destroy(a);
         v[0]->deleter(v[0]);
         EXPECT_EQ(p.deleted, 0);
         u[1]->deleter(u[1]);
         EXPECT_EQ(p.deleted, 0);
         v[2]->deleter(v[2]);
       }},
      {"an export re-imported into a second array: both arrays and the chain",
       [](gdap_array* a, Producer& p) {
         DLManagedTensorVersioned* out = nullptr;
         ASSERT_EQ(gdap_array_to_dlpack(&out, a), GDAP_SUCCESS);
         gdap_dim dims[2] = {undistributed(2), undistributed(3)};
         gdap_array* b = nullptr;
         ASSERT_EQ(gdap_array_from_dlpack(&b, out, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
         gdap_array_destroy(a);
         EXPECT_EQ(p.deleted, 0) << "b holds the export, which holds the memory";
         DLManagedTensor* again = nullptr;
         ASSERT_EQ(gdap_array_to_dlpack_unversioned(&again, b), GDAP_SUCCESS);
         gdap_array_destroy(b);
         EXPECT_EQ(p.deleted, 0);
         again->deleter(again);
       }},
      {"an export deleted on another thread",
       [](gdap_array* a, Producer& p) {
         DLManagedTensorVersioned* out = nullptr;
         ASSERT_EQ(gdap_array_to_dlpack(&out, a), GDAP_SUCCESS);
         gdap_array_destroy(a);
         EXPECT_EQ(p.deleted, 0);
         std::thread([out] { out->deleter(out); }).join();
       }},
  };
  for (const auto& c : cases) {
    import_both_ways(c, true);
    import_both_ways(c, false);
  }
}

TEST(Ownership, ANullDeleterIsNeverCalled) {
  double data[2] = {};
  Producer p(data, {2});
  p.versioned.deleter = nullptr;
  gdap_dim d = undistributed(2);
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_from_dlpack(&a, &p.versioned, &d, 1, nullptr), GDAP_SUCCESS);
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, a), GDAP_SUCCESS);
  EXPECT_EQ(gdap_array_destroy(a), GDAP_SUCCESS);
  out->deleter(out);
  EXPECT_EQ(p.deleted, 0);
}

// ----- zero copy -----

TEST(ZeroCopy, ExportSharesElementZeroAndWritesAreSeenThroughBothViews) {
  double data[8] = {};
  Producer p(data, {2, 3});
  p.versioned.dl_tensor.byte_offset = 2 * sizeof(double);  // element 0 is data[2]
  gdap_dim dims[2] = {block(4, 2, 1, 2, 4), undistributed(3)};
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack(&h.a, &p.versioned, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
  void* first = nullptr;
  ASSERT_EQ(gdap_array_data(&first, h.a), GDAP_SUCCESS);
  EXPECT_EQ(first, &data[2]) << "gdap_array_data is data + byte_offset";
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, h.a), GDAP_SUCCESS);
  EXPECT_EQ(out->dl_tensor.data, data) << "the producer's split of data and byte_offset is kept";
  EXPECT_EQ(out->dl_tensor.byte_offset, 2 * sizeof(double));
  EXPECT_EQ(out->version.major, static_cast<uint32_t>(DLPACK_MAJOR_VERSION));
  EXPECT_EQ(out->version.minor, static_cast<uint32_t>(DLPACK_MINOR_VERSION));
  EXPECT_EQ(out->flags, 0u);
  EXPECT_EQ(out->dl_tensor.ndim, 2);
  EXPECT_EQ(out->dl_tensor.shape[0], 2);
  EXPECT_EQ(out->dl_tensor.shape[1], 3);
  EXPECT_NE(out->dl_tensor.shape, p.shape.data()) << "the export owns its shape";
  EXPECT_EQ(out->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(out->dl_tensor.device.device_type, kDLCPU);
  static_cast<double*>(first)[4] = 42.0;  // through the array ...
  double* view = reinterpret_cast<double*>(static_cast<char*>(out->dl_tensor.data) + out->dl_tensor.byte_offset);
  EXPECT_EQ(view[4], 42.0) << "... seen through the export";
  view[5] = -1.0;  // through the export ...
  EXPECT_EQ(static_cast<double*>(first)[5], -1.0) << "... seen through the array";
  EXPECT_EQ(data[7], -1.0) << "one memory: the producer's";
  out->deleter(out);
}

TEST(ZeroCopy, OwnAllocationsExportWithByteOffsetZero) {
  gdap_dim d = block(6, 1, 0, 0, 6);
  ArrayHandle h;
  ASSERT_EQ(gdap_array_create(&h.a, kF64, kHost, &d, 1), GDAP_SUCCESS) << gdap_last_error();
  void* first = nullptr;
  gdap_array_data(&first, h.a);
  DLManagedTensor* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack_unversioned(&out, h.a), GDAP_SUCCESS);
  EXPECT_EQ(out->dl_tensor.data, first);
  EXPECT_EQ(out->dl_tensor.byte_offset, 0u);
  static_cast<double*>(out->dl_tensor.data)[5] = 2.5;
  EXPECT_EQ(static_cast<double*>(first)[5], 2.5);
  h.reset();
  EXPECT_EQ(static_cast<double*>(out->dl_tensor.data)[5], 2.5) << "gdap's allocation outlives the array";
  out->deleter(out);
}

struct StridedCase {
  const char* rule;
  size_t first;  // offset into the 4x3 buffer of the view's element (0, 0)
  std::vector<int64_t> shape, strides;
  std::vector<int64_t> probe;  // an index into the view
  float expected;              // the buffer's value there
};

TEST(ZeroCopy, StridedViewsKeepTheirStridesBothWays) {
  float buffer[12];  // a 4x3 row-major buffer holding 0..11
  for (int i = 0; i < 12; ++i) buffer[i] = static_cast<float>(i);
  const StridedCase cases[] = {
      {"transposed view (3x4, strides 1, 3)", 0, {3, 4}, {1, 3}, {2, 3}, 11.0f},
      {"column slice (column 1, stride 3)", 1, {4}, {3}, {2}, 7.0f},
      {"two columns (4x2, strides 3, 1)", 1, {4, 2}, {3, 1}, {3, 1}, 11.0f},
      {"reversed rows (negative stride)", 9, {4, 3}, {-3, 1}, {1, 0}, 6.0f},
      {"broadcast row (stride 0)", 3, {5, 3}, {0, 1}, {4, 2}, 5.0f},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rule);
    Producer p(buffer + c.first, c.shape, {kDLFloat, 32, 1}, c.strides);
    std::vector<gdap_dim> dims;
    for (int64_t n : c.shape) dims.push_back(undistributed(n));
    const auto ndim = static_cast<int64_t>(c.shape.size());
    ArrayHandle h;
    ASSERT_EQ(gdap_array_from_dlpack(&h.a, &p.versioned, dims.data(), ndim, nullptr), GDAP_SUCCESS)
        << gdap_last_error();
    std::vector<int64_t> strides(c.shape.size()), shape(c.shape.size());
    ASSERT_EQ(gdap_array_strides(strides.data(), h.a), GDAP_SUCCESS);
    ASSERT_EQ(gdap_array_shape(shape.data(), h.a), GDAP_SUCCESS);
    EXPECT_EQ(strides, c.strides);
    EXPECT_EQ(shape, c.shape);
    DLManagedTensorVersioned* out = nullptr;
    ASSERT_EQ(gdap_array_to_dlpack(&out, h.a), GDAP_SUCCESS);
    ASSERT_NE(out->dl_tensor.strides, nullptr);
    EXPECT_EQ(std::vector<int64_t>(out->dl_tensor.strides, out->dl_tensor.strides + ndim), c.strides);
    EXPECT_EQ(out->dl_tensor.data, buffer + c.first);
    int64_t offset = 0;
    for (size_t k = 0; k < c.probe.size(); ++k) offset += c.probe[k] * out->dl_tensor.strides[k];
    EXPECT_EQ(static_cast<float*>(out->dl_tensor.data)[offset], c.expected);
    out->deleter(out);
  }
}

TEST(ZeroCopy, CompactTensorsGetRowMajorStrides) {
  double data[24] = {};
  Producer p(data, {2, 3, 4});
  gdap_dim dims[3] = {undistributed(2), undistributed(3), undistributed(4)};
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack(&h.a, &p.versioned, dims, 3, nullptr), GDAP_SUCCESS);
  int64_t strides[3];
  ASSERT_EQ(gdap_array_strides(strides, h.a), GDAP_SUCCESS);
  EXPECT_EQ(strides[0], 12);
  EXPECT_EQ(strides[1], 4);
  EXPECT_EQ(strides[2], 1);
}

TEST(ZeroCopy, UnversionedRoundTrip) {
  int32_t data[5] = {1, 2, 3, 4, 5};
  Producer p(data, {5}, {kDLInt, 32, 1});
  gdap_dim d = block(10, 2, 1, 5, 10);
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack_unversioned(&h.a, &p.unversioned, &d, 1, nullptr), GDAP_SUCCESS)
      << gdap_last_error();
  int ro = -1;
  ASSERT_EQ(gdap_array_readonly(&ro, h.a), GDAP_SUCCESS);
  EXPECT_EQ(ro, 0) << "DLPack < 1.0 has no read-only flag";
  DLManagedTensor* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack_unversioned(&out, h.a), GDAP_SUCCESS);
  EXPECT_EQ(out->dl_tensor.data, data);
  EXPECT_EQ(out->dl_tensor.dtype.bits, 32);
  static_cast<int32_t*>(out->dl_tensor.data)[3] = 40;
  EXPECT_EQ(data[3], 40);
  out->deleter(out);
  h.reset();
  EXPECT_EQ(p.deleted, 1);
}

TEST(ZeroCopy, ReadOnlyTravelsAndIsNeverLost) {
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
  EXPECT_TRUE(out->flags & DLPACK_FLAG_BITMASK_READ_ONLY) << "versioned export carries the flag";
  out->deleter(out);
  DLManagedTensor* old = reinterpret_cast<DLManagedTensor*>(0x1);
  EXPECT_EQ(gdap_array_to_dlpack_unversioned(&old, h.a), GDAP_ERR_UNSUPPORTED)
      << "an unversioned tensor cannot say read-only (NumPy refuses likewise)";
  EXPECT_TRUE(contains(gdap_last_error(), "read-only")) << gdap_last_error();
  EXPECT_EQ(old, reinterpret_cast<DLManagedTensor*>(0x1));
}

// ----- rejections: nothing taken, nothing changed, a message naming the problem -----

struct Rejection {
  const char* rule;
  std::function<void(Producer&, std::vector<gdap_dim>&, int64_t& ndim, const char*& version)> spoil;
  gdap_status expected;
  std::vector<std::string> words;  // each must appear in gdap_last_error()
  bool versioned_only = false;     // a rule of the versioned struct only
};

TEST(Import, EveryRejectionLeavesTheTensorWithTheCaller) {
  using Dims = std::vector<gdap_dim>;
  const Rejection cases[] = {
      {"DLPack major must match (both majors named)",
       [](Producer& p, Dims&, int64_t&, const char*&) { p.versioned.version.major = 2; }, GDAP_ERR_VERSION,
       {"major version 2", "gdap reads major " + std::to_string(DLPACK_MAJOR_VERSION)}, true},
      {"DLPack major 0 (a pre-1.0 struct passed as versioned)",
       [](Producer& p, Dims&, int64_t&, const char*&) { p.versioned.version.major = 0; }, GDAP_ERR_VERSION,
       {"major version 0"}, true},
      {"padded sub-byte elements are unsupported",
       [](Producer& p, Dims&, int64_t&, const char*&) { p.versioned.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED; },
       GDAP_ERR_UNSUPPORTED, {"sub-byte"}, true},
      {"tensor ndim >= 0",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.ndim = -1;
         p.unversioned.dl_tensor.ndim = -1;
       },
       GDAP_ERR_INVALID_ARGUMENT, {"ndim (-1) < 0"}},
      {"tensor ndim must equal len(dim_data)",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.ndim = 1;
         p.unversioned.dl_tensor.ndim = 1;
       },
       GDAP_ERR_PROTOCOL, {"dim_data has 2 dimensions but the buffer has 1"}},
      {"ndim argument >= 0", [](Producer&, Dims&, int64_t& ndim, const char*&) { ndim = -1; },
       GDAP_ERR_INVALID_ARGUMENT, {"dim_data ndim (-1) < 0"}},
      {"ndim argument must equal the tensor's", [](Producer&, Dims&, int64_t& ndim, const char*&) { ndim = 1; },
       GDAP_ERR_PROTOCOL, {"dim_data has 1 dimensions but the buffer has 2"}},
      {"shape may not be NULL",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.shape = nullptr;
         p.unversioned.dl_tensor.shape = nullptr;
       },
       GDAP_ERR_INVALID_ARGUMENT, {"shape is NULL"}},
      {"shape entries >= 0",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.shape[1] = -3;
         p.repoint();
       },
       GDAP_ERR_INVALID_ARGUMENT, {"shape[1] (-3) < 0"}},
      {"element count fits int64",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.shape = {INT64_MAX / 2, 3};
         p.repoint();
       },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"compact element span in bytes fits int64",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.shape = {INT64_MAX / 8, 3};
         p.repoint();
       },
       GDAP_ERR_OVERFLOW, {"overflows int64"}},
      {"stride * (extent - 1) fits int64",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.shape = {3, 3};
         p.strides = {INT64_MAX / 2 + 1, 1};
         p.repoint();
       },
       GDAP_ERR_OVERFLOW, {"stride * (extent - 1)"}},
      {"offset of the last element fits int64",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.strides = {INT64_MAX, 1};
         p.repoint();
       },
       GDAP_ERR_OVERFLOW, {"highest element offset"}},
      {"span between negative and positive strides fits int64",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.strides = {INT64_MAX / 2 + 1, -(INT64_MAX / 2)};
         p.repoint();
       },
       GDAP_ERR_OVERFLOW, {"element span"}},
      {"byte span fits int64",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.strides = {INT64_MAX / 4, 1};
         p.repoint();
       },
       GDAP_ERR_OVERFLOW, {"byte span"}},
      {"byte_offset fits int64",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.byte_offset = UINT64_MAX;
         p.unversioned.dl_tensor.byte_offset = UINT64_MAX;
       },
       GDAP_ERR_OVERFLOW, {"byte_offset"}},
      {"byte_offset + the last element's byte offset fits int64",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.byte_offset = INT64_MAX - 8;
         p.unversioned.dl_tensor.byte_offset = INT64_MAX - 8;
       },
       GDAP_ERR_OVERFLOW, {"byte_offset + highest byte offset"}},
      {"device types gdap handles (Vulkan named)",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.device = {kDLVulkan, 0};
         p.unversioned.dl_tensor.device = {kDLVulkan, 0};
       },
       GDAP_ERR_UNSUPPORTED, {"device type 7"}},
      {"device types gdap handles (ROCm named)",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.device = {kDLROCM, 0};
         p.unversioned.dl_tensor.device = {kDLROCM, 0};
       },
       GDAP_ERR_UNSUPPORTED, {"device type 10"}},
      {"device id >= 0",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.device = {kDLCUDA, -1};
         p.unversioned.dl_tensor.device = {kDLCUDA, -1};
       },
       GDAP_ERR_INVALID_ARGUMENT, {"device id -1"}},
      {"whole-byte dtypes only",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.dtype = {kDLInt, 4, 1};
         p.unversioned.dl_tensor.dtype = {kDLInt, 4, 1};
       },
       GDAP_ERR_UNSUPPORTED, {"4 bits"}},
      {"bool is 8 bits",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.dtype = {kDLBool, 16, 1};
         p.unversioned.dl_tensor.dtype = {kDLBool, 16, 1};
       },
       GDAP_ERR_UNSUPPORTED, {"bool dtype of 16 bits"}},
      {"at least one lane",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.dtype = {kDLFloat, 32, 0};
         p.unversioned.dl_tensor.dtype = {kDLFloat, 32, 0};
       },
       GDAP_ERR_UNSUPPORTED, {"0 lanes"}},
      {"data NULL only when empty",
       [](Producer& p, Dims&, int64_t&, const char*&) {
         p.versioned.dl_tensor.data = nullptr;
         p.unversioned.dl_tensor.data = nullptr;
       },
       GDAP_ERR_INVALID_ARGUMENT, {"data is NULL", "6 elements"}},
      {"dims must fit the buffer (dimension named)",
       [](Producer&, Dims& dims, int64_t&, const char*&) { dims[0] = block(4, 2, 0, 0, 3); }, GDAP_ERR_PROTOCOL,
       {"dimension 0 ('b')", "buffer shape (2)"}},
      {"dims must follow the protocol (dimension named)",
       [](Producer&, Dims& dims, int64_t&, const char*&) { dims[1] = block(3, 1, 0, 0, 4); }, GDAP_ERR_PROTOCOL,
       {"dimension 1 ('b')", "stop (4)"}},
      {"an empty dictionary may not carry keys",
       [](Producer&, Dims& dims, int64_t&, const char*&) { dims[0].size = 2; }, GDAP_ERR_PROTOCOL,
       {"dimension 0", "empty dictionary"}},
      {"dims NULL with ndim > 0", [](Producer&, Dims& dims, int64_t&, const char*&) { dims.clear(); },
       GDAP_ERR_INVALID_ARGUMENT, {}},
      {"protocol major must be known", [](Producer&, Dims&, int64_t&, const char*& v) { v = "1.0.0"; },
       GDAP_ERR_VERSION, {"1.0.0"}},
      {"protocol minor no newer than gdap's", [](Producer&, Dims&, int64_t&, const char*& v) { v = "0.99.0"; },
       GDAP_ERR_VERSION, {"0.99.0"}},
      {"protocol version is major.minor.patch", [](Producer&, Dims&, int64_t&, const char*& v) { v = "zero"; },
       GDAP_ERR_INVALID_ARGUMENT, {"zero"}},
  };
  for (const auto& c : cases) {
    for (const bool versioned : {true, false}) {
      if (c.versioned_only && !versioned) continue;
      SCOPED_TRACE(std::string(c.rule) + (versioned ? " (versioned)" : " (unversioned)"));
      double data[6] = {};
      Producer p(data, {2, 3});
      std::vector<gdap_dim> dims = {GDAP_DIM_INIT, undistributed(3)};  // {} is resolved from the shape
      int64_t ndim = 2;
      const char* version = nullptr;
      c.spoil(p, dims, ndim, version);
      const Snapshot before(p);
      gdap_array* a = kUntouched;
      const gdap_dim* d = dims.empty() ? nullptr : dims.data();
      const gdap_status s = versioned ? gdap_array_from_dlpack(&a, &p.versioned, d, ndim, version)
                                      : gdap_array_from_dlpack_unversioned(&a, &p.unversioned, d, ndim, version);
      const std::string message = gdap_last_error();
      EXPECT_EQ(s, c.expected) << message;
      for (const auto& w : c.words) EXPECT_TRUE(contains(message, w)) << "'" << w << "' not in: " << message;
      EXPECT_EQ(a, kUntouched) << "out is written only on success";
      EXPECT_EQ(p.deleted, 0) << "a refused tensor is not taken";
      EXPECT_TRUE(before.same_as(p)) << "a refused tensor is not changed";
    }
  }
}

TEST(Import, NullArgumentsAreRefused) {
  double data[2] = {};
  Producer p(data, {2});
  gdap_dim d = undistributed(2);
  gdap_array* a = kUntouched;
  EXPECT_EQ(gdap_array_from_dlpack(nullptr, &p.versioned, &d, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_array_from_dlpack(&a, nullptr, &d, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(gdap_last_error(), "tensor is NULL")) << gdap_last_error();
  EXPECT_EQ(gdap_array_from_dlpack_unversioned(nullptr, &p.unversioned, &d, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_array_from_dlpack_unversioned(&a, nullptr, &d, 1, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(a, kUntouched);
  EXPECT_EQ(p.deleted, 0);
}

TEST(Import, TheEmptyDictionaryIsResolvedFromTheTensorShape) {
  double data[6] = {};
  Producer p(data, {2, 3});
  gdap_dim dims[2] = {GDAP_DIM_INIT, GDAP_DIM_INIT};
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack(&h.a, &p.versioned, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
  for (int64_t i = 0; i < 2; ++i) {
    gdap_dim d = GDAP_DIM_INIT;
    ASSERT_EQ(gdap_array_dim(&d, h.a, i), GDAP_SUCCESS);
    const int64_t extent = p.shape[static_cast<size_t>(i)];
    EXPECT_EQ(d.dist_type, GDAP_DIST_BLOCK) << "dimension " << i;
    EXPECT_EQ(d.size, extent);
    EXPECT_EQ(d.start, 0);
    EXPECT_EQ(d.stop, extent);
    EXPECT_EQ(d.proc_grid_size, 1);
    EXPECT_EQ(d.proc_grid_rank, 0);
  }
}

TEST(Import, EmptyTensorsMayHaveNullData) {
  Producer p(nullptr, {0, 3});
  gdap_dim dims[2] = {block(8, 2, 1, 8, 8), undistributed(3)};  // 'b' with start == size: empty
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack(&h.a, &p.versioned, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
  void* data = reinterpret_cast<void*>(0x1);
  ASSERT_EQ(gdap_array_data(&data, h.a), GDAP_SUCCESS);
  EXPECT_EQ(data, nullptr);
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, h.a), GDAP_SUCCESS);
  EXPECT_EQ(out->dl_tensor.shape[0], 0);
  out->deleter(out);
}

TEST(Import, ZeroDimensionalTensor) {
  double x = 3.0;
  Producer p(&x, {});
  ArrayHandle h;
  ASSERT_EQ(gdap_array_from_dlpack(&h.a, &p.versioned, nullptr, 0, nullptr), GDAP_SUCCESS) << gdap_last_error();
  int64_t ndim = -1;
  ASSERT_EQ(gdap_array_ndim(&ndim, h.a), GDAP_SUCCESS);
  EXPECT_EQ(ndim, 0);
  EXPECT_EQ(gdap_array_shape(nullptr, h.a), GDAP_SUCCESS) << "nothing to write for 0-d";
  EXPECT_EQ(gdap_array_global_to_local(nullptr, h.a, nullptr), GDAP_SUCCESS);
  EXPECT_EQ(gdap_array_local_to_global(nullptr, h.a, nullptr), GDAP_SUCCESS);
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, h.a), GDAP_SUCCESS);
  EXPECT_EQ(out->dl_tensor.ndim, 0);
  EXPECT_EQ(*static_cast<double*>(out->dl_tensor.data), 3.0);
  out->deleter(out);
}

TEST(Import, VersionIsKeptOrDefaulted) {
  double data[2] = {};
  Producer p(data, {2}), q(data, {2});
  gdap_dim d = undistributed(2);
  ArrayHandle given, defaulted;
  ASSERT_EQ(gdap_array_from_dlpack(&given.a, &p.versioned, &d, 1, "0.10.9"), GDAP_SUCCESS) << gdap_last_error();
  ASSERT_EQ(gdap_array_from_dlpack(&defaulted.a, &q.versioned, &d, 1, nullptr), GDAP_SUCCESS);
  const char* v = nullptr;
  ASSERT_EQ(gdap_array_version(&v, given.a), GDAP_SUCCESS);
  EXPECT_STREQ(v, "0.10.9");
  ASSERT_EQ(gdap_array_version(&v, defaulted.a), GDAP_SUCCESS);
  EXPECT_STREQ(v, GDAP_PROTOCOL_VERSION);
}

// ----- allocation -----

TEST(Create, HostSectionIsZeroedAlignedAndShapedByItsDims) {
  gdap_dim dims[2] = {padded(block(10, 2, 1, 4, 10), 1, 0), cyclic(11, 3, 2, 4, 2)};  // 6 x 3 (blocks 2 and 5)
  ArrayHandle h;
  ASSERT_EQ(gdap_array_create(&h.a, kF64, kHost, dims, 2), GDAP_SUCCESS) << gdap_last_error();
  int64_t shape[2], strides[2];
  ASSERT_EQ(gdap_array_shape(shape, h.a), GDAP_SUCCESS);
  ASSERT_EQ(gdap_array_strides(strides, h.a), GDAP_SUCCESS);
  EXPECT_EQ(shape[0], 6);
  EXPECT_EQ(shape[1], 3);
  EXPECT_EQ(strides[0], 3);
  EXPECT_EQ(strides[1], 1);
  void* data = nullptr;
  ASSERT_EQ(gdap_array_data(&data, h.a), GDAP_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u) << "64-byte aligned";
  for (int k = 0; k < 18; ++k) EXPECT_EQ(static_cast<double*>(data)[k], 0.0) << "zero-filled, element " << k;
  gdap_device dev{-1, -1};
  ASSERT_EQ(gdap_array_device(&dev, h.a), GDAP_SUCCESS);
  EXPECT_EQ(dev.type, GDAP_DEVICE_CPU);
  gdap_dtype dt{};
  ASSERT_EQ(gdap_array_dtype(&dt, h.a), GDAP_SUCCESS);
  EXPECT_EQ(dt.bits, 64);
  int ro = -1;
  ASSERT_EQ(gdap_array_readonly(&ro, h.a), GDAP_SUCCESS);
  EXPECT_EQ(ro, 0);
}

TEST(Create, EmptySectionAllocatesNothing) {
  gdap_dim d = cyclic(4, 8, 6, 6);  // rank 6 of 8 holds nothing of 4 elements
  ArrayHandle h;
  ASSERT_EQ(gdap_array_create(&h.a, kF32, kHost, &d, 1), GDAP_SUCCESS) << gdap_last_error();
  void* data = reinterpret_cast<void*>(0x1);
  gdap_array_data(&data, h.a);
  EXPECT_EQ(data, nullptr);
}

struct CreateRefusal {
  const char* rule;
  gdap_dtype dtype;
  gdap_device device;
  gdap_dim dim;
  gdap_status expected;
  const char* words;
};

TEST(Create, RefusesWhatItCannotAllocate) {
  const CreateRefusal cases[] = {
      {"byte count must fit int64", kF64, kHost, block(INT64_MAX, 1, 0, 0, INT64_MAX), GDAP_ERR_OVERFLOW,
       "overflows int64"},
      {"{} has no extent to allocate", kF64, kHost, GDAP_DIM_INIT, GDAP_ERR_PROTOCOL, "gdap_dim_set_undistributed"},
      {"dims must be valid (dimension named)", kF64, kHost, block(4, 1, 0, 0, 5), GDAP_ERR_PROTOCOL,
       "dimension 0 ('b')"},
      {"whole-byte dtypes", {GDAP_DTYPE_FLOAT, 12, 1}, kHost, block(4, 1, 0, 0, 4), GDAP_ERR_UNSUPPORTED, "12 bits"},
      {"known device types", kF64, {99, 0}, block(4, 1, 0, 0, 4), GDAP_ERR_UNSUPPORTED, "device type 99"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rule);
    gdap_array* a = kUntouched;
    EXPECT_EQ(gdap_array_create(&a, c.dtype, c.device, &c.dim, 1), c.expected) << gdap_last_error();
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << gdap_last_error();
    EXPECT_EQ(a, kUntouched);
  }
  gdap_dim d = block(4, 1, 0, 0, 4);
  EXPECT_EQ(gdap_array_create(nullptr, kF64, kHost, &d, 1), GDAP_ERR_INVALID_ARGUMENT);
  gdap_array* a = kUntouched;
  EXPECT_EQ(gdap_array_create(&a, kF64, kHost, nullptr, 1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_array_create(&a, kF64, kHost, &d, -1), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(a, kUntouched);
}

// Rule: a dtype is a code of gdap.h's enum at one of the widths DLPack gives it. Every entry point
// that takes a dtype (create, wrap, DLPack import, plan, halo) refuses anything else with
// GDAP_ERR_UNSUPPORTED naming the code and width, and writes nothing (codes 99 and 77 used to pass
// as "some 8-byte type").
TEST(Dtypes, UnknownCodesAndWidthsAreRefusedEverywhere) {
  const struct {
    const char* rule;
    gdap_dtype dtype;
    const char* words;
  } cases[] = {
      {"code 99 is no dtype", {99, 64, 1}, "dtype code 99 (64 bits) is not one gdap knows"},
      {"code 77 is no dtype", {77, 32, 1}, "dtype code 77"},
      {"code 3 (DLPack's opaque handle) is no dtype", {3, 64, 1}, "dtype code 3"},
      {"DLPack's float8 codes are not gdap's", {10, 8, 1}, "dtype code 10"},
      {"float is 16, 32 or 64 bits", {GDAP_DTYPE_FLOAT, 8, 1}, "float is not 8 bits wide"},
      {"bfloat is 16 bits", {GDAP_DTYPE_BFLOAT, 32, 1}, "bfloat is not 32 bits wide"},
      {"int is at most 64 bits", {GDAP_DTYPE_INT, 128, 1}, "int is not 128 bits wide"},
      {"complex is 32, 64 or 128 bits", {GDAP_DTYPE_COMPLEX, 16, 1}, "complex is not 16 bits wide"},
  };
  gdap_dim d = block(4, 1, 0, 0, 4);
  // A one-rank periodic ring in DAP 0.10's form: its boundary padding counted in size (6 = 4 owned + 2).
  const gdap_dim ring = gdap_test::periodic(padded(block(6, 1, 0, 0, 6), 1, 1));
  gdap_map *map = nullptr, *ring_map = nullptr;
  ASSERT_EQ(gdap_map_create(&map, 1, 1, &d), GDAP_SUCCESS);
  ASSERT_EQ(gdap_map_create(&ring_map, 1, 1, &ring), GDAP_SUCCESS) << gdap_last_error();
  double data[4] = {};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rule);
    gdap_array* a = kUntouched;
    EXPECT_EQ(gdap_array_create(&a, c.dtype, kHost, &d, 1), GDAP_ERR_UNSUPPORTED);
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << gdap_last_error();
    EXPECT_EQ(gdap_array_wrap(&a, data, c.dtype, kHost, nullptr, &d, 1), GDAP_ERR_UNSUPPORTED);
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << gdap_last_error();
    Producer p(data, {4}, DLDataType{c.dtype.code, c.dtype.bits, c.dtype.lanes});
    EXPECT_EQ(gdap_array_from_dlpack(&a, &p.versioned, &d, 1, nullptr), GDAP_ERR_UNSUPPORTED);
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << gdap_last_error();
    EXPECT_EQ(a, kUntouched);
    EXPECT_EQ(p.deleted, 0) << "a refused tensor stays the producer's";
    gdap_plan* plan = reinterpret_cast<gdap_plan*>(0x1);
    EXPECT_EQ(gdap_plan_create(&plan, map, map, c.dtype, 0), GDAP_ERR_UNSUPPORTED);
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << gdap_last_error();
    EXPECT_EQ(plan, reinterpret_cast<gdap_plan*>(0x1));
    gdap_halo* halo = reinterpret_cast<gdap_halo*>(0x1);
    EXPECT_EQ(gdap_halo_create(&halo, ring_map, c.dtype, 0, nullptr), GDAP_ERR_UNSUPPORTED);
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << gdap_last_error();
    EXPECT_EQ(halo, reinterpret_cast<gdap_halo*>(0x1));
  }
  gdap_map_destroy(ring_map);
  gdap_map_destroy(map);
}

// Every code at every width it has is taken (the other side of the rule above).
TEST(Dtypes, EveryKnownCodeAndWidthIsTaken) {
  const gdap_dtype known[] = {{GDAP_DTYPE_INT, 8, 1},     {GDAP_DTYPE_INT, 16, 1},     {GDAP_DTYPE_INT, 32, 1},
                              {GDAP_DTYPE_INT, 64, 1},    {GDAP_DTYPE_UINT, 8, 1},     {GDAP_DTYPE_UINT, 16, 1},
                              {GDAP_DTYPE_UINT, 32, 1},   {GDAP_DTYPE_UINT, 64, 1},    {GDAP_DTYPE_FLOAT, 16, 1},
                              {GDAP_DTYPE_FLOAT, 32, 1},  {GDAP_DTYPE_FLOAT, 64, 1},   {GDAP_DTYPE_BFLOAT, 16, 1},
                              {GDAP_DTYPE_COMPLEX, 32, 1}, {GDAP_DTYPE_COMPLEX, 64, 1}, {GDAP_DTYPE_COMPLEX, 128, 1},
                              {GDAP_DTYPE_BOOL, 8, 1},    {GDAP_DTYPE_FLOAT, 32, 4}};
  gdap_dim d = block(4, 1, 0, 0, 4);
  for (const gdap_dtype t : known) {
    gdap_array* a = nullptr;
    EXPECT_EQ(gdap_array_create(&a, t, kHost, &d, 1), GDAP_SUCCESS)
        << "code " << int(t.code) << ", " << int(t.bits) << " bits: " << gdap_last_error();
    gdap_array_destroy(a);
  }
}

// On this machine CUDA memory can only be had with a device: the test accepts success only when
// cudaGetDeviceCount finds one, GDAP_ERR_DEVICE only when it does not, and GDAP_ERR_UNSUPPORTED
// only in a build without CUDA.
TEST(Create, CudaMemoryIsCreatedOrRefusedWithTheReason) {
  const struct {
    int32_t type;
    const char* kind;
  } kinds[] = {{GDAP_DEVICE_CUDA, "device"}, {GDAP_DEVICE_CUDA_HOST, "pinned host"},
               {GDAP_DEVICE_CUDA_MANAGED, "managed"}};
  for (const auto& k : kinds) {
    SCOPED_TRACE(k.kind);
    gdap_dim d = block(4, 1, 0, 0, 4);
    gdap_array* a = nullptr;
    const gdap_status s = gdap_array_create(&a, kF32, {k.type, 0}, &d, 1);
    const std::string message = s == GDAP_SUCCESS ? "" : gdap_last_error();
#if GDAP_HAVE_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
      EXPECT_EQ(s, GDAP_SUCCESS) << message;
    } else {
      EXPECT_EQ(s, GDAP_ERR_DEVICE) << message;
      EXPECT_TRUE(contains(message, std::string("allocating 16 bytes of CUDA ") + k.kind + " memory on device 0"))
          << message;
      EXPECT_EQ(a, nullptr);
    }
#else
    EXPECT_EQ(s, GDAP_ERR_UNSUPPORTED);
    EXPECT_TRUE(contains(message, "gdap was built without CUDA")) << message;
    EXPECT_TRUE(contains(message, "16 bytes")) << message;
#endif
    gdap_array_destroy(a);
  }
}

// ----- wrapping the caller's memory -----

TEST(Wrap, CallerMemoryIsSharedAndNeverFreed) {
  std::vector<double> mine(12, 1.5);
  gdap_dim dims[2] = {block(8, 2, 1, 4, 8), undistributed(3)};
  ArrayHandle h;
  ASSERT_EQ(gdap_array_wrap(&h.a, mine.data(), kF64, kHost, nullptr, dims, 2), GDAP_SUCCESS) << gdap_last_error();
  void* data = nullptr;
  ASSERT_EQ(gdap_array_data(&data, h.a), GDAP_SUCCESS);
  EXPECT_EQ(data, mine.data());
  int64_t strides[2];
  ASSERT_EQ(gdap_array_strides(strides, h.a), GDAP_SUCCESS);
  EXPECT_EQ(strides[0], 3) << "NULL strides: C-contiguous";
  EXPECT_EQ(strides[1], 1);
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, h.a), GDAP_SUCCESS);
  EXPECT_EQ(out->dl_tensor.data, mine.data());
  static_cast<double*>(out->dl_tensor.data)[11] = 7.0;
  EXPECT_EQ(mine[11], 7.0);
  h.reset();
  out->deleter(out);  // the last reference: frees nothing of ours (ASan/valgrind would see it)
  EXPECT_EQ(mine[11], 7.0);
}

TEST(Wrap, FortranOrderStridesAreKept) {
  std::vector<float> mine(12);
  gdap_dim dims[2] = {undistributed(3), undistributed(4)};
  const int64_t column_major[2] = {1, 3};
  ArrayHandle h;
  ASSERT_EQ(gdap_array_wrap(&h.a, mine.data(), kF32, kHost, column_major, dims, 2), GDAP_SUCCESS)
      << gdap_last_error();
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, h.a), GDAP_SUCCESS);
  EXPECT_EQ(out->dl_tensor.strides[0], 1);
  EXPECT_EQ(out->dl_tensor.strides[1], 3);
  out->deleter(out);
}

TEST(Wrap, RefusalsNameTheProblem) {
  double mine[8] = {};
  const int64_t huge[1] = {INT64_MAX};
  const struct {
    const char* rule;
    void* data;
    gdap_device device;
    const int64_t* strides;
    gdap_dim dim;
    gdap_status expected;
    const char* words;
  } cases[] = {
      {"{} cannot be resolved without a buffer shape", mine, kHost, nullptr, GDAP_DIM_INIT, GDAP_ERR_PROTOCOL,
       "gdap_array_wrap takes the shape from the dictionaries"},
      {"data NULL only when empty", nullptr, kHost, nullptr, block(4, 1, 0, 0, 4), GDAP_ERR_INVALID_ARGUMENT,
       "data is NULL"},
      {"stride span fits int64", mine, kHost, huge, block(4, 1, 0, 0, 4), GDAP_ERR_OVERFLOW, "overflows int64"},
      {"supported devices only", mine, {kDLOpenCL, 0}, nullptr, block(4, 1, 0, 0, 4), GDAP_ERR_UNSUPPORTED,
       "device type 4"},
      {"dims valid (dimension named)", mine, kHost, nullptr, block(4, 1, 0, 1, 0), GDAP_ERR_PROTOCOL,
       "dimension 0 ('b')"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.rule);
    gdap_array* a = kUntouched;
    EXPECT_EQ(gdap_array_wrap(&a, c.data, kF64, c.device, c.strides, &c.dim, 1), c.expected) << gdap_last_error();
    EXPECT_TRUE(contains(gdap_last_error(), c.words)) << gdap_last_error();
    EXPECT_EQ(a, kUntouched);
  }
  ArrayHandle empty;
  gdap_dim none = block(4, 2, 1, 4, 4);
  EXPECT_EQ(gdap_array_wrap(&empty.a, nullptr, kF64, kHost, nullptr, &none, 1), GDAP_SUCCESS)
      << "an empty section needs no memory: " << gdap_last_error();
}

// ----- index conversion -----

struct IndexCase {
  const char* rule;
  gdap_dim dim;
  int64_t global;
  gdap_status expected;
  int64_t local;  // when found
};

TEST(Indices, GlobalToLocalAndBackForEachDistType) {
  static const int64_t idx[] = {9, 4, 7, -2};
  gdap_dim u = GDAP_DIM_INIT;
  ASSERT_EQ(gdap_dim_set_unstructured(&u, 10, 1, 0, idx, 4, -1), GDAP_SUCCESS);
  // Last rank of 2 over 18 elements, holding [8, 18): a halo cell 8 below (communication padding)
  // and boundary padding 17 above.
  const gdap_dim b = padded(block(18, 2, 1, 8, 18), 1, 1);
  const gdap_dim c = cyclic(10, 2, 1, 2, 2);  // blocks 1 and 3: globals 2, 3, 6, 7
  const IndexCase cases[] = {
      {"'b': the halo cell is held (local 0)", b, 8, GDAP_SUCCESS, 0},
      {"'b': an owned cell is g - start", b, 12, GDAP_SUCCESS, 4},
      {"'b': boundary padding is held", b, 17, GDAP_SUCCESS, 9},
      {"'b': below the held range is not found", b, 7, GDAP_ERR_NOT_FOUND, 0},
      {"'b': past size is not found", b, 18, GDAP_ERR_NOT_FOUND, 0},
      {"'c': first element of the first block held", c, 2, GDAP_SUCCESS, 0},
      {"'c': second element of the second block held", c, 7, GDAP_SUCCESS, 3},
      {"'c': a block of the other rank is not found", c, 4, GDAP_ERR_NOT_FOUND, 0},
      {"'c': negative is not found", c, -2, GDAP_ERR_NOT_FOUND, 0},
      {"'c': past size is not found", c, 11, GDAP_ERR_NOT_FOUND, 0},
      {"'u': position in local order", u, 7, GDAP_SUCCESS, 2},
      {"'u': negative indices are allowed", u, -2, GDAP_SUCCESS, 3},
      {"'u': the first index", u, 9, GDAP_SUCCESS, 0},
      {"'u': an index not listed is not found", u, 5, GDAP_ERR_NOT_FOUND, 0},
  };
  for (const auto& t : cases) {
    SCOPED_TRACE(t.rule);
    ArrayHandle h;
    ASSERT_EQ(gdap_array_create(&h.a, {GDAP_DTYPE_INT, 8, 1}, kHost, &t.dim, 1), GDAP_SUCCESS) << gdap_last_error();
    int64_t local = -99;
    const gdap_status s = gdap_array_global_to_local(&local, h.a, &t.global);
    EXPECT_EQ(s, t.expected) << gdap_last_error();
    if (s != GDAP_SUCCESS) {
      EXPECT_EQ(local, -99) << "output untouched on failure";
      EXPECT_TRUE(contains(gdap_last_error(), "global index " + std::to_string(t.global))) << gdap_last_error();
      continue;
    }
    EXPECT_EQ(local, t.local);
    int64_t back = -99;
    ASSERT_EQ(gdap_array_local_to_global(&back, h.a, &local), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(back, t.global) << "local_to_global inverts global_to_local";
  }
}

TEST(Indices, MultiDimensionalLookupsWriteOnlyOnSuccess) {
  static const int64_t idx[] = {9, 4, 7};
  gdap_dim dims[3] = {padded(block(18, 2, 1, 8, 18), 1, 1), cyclic(10, 2, 1, 2, 2), GDAP_DIM_INIT};
  ASSERT_EQ(gdap_dim_set_unstructured(&dims[2], 10, 1, 0, idx, 3, -1), GDAP_SUCCESS);
  ArrayHandle h;
  ASSERT_EQ(gdap_array_create(&h.a, {GDAP_DTYPE_INT, 8, 1}, kHost, dims, 3), GDAP_SUCCESS) << gdap_last_error();
  const int64_t global[3] = {8, 7, 7};
  int64_t local[3] = {-1, -1, -1};
  ASSERT_EQ(gdap_array_global_to_local(local, h.a, global), GDAP_SUCCESS) << gdap_last_error();
  EXPECT_EQ(local[0], 0);
  EXPECT_EQ(local[1], 3);
  EXPECT_EQ(local[2], 2);
  const int64_t absent[3] = {8, 4, 7};  // the first dimension would succeed: nothing is written
  int64_t kept[3] = {-5, -5, -5};
  EXPECT_EQ(gdap_array_global_to_local(kept, h.a, absent), GDAP_ERR_NOT_FOUND);
  EXPECT_TRUE(contains(gdap_last_error(), "dimension 1 ('c'): global index 4")) << gdap_last_error();
  EXPECT_EQ(kept[0], -5);
  const int64_t outside[3] = {0, 0, 3};
  int64_t back[3] = {-5, -5, -5};
  EXPECT_EQ(gdap_array_local_to_global(back, h.a, outside), GDAP_ERR_OUT_OF_RANGE);
  EXPECT_TRUE(contains(gdap_last_error(), "dimension 2 ('u'): local index 3 is outside [0, 3)")) << gdap_last_error();
  EXPECT_EQ(back[0], -5);
  const int64_t negative[3] = {-1, 0, 0};
  EXPECT_EQ(gdap_array_local_to_global(back, h.a, negative), GDAP_ERR_OUT_OF_RANGE);
  EXPECT_EQ(gdap_array_global_to_local(nullptr, h.a, global), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_array_global_to_local(local, h.a, nullptr), GDAP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(gdap_array_local_to_global(back, nullptr, local), GDAP_ERR_INVALID_ARGUMENT);
}

TEST(Indices, TheArrayKeepsItsOwnCopyOfTheDictionaries) {
  std::vector<int64_t> idx = {9, 4, 7};
  gdap_dim u = GDAP_DIM_INIT;
  ASSERT_EQ(gdap_dim_set_unstructured(&u, 10, 1, 0, idx.data(), 3, 1), GDAP_SUCCESS);
  ArrayHandle h;
  ASSERT_EQ(gdap_array_create(&h.a, kF32, kHost, &u, 1), GDAP_SUCCESS) << gdap_last_error();
  idx.assign({0, 0, 0});  // the caller's indices were borrowed for the call only
  gdap_dim copy = GDAP_DIM_INIT;
  ASSERT_EQ(gdap_array_dim(&copy, h.a, 0), GDAP_SUCCESS);
  EXPECT_EQ(copy.dist_type, GDAP_DIST_UNSTRUCTURED);
  EXPECT_EQ(copy.num_indices, 3);
  EXPECT_EQ(copy.indices[0], 9);
  EXPECT_EQ(copy.one_to_one, 1);
  const int64_t g = 4;
  int64_t l = -1;
  ASSERT_EQ(gdap_array_global_to_local(&l, h.a, &g), GDAP_SUCCESS);
  EXPECT_EQ(l, 1);
  gdap_dim kept = GDAP_DIM_INIT;
  EXPECT_EQ(gdap_array_dim(&kept, h.a, 1), GDAP_ERR_OUT_OF_RANGE);
  EXPECT_EQ(gdap_array_dim(&kept, h.a, -1), GDAP_ERR_OUT_OF_RANGE);
  EXPECT_EQ(kept.dist_type, GDAP_DIST_UNDISTRIBUTED) << "untouched on failure";
}

// ----- accessors -----

TEST(Accessors, NullArgumentsAreRefusedAndDestroyNullIsANoOp) {
  gdap_dim d = block(4, 1, 0, 0, 4);
  ArrayHandle h;
  ASSERT_EQ(gdap_array_create(&h.a, kF32, kHost, &d, 1), GDAP_SUCCESS);
  int64_t i64 = 0;
  void* p = nullptr;
  gdap_dtype dt{};
  gdap_device dev{};
  int ro = 0;
  const char* v = nullptr;
  gdap_dim dim = GDAP_DIM_INIT;
  DLManagedTensorVersioned* t = nullptr;
  DLManagedTensor* u = nullptr;
  const struct {
    const char* rule;
    gdap_status got;
  } cases[] = {
      {"ndim: out NULL", gdap_array_ndim(nullptr, h.a)},       {"ndim: array NULL", gdap_array_ndim(&i64, nullptr)},
      {"data: out NULL", gdap_array_data(nullptr, h.a)},       {"data: array NULL", gdap_array_data(&p, nullptr)},
      {"shape: out NULL", gdap_array_shape(nullptr, h.a)},     {"shape: array NULL", gdap_array_shape(&i64, nullptr)},
      {"strides: out NULL", gdap_array_strides(nullptr, h.a)}, {"dtype: array NULL", gdap_array_dtype(&dt, nullptr)},
      {"dtype: out NULL", gdap_array_dtype(nullptr, h.a)},     {"device: array NULL", gdap_array_device(&dev, nullptr)},
      {"device: out NULL", gdap_array_device(nullptr, h.a)},   {"readonly: array NULL", gdap_array_readonly(&ro, nullptr)},
      {"readonly: out NULL", gdap_array_readonly(nullptr, h.a)}, {"version: array NULL", gdap_array_version(&v, nullptr)},
      {"version: out NULL", gdap_array_version(nullptr, h.a)}, {"dim: array NULL", gdap_array_dim(&dim, nullptr, 0)},
      {"dim: out NULL", gdap_array_dim(nullptr, h.a, 0)},      {"to_dlpack: array NULL", gdap_array_to_dlpack(&t, nullptr)},
      {"to_dlpack: out NULL", gdap_array_to_dlpack(nullptr, h.a)},
      {"to_dlpack_unversioned: array NULL", gdap_array_to_dlpack_unversioned(&u, nullptr)},
      {"to_dlpack_unversioned: out NULL", gdap_array_to_dlpack_unversioned(nullptr, h.a)},
  };
  for (const auto& c : cases) EXPECT_EQ(c.got, GDAP_ERR_INVALID_ARGUMENT) << c.rule;
  EXPECT_EQ(t, nullptr);
  EXPECT_EQ(u, nullptr);
  EXPECT_EQ(gdap_array_destroy(nullptr), GDAP_SUCCESS);
}

// ----- threads -----

TEST(Threads, ManyThreadsCreateImportExportAndDestroyTheirOwnArrays) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  std::vector<DLManagedTensorVersioned*> handed_over(kThreads * kRounds, nullptr);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &failures, &handed_over] {
      for (int k = 0; k < kRounds; ++k) {
        const int r = t % 4;
        gdap_dim d = GDAP_DIM_INIT;
        gdap_dim_set_block(&d, 100, 4, r, 25 * r, 25 * r + 25);
        gdap_array* a = nullptr;
        DLManagedTensorVersioned* out = nullptr;
        if (gdap_array_create(&a, kF32, kHost, &d, 1) != GDAP_SUCCESS || gdap_array_to_dlpack(&out, a) != GDAP_SUCCESS) {
          failures++;
        }
        // Re-import the export into a second array, and hand a second export to another thread.
        gdap_array* b = nullptr;
        if (out == nullptr || gdap_array_from_dlpack(&b, out, &d, 1, nullptr) != GDAP_SUCCESS) {
          failures++;
          if (out != nullptr) out->deleter(out);
        }
        if (gdap_array_to_dlpack(&handed_over[static_cast<size_t>(t * kRounds + k)], b) != GDAP_SUCCESS) failures++;
        gdap_dim bad = GDAP_DIM_INIT;
        gdap_dim_set_block(&bad, 10, 1, 0, 0, 11 + t);
        const std::string expected = "stop (" + std::to_string(11 + t) + ")";
        if (gdap_dim_validate(&bad, 0, -1) != GDAP_ERR_PROTOCOL || !contains(gdap_last_error(), expected)) {
          failures++;  // the last error is this thread's own
        }
        gdap_array_destroy(a);
        gdap_array_destroy(b);
      }
    });
  }
  for (auto& th : threads) th.join();
  // Every thread's exports deleted at once from other threads than the ones that made them.
  threads.clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &handed_over] {
      const int from = (t + 1) % kThreads;
      for (int k = 0; k < kRounds; ++k) {
        auto* out = handed_over[static_cast<size_t>(from * kRounds + k)];
        if (out != nullptr) out->deleter(out);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, 0);
}

}  // namespace
