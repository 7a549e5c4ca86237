// Overflow-checked int64 arithmetic: every size, offset and product in gdap goes through these,
// so that hostile sizes become GDAP_ERR_OVERFLOW instead of wrapping into a small allocation.
#pragma once

#include "core/error.hpp"

#include <cstdint>

namespace gdap {

inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(GDAP_ERR_OVERFLOW, "{}: {} + {} overflows int64", what, a, b);
  return r;
}

inline int64_t checked_sub(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) fail(GDAP_ERR_OVERFLOW, "{}: {} - {} overflows int64", what, a, b);
  return r;
}

inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(GDAP_ERR_OVERFLOW, "{}: {} * {} overflows int64", what, a, b);
  return r;
}

// a * b for a count that is only reported (a statistic, never allocated), INT64_MAX past int64's
// range: a capped figure is more use there than a refusal. a, b >= 0.
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

}  // namespace gdap
