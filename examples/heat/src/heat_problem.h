/* The heat problem the example solves, and its exact discrete solution.
 *
 * One explicit step of the heat equation on a grid of unit spacing is
 *     v = u + r * sum over dimensions d of (u[x - e_d] + u[x + e_d] - 2 u[x]),
 * the 5-point (2-d) or 7-point (3-d) stencil; r = 1 / (2 ndim) makes it the Jacobi iteration for
 * Laplace's equation (v = the mean of the 2 ndim neighbours). Along each dimension the n unknowns are
 * framed by one cell each side: fixed (Dirichlet) values, or, for a periodic dimension, copies of the
 * opposite edge that the halo exchange refreshes.
 *
 * The initial field is a discrete harmonic background plus one discrete eigenmode of the stencil:
 *     u_0(x) = b(x) + A * prod_d m_d(x_d),
 * b = offset + sum of slope_d * x_d + twist * x_p * x_q over non-periodic dimensions (p, q: the first
 * two), whose second differences are exactly 0, and m_d = sin(pi k_d x / (n_d + 1)) (zero on the
 * fixed cells) or, periodic, cos(2 pi k_d j / n_d + phase). The stencil maps each m_d to itself
 * times 1 - 4 sin^2(theta_d / 2), so after s steps the exact discrete solution is
 *     u_s(x) = b(x) + g^s * A * prod_d m_d(x_d),   g = 1 - 4 r sum_d sin^2(theta_d / 2),
 * with theta_d = pi k_d / (n_d + 1) or 2 pi k_d / n_d: the solver's answer is known to rounding.
 *
 * This header is C99 and also compiles as CUDA (the same functions run in the device kernels);
 * the structs are laid out for Fortran's bind(C) types in heat_kernels.f90.
 */
#ifndef HEAT_PROBLEM_H
#define HEAT_PROBLEM_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define HEAT_HD __host__ __device__
#else
#define HEAT_HD
#endif

#define HEAT_PI 3.14159265358979323846
#define HEAT_PHASE 0.3 /* of the periodic modes, so that no cell sits on a symmetry line */

/* The problem, per dimension in C order (dimension 0 varies slowest). */
typedef struct heat_problem {
  int32_t ndim;        /* 2 or 3 */
  int32_t reserved;    /* 0 */
  int32_t periodic[3]; /* non-zero: the dimension wraps */
  int32_t mode[3];     /* wave number k_d >= 1 of the eigenmode */
  int64_t n[3];        /* unknowns along the dimension (periodic: the period) */
  int64_t origin[3];   /* global index of unknown 0: 1, the frame cell at index 0 being part of the array */
  double r;            /* the step's coefficient, 0 < r <= 1 / (2 ndim) */
  double amplitude;    /* A */
  double offset;       /* b's constant */
  double slope[3];     /* b's slope along each non-periodic dimension */
  double twist;        /* b's coefficient of x_p * x_q */
} heat_problem;

/* The exact discrete solution at global index `g` (ndim values) after the steps that made the
 * eigenmode's factor `decay` (g^s). */
HEAT_HD static inline double heat_exact(const heat_problem* p, const int64_t* g, double decay) {
  double background = p->offset, mode = p->amplitude;
  double first = 0.0, second = 0.0;
  int fixed = 0;
  for (int d = 0; d < p->ndim; ++d) {
    const double j = (double)(g[d] - p->origin[d]); /* unknown number; -1 and n are the frame */
    if (p->periodic[d]) {
      mode *= cos(2.0 * HEAT_PI * p->mode[d] * j / (double)p->n[d] + HEAT_PHASE);
    } else {
      const double x = j + 1.0; /* 0 and n + 1 on the fixed cells */
      mode *= sin(HEAT_PI * p->mode[d] * x / (double)(p->n[d] + 1));
      background += p->slope[d] * x;
      if (fixed == 0) first = x;
      if (fixed == 1) second = x;
      ++fixed;
    }
  }
  if (fixed >= 2) background += p->twist * first * second;
  return background + decay * mode;
}

/* splitmix64's finaliser: spreads every bit of `x` over the result. */
HEAT_HD static inline uint64_t heat_mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* One cell's share of a field's fingerprint: its bits mixed with its place among the unknowns.
 * The fingerprint is the sum of the shares modulo 2^64: the same for any split of the grid and
 * any order of summation, and different for any field that differs in one bit (but with
 * probability 2^-64). */
HEAT_HD static inline uint64_t heat_share(uint64_t bits, uint64_t unknown) {
  return heat_mix(bits ^ heat_mix(unknown + 0x9e3779b97f4a7c15ULL));
}

#ifdef __cplusplus
extern "C" {
#endif

/* Sets up the problem both drivers solve (heat_problem.c holds its constants), for `ndim`
 * dimensions of n[d] unknowns, periodic or not, eigenmode k = mode[d], step coefficient `r`
 * (0: 1 / (2 ndim), Jacobi). Returns 0, or 1 with the reason in `why` (`capacity` bytes). */
int heat_problem_init(heat_problem* p, int ndim, const int64_t* n, const int32_t* periodic, const int32_t* mode,
                      double r, char* why, int capacity);
/* Global extent of dimension d: the unknowns and, where the array holds them, the frame cells. */
int64_t heat_problem_size(const heat_problem* p, int d);
/* g, the factor by which one step multiplies the eigenmode. */
double heat_problem_growth(const heat_problem* p);
/* The eigenmode's 2-norm over the unknowns at step 0, |A| * sqrt(prod_d sum_j m_d(j)^2). */
double heat_problem_mode_norm(const heat_problem* p);
/* A bound on |u| over the grid at every step (the background's largest value plus |A|). */
double heat_problem_bound(const heat_problem* p);

#ifdef __cplusplus
}
#endif

#endif /* HEAT_PROBLEM_H */
