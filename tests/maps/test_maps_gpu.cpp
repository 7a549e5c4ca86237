// Layer 2 on a GPU: gdap_map_owner_batch with CUDA device memory gives exactly what the host
// path gives, for block (even and irregular), block-cyclic, unstructured and mixed N-d maps with
// a million random indices (some out of range or held nowhere). Skips without a CUDA device.
// Labelled gpu: run on a GPU machine, not in CI.
#include "layouts.hpp"

#include <gdap/gdap.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace {

using gdap_test::Axis;
using gdap_test::Layout;

#define SKIP_WITHOUT_GPU()                                                                        \
  do {                                                                                            \
    int devices = 0;                                                                              \
    const cudaError_t probe = cudaGetDeviceCount(&devices);                                       \
    if (probe != cudaSuccess || devices == 0) {                                                   \
      cudaGetLastError();                                                                         \
      GTEST_SKIP() << "no CUDA device (" << cudaGetErrorString(probe) << "): device look-ups "   \
                   << "are tested on a GPU machine";                                              \
    }                                                                                             \
  } while (0)

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

struct MapHandle {
  gdap_map* map = nullptr;
  ~MapHandle() { gdap_map_destroy(map); }
};

template <typename T>
struct DeviceBuffer {
  T* ptr = nullptr;
  ~DeviceBuffer() { cudaFree(ptr); }
};

Axis block_axis(int64_t size, const std::vector<int64_t>& cuts) {
  Axis a;
  const auto P = static_cast<int64_t>(cuts.size()) - 1;
  for (int64_t g = 0; g < P; ++g) {
    gdap_dim d = GDAP_DIM_INIT;
    gdap_dim_set_block(&d, size, P, g, cuts[static_cast<size_t>(g)], cuts[static_cast<size_t>(g) + 1]);
    a.by_coord.push_back(d);
  }
  return a;
}

Layout make(std::vector<Axis> axes) {
  Layout layout;
  for (const Axis& a : axes) layout.grid.push_back(static_cast<int64_t>(a.by_coord.size()));
  layout.axes = std::move(axes);
  layout.assemble();
  return layout;
}

struct Case {
  const char* rule;
  Layout layout;
};

std::vector<Case> cases() {
  std::mt19937_64 rng(42);
  std::vector<Case> out;
  out.push_back({"'b' even blocks: O(1) owner", make({block_axis(1000003, {0, 250001, 500002, 750003, 1000003})})});
  out.push_back({"'b' irregular blocks with an empty one: binary search",
                 make({block_axis(1000000, {0, 17, 400000, 400000, 999999, 1000000})})});
  out.push_back({"'b' padded and periodic", make({gdap_test::block_axis(rng, 100000, 7, true, true)})});
  out.push_back({"'c' block-cyclic", make({gdap_test::cyclic_axis(rng, 1000000, 13)})});
  out.push_back({"'u' one_to_one", make({gdap_test::unstructured_axis(rng, 200000, 5)})});
  out.push_back({"'u' with replicas: lowest rank", make({gdap_test::unstructured_axis(rng, 50000, 3, true)})});
  out.push_back({"2-d: 'b' x 'u'", make({block_axis(1000, {0, 300, 1000}), gdap_test::unstructured_axis(rng, 1000, 3)})});
  out.push_back({"3-d: 'c' x 'b' x 'u'",
                 make({gdap_test::cyclic_axis(rng, 100, 2), block_axis(100, {0, 10, 50, 100}),
                       gdap_test::unstructured_axis(rng, 100, 2)})});
  return out;
}

// A million index tuples, about 1% of them outside [0, size) along some dimension.
std::vector<int64_t> random_globals(const Layout& layout, int64_t count, std::mt19937_64& rng) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(count * layout.ndim()));
  for (int64_t k = 0; k < count; ++k) {
    for (const Axis& a : layout.axes) {
      const int64_t size = a.by_coord[0].size;
      const bool outside = rng() % 100 == 0;
      out.push_back(outside ? (rng() % 2 == 0 ? -1 - static_cast<int64_t>(rng() % 5) : size + static_cast<int64_t>(rng() % 5))
                            : static_cast<int64_t>(rng() % static_cast<uint64_t>(size)));
    }
  }
  return out;
}

