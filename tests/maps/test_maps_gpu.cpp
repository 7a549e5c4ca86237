// gdap_map_owner_batch on a CUDA device must agree with the host path, index by index, for block,
// cyclic and unstructured maps (1e6 random indices, some out of range). Runs on a GPU machine;
// skips with a message where there is no device (this executable is labelled gpu, outside CI).
#include "layouts.hpp"

#include <gtest/gtest.h>

#if GDAP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include <random>

namespace {

#if GDAP_HAVE_CUDA
bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

void compare(const gdap_test::Layout& L, int64_t count, std::mt19937_64& rng) {
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create(&map, L.nranks, L.ndim(), L.ranks.data()), GDAP_SUCCESS) << gdap_last_error();
  std::vector<int64_t> shape(static_cast<size_t>(L.ndim()));
  gdap_map_global_shape(shape.data(), map);
  const auto ndim = static_cast<size_t>(L.ndim());
  std::vector<int64_t> globals(static_cast<size_t>(count) * ndim);
  for (size_t k = 0; k < globals.size(); ++k) {
    const int64_t s = shape[k % ndim];
    globals[k] = static_cast<int64_t>(rng() % static_cast<uint64_t>(s + 2)) - 1;  // -1 and s are out of range
  }
  std::vector<int64_t> host_ranks(static_cast<size_t>(count)), host_locals(globals.size());
  ASSERT_EQ(gdap_map_owner_batch(host_ranks.data(), host_locals.data(), map, globals.data(), count,
                                 {GDAP_DEVICE_CPU, 0}, nullptr),
            GDAP_SUCCESS);
  int64_t *d_globals, *d_ranks, *d_locals;
  ASSERT_EQ(cudaMalloc(&d_globals, globals.size() * 8), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_ranks, host_ranks.size() * 8), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_locals, host_locals.size() * 8), cudaSuccess);
  cudaMemcpy(d_globals, globals.data(), globals.size() * 8, cudaMemcpyHostToDevice);
  cudaMemset(d_ranks, 0x7f, host_ranks.size() * 8);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  ASSERT_EQ(gdap_map_owner_batch(d_ranks, d_locals, map, d_globals, count, {GDAP_DEVICE_CUDA, 0}, stream),
            GDAP_SUCCESS)
      << gdap_last_error();
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  std::vector<int64_t> ranks(host_ranks.size()), locals(host_locals.size());
  cudaMemcpy(ranks.data(), d_ranks, ranks.size() * 8, cudaMemcpyDeviceToHost);
  cudaMemcpy(locals.data(), d_locals, locals.size() * 8, cudaMemcpyDeviceToHost);
  EXPECT_EQ(ranks, host_ranks);
  for (size_t k = 0; k < ranks.size(); ++k) {
    if (host_ranks[k] < 0) continue;  // locals are unspecified for unowned indices
    for (size_t i = 0; i < ndim; ++i) ASSERT_EQ(locals[k * ndim + i], host_locals[k * ndim + i]) << "index " << k;
  }
  // Host memory passed as device memory is refused with a clear message.
  EXPECT_EQ(gdap_map_owner_batch(host_ranks.data(), nullptr, map, globals.data(), count, {GDAP_DEVICE_CUDA, 0},
                                 stream),
            GDAP_ERR_DEVICE);
  cudaStreamDestroy(stream);
  cudaFree(d_globals);
  cudaFree(d_ranks);
  cudaFree(d_locals);
  gdap_map_destroy(map);
}
#endif

TEST(MapsGpu, OwnerBatchOnDeviceMatchesHost) {
#if GDAP_HAVE_CUDA
  if (!have_device()) GTEST_SKIP() << "no CUDA device: run this test on a GPU machine";
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    compare(gdap_test::random_layout(rng), trial == 0 ? 1000000 : 20000, rng);
  }
  // A large irregular block x block-cyclic x unstructured map.
  gdap_test::Layout big;
  big.grid = {4, 3, 2};
  big.axes = {gdap_test::block_axis(rng, 100000, 4, true, false), gdap_test::cyclic_axis(rng, 5000, 3),
              gdap_test::unstructured_axis(rng, 3000, 2)};
  big.assemble();
  compare(big, 1000000, rng);
#else
  GTEST_SKIP() << "gdap was built without CUDA";
#endif
}

}  // namespace
