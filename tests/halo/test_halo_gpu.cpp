// gdap_halo_exchange on device sections (label gpu; fails, never skips, without a CUDA device):
// the cases of halo_check.hpp through the in-process group (copy kernels pushing, then pulling,
// ranks spread over the GPUs round-robin, several ranks per GPU allowed) and through NCCL (one rank
// per GPU, up to 4; the 1-rank cases wrap onto themselves when only one GPU is there). Each
// section is painted on the host, copied to its GPU, exchanged twice (the second run reuses the
// uploaded copy programs), copied back and checked element by element; the Persistent cases do the
// same through gdap_halo_exchange_init and two gdap_exchange_start. Then host and device sections
// in one group: refused on every rank.
//
// Run: ctest --test-dir build -L gpu -R halo   (or build/tests/halo/test_halo_gpu)
#include "halo/halo_check.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstdlib>
#include <functional>
#include <thread>

namespace {

namespace ht = halo_test;

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

void on_threads(int64_t n, const std::function<void(int64_t)>& body) {
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < n; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
}

// One rank's case on `device` over `comm`; failures appended to `failures`. `persistent`: bound
// once (gdap_halo_exchange_init), then started twice.
void run_rank(const ht::Case& c, gdap_comm* comm, int64_t rank, int device, std::vector<std::string>& failures,
              bool persistent = false) {
  cudaSetDevice(device);
  const std::vector<gdap_dim> all = ht::all_dims(c);
  gdap_map* map = nullptr;
  gdap_map_create(&map, c.nranks(), static_cast<int64_t>(c.axes.size()), all.data());
  gdap_halo_options options = GDAP_HALO_OPTIONS_INIT;
  options.corners = c.corners ? 1 : 0;
  options.widths = c.caps.empty() ? nullptr : c.caps.data();
  gdap_halo* halo = nullptr;
  if (gdap_halo_create(&halo, map, ht::float64(), rank, &options) != GDAP_SUCCESS) failures.push_back(gdap_last_error());
  ht::Section s = ht::make_section(c, map, rank);
  const size_t bytes = s.data.size() * sizeof(double);
  void* d = nullptr;
  if (cudaMalloc(&d, bytes) != cudaSuccess) failures.push_back("cudaMalloc failed");
  cudaMemcpy(d, s.data.data(), bytes, cudaMemcpyHostToDevice);
  gdap_array* array = nullptr;
  if (gdap_array_wrap(&array, d, ht::float64(), gdap_device{GDAP_DEVICE_CUDA, device}, s.strides.data(), s.dims.data(),
                      static_cast<int64_t>(s.dims.size())) != GDAP_SUCCESS) {
    failures.push_back(gdap_last_error());
  }
  gdap_exchange* bound = nullptr;
  if (persistent && gdap_halo_exchange_init(&bound, comm, halo, array) != GDAP_SUCCESS) {
    failures.push_back(c.name + ": gdap_halo_exchange_init: " + gdap_last_error());
  }
  for (int round = 0; round < 2; ++round) {
    const gdap_status st = persistent ? gdap_exchange_start(bound) : gdap_halo_exchange(comm, halo, array);
    if (st != GDAP_SUCCESS) failures.push_back(c.name + ": " + gdap_last_error());
  }
  gdap_exchange_destroy(bound);
  if (cudaDeviceSynchronize() != cudaSuccess) failures.push_back(c.name + ": cudaDeviceSynchronize failed");
  cudaMemcpy(s.data.data(), d, bytes, cudaMemcpyDeviceToHost);
  for (const std::string& f : ht::check(c, map, rank, s, true)) failures.push_back(f);
  gdap_array_destroy(array);
  cudaFree(d);
  gdap_halo_destroy(halo);
  gdap_map_destroy(map);
}

void run_group(const char* mode, bool persistent = false) {
  const int gpus = device_count();
  ASSERT_GT(gpus, 0) << "no CUDA device: this test needs one";
  setenv("GDAP_GROUP_COPY", mode, 1);
  for (int64_t n : {1, 2, 3, 4}) {
    for (const ht::Case& c : ht::cases(n)) {
      std::vector<gdap_comm*> comms(static_cast<size_t>(n));
      ASSERT_EQ(gdap_comm_create_group(comms.data(), n), GDAP_SUCCESS) << gdap_last_error();
      std::vector<std::vector<std::string>> failures(static_cast<size_t>(n));
      on_threads(n, [&](int64_t r) {
        run_rank(c, comms[static_cast<size_t>(r)], r, static_cast<int>(r % gpus), failures[static_cast<size_t>(r)],
                 persistent);
      });
      for (int64_t r = 0; r < n; ++r) {
        for (const std::string& f : failures[static_cast<size_t>(r)]) ADD_FAILURE() << mode << ", rank " << r << ": " << f;
        gdap_comm_destroy(comms[static_cast<size_t>(r)]);
      }
    }
  }
  unsetenv("GDAP_GROUP_COPY");
}

TEST(HaloGpu, GroupPush) { run_group("push"); }
TEST(HaloGpu, GroupPull) { run_group("pull"); }
TEST(HaloGpu, GroupPersistent) { run_group("pull", true); }

void run_nccl(bool persistent) {
  const int gpus = std::min(device_count(), 4);
  ASSERT_GT(gpus, 0) << "no CUDA device: this test needs one";
  const std::vector<ht::Case> table = ht::cases(gpus);
  ASSERT_FALSE(table.empty());
  std::vector<ncclComm_t> nccl(static_cast<size_t>(gpus));
  ASSERT_EQ(ncclCommInitAll(nccl.data(), gpus, nullptr), ncclSuccess);
  for (const ht::Case& c : table) {
    std::vector<std::vector<std::string>> failures(static_cast<size_t>(gpus));
    on_threads(gpus, [&](int64_t r) {
      cudaSetDevice(static_cast<int>(r));
      cudaStream_t stream = nullptr;
      cudaStreamCreate(&stream);
      gdap_comm* comm = nullptr;
      if (gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], stream) != GDAP_SUCCESS) {
        failures[static_cast<size_t>(r)].push_back(gdap_last_error());
        return;
      }
      run_rank(c, comm, r, static_cast<int>(r), failures[static_cast<size_t>(r)], persistent);
      gdap_comm_destroy(comm);
      cudaStreamDestroy(stream);
    });
    for (int r = 0; r < gpus; ++r) {
      for (const std::string& f : failures[static_cast<size_t>(r)]) ADD_FAILURE() << "nccl, rank " << r << ": " << f;
    }
  }
  for (ncclComm_t comm : nccl) ncclCommDestroy(comm);
}

