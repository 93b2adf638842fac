/* The C side of sklearn_dppca._kendall_kernel: the streaming loops of the
   m-partner (design) path and the row helpers of a task.

   Kept out of the Cython module so that C tools (compilers with warnings on,
   sanitizers, static analysers) see it as plain C: it needs no Python header.
   The Cython wrappers check every index they pass here (order, offsets, start,
   stop); these functions trust their arguments and do no bounds checks.

   Routes. Each group of loops exists in several builds (the "routes"); one is
   selected at import by dppca_set_route, through function pointers, so that the
   same binary runs the widest loops the CPU has and a test can force any other
   route the CPU also runs:

     DPPCA_ROUTE_AVX512    8 lanes: AVX-512 band loops, the window loop and the
                           hand-written p x p accumulation (x86 with GCC or Clang)
     DPPCA_ROUTE_AVX2      4 lanes: AVX2/FMA band loops (x86 with GCC or Clang)
     DPPCA_ROUTE_PORTABLE  what a build without x86 dispatch runs: 4-lane vectors
                           of the baseline ISA under GCC/Clang, else plain loops
     DPPCA_ROUTE_PLAIN     one-lane loops in standard C: what compilers without
                           vector extensions (MSVC) run, testable everywhere
     DPPCA_ROUTE_AUTO      the first of AVX512, AVX2, PORTABLE the CPU runs

   Indices are ptrdiff_t, which is Py_ssize_t's type on every platform CPython
   supports (the Cython module checks the sizes agree when it is compiled). */
#ifndef DPPCA_KERNEL_H
#define DPPCA_KERNEL_H

#include <stddef.h>

typedef ptrdiff_t dppca_index;

/* Lanes of every band loop's unit of work: n_lanes arguments are multiples of it,
   and buffers are padded to it. */
#define DPPCA_LANES 8
/* Partner columns per pass of the AVX-512 window loop. */
#define DPPCA_WINDOW_PASS 20
/* The widest rows the narrow loop takes (dppca_narrow). */
#define DPPCA_NARROW 4

enum {
    DPPCA_ROUTE_AUTO = 0,
    DPPCA_ROUTE_AVX512 = 1,
    DPPCA_ROUTE_AVX2 = 2,
    DPPCA_ROUTE_PORTABLE = 3,
    DPPCA_ROUTE_PLAIN = 4
};

/* 1 when this build and this CPU (and OS) run the route, else 0. */
int dppca_route_supported(int route);
/* Select a route (DPPCA_ROUTE_AUTO: the widest supported); returns its lane
   count (8, 4 or 1), or -1, leaving the current route in place, when the route is
   not supported. Not thread safe: call it while no kernel runs. */
int dppca_set_route(int route);
/* The route in use (never DPPCA_ROUTE_AUTO) and its lane count. */
int dppca_current_route(void);
int dppca_current_lanes(void);

/* dots[j dots_ld + i] = sum_k owners[k ld + i] partners[k ld + i + offsets[j]],
   i < n_lanes (a multiple of DPPCA_LANES), j < n_offsets. */
void dppca_band_dots(const double* owners, const double* partners, dppca_index ld,
                     dppca_index p, dppca_index n_lanes, const dppca_index* offsets,
                     dppca_index n_offsets, double* dots, dppca_index dots_ld);
/* sums[k sums_ld + i] += sum_j weights[j weights_ld + i]
                                partners[k ld + i + offsets[j]], i < n_lanes. */
void dppca_band_gather(const double* partners, dppca_index ld, dppca_index p,
                       dppca_index n_lanes, const dppca_index* offsets,
                       dppca_index n_offsets, const double* weights,
                       dppca_index weights_ld, double* sums, dppca_index sums_ld);
/* A clipped total riding on the design path's weights: sum += min(D2, floor)
   over the pairs the Gram path keeps (D2 and floor in the task's prescaled
   units; the exact path's pairs are added by the caller). */
typedef struct {
    double floor;
    double sum;
} dppca_trace;

