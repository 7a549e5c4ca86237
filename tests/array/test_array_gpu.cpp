// Local arrays in CUDA memory: allocation of device, pinned and managed memory, DLPack export and
// re-import without a copy, a cudaMalloc'd producer tensor (deleter exactly once), writes seen
// through both views, the caller's current device left as it was. Runs on a GPU machine (ctest
// label gpu); every test skips with a message where there is no device or no CUDA build.
#include "dlpack_fixtures.hpp"

#include <gtest/gtest.h>

#if GDAP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include <string>
#include <thread>
#include <vector>

namespace {

#if GDAP_HAVE_CUDA

// Skips where there is no device or no driver; any other failure to count devices is a failure,
// so that a GPU machine never skips these tests silently. Under AddressSanitizer cudart cannot
// map its memory unless ASAN_OPTIONS=protect_shadow_gap=0 (it then reports "out of memory").
#define SKIP_WITHOUT_DEVICE()                                                                                   \
  do {                                                                                                          \
    int count_ = 0;                                                                                             \
    const cudaError_t err_ = cudaGetDeviceCount(&count_);                                                       \
    if (err_ == cudaErrorNoDevice || err_ == cudaErrorInsufficientDriver || (err_ == cudaSuccess && !count_)) { \
      GTEST_SKIP() << "no CUDA device (" << cudaGetErrorString(err_) << "): run this on a GPU machine";       \
    }                                                                                                           \
    ASSERT_EQ(err_, cudaSuccess) << "cudaGetDeviceCount: " << cudaGetErrorString(err_)                          \
                                 << " (under AddressSanitizer, set ASAN_OPTIONS=protect_shadow_gap=0)";         \
  } while (0)

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

cudaMemoryType expected_memory_type(int32_t type) {
  switch (type) {
    case GDAP_DEVICE_CUDA: return cudaMemoryTypeDevice;
    case GDAP_DEVICE_CUDA_HOST: return cudaMemoryTypeHost;
    default: return cudaMemoryTypeManaged;
  }
}

TEST(ArrayGpu, CreateExportReimportOnEveryCudaMemoryKind) {
  SKIP_WITHOUT_DEVICE();
  for (int32_t type : {GDAP_DEVICE_CUDA, GDAP_DEVICE_CUDA_HOST, GDAP_DEVICE_CUDA_MANAGED}) {
    SCOPED_TRACE("device type " + std::to_string(type));
    gdap_dim dims[2] = {gdap_test::block(1000, 4, 2, 500, 750), gdap_test::undistributed(333)};
    gdap_array* a = nullptr;
    ASSERT_EQ(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 32, 1}, {type, 0}, dims, 2), GDAP_SUCCESS) << gdap_last_error();
    void* data = nullptr;
    ASSERT_EQ(gdap_array_data(&data, a), GDAP_SUCCESS);
    ASSERT_NE(data, nullptr);
    cudaPointerAttributes attr{};
    ASSERT_EQ(cudaPointerGetAttributes(&attr, data), cudaSuccess);
    EXPECT_EQ(attr.type, expected_memory_type(type));
    if (type != GDAP_DEVICE_CUDA_HOST) EXPECT_EQ(attr.device, 0);
    std::vector<float> values(250 * 333);
    for (size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k);
    // Written through the array's view ...
    ASSERT_EQ(cudaMemcpy(data, values.data(), values.size() * sizeof(float), cudaMemcpyDefault), cudaSuccess);
    DLManagedTensorVersioned* out = nullptr;
    ASSERT_EQ(gdap_array_to_dlpack(&out, a), GDAP_SUCCESS);
    EXPECT_EQ(out->dl_tensor.device.device_type, static_cast<DLDeviceType>(type));
    EXPECT_EQ(out->dl_tensor.device.device_id, 0);
    EXPECT_EQ(out->dl_tensor.data, data) << "export copies nothing";
    EXPECT_EQ(out->dl_tensor.byte_offset, 0u);
    gdap_array* again = nullptr;
    ASSERT_EQ(gdap_array_from_dlpack(&again, out, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
    ASSERT_EQ(gdap_array_destroy(a), GDAP_SUCCESS);  // the re-import keeps the memory alive
    void* data2 = nullptr;
    ASSERT_EQ(gdap_array_data(&data2, again), GDAP_SUCCESS);
    EXPECT_EQ(data2, data);
    // ... read through the re-imported one.
    std::vector<float> back(values.size());
    ASSERT_EQ(cudaMemcpy(back.data(), data2, back.size() * sizeof(float), cudaMemcpyDefault), cudaSuccess);
    EXPECT_EQ(back, values);
    // And the other way: written through an export, read through the array.
    DLManagedTensor* old = nullptr;
    ASSERT_EQ(gdap_array_to_dlpack_unversioned(&old, again), GDAP_SUCCESS);
    const float v = -3.5f;
    ASSERT_EQ(cudaMemcpy(static_cast<float*>(old->dl_tensor.data) + 1234, &v, sizeof v, cudaMemcpyDefault), cudaSuccess);
    float seen = 0;
    ASSERT_EQ(cudaMemcpy(&seen, static_cast<float*>(data2) + 1234, sizeof seen, cudaMemcpyDefault), cudaSuccess);
    EXPECT_EQ(seen, v);
    ASSERT_EQ(gdap_array_destroy(again), GDAP_SUCCESS);
    old->deleter(old);  // the last reference: gdap frees its allocation here
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "no CUDA error left behind (a bad free would show)";
}

TEST(ArrayGpu, ProducerDeviceTensorIsTakenAndReleasedOnceInEitherOrder) {
  SKIP_WITHOUT_DEVICE();
  for (const bool array_first : {true, false}) {
    SCOPED_TRACE(array_first ? "array destroyed first" : "export deleted first");
    double* d = nullptr;
    ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(double)), cudaSuccess);
    ASSERT_EQ(cudaMemset(d, 0, 64 * sizeof(double)), cudaSuccess);
    gdap_test::Producer p(d, {8, 8}, {kDLFloat, 64, 1}, {}, {kDLCUDA, 0});
    gdap_dim dims[2] = {gdap_test::block(16, 2, 1, 8, 16), gdap_test::block(8, 1, 0, 0, 8)};
    gdap_array* a = nullptr;
    ASSERT_EQ(gdap_array_from_dlpack(&a, &p.versioned, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
    gdap_device dev{};
    ASSERT_EQ(gdap_array_device(&dev, a), GDAP_SUCCESS);
    EXPECT_EQ(dev.type, GDAP_DEVICE_CUDA);
    const int64_t global[2] = {9, 3};
    int64_t local[2] = {-1, -1};
    ASSERT_EQ(gdap_array_global_to_local(local, a, global), GDAP_SUCCESS) << gdap_last_error();
    EXPECT_EQ(local[0], 1);
    EXPECT_EQ(local[1], 3);
    const double v = 7.25;
    void* data = nullptr;
    ASSERT_EQ(gdap_array_data(&data, a), GDAP_SUCCESS);
    ASSERT_EQ(cudaMemcpy(static_cast<double*>(data) + local[0] * 8 + local[1], &v, sizeof v, cudaMemcpyHostToDevice),
              cudaSuccess);
    double seen = 0;
    ASSERT_EQ(cudaMemcpy(&seen, d + 1 * 8 + 3, sizeof seen, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(seen, 7.25) << "the producer's memory, written through gdap's view";
    DLManagedTensorVersioned* out = nullptr;
    ASSERT_EQ(gdap_array_to_dlpack(&out, a), GDAP_SUCCESS);
    EXPECT_EQ(out->dl_tensor.data, d);
    if (array_first) {
      gdap_array_destroy(a);
      EXPECT_EQ(p.deleted, 0);
      out->deleter(out);
    } else {
      out->deleter(out);
      EXPECT_EQ(p.deleted, 0);
      gdap_array_destroy(a);
    }
    EXPECT_EQ(p.deleted, 1);
    EXPECT_EQ(cudaFree(d), cudaSuccess);  // the producer's own memory, freed by the producer
  }
}

TEST(ArrayGpu, StridedDeviceViewsKeepTheirStrides) {
  SKIP_WITHOUT_DEVICE();
  float host[12];
  for (int i = 0; i < 12; ++i) host[i] = static_cast<float>(i);
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, sizeof host), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
  gdap_test::Producer t(d, {3, 4}, {kDLFloat, 32, 1}, {1, 3}, {kDLCUDA, 0});  // the transpose of a 4x3
  gdap_dim dims[2] = {gdap_test::undistributed(3), gdap_test::undistributed(4)};
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_from_dlpack(&a, &t.versioned, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
  DLManagedTensorVersioned* out = nullptr;
  ASSERT_EQ(gdap_array_to_dlpack(&out, a), GDAP_SUCCESS);
  EXPECT_EQ(out->dl_tensor.strides[0], 1);
  EXPECT_EQ(out->dl_tensor.strides[1], 3);
  float seen = 0;  // element (2, 3) of the transpose
  ASSERT_EQ(cudaMemcpy(&seen, static_cast<float*>(out->dl_tensor.data) + 2 * 1 + 3 * 3, sizeof seen,
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(seen, 11.0f);
  out->deleter(out);
  gdap_array_destroy(a);
  EXPECT_EQ(t.deleted, 1);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

TEST(ArrayGpu, TheCallersCurrentDeviceIsLeftAsItWas) {
  SKIP_WITHOUT_DEVICE();
  const int n = device_count();
  const int mine = n - 1;  // with two or more devices, allocate on another one than the current
  ASSERT_EQ(cudaSetDevice(mine), cudaSuccess);
  gdap_dim d = gdap_test::block(256, 1, 0, 0, 256);
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CUDA, 0}, &d, 1), GDAP_SUCCESS)
      << gdap_last_error();
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, mine) << "after create";
  void* data = nullptr;
  ASSERT_EQ(gdap_array_data(&data, a), GDAP_SUCCESS);
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, data), cudaSuccess);
  EXPECT_EQ(attr.device, 0) << "allocated on the requested device";
  gdap_array_destroy(a);
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, mine) << "after the free";
  // A device that does not exist: GDAP_ERR_DEVICE naming it, current device unchanged.
  gdap_array* none = reinterpret_cast<gdap_array*>(0x1);
  EXPECT_EQ(gdap_array_create(&none, {GDAP_DTYPE_FLOAT, 64, 1}, {GDAP_DEVICE_CUDA, n}, &d, 1), GDAP_ERR_DEVICE);
  EXPECT_NE(std::string(gdap_last_error()).find("2048 bytes of CUDA device memory on device " + std::to_string(n)),
            std::string::npos)
      << gdap_last_error();
  EXPECT_EQ(none, reinterpret_cast<gdap_array*>(0x1));
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, mine) << "after a failed create";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the failure is not left as CUDA's last error";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
}