TEST(HaloGpu, NcclOneRankPerGpu) { run_nccl(false); }
TEST(HaloGpu, NcclPersistent) { run_nccl(true); }

// Rule: host and device sections in one group are refused on every rank; no padding changes.
TEST(HaloGpu, MixedMemoriesRefused) {
  ASSERT_GT(device_count(), 0) << "no CUDA device: this test needs one";
  const ht::Case c{"mixed", {ht::b({4, 3}, 1, true)}};
  std::vector<gdap_comm*> comms(2);
  ASSERT_EQ(gdap_comm_create_group(comms.data(), 2), GDAP_SUCCESS);
  const std::vector<gdap_dim> all = ht::all_dims(c);
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create(&map, 2, 1, all.data()), GDAP_SUCCESS);
  std::vector<gdap_status> got(2);
  on_threads(2, [&](int64_t r) {
    cudaSetDevice(0);
    gdap_halo* halo = nullptr;
    gdap_halo_create(&halo, map, ht::float64(), r, nullptr);
    ht::Section s = ht::make_section(c, map, r);
    void* d = nullptr;
    if (r == 1) {
      cudaMalloc(&d, s.data.size() * sizeof(double));
      cudaMemcpy(d, s.data.data(), s.data.size() * sizeof(double), cudaMemcpyHostToDevice);
    }
    gdap_array* array = nullptr;
    gdap_array_wrap(&array, r == 1 ? d : s.data.data(), ht::float64(),
                    gdap_device{r == 1 ? GDAP_DEVICE_CUDA : GDAP_DEVICE_CPU, 0}, s.strides.data(), s.dims.data(), 1);
    got[static_cast<size_t>(r)] = gdap_halo_exchange(comms[static_cast<size_t>(r)], halo, array);
    if (r == 0) {
      for (const std::string& f : ht::check(c, map, 0, s, false)) ADD_FAILURE() << f;
    }
    gdap_array_destroy(array);
    cudaFree(d);
    gdap_halo_destroy(halo);
  });
  for (gdap_status st : got) EXPECT_EQ(st, GDAP_ERR_UNSUPPORTED);
  for (gdap_comm* comm : comms) gdap_comm_destroy(comm);
  gdap_map_destroy(map);
}

}  // namespace
