// The bytes a strided section occupies, and whether two sections share one of them. Byte spans
// alone (numpy.may_share_memory) call interleaved views of one buffer (a matrix's even and odd
// columns) overlapping although no byte is shared; this decides it exactly where a bounded search
// can, and answers "may share" only where the search runs out of steps (as
// numpy.shares_memory with max_work: refusing is the safe side).
#pragma once

#include <cstdint>
#include <vector>

namespace gdap {

// Elements of `itemsize` bytes at base + sum_k i_k * strides[k] (strides in bytes, any sign),
// 0 <= i_k < shape[k]. `base` is an address, or an offset in a shared-memory segment: two
// footprints compare in one space.
struct Footprint {
  uint64_t base = 0;
  int64_t itemsize = 0;
  std::vector<int64_t> shape, strides;
};

// The lowest and highest byte a footprint occupies (first > last: none).
struct ByteSpan {
  uint64_t first = 1, last = 0;
  bool empty() const { return first > last; }
};
ByteSpan span_of(const Footprint& f);

// True if some byte lies in both, or where that is not decided within a bounded number of steps.
// Spans apart answer at once; sections that differ only in their base (one layout shifted) or
// whose layouts nest (each dimension's stride past the span of those inside it, as C and Fortran
// order and their slices) take a few steps per dimension.
bool may_share_bytes(const Footprint& a, const Footprint& b);

}  // namespace gdap
