// Min and max as NumPy's np.minimum/np.maximum define them: a NaN on either side is the result, so
// a reduction's answer at a position is NaN whenever any element there is NaN, whatever order
// the engine combines the ranks' values in. std::min/std::max and `b < a ? b : a` keep one side
// when a comparison with NaN is false, so their result depended on which rank held the NaN.
// Integers are never NaN: `x != x` folds away and these are the plain min and max. Host and
// device (reduce/reduce_kernels.cu, C++17) and the MPI engine's own ops (exchange/mpi.cpp) include this file.
#pragma once

#if defined(__CUDACC__)
#define GDAP_NAN_ORDER_FN __host__ __device__ inline
#else
#define GDAP_NAN_ORDER_FN inline
#endif

namespace gdap {

template <typename T>
GDAP_NAN_ORDER_FN bool is_nan(T x) {
  return x != x;  // NOLINT(misc-redundant-expression): true only for a floating NaN
}

template <typename T>
GDAP_NAN_ORDER_FN T nan_max(T a, T b) {
  return (a > b || is_nan(a)) ? a : b;  // b when b is NaN: a > NaN is false
}

template <typename T>
GDAP_NAN_ORDER_FN T nan_min(T a, T b) {
  return (a < b || is_nan(a)) ? a : b;
}

}  // namespace gdap
