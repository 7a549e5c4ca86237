// gdap_halo_exchange on device sections (label gpu; fails, never skips, without a CUDA device):
// the cases of halo_check.hpp through the in-process group (copy kernels pushing, then pulling,
// ranks spread over the GPUs round-robin, several ranks per GPU allowed) and through NCCL (one rank
// per GPU, up to 4; the 1-rank cases wrap onto themselves when only one GPU is there). Each
// section is painted on the host, copied to its GPU, exchanged twice (the second run reuses the
// uploaded copy programs), copied back and checked element by element; the Persistent cases bind
// with gdap_halo_exchange_init and start three times, repainting between starts (halo_device.hpp);
// over NCCL with direct writes, then with NCCL send/receive. Then host and device sections in one
// group: refused on every rank.
//
// Run: ctest --test-dir build -L gpu -R halo   (or build/tests/halo/test_halo_gpu)
#include "halo/halo_device.hpp"

#include <gdap/gdap.h>
#include <gdap/gdap_cuda.h>

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <barrier>
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
        ht::run_device_rank(c, comms[static_cast<size_t>(r)], r, static_cast<int>(r % gpus),
                            failures[static_cast<size_t>(r)], persistent, nullptr);
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
      ht::run_device_rank(c, comm, r, static_cast<int>(r), failures[static_cast<size_t>(r)], persistent, stream);
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
// Direct writes into the neighbours' staging, required (GDAP_NCCL_PEER=1: init fails otherwise).
TEST(HaloGpu, NcclPersistent) {
  setenv("GDAP_NCCL_PEER", "1", 1);
  run_nccl(true);
  unsetenv("GDAP_NCCL_PEER");
}

// The same through NCCL send/receive: one rank without direct writes makes every rank go without.
TEST(HaloGpu, NcclPersistentThroughNcclSends) {
  setenv("GDAP_NCCL_PEER", "0", 1);
  run_nccl(true);
  unsetenv("GDAP_NCCL_PEER");
}

// Rule: a bound NCCL exchange whose neighbour never starts gives up after the communicator's
// timeout (the waiting kernel ends, the stream drains) and its next start says GDAP_ERR_TIMEOUT.
TEST(HaloGpu, NcclPersistentMissingNeighbourTimesOut) {
  if (device_count() < 2) GTEST_SKIP() << "needs 2 GPUs (found " << device_count() << ")";
  const ht::Case c{"1d_two_ranks", {ht::b({5, 4}, 1)}};
  std::vector<ncclComm_t> nccl(2);
  ASSERT_EQ(ncclCommInitAll(nccl.data(), 2, nullptr), ncclSuccess);
  const std::vector<gdap_dim> all = ht::all_dims(c);
  gdap_map* map = nullptr;
  ASSERT_EQ(gdap_map_create(&map, 2, 1, all.data()), GDAP_SUCCESS);
  std::barrier sync(2);
  std::vector<std::string> said(2);
  std::vector<gdap_status> second(2, GDAP_SUCCESS);
  on_threads(2, [&](int64_t r) {
    cudaSetDevice(static_cast<int>(r));
    cudaStream_t stream = nullptr;
    cudaStreamCreate(&stream);
    gdap_comm* comm = nullptr;
    gdap_comm_from_nccl(&comm, nccl[static_cast<size_t>(r)], stream);
    gdap_comm_set_timeout(comm, 0.5);
    gdap_halo* halo = nullptr;
    gdap_halo_create(&halo, map, ht::float64(), r, nullptr);
    ht::Section s = ht::make_section(c, map, r);
    void* d = nullptr;
    cudaMalloc(&d, s.data.size() * sizeof(double));
    cudaMemcpy(d, s.data.data(), s.data.size() * sizeof(double), cudaMemcpyHostToDevice);
    gdap_array* array = nullptr;
    gdap_array_wrap(&array, d, ht::float64(), gdap_device{GDAP_DEVICE_CUDA, static_cast<int>(r)}, s.strides.data(),
                    s.dims.data(), 1);
    gdap_exchange* bound = nullptr;
    EXPECT_EQ(gdap_halo_exchange_init(&bound, comm, halo, array), GDAP_SUCCESS) << gdap_last_error();
    if (r == 0) {  // rank 1 never starts
      EXPECT_EQ(gdap_exchange_start(bound), GDAP_SUCCESS) << gdap_last_error();
      EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);  // ends: the waiting kernel gave up
      second[0] = gdap_exchange_start(bound);
      said[0] = gdap_last_error();
      cudaStreamSynchronize(stream);
    }
    sync.arrive_and_wait();  // rank 1 keeps its staging until rank 0 is done writing into it
    gdap_exchange_destroy(bound);
    gdap_array_destroy(array);
    cudaFree(d);
    gdap_halo_destroy(halo);
    gdap_comm_destroy(comm);
    cudaStreamDestroy(stream);
  });
  EXPECT_EQ(second[0], GDAP_ERR_TIMEOUT);
  EXPECT_NE(said[0].find("timeout"), std::string::npos) << said[0];
  gdap_map_destroy(map);
  for (ncclComm_t comm : nccl) ncclCommDestroy(comm);
}

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