/* Weights of the pairs (owner i, partner i + offsets[j]), i < count, from their
   band dot products: w = 1 / max(D2, weight_floor) for D2 = |a|^2 + |b|^2 - 2 a.b,
   or 0 when D2 < relative_floor S + absolute_floor (S = |a|^2 + |b|^2: the pair
   goes to the exact path). Adds the weights to owner_sums[i] and
   partner_sums[i + offsets[j]], and the kept pairs to trace; returns the number
   of pairs left to the exact path. The weights of the lanes in [count, n_lanes)
   are 0 or untouched. */
dppca_index dppca_band_weights(const double* dots, dppca_index dots_ld,
                               dppca_index count, const dppca_index* offsets,
                               dppca_index n_offsets, const double* owner_norms,
                               const double* partner_norms, double relative_floor,
                               double absolute_floor, double weight_floor,
                               double* weights, dppca_index weights_ld,
                               double* owner_sums, double* partner_sums,
                               dppca_trace* trace);
/* Rows of p <= DPPCA_NARROW coordinates: the pairs (owner i, partner
   i + offsets[j]), i < count, from their direct differences d (rows prescaled,
   not centred): sums[c] += d_k d_l / max(|d|^2, weight_floor) for the c-th
   (k <= l) of the upper triangle, row by row, trace->sum += min(|d|^2,
   trace->floor); a pair with |d|^2 < tiny goes to exact_pairs as (i, j)
   instead. Returns their number. Reads columns up to count rounded up to
   DPPCA_LANES, plus the largest offset. */
dppca_index dppca_narrow(const double* owners, const double* partners, dppca_index ld,
                         dppca_index p, dppca_index count, const dppca_index* offsets,
                         dppca_index n_offsets, double weight_floor, double tiny,
                         double* sums, dppca_trace* trace, dppca_index* exact_pairs);
/* products[k products_ld + i] = sums[i] rows[k rows_ld + i]
                                 (- 2 gathered[k ld + i] when gathered is not NULL),
   i < n_lanes. */
void dppca_scaled_rows(const double* rows, dppca_index rows_ld, const double* sums,
                       const double* gathered, dppca_index ld, dppca_index p,
                       dppca_index n_lanes, double* products,
                       dppca_index products_ld);

/* Size of the cells of dppca_products for p, in doubles. */
dppca_index dppca_cells_size(dppca_index p);
/* cells += A^T R (cells = A^T R when fresh) with the AVX-512 register tiles when
   the AVX-512 route is in use; returns 0 and does nothing otherwise (the caller
   then uses DGEMM). */
int dppca_products(const double* A, dppca_index lda, const double* R,
                   dppca_index ldr, dppca_index p, dppca_index count, double* cells,
                   int fresh);
/* acc[k1 + k2 p] += the eight lanes of the cell (k1, k2), added pairwise. */
void dppca_cells_to_acc(const double* cells, dppca_index p, double* acc);
/* The AVX-512 window loop (offsets 1 ... h, h <= 32) when the AVX-512 route is in
   use, else 0 and nothing (the caller then uses the band loops). See
   dppca_kernel.c for what it writes. */
dppca_index dppca_window(const double* rows, dppca_index ld, dppca_index p,
                         dppca_index count, dppca_index h, const double* norms,
                         double relative_floor, double absolute_floor,
                         double weight_floor, double* weight_sums, double* sums,
                         dppca_index sums_ld, double* products,
                         dppca_index products_ld, double* partner_lanes,
                         double* cells, dppca_index* exact_pairs,
                         dppca_trace* trace);

/* max |x| over size doubles (0 for none). */
double dppca_max_abs(const double* x, dppca_index size);
/* rows[k width + l] = X[order[(first + l) mod n], k], l < count; returns the
   largest |x| among them. Every order[...] must lie in [0, n). */
double dppca_local_rows(const double* X, const dppca_index* order, dppca_index n,
                        dppca_index p, dppca_index first, dppca_index count,
                        dppca_index width, double* rows);
/* rows[k width + l] = rows[k width + l] high low - centre[k] and
   norms[l] = sum_k rows[k width + l]^2, l < count. */
void dppca_finish_rows(double* rows, dppca_index width, dppca_index count,
                       dppca_index p, double high, double low, const double* centre,
                       double* norms);

#endif