TEST(ArrayGpu, EmptyDeviceSectionAllocatesNothing) {
  SKIP_WITHOUT_DEVICE();
  gdap_dim d = gdap_test::block(8, 2, 1, 8, 8);
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 32, 1}, {GDAP_DEVICE_CUDA, 0}, &d, 1), GDAP_SUCCESS)
      << gdap_last_error();
  void* data = reinterpret_cast<void*>(0x1);
  ASSERT_EQ(gdap_array_data(&data, a), GDAP_SUCCESS);
  EXPECT_EQ(data, nullptr);
  gdap_array_destroy(a);
}

TEST(ArrayGpu, ThreadsCreateAndReleaseDeviceArraysAtOnce) {
  SKIP_WITHOUT_DEVICE();
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &failures] {
      for (int k = 0; k < 50; ++k) {
        gdap_dim d = GDAP_DIM_INIT;
        gdap_dim_set_block(&d, 4096, 1, 0, 0, 4096);
        const int32_t type = k % 3 == 0 ? GDAP_DEVICE_CUDA : k % 3 == 1 ? GDAP_DEVICE_CUDA_HOST : GDAP_DEVICE_CUDA_MANAGED;
        gdap_array* a = nullptr;
        DLManagedTensorVersioned* out = nullptr;
        if (gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 32, 1}, {type, 0}, &d, 1) != GDAP_SUCCESS ||
            gdap_array_to_dlpack(&out, a) != GDAP_SUCCESS) {
          failures[static_cast<size_t>(t)]++;
        }
        gdap_array_destroy(a);
        if (out != nullptr) out->deleter(out);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], 0) << "thread " << t;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

#else  // a build without CUDA

TEST(ArrayGpu, NeedsACudaBuild) { GTEST_SKIP() << "gdap was built without CUDA"; }

#endif

}  // namespace
