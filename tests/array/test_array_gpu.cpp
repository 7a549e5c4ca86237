// Local arrays in CUDA memory: allocation on device, pinned and managed memory, DLPack export and
// re-import of device memory without a copy, a cudaMalloc'd producer tensor, and writes seen
// through both views. Runs on a GPU machine; skips with a message where there is no device.
#include "dlpack_fixtures.hpp"

#include <gtest/gtest.h>

#if GDAP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include <vector>

namespace {

#if GDAP_HAVE_CUDA
bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
#endif

TEST(ArrayGpu, CreateExportReimportOnEveryCudaMemoryKind) {
#if GDAP_HAVE_CUDA
  if (!have_device()) GTEST_SKIP() << "no CUDA device: run this test on a GPU machine";
  for (int32_t type : {GDAP_DEVICE_CUDA, GDAP_DEVICE_CUDA_HOST, GDAP_DEVICE_CUDA_MANAGED}) {
    SCOPED_TRACE("device type " + std::to_string(type));
    gdap_dim dims[2] = {gdap_test::block(1000, 4, 2, 500, 750), gdap_test::undistributed(333)};
    gdap_dim_set_undistributed(&dims[1], 333);
    gdap_array* a = nullptr;
    ASSERT_EQ(gdap_array_create(&a, {GDAP_DTYPE_FLOAT, 32, 1}, {type, 0}, dims, 2), GDAP_SUCCESS) << gdap_last_error();
    void* data = nullptr;
    ASSERT_EQ(gdap_array_data(&data, a), GDAP_SUCCESS);
    cudaPointerAttributes attr{};
    ASSERT_EQ(cudaPointerGetAttributes(&attr, data), cudaSuccess);
    EXPECT_EQ(attr.type, type == GDAP_DEVICE_CUDA ? cudaMemoryTypeDevice
                         : type == GDAP_DEVICE_CUDA_HOST ? cudaMemoryTypeHost : cudaMemoryTypeManaged);
    std::vector<float> values(250 * 333);
    for (size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k);
    ASSERT_EQ(cudaMemcpy(data, values.data(), values.size() * 4, cudaMemcpyDefault), cudaSuccess);
    DLManagedTensorVersioned* out = nullptr;
    ASSERT_EQ(gdap_array_to_dlpack(&out, a), GDAP_SUCCESS);
    EXPECT_EQ(out->dl_tensor.device.device_type, static_cast<DLDeviceType>(type));
    EXPECT_EQ(out->dl_tensor.data, data) << "export copies nothing";
    gdap_array* again = nullptr;
    ASSERT_EQ(gdap_array_from_dlpack(&again, out, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
    gdap_array_destroy(a);  // the re-import keeps the memory alive
    void* data2 = nullptr;
    gdap_array_data(&data2, again);
    EXPECT_EQ(data2, data);
    std::vector<float> back(values.size());
    ASSERT_EQ(cudaMemcpy(back.data(), data2, back.size() * 4, cudaMemcpyDefault), cudaSuccess);
    EXPECT_EQ(back, values);
    gdap_array_destroy(again);
  }
#else
  GTEST_SKIP() << "gdap was built without CUDA";
#endif
}

TEST(ArrayGpu, ProducerDeviceTensorIsTakenAndReleasedOnce) {
#if GDAP_HAVE_CUDA
  if (!have_device()) GTEST_SKIP() << "no CUDA device: run this test on a GPU machine";
  double* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 64 * sizeof(double)), cudaSuccess);
  gdap_test::Producer p(d, {8, 8}, {kDLFloat, 64, 1}, {}, {kDLCUDA, 0});
  gdap_dim dims[2] = {gdap_test::block(16, 2, 1, 8, 16), gdap_test::block(8, 1, 0, 0, 8)};
  gdap_array* a = nullptr;
  ASSERT_EQ(gdap_array_from_dlpack(&a, &p.versioned, dims, 2, nullptr), GDAP_SUCCESS) << gdap_last_error();
  gdap_device dev{};
  gdap_array_device(&dev, a);
  EXPECT_EQ(dev.type, GDAP_DEVICE_CUDA);
  int64_t local[2], global[2] = {9, 3};
  ASSERT_EQ(gdap_array_global_to_local(local, a, global), GDAP_SUCCESS);
  const double v = 7.25;
  void* data = nullptr;
  gdap_array_data(&data, a);
  cudaMemcpy(static_cast<double*>(data) + local[0] * 8 + local[1], &v, sizeof v, cudaMemcpyHostToDevice);
  double seen = 0;
  cudaMemcpy(&seen, d + 1 * 8 + 3, sizeof seen, cudaMemcpyDeviceToHost);
  EXPECT_EQ(seen, 7.25) << "the producer's memory, written through gdap's view";
  gdap_array_destroy(a);
  EXPECT_EQ(p.deleted, 1);
  cudaFree(d);
#else
  GTEST_SKIP() << "gdap was built without CUDA";
#endif
}

}  // namespace
