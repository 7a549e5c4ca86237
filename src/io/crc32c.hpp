// CRC-32C (Castagnoli), the checksum of Zarr v3's "crc32c" codec and of sharding indices: no
// Debian package provides it, so it is here, small. Slicing by 8 (about 1-2 GB/s per core), or
// the SSE 4.2 instruction where the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gdap::io {

// The CRC-32C of `bytes` bytes at `data` (as zarr-python's and TensorStore's crc32c codec compute
// it: reflected, initial and final XOR 0xFFFFFFFF; crc32c("123456789") == 0xE3069283).
uint32_t crc32c(const void* data, size_t bytes);

}  // namespace gdap::io
