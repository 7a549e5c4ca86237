// A float sum as accurate as NumPy's or better: Neumaier's compensated summation (Kahan's, also
// right when an addend outweighs the running sum) carried in double, whatever the element's
// dtype. Adding elements one at a time in their own dtype lost every 1.0 added to 1e8 in float32
// (and to 1e16 in float64): an error growing with the count of elements. Here the error of n
// additions is about 2 ulp of the sum plus n * 2^-106 times the sum of magnitudes, so float32
// sums come out correctly rounded in practice and float64 sums within an ulp or two, with any
// count of elements and in any order. The host (reduce.cpp) uses it for every float dtype, the
// device (reduce_kernels.cu) for float64 (float32 adds into a plain double there: its bound).
#pragma once

#if defined(__CUDACC__)
#define GDAP_COMPENSATED_FN __host__ __device__ inline
#else
#define GDAP_COMPENSATED_FN inline
#endif

namespace gdap::reduce {

struct CompensatedSum {
  double sum = 0;
  double carry = 0;  // what the additions to `sum` rounded away

  GDAP_COMPENSATED_FN void add(double x) {
    const double t = sum + x;
    const bool sum_larger = (sum < 0 ? -sum : sum) >= (x < 0 ? -x : x);
    carry += sum_larger ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }

  // Another sum's elements added to these.
  GDAP_COMPENSATED_FN void merge(const CompensatedSum& other) {
    add(other.sum);
    carry += other.carry;
  }

  // The sum, rounded once. An infinite or NaN `sum` is the answer as it is: its carry is then
  // NaN (inf - inf), and NumPy's sum is inf or NaN there too.
  GDAP_COMPENSATED_FN double value() const {
    const double d = sum - sum;  // 0 when finite, NaN for inf or NaN
    return d == d ? sum + carry : sum;
  }
};

}  // namespace gdap::reduce