TEST(MapsGpu, OwnerBatchOnDeviceEqualsHost) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(7);
  const int64_t count = 1000000;
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.rule);
    const Layout& layout = c.layout;
    const int64_t ndim = layout.ndim();
    MapHandle h;
    ASSERT_EQ(gdap_map_create(&h.map, layout.nranks, ndim, layout.ranks.data()), GDAP_SUCCESS) << gdap_last_error();
    const auto globals = random_globals(layout, count, rng);
    std::vector<int64_t> host_ranks(static_cast<size_t>(count)), host_locals(static_cast<size_t>(count * ndim), -1);
    ASSERT_EQ(gdap_map_owner_batch(host_ranks.data(), host_locals.data(), h.map, globals.data(), count,
                                   gdap_device{GDAP_DEVICE_CPU, 0}, nullptr),
              GDAP_SUCCESS)
        << gdap_last_error();

    DeviceBuffer<int64_t> d_globals, d_ranks, d_locals;
    const size_t index_bytes = globals.size() * sizeof(int64_t);
    CUDA_OK(cudaMalloc(&d_globals.ptr, index_bytes));
    CUDA_OK(cudaMalloc(&d_ranks.ptr, host_ranks.size() * sizeof(int64_t)));
    CUDA_OK(cudaMalloc(&d_locals.ptr, index_bytes));
    CUDA_OK(cudaMemcpy(d_globals.ptr, globals.data(), index_bytes, cudaMemcpyHostToDevice));
    // Locals of indices nobody owns are unspecified: only owned tuples' locals are compared.
    std::vector<int64_t> minus_one(host_locals.size(), -1);
    CUDA_OK(cudaMemcpy(d_locals.ptr, minus_one.data(), index_bytes, cudaMemcpyHostToDevice));

    int before = -1, after = -1;
    CUDA_OK(cudaGetDevice(&before));
    for (int repeat = 0; repeat < 2; ++repeat) {  // the second call reuses the cached tables
      ASSERT_EQ(gdap_map_owner_batch(d_ranks.ptr, d_locals.ptr, h.map, d_globals.ptr, count,
                                     gdap_device{GDAP_DEVICE_CUDA, before}, stream),
                GDAP_SUCCESS)
          << gdap_last_error();
    }
    CUDA_OK(cudaGetDevice(&after));
    EXPECT_EQ(after, before) << "the caller's current device is restored";
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<int64_t> dev_ranks(host_ranks.size()), dev_locals(host_locals.size());
    CUDA_OK(cudaMemcpy(dev_ranks.data(), d_ranks.ptr, dev_ranks.size() * sizeof(int64_t), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(dev_locals.data(), d_locals.ptr, index_bytes, cudaMemcpyDeviceToHost));
    EXPECT_EQ(dev_ranks, host_ranks);
    int64_t mismatches = 0;
    for (int64_t k = 0; k < count; ++k) {
      if (host_ranks[static_cast<size_t>(k)] < 0) continue;
      for (int64_t i = 0; i < ndim; ++i) {
        const auto at = static_cast<size_t>(k * ndim + i);
        mismatches += dev_locals[at] != host_locals[at] ? 1 : 0;
      }
    }
    EXPECT_EQ(mismatches, 0) << "local indices of owned tuples";

    // locals may be NULL on the device too.
    CUDA_OK(cudaMemsetAsync(d_ranks.ptr, 0xff, dev_ranks.size() * sizeof(int64_t), stream));
    ASSERT_EQ(gdap_map_owner_batch(d_ranks.ptr, nullptr, h.map, d_globals.ptr, count,
                                   gdap_device{GDAP_DEVICE_CUDA, before}, stream),
              GDAP_SUCCESS)
        << gdap_last_error();
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(dev_ranks.data(), d_ranks.ptr, dev_ranks.size() * sizeof(int64_t), cudaMemcpyDeviceToHost));
    EXPECT_EQ(dev_ranks, host_ranks);
  }
  CUDA_OK(cudaStreamDestroy(stream));
}

TEST(MapsGpu, ManagedMemoryWorksEitherWay) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(11);
  const Layout layout = make({gdap_test::cyclic_axis(rng, 5000, 4), gdap_test::unstructured_axis(rng, 300, 3)});
  MapHandle h;
  ASSERT_EQ(gdap_map_create(&h.map, layout.nranks, 2, layout.ranks.data()), GDAP_SUCCESS) << gdap_last_error();
  const int64_t count = 100000;
  const auto globals = random_globals(layout, count, rng);
  int64_t *m_globals = nullptr, *m_ranks = nullptr;
  CUDA_OK(cudaMallocManaged(&m_globals, globals.size() * sizeof(int64_t)));
  CUDA_OK(cudaMallocManaged(&m_ranks, static_cast<size_t>(count) * sizeof(int64_t)));
  std::copy(globals.begin(), globals.end(), m_globals);
  std::vector<int64_t> host(static_cast<size_t>(count));
  ASSERT_EQ(gdap_map_owner_batch(host.data(), nullptr, h.map, m_globals, count,
                                 gdap_device{GDAP_DEVICE_CUDA_MANAGED, 0}, nullptr),
            GDAP_SUCCESS);
  int device = 0;
  CUDA_OK(cudaGetDevice(&device));
  ASSERT_EQ(gdap_map_owner_batch(m_ranks, nullptr, h.map, m_globals, count, gdap_device{GDAP_DEVICE_CUDA, device},
                                 nullptr),
            GDAP_SUCCESS)
      << gdap_last_error();
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(std::equal(host.begin(), host.end(), m_ranks));
  cudaFree(m_globals);
  cudaFree(m_ranks);
}

