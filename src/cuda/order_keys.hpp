// Floats as unsigned integer keys of the same order, for collectives whose min and max are
// integer-exact but whose float min and max drop NaN: NCCL reduces float32/float64 min and max
// with fminf/fmaxf and fmin/fmax (src/device/reduce_kernel.h), which return the other operand when
// one is NaN, so a NaN on one rank vanished from the result. Mapped to keys, reduced with ncclMin or
// ncclMax on uint32/uint64, and mapped back, a NaN wins as NumPy's np.minimum/np.maximum say.
// The key of x: its bits with the sign bit set for x >= +0, all bits flipped for x <= -0 (so -0
// sorts just below +0); every NaN becomes the largest key (for max) or the smallest (for min),
// which no number has, and maps back to a NaN. Both passes cost a read and a write of the whole
// buffer, so NCCL's engine first asks has_nan (one read) on every rank and uses ncclMin/ncclMax
// on the floats themselves when no rank holds a NaN.
#pragma once

#include <cstdint>

namespace gdap::cuda {

// to[i] = key of from[i] for `count` floats of `bits` (32 or 64) in device memory, queued on
// `stream` (a cudaStream_t); from == to works in place. NaN: the largest key when `nan_high`,
// else the smallest.
void to_order_keys(const void* from, void* to, int64_t count, int bits, bool nan_high, void* stream);

// data[i] = the float whose key data[i] is (a NaN for a NaN's key), in place, queued on `stream`.
void from_order_keys(void* data, int64_t count, int bits, void* stream);

// Queues on `stream` a read of `count` floats of `bits` (32 or 64) at `data` (device memory)
// that sets *flag to 1 if any is NaN (either sign, any payload) and leaves it otherwise: `flag`
// is memory the device writes and the caller reads once the stream is done (pinned host memory).
void has_nan(const void* data, int64_t count, int bits, int* flag, void* stream);

}  // namespace gdap::cuda
