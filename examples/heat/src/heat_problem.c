/* The problem both drivers solve (heat_problem.h): its constants and what follows from them. */
#include "heat_problem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The background: its slopes are kRise[d] over a power of two at least n + 1, and its twist the
 * product of the first two such reciprocals, so that it rises by less than kRise[d] along each
 * dimension and by less than 1 through the twist, whatever the grid (|u| stays below 5), and every
 * coefficient is dyadic: its second differences are exactly 0 in floating point. */
static const double kOffset = 1.0, kRise[3] = {1.0, 0.5, 0.25};
static const double kAmplitude = 1.0;

/* 1 / the smallest power of two >= m. */
static double reciprocal_power(int64_t m) {
  double p = 1.0;
  while (p < (double)m) p *= 2.0;
  return 1.0 / p;
}

int heat_problem_init(heat_problem* p, int ndim, const int64_t* n, const int32_t* periodic, const int32_t* mode,
                      double r, char* why, int capacity) {
  memset(p, 0, sizeof *p);
  if (ndim != 2 && ndim != 3) {
    snprintf(why, (size_t)capacity, "the grid has %d dimensions; the solver takes 2 or 3", ndim);
    return 1;
  }
  p->ndim = ndim;
  p->r = r > 0 ? r : 1.0 / (2.0 * ndim);
  if (p->r > 1.0 / (2.0 * ndim)) {
    snprintf(why, (size_t)capacity, "r = %g is unstable: the explicit step needs 0 < r <= 1/(2 ndim) = %g", p->r,
             1.0 / (2.0 * ndim));
    return 1;
  }
  p->amplitude = kAmplitude;
  p->offset = kOffset;
  p->twist = 1.0;
  int fixed = 0;
  for (int d = 0; d < ndim; ++d) {
    p->n[d] = n[d];
    p->periodic[d] = periodic[d] != 0;
    p->mode[d] = mode[d];
    /* The frame cells are part of the array, periodic or not: DAP 0.10 makes them the edge ranks'
     * boundary padding (owned, in size; start >= 0), which a periodic halo exchange fills from the
     * opposite edge's unknowns. */
    p->origin[d] = 1;
    if (!p->periodic[d]) {
      p->slope[d] = kRise[d] * reciprocal_power(n[d] + 1);
      if (fixed++ < 2) p->twist *= reciprocal_power(n[d] + 1);
    }
    /* A periodic mode needs 2k < n (k = n/2 is the checkerboard, whose cosine norm differs); a
     * fixed-end mode k <= n (beyond, it aliases to a lower one). */
    const int64_t top = p->periodic[d] ? (n[d] - 1) / 2 : n[d];
    if (n[d] < 1 || mode[d] < 1 || mode[d] > top) {
      snprintf(why, (size_t)capacity,
               "dimension %d: %lld unknowns %s take eigenmodes 1 to %lld, not %d", d, (long long)n[d],
               p->periodic[d] ? "(periodic)" : "(fixed ends)", (long long)top, mode[d]);
      return 1;
    }
  }
  return 0;
}

int64_t heat_problem_size(const heat_problem* p, int d) { return p->n[d] + 2 * p->origin[d]; }

double heat_problem_growth(const heat_problem* p) {
  double sum = 0.0;
  for (int d = 0; d < p->ndim; ++d) {
    const double theta = p->periodic[d] ? 2.0 * HEAT_PI * p->mode[d] / (double)p->n[d]
                                        : HEAT_PI * p->mode[d] / (double)(p->n[d] + 1);
    const double s = sin(theta / 2.0);
    sum += s * s;
  }
  return 1.0 - 4.0 * p->r * sum;
}

/* sum over the unknowns of sin^2(pi k x / (n + 1)), x = 1..n, is (n + 1) / 2; of
 * cos^2(2 pi k j / n + phase), j = 0..n-1, is n / 2 (for 0 < 2k < n). */
double heat_problem_mode_norm(const heat_problem* p) {
  double product = 1.0;
  for (int d = 0; d < p->ndim; ++d) product *= p->periodic[d] ? p->n[d] / 2.0 : (p->n[d] + 1) / 2.0;
  return fabs(p->amplitude) * sqrt(product);
}

double heat_problem_bound(const heat_problem* p) {
  double bound = fabs(p->offset) + fabs(p->amplitude);
  double extent[3] = {0, 0, 0};
  int fixed = 0;
  for (int d = 0; d < p->ndim; ++d) {
    if (p->periodic[d]) continue;
    bound += fabs(p->slope[d]) * (double)(p->n[d] + 1);
    extent[fixed++] = (double)(p->n[d] + 1);
  }
  if (fixed >= 2) bound += fabs(p->twist) * extent[0] * extent[1];
  return bound;
}
