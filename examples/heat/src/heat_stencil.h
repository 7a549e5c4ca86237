/* One cell of the heat step, written once for the host and the device kernels: the second
 * differences are summed in one fixed order (last dimension first), so every kernel that updates a
 * cell rounds it alike. `s0`, `s1`, `s2` are the flat strides of dimensions 0 to 2 of a 3-d view
 * (a 2-d section is the view (1, n0, n1): `three` is 0 and dimension 0 has no neighbours). */
#ifndef HEAT_STENCIL_H
#define HEAT_STENCIL_H

#include "heat_kernels.h"

#define HEAT_DEFINE_CELL(T, name)                                                                         \
  HEAT_HD static inline T name(const T* u, int64_t i, int64_t s0, int64_t s1, int64_t s2, int three, T r) { \
    const T c = u[i];                                                                                     \
    T lap = (u[i - s2] + u[i + s2] - (T)2 * c) + (u[i - s1] + u[i + s1] - (T)2 * c);                      \
    if (three) lap = lap + (u[i - s0] + u[i + s0] - (T)2 * c);                                            \
    return c + r * lap;                                                                                   \
  }

HEAT_DEFINE_CELL(double, heat_cell_f64)
HEAT_DEFINE_CELL(float, heat_cell_f32)

/* A section's extents as a 3-d view: a 2-d section gains a leading extent of 1. */
HEAT_HD static inline void heat_extents3(int ndim, const int64_t* in, int64_t fill, int64_t* out) {
  out[0] = ndim == 3 ? in[0] : fill;
  out[1] = in[ndim - 2];
  out[2] = in[ndim - 1];
}

/* A section as a 3-d view: extents, flat strides, global start. */
typedef struct heat_view3 {
  int64_t n[3], s[3], start[3];
  int three;
} heat_view3;

HEAT_HD static inline heat_view3 heat_view3_of(const heat_view* v) {
  heat_view3 w;
  heat_extents3(v->ndim, v->shape, 1, w.n);
  heat_extents3(v->ndim, v->start, 0, w.start);
  w.s[2] = 1;
  w.s[1] = w.n[2];
  w.s[0] = w.n[1] * w.n[2];
  w.three = v->ndim == 3;
  return w;
}

#endif /* HEAT_STENCIL_H */