TEST(MapsGpu, ConcurrentFirstUseUploadsOnce) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(5);
  const Layout layout = make({gdap_test::unstructured_axis(rng, 100000, 4)});
  MapHandle h;
  ASSERT_EQ(gdap_map_create(&h.map, layout.nranks, 1, layout.ranks.data()), GDAP_SUCCESS);
  const int64_t count = 100000;
  const auto globals = random_globals(layout, count, rng);
  std::vector<int64_t> host(static_cast<size_t>(count));
  ASSERT_EQ(gdap_map_owner_batch(host.data(), nullptr, h.map, globals.data(), count, gdap_device{GDAP_DEVICE_CPU, 0},
                                 nullptr),
            GDAP_SUCCESS);
  int device = 0;
  CUDA_OK(cudaGetDevice(&device));
  DeviceBuffer<int64_t> d_globals;
  CUDA_OK(cudaMalloc(&d_globals.ptr, globals.size() * sizeof(int64_t)));
  CUDA_OK(cudaMemcpy(d_globals.ptr, globals.data(), globals.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
  std::vector<gdap_status> status(4, GDAP_ERR_INTERNAL);
  std::vector<std::vector<int64_t>> results(4, std::vector<int64_t>(static_cast<size_t>(count)));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      cudaSetDevice(device);
      int64_t* d_ranks = nullptr;
      cudaStream_t stream = nullptr;
      if (cudaMalloc(&d_ranks, static_cast<size_t>(count) * sizeof(int64_t)) != cudaSuccess) return;
      cudaStreamCreate(&stream);
      status[t] = gdap_map_owner_batch(d_ranks, nullptr, h.map, d_globals.ptr, count,
                                       gdap_device{GDAP_DEVICE_CUDA, device}, stream);
      cudaStreamSynchronize(stream);
      cudaMemcpy(results[t].data(), d_ranks, static_cast<size_t>(count) * sizeof(int64_t), cudaMemcpyDeviceToHost);
      cudaStreamDestroy(stream);
      cudaFree(d_ranks);
    });
  }
  for (auto& t : threads) t.join();
  for (size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(status[t], GDAP_SUCCESS) << "thread " << t;
    EXPECT_EQ(results[t], host) << "thread " << t;
  }
}

TEST(MapsGpu, WrongMemoryIsRefusedClearly) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(3);
  const Layout layout = make({block_axis(100, {0, 50, 100})});
  MapHandle h;
  ASSERT_EQ(gdap_map_create(&h.map, 2, 1, layout.ranks.data()), GDAP_SUCCESS);
  int device = 0, devices = 0;
  CUDA_OK(cudaGetDevice(&device));
  CUDA_OK(cudaGetDeviceCount(&devices));
  std::vector<int64_t> host_globals{1, 2, 3}, host_ranks(3);
  DeviceBuffer<int64_t> d_globals, d_ranks;
  CUDA_OK(cudaMalloc(&d_globals.ptr, 3 * sizeof(int64_t)));
  CUDA_OK(cudaMalloc(&d_ranks.ptr, 3 * sizeof(int64_t)));
  struct Wrong {
    const char* rule;
    int64_t* ranks;
    const int64_t* globals;
    int device_id;
    const char* words;
  };
  const Wrong cases[] = {
      {"host ranks as device memory", host_ranks.data(), d_globals.ptr, device, "ranks is not CUDA memory"},
      {"host globals as device memory", d_ranks.ptr, host_globals.data(), device, "globals is not CUDA memory"},
      {"a negative device ordinal", d_ranks.ptr, d_globals.ptr, -1, "does not exist"},
      {"a device ordinal that does not exist", d_ranks.ptr, d_globals.ptr, devices + 3, "does not exist"},
  };
  for (const Wrong& w : cases) {
    SCOPED_TRACE(w.rule);
    EXPECT_EQ(gdap_map_owner_batch(w.ranks, nullptr, h.map, w.globals, 3, gdap_device{GDAP_DEVICE_CUDA, w.device_id},
                                   nullptr),
              GDAP_ERR_DEVICE);
    EXPECT_NE(std::string(gdap_last_error()).find(w.words), std::string::npos) << gdap_last_error();
    int now = -1;
    CUDA_OK(cudaGetDevice(&now));
    EXPECT_EQ(now, device) << "the caller's current device is restored";
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "no CUDA error left behind";
  }
}

}  // namespace
