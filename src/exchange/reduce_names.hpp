// A reduction's dtype and op as an engine's library spells them (MPI_DOUBLE, ncclFloat64, ...):
// one walk over the dtypes and ops gdap reduces, given each library's eight type names and four op
// names. Mean never reaches an engine: it sums, then divides.
#pragma once

#include <gdap/gdap.h>

namespace gdap::exchange {

template <typename T>
struct TypeNames {
  T f32, f64, i8, u8, i32, u32, i64, u64;
};

template <typename T>
struct OpNames {
  T sum, prod, min, max;
};

// The name of a reducible dtype (float32/64, int8/32/64, uint8/32/64: checked before).
template <typename T>
T name_of(gdap_dtype t, const TypeNames<T>& n) {
  if (t.code == GDAP_DTYPE_FLOAT) return t.bits == 32 ? n.f32 : n.f64;
  const bool is_int = t.code == GDAP_DTYPE_INT;
  if (t.bits == 8) return is_int ? n.i8 : n.u8;
  if (t.bits == 32) return is_int ? n.i32 : n.u32;
  return is_int ? n.i64 : n.u64;
}

// The name of an element-wise op (sum for mean, which the checks refuse before any engine runs).
template <typename T>
T name_of(gdap_reduce_op op, const OpNames<T>& n) {
  switch (op) {
    case GDAP_REDUCE_PROD: return n.prod;
    case GDAP_REDUCE_MIN: return n.min;
    case GDAP_REDUCE_MAX: return n.max;
    default: return n.sum;
  }
}

}  // namespace gdap::exchange
