// Batched owner look-ups on a CUDA device: the map's tables flattened and uploaded once per
// device, and a kernel that resolves one global index per thread. Kept free of fmt and of
// exceptions so that nvcc compiles it alone; failures come back as a message.
#pragma once

#include <cstdint>
#include <string>

struct gdap_map;

namespace gdap {

// Enqueues the look-up of `count` indices on `stream` (a cudaStream_t) of device `device_id`.
// Returns "" on success, else what went wrong (the caller raises GDAP_ERR_DEVICE).
std::string owner_batch_cuda(gdap_map& map, int64_t* ranks, int64_t* locals, const int64_t* globals, int64_t count,
                             int device_id, void* stream);

}  // namespace gdap
