// One rank's halo case on a GPU, shared by the device tests of one process (test_halo_gpu.cpp)
// and of one process per GPU (tests/move/redistribute_nccl_mpi.cpp). Not a test by itself.
#pragma once

#include "halo/halo_check.hpp"

#include <gdap/gdap.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

namespace halo_test {

// The section painted with `shift`, copied over `d` in the order of `stream` (NULL: the host
// waits for the device before and after) from pinned memory, so that the copy queues without a wait
// and the starts around it run back to back. The pinned buffer goes into `keep`, for the caller to
// free once the device is done.
inline void repaint(const Case& c, const gdap_map* map, int64_t rank, double shift, void* d, cudaStream_t stream,
                    std::vector<double*>& keep, std::vector<std::string>& failures) {
  const Section s = make_section(c, map, rank, shift);
  const size_t bytes = s.data.size() * sizeof(double);
  double* pinned = nullptr;
  if (cudaMallocHost(&pinned, bytes) != cudaSuccess) return failures.push_back("cudaMallocHost failed");
  keep.push_back(pinned);
  std::copy(s.data.begin(), s.data.end(), pinned);
  if (stream == nullptr) cudaDeviceSynchronize();
  if (cudaMemcpyAsync(d, pinned, bytes, cudaMemcpyHostToDevice, stream) != cudaSuccess) failures.push_back("cudaMemcpyAsync failed");
  if (stream == nullptr) cudaDeviceSynchronize();
}

// One rank's case on `device` over `comm`; failures appended to `failures`. Not persistent: two
// gdap_halo_exchange. Persistent: bound once (gdap_halo_exchange_init), then three starts, the
// section repainted (shift 1, then 2, queued on `stream` between the starts, no host wait) before
// the second and the third, so that a start that left an earlier start's values (or the poison)
// anywhere, or read a section before its repainting landed, is caught.
inline void run_device_rank(const Case& c, gdap_comm* comm, int64_t rank, int device, std::vector<std::string>& failures,
                            bool persistent, cudaStream_t stream) {
  cudaSetDevice(device);
  const std::vector<gdap_dim> all = all_dims(c);
  gdap_map* map = nullptr;
  gdap_map_create(&map, c.nranks(), static_cast<int64_t>(c.axes.size()), all.data());
  gdap_halo_options options = GDAP_HALO_OPTIONS_INIT;
  options.corners = c.corners ? 1 : 0;
  options.widths = c.caps.empty() ? nullptr : c.caps.data();
  gdap_halo* halo = nullptr;
  if (gdap_halo_create(&halo, map, float64(), rank, &options) != GDAP_SUCCESS) failures.push_back(gdap_last_error());
  Section s = make_section(c, map, rank);
  const size_t bytes = s.data.size() * sizeof(double);
  void* d = nullptr;
  if (cudaMalloc(&d, bytes) != cudaSuccess) failures.push_back("cudaMalloc failed");
  cudaMemcpy(d, s.data.data(), bytes, cudaMemcpyHostToDevice);
  cudaDeviceSynchronize();  // a pageable copy may still be landing, unordered with gdap's stream
  gdap_array* array = nullptr;
  if (gdap_array_wrap(&array, d, float64(), gdap_device{GDAP_DEVICE_CUDA, device}, s.strides.data(), s.dims.data(),
                      static_cast<int64_t>(s.dims.size())) != GDAP_SUCCESS) {
    failures.push_back(gdap_last_error());
  }
  gdap_exchange* bound = nullptr;
  if (persistent && gdap_halo_exchange_init(&bound, comm, halo, array) != GDAP_SUCCESS) {
    failures.push_back(c.name + ": gdap_halo_exchange_init: " + gdap_last_error());
  }
  const int rounds = persistent ? 3 : 2;
  std::vector<double*> keep;
  for (int round = 0; round < rounds; ++round) {
    if (persistent && round > 0) repaint(c, map, rank, round, d, stream, keep, failures);
    const gdap_status st = persistent ? gdap_exchange_start(bound) : gdap_halo_exchange(comm, halo, array);
    if (st != GDAP_SUCCESS) failures.push_back(c.name + ": " + gdap_last_error());
  }
  gdap_exchange_destroy(bound);  // right after the last start: it waits for what it must
  if (cudaDeviceSynchronize() != cudaSuccess) failures.push_back(c.name + ": cudaDeviceSynchronize failed");
  for (double* pinned : keep) cudaFreeHost(pinned);
  cudaMemcpy(s.data.data(), d, bytes, cudaMemcpyDeviceToHost);
  for (const std::string& f : check(c, map, rank, s, true, persistent ? rounds - 1 : 0)) failures.push_back(f);
  gdap_array_destroy(array);
  cudaFree(d);
  gdap_halo_destroy(halo);
  gdap_map_destroy(map);
}

}  // namespace halo_test
