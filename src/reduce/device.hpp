// The device side of gdap_reduce_scatter and gdap_reduce_axes (CUDA device sections, which only an
// NCCL communicator's engine takes): the same three steps as on the host (reduce.cpp), on the
// communicator's stream: this rank's owned elements reduced into a device buffer laid out as
// reduce_buffer.hpp says (reduce_kernels.cu), the engine's all-reduce or reduce-scatter of that
// buffer, the result's owned elements copied out (device.cpp).
// Deterministic: each buffer element is reduced in an order fixed by the shapes and strides.
#pragma once

#include "comm/comm.hpp"

#include <gdap/gdap.h>

#include <cstdint>
#include <limits>
#include <vector>

// (reduce_kernels.cu, C++17, includes this: no C++20 header of gdap's here.)
namespace gdap::exchange {
class Engine;
}

namespace gdap::reduce {

// Calls f(T{}) with T the C++ type of a reducible dtype (int8/32/64, uint8/32/64, float32/64).
template <typename F>
void with_type(gdap_dtype t, F&& f) {
  if (t.code == GDAP_DTYPE_FLOAT) return t.bits == 32 ? f(float{}) : f(double{});
  const bool is_int = t.code == GDAP_DTYPE_INT;
  if (t.bits == 8) return is_int ? f(int8_t{}) : f(uint8_t{});
  if (t.bits == 32) return is_int ? f(int32_t{}) : f(uint32_t{});
  return is_int ? f(int64_t{}) : f(uint64_t{});
}

// The op's identity: what an element that no rank holds reduces to.
template <typename T>
T identity(gdap_reduce_op op) {
  using L = std::numeric_limits<T>;
  switch (op) {
    case GDAP_REDUCE_PROD: return T(1);
    case GDAP_REDUCE_MIN: return L::has_infinity ? L::infinity() : L::max();
    case GDAP_REDUCE_MAX: return L::has_infinity ? -L::infinity() : L::lowest();
    default: return T(0);
  }
}

// One axis of what a rank reads or writes: per owned index k, its element offset (local index *
// stride) and its term of the buffer index (reduce_buffer.hpp; 0 if reduced). When both step
// evenly (a run of owned indices, an undistributed axis) the axis is affine and needs no table:
// offset0 + k * offset_step and flat0 + k * flat_step; otherwise the tables hold every index.
struct AxisTable {
  int64_t count = 0;
  bool affine = false;
  int64_t offset0 = 0, offset_step = 0, flat0 = 0, flat_step = 0;
  std::vector<int64_t> offset, flat;  // when not affine: count entries each
  int64_t stride = 0;                 // the section's stride along the axis, in elements
};

struct DeviceReduction {
  int device = 0;  // the sections' GPU (the NCCL communicator's)
  gdap_dtype dtype{};
  gdap_reduce_op op = GDAP_REDUCE_SUM;  // the engine's op: mean sums, then divides by mean_count
  bool mean = false;
  double mean_count = 1;
  const void* source = nullptr;
  std::vector<AxisTable> kept, reduced;  // the source's owned indices: axes kept, axes reduced
  void* result = nullptr;
  std::vector<AxisTable> out;  // the result's owned indices (none for a 0-d result)
  int64_t count = 0;           // elements of the buffer (reduce_buffer.hpp)
  int64_t segment = 0;         // segmented layout: elements per rank (0: the global layout)
  // Segmented, not mean: the source's owned elements already lie in buffer order at its data
  // (a replicated C-order source into row blocks), so the ranks reduce-scatter from it as it is;
  // and this rank's segment is its result's memory as it is (no padding, C order), so it receives
  // its part there. Each saves a pass over the data.
  bool source_is_buffer = false, result_is_segment = false;
};

// reduce_kernels.cu: fills `buffer` with the op's identity, then reduces this rank's elements into it.
void reduce_partial_on_device(const DeviceReduction& r, void* buffer, void* stream);
// reduce_kernels.cu: divides by mean_count for mean, then writes the result's owned elements from
// `reduced`, the part of the buffer this rank reads (the whole buffer, or its segment).
void write_result_on_device(const DeviceReduction& r, const void* reduced, void* stream);

// device.cpp: the reduction itself, collective over `comm`, whose engine is `engine`.
void reduce_on_device(exchange::Engine& engine, gdap_comm& comm, const DeviceReduction& r);

}  // namespace gdap::reduce
