/* The heat solver's host kernels (heat_kernels.h): plain loops over C-contiguous sections. The
 * step is the hot loop; the fill and the reductions run once or every few steps and read each cell
 * through one type-generic accessor. */
#include "heat_kernels.h"
#include "heat_stencil.h"

#include <math.h>
#include <string.h>

static void box3_of(const heat_view* v, const heat_box* b, int64_t lo[3], int64_t hi[3]) {
  heat_extents3(v->ndim, b->lo, 0, lo);
  heat_extents3(v->ndim, b->hi, 1, hi);
}

void heat_split(const heat_box* update, int ndim, heat_boxes* boundary, heat_boxes* interior) {
  heat_box core = *update;
  for (int d = 0; d < ndim; ++d) {
    core.lo[d] = update->lo[d] + 1;
    core.hi[d] = update->hi[d] - 1 > core.lo[d] ? update->hi[d] - 1 : core.lo[d];
  }
  boundary->count = 0;
  for (int d = 0; d < ndim; ++d) {
    /* dimensions before d: the core's range; d: one side's slab; after d: the whole range */
    heat_box slab = *update;
    for (int e = 0; e < d; ++e) {
      slab.lo[e] = core.lo[e];
      slab.hi[e] = core.hi[e];
    }
    const int64_t a = update->lo[d], b = update->hi[d];
    slab.lo[d] = a;
    slab.hi[d] = a + 1 < b ? a + 1 : b;
    boundary->box[boundary->count++] = slab;
    slab.lo[d] = b - 1 > a + 1 ? b - 1 : a + 1;
    slab.hi[d] = b;
    boundary->box[boundary->count++] = slab;
  }
  interior->count = 1;
  interior->box[0] = core;
}

#define HEAT_DEFINE_STEP(T, suffix, cell)                                                          \
  static void step_##suffix(const heat_view3* w, const T* u, T* v, const int64_t lo[3], const int64_t hi[3], T r) { \
    for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)                                                    \
      for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1) {                                                \
        const int64_t row = i0 * w->s[0] + i1 * w->s[1];                                          \
        for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) v[row + i2] = cell(u, row + i2, w->s[0], w->s[1], 1, w->three, r); \
      }                                                                                           \
  }
HEAT_DEFINE_STEP(double, f64, heat_cell_f64)
HEAT_DEFINE_STEP(float, f32, heat_cell_f32)

void heat_host_step(const heat_view* view, const void* u, void* v, const heat_boxes* boxes, double r) {
  const heat_view3 w = heat_view3_of(view);
  for (int b = 0; b < boxes->count; ++b) {
    int64_t lo[3], hi[3];
    box3_of(view, &boxes->box[b], lo, hi);
    if (view->bits == 64) step_f64(&w, (const double*)u, (double*)v, lo, hi, r);
    else step_f32(&w, (const float*)u, (float*)v, lo, hi, (float)r);
  }
}

static double load(const void* u, int bits, int64_t i) {
  return bits == 64 ? ((const double*)u)[i] : (double)((const float*)u)[i];
}

static uint64_t bits_of(const void* u, int bits, int64_t i) {
  if (bits == 64) {
    uint64_t b;
    memcpy(&b, (const double*)u + i, sizeof b);
    return b;
  }
  uint32_t b;
  memcpy(&b, (const float*)u + i, sizeof b);
  return b;
}

/* Runs `body` for every cell of the box [lo, hi) of the 3-d view, with its flat index `flat` and its
 * global index `global` (the section's ndim values). */
#define FOR_EACH_CELL(view, w, lo, hi, body)                                          \
  for (int64_t i0 = lo[0]; i0 < hi[0]; ++i0)                                          \
    for (int64_t i1 = lo[1]; i1 < hi[1]; ++i1)                                        \
      for (int64_t i2 = lo[2]; i2 < hi[2]; ++i2) {                                    \
        const int64_t flat = i0 * w.s[0] + i1 * w.s[1] + i2;                          \
        const int64_t g3[3] = {w.start[0] + i0, w.start[1] + i1, w.start[2] + i2};    \
        const int64_t* global = view->ndim == 3 ? g3 : g3 + 1;                        \
        (void)global;                                                                 \
        body                                                                          \
      }

void heat_host_fill(const heat_view* view, void* u, const heat_box* owned, const heat_problem* problem) {
  const heat_view3 w = heat_view3_of(view);
  const int64_t all_lo[3] = {0, 0, 0};
  int64_t lo[3], hi[3];
  box3_of(view, owned, lo, hi);
  FOR_EACH_CELL(view, w, all_lo, w.n, {
    const int inside = i0 >= lo[0] && i0 < hi[0] && i1 >= lo[1] && i1 < hi[1] && i2 >= lo[2] && i2 < hi[2];
    const double x = inside ? heat_exact(problem, global, 1.0) : NAN;
    if (view->bits == 64) ((double*)u)[flat] = x;
    else ((float*)u)[flat] = (float)x;
  })
}

double heat_host_sqdiff(const heat_view* view, const void* u, const void* v, const heat_box* box) {
  const heat_view3 w = heat_view3_of(view);
  int64_t lo[3], hi[3];
  box3_of(view, box, lo, hi);
  double sum = 0.0;
  FOR_EACH_CELL(view, w, lo, hi, {
    const double d = load(v, view->bits, flat) - load(u, view->bits, flat);
    sum += d * d;
  })
  return sum;
}

double heat_host_error(const heat_view* view, const void* u, const heat_box* box, const heat_problem* problem,
                       double decay) {
  const heat_view3 w = heat_view3_of(view);
  int64_t lo[3], hi[3];
  box3_of(view, box, lo, hi);
  double worst = 0.0;
  FOR_EACH_CELL(view, w, lo, hi, {
    double e = fabs(load(u, view->bits, flat) - heat_exact(problem, global, decay));
    if (!(e <= INFINITY)) e = INFINITY; /* NaN: a cell never written */
    if (e > worst) worst = e;
  })
  return worst;
}

uint64_t heat_host_fingerprint(const heat_view* view, const void* u, const heat_box* box,
                               const heat_problem* problem) {
  const heat_view3 w = heat_view3_of(view);
  int64_t lo[3], hi[3];
  box3_of(view, box, lo, hi);
  uint64_t sum = 0;
  FOR_EACH_CELL(view, w, lo, hi, {
    uint64_t unknown = 0;
    for (int d = 0; d < view->ndim; ++d) unknown = unknown * (uint64_t)problem->n[d] + (uint64_t)(global[d] - problem->origin[d]);
    sum += heat_share(bits_of(u, view->bits, flat), unknown);
  })
  return sum;
}
