// Batched owner look-ups on a CUDA device: the map's tables flattened and uploaded once per
// device, and a kernel that resolves one global index per thread. Kept free of fmt and of
// exceptions so that nvcc compiles it alone; failures come back as a message.
#pragma once

#include <cstdint>
#include <string>

struct gdap_map;

namespace gdap {

// Enqueues the look-up of `count` (>= 0) indices on `stream` (a cudaStream_t) of CUDA device
// `device_id`; the caller's current device is restored. Returns "" on success, else what went
// wrong (the caller raises GDAP_ERR_DEVICE). In a build without CUDA it throws
// GDAP_ERR_UNSUPPORTED instead (owner_batch_nocuda.cpp).
std::string owner_batch_cuda(const gdap_map& map, int64_t* ranks, int64_t* locals, const int64_t* globals,
                             int64_t count, int device_id, void* stream);

}  // namespace gdap
