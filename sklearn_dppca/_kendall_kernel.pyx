# cython: language_level=3
"""Compiled kernels for the spherical Kendall matrix and the floored pair scatter.

Two entry points, each called by :mod:`sklearn_dppca._kendall` once per parallel
task; each returns the *unnormalised* partial sum over its pairs of the floored term

    ``d d^T / max(|d|^2, floor)``,  ``d = x_i - x_j``

(``floor = 0``: the unit-vector term ``u u^T`` of the spherical Kendall matrix; a
coincident pair always contributes 0):

``all_pairs_partial``
    All pairs of rows within a list of block pairs, through the Gram-product
    formulation (two DGEMMs and one DSYRK per block pair, O(b^2 p) work). Pairs whose
    Gram distance would be inaccurate are taken out of the Gram sum and computed
    exactly from their difference vector instead.
``design_partial``
    The pairs of a circulant pair design (the incomplete U-statistic), through the
    weighted Laplacian of the design: band dot products give the weights, a band
    gather and one ``p x p`` accumulation per run of ring positions the sum (O(p)
    work per pair plus O(p^2) per row). Pairs whose Gram distance would be
    inaccurate (the same test as in ``all_pairs_partial``) are computed exactly
    instead.

Exact pairs turn into (shrunk) unit vectors that are buffered and added with one DSYRK
per full buffer.

The floor is passed as ``mantissa * 2**exponent`` in the units of the original rows
(``mantissa`` in [0.5, 1), or 0 for no floor), so that the exact path, which rescales
each difference by its own power of two, can put the floor in the same units without
overflow or underflow. The Gram path, which works on rows prescaled by a power of two,
gets the floor in those units as a plain double; the caller keeps it at most ``4 p``
(above every squared distance of rows with ``max |x| < 1``), so a Gram weight is never
0 (0 marks the pairs left to the exact path). Both kernels release the GIL for all their numerical work, allocate
their buffers (as NumPy arrays, so that ``tracemalloc`` sees them) before releasing
it, and never write to their inputs.

Layout: BLAS is column-major and our arrays are row-major, so a C array of
``rows x cols`` reaches BLAS as its transpose. Accumulators are ``p x p`` column-major
arrays of which only the upper triangle (row ``k <=`` column ``l``, element
``k + l * p``) is kept until the final symmetrisation.
"""

import numpy as np

from libc.float cimport DBL_MAX
from libc.math cimport fabs, frexp, ldexp, sqrt
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemm, dsyrk

# The streaming loops of design_partial, in C: they walk band diagonals of the ring
# (owner t, partner t + o) with the positions t in the vector lanes, so the
# accumulators stay in registers while a coordinate's row streams past. GCC/Clang
# vector extensions give the SIMD. The default build targets the baseline ISA only,
# so on x86 the loops are also compiled for AVX2/FMA (4 lanes) and AVX-512 (8 lanes,
# 16 offsets at a time) and the best one the CPU runs is picked once, at import
# (dppca_select_kernels); other compilers get plain loops. ``n_lanes`` is a
# multiple of DPPCA_LANES; every read stays within the first
# ``n_lanes + max(offsets)`` columns of each row.
cdef extern from *:
    """
    #include <Python.h>
    #include <string.h>
    #define DPPCA_LANES 8
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #  define DPPCA_X86 1
    #endif
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
        && defined(__linux__)
    #  define DPPCA_CLONES __attribute__((target_clones( \
           "arch=x86-64-v4", "arch=x86-64-v3", "default")))
    #else
    #  define DPPCA_CLONES
    #endif
    #define DPPCA_LOAD(v, x) memcpy(&(v), (x), sizeof(v))
    #define DPPCA_STORE(x, v) memcpy((x), &(v), sizeof(v))

    typedef void (*dppca_dots_fn)(const double*, const double*, Py_ssize_t,
                                  Py_ssize_t, Py_ssize_t, const Py_ssize_t*,
                                  Py_ssize_t, double*, Py_ssize_t);
    typedef void (*dppca_gather_fn)(const double*, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                                    const Py_ssize_t*, Py_ssize_t, const double*,
                                    Py_ssize_t, double*, Py_ssize_t);
    typedef Py_ssize_t (*dppca_weights_fn)(
        const double*, Py_ssize_t, Py_ssize_t, const Py_ssize_t*, Py_ssize_t,
        const double*, const double*, double, double, double, double*, Py_ssize_t,
        double*, double*);
    typedef void (*dppca_scaled_fn)(const double*, Py_ssize_t, const double*,
                                    const double*, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                                    double*, Py_ssize_t);

    /* The band loops for one vector type VEC of L lanes, G offsets at a time.

       NAME##_dots: dots[j dots_ld + i] = sum_k owners[k ld + i]
                                                partners[k ld + i + offsets[j]]
       NAME##_gather: sums[k sums_ld + i] += sum_j weights[j weights_ld + i]
                                                   partners[k ld + i + offsets[j]]
       NAME##_scaled: products[k ld + i] = sums[i] rows[k rows_ld + i]
                                           (- 2 gathered[k ld + i]) */
    #define DPPCA_BAND_LOOPS(NAME, ATTR, VEC, L, G) \
    ATTR static inline __attribute__((always_inline)) void NAME##_dots_group( \
            const double* owners, const double* partners, Py_ssize_t ld, \
            Py_ssize_t p, const Py_ssize_t* offsets, Py_ssize_t group, \
            double* dots, Py_ssize_t dots_ld) { \
        Py_ssize_t k, g; \
        VEC s[G], x, y; \
        for (g = 0; g < group; g++) { \
            VEC zero = {0}; \
            s[g] = zero; \
        } \
        for (k = 0; k < p; k++) { \
            const double* par = partners + k * ld; \
            DPPCA_LOAD(x, owners + k * ld); \
            for (g = 0; g < group; g++) { \
                DPPCA_LOAD(y, par + offsets[g]); \
                s[g] += x * y; \
            } \
        } \
        for (g = 0; g < group; g++) DPPCA_STORE(dots + g * dots_ld, s[g]); \
    } \
    ATTR static void NAME##_dots( \
            const double* owners, const double* partners, Py_ssize_t ld, \
            Py_ssize_t p, Py_ssize_t n_lanes, const Py_ssize_t* offsets, \
            Py_ssize_t n_offsets, double* dots, Py_ssize_t dots_ld) { \
        Py_ssize_t i, j; \
        for (i = 0; i < n_lanes; i += L) { \
            for (j = 0; j + G <= n_offsets; j += G) \
                NAME##_dots_group(owners + i, partners + i, ld, p, offsets + j, G, \
                                  dots + j * dots_ld + i, dots_ld); \
            for (; G > 4 && j + 4 <= n_offsets; j += 4) \
                NAME##_dots_group(owners + i, partners + i, ld, p, offsets + j, 4, \
                                  dots + j * dots_ld + i, dots_ld); \
            for (; j < n_offsets; j++) \
                NAME##_dots_group(owners + i, partners + i, ld, p, offsets + j, 1, \
                                  dots + j * dots_ld + i, dots_ld); \
        } \
    } \
    ATTR static inline __attribute__((always_inline)) void NAME##_gather_group( \
            const double* partners, Py_ssize_t ld, Py_ssize_t p, \
            const Py_ssize_t* offsets, Py_ssize_t group, const double* weights, \
            Py_ssize_t weights_ld, double* sums, Py_ssize_t sums_ld) { \
        Py_ssize_t k, g; \
        VEC w[G], y, s, part[4]; \
        for (g = 0; g < group; g++) DPPCA_LOAD(w[g], weights + g * weights_ld); \
        for (k = 0; k < p; k++) { \
            const double* par = partners + k * ld; \
            double* out = sums + k * sums_ld; \
            /* four short chains, not one long one */ \
            for (g = 0; g < 4 && g < group; g++) { \
                DPPCA_LOAD(y, par + offsets[g]); \
                part[g] = w[g] * y; \
            } \
            for (g = 4; g < group; g++) { \
                DPPCA_LOAD(y, par + offsets[g]); \
                part[g % 4] += w[g] * y; \
            } \
            DPPCA_LOAD(s, out); \
            for (g = 0; g < 4 && g < group; g++) s += part[g]; \
            DPPCA_STORE(out, s); \
        } \
    } \
    ATTR static void NAME##_gather( \
            const double* partners, Py_ssize_t ld, Py_ssize_t p, Py_ssize_t n_lanes, \
            const Py_ssize_t* offsets, Py_ssize_t n_offsets, const double* weights, \
            Py_ssize_t weights_ld, double* sums, Py_ssize_t sums_ld) { \
        Py_ssize_t i, j; \
        for (i = 0; i < n_lanes; i += L) { \
            for (j = 0; j + G <= n_offsets; j += G) \
                NAME##_gather_group(partners + i, ld, p, offsets + j, G, \
                                    weights + j * weights_ld + i, weights_ld, \
                                    sums + i, sums_ld); \
            for (; G > 4 && j + 4 <= n_offsets; j += 4) \
                NAME##_gather_group(partners + i, ld, p, offsets + j, 4, \
                                    weights + j * weights_ld + i, weights_ld, \
                                    sums + i, sums_ld); \
            for (; j < n_offsets; j++) \
                NAME##_gather_group(partners + i, ld, p, offsets + j, 1, \
                                    weights + j * weights_ld + i, weights_ld, \
                                    sums + i, sums_ld); \
        } \
    } \
    ATTR static void NAME##_scaled( \
            const double* rows, Py_ssize_t rows_ld, const double* sums, \
            const double* gathered, Py_ssize_t ld, Py_ssize_t p, \
            Py_ssize_t n_lanes, double* products, Py_ssize_t products_ld) { \
        Py_ssize_t i, k; \
        for (k = 0; k < p; k++) \
            for (i = 0; i < n_lanes; i += L) { \
                VEC c, a, r; \
                DPPCA_LOAD(c, sums + i); \
                DPPCA_LOAD(a, rows + k * rows_ld + i); \
                r = c * a; \
                if (gathered != NULL) { \
                    VEC h; \
                    DPPCA_LOAD(h, gathered + k * ld + i); \
                    r -= h + h; \
                } \
                DPPCA_STORE(products + k * products_ld + i, r); \
            } \
    }

    /* Weights of the pairs (owner i, partner i + offsets[j]), i < count, from their
       band dot products: w = 1 / max(D2, weight_floor) for
       D2 = |a|^2 + |b|^2 - 2 a.b, or 0 when D2 < relative_floor S + absolute_floor
       (S = |a|^2 + |b|^2: the pair goes to the exact path) and in the lanes past
       count. Adds the weights to owner_sums[i] and partner_sums[i + offsets[j]];
       returns the number of pairs left to the exact path. Written with masks, not
       branches or selects, so that the loop vectorises. */
    #define DPPCA_WEIGHT_LOOP(NAME, ATTR, VEC, MASK, L) \
    ATTR static Py_ssize_t NAME##_weights( \
            const double* dots, Py_ssize_t dots_ld, Py_ssize_t count, \
            const Py_ssize_t* offsets, Py_ssize_t n_offsets, \
            const double* owner_norms, const double* partner_norms, \
            double relative_floor, double absolute_floor, double weight_floor, \
            double* weights, Py_ssize_t weights_ld, double* owner_sums, \
            double* partner_sums) { \
        Py_ssize_t i, j, lane, n_exact = 0; \
        VEC relative = relative_floor - (VEC){0}, absolute = absolute_floor - (VEC){0}; \
        VEC floor = weight_floor - (VEC){0}, one = 1.0 - (VEC){0}; \
        MASK index, counts = {0}; \
        for (lane = 0; lane < L; lane++) index[lane] = lane; \
        Py_ssize_t n_lanes = (count + DPPCA_LANES - 1) / DPPCA_LANES * DPPCA_LANES; \
        for (i = 0; i < n_lanes; i += L) { \
            MASK valid = (index + (long long)i) < (long long)count; \
            VEC own, par, dot, both, squared, threshold, weight, sum; \
            MASK keep, below; \
            DPPCA_LOAD(own, owner_norms + i); \
            DPPCA_LOAD(sum, owner_sums + i); \
            for (j = 0; j < n_offsets; j++) { \
                DPPCA_LOAD(par, partner_norms + i + offsets[j]); \
                DPPCA_LOAD(dot, dots + j * dots_ld + i); \
                both = own + par; \
                squared = both - (dot + dot); \
                threshold = relative * both + absolute; \
                keep = (squared >= threshold) & valid; \
                counts += valid & ~keep; \
                below = squared < floor; \
                squared = (VEC)(((MASK)squared & ~below) | ((MASK)floor & below)); \
                weight = (VEC)((MASK)(one / squared) & keep); \
                DPPCA_STORE(weights + j * weights_ld + i, weight); \
                sum += weight; \
            } \
            DPPCA_STORE(owner_sums + i, sum); \
        } \
        for (lane = 0; lane < L; lane++) n_exact -= counts[lane]; \
        for (j = 0; j < n_offsets; j++) { \
            const double* weight_row = weights + j * weights_ld; \
            double* partner_row = partner_sums + offsets[j]; \
            for (i = 0; i < count; i++) partner_row[i] += weight_row[i]; \
        } \
        return n_exact; \
    }

    /* Plain loops (one lane) for compilers without vector extensions. */
    DPPCA_BAND_LOOPS(dppca_plain, , double, 1, 1)
    static Py_ssize_t dppca_plain_weights(
            const double* dots, Py_ssize_t dots_ld, Py_ssize_t count,
            const Py_ssize_t* offsets, Py_ssize_t n_offsets,
            const double* owner_norms, const double* partner_norms,
            double relative_floor, double absolute_floor, double weight_floor,
            double* weights, Py_ssize_t weights_ld, double* owner_sums,
            double* partner_sums) {
        Py_ssize_t i, j, n_exact = 0;
        for (j = 0; j < n_offsets; j++)
            for (i = 0; i < count; i++) {
                double both = owner_norms[i] + partner_norms[i + offsets[j]];
                double squared = both - 2.0 * dots[j * dots_ld + i], weight = 0.0;
                if (squared >= relative_floor * both + absolute_floor) {
                    weight = 1.0 / (squared < weight_floor ? weight_floor : squared);
                } else {
                    n_exact++;
                }
                weights[j * weights_ld + i] = weight;
                owner_sums[i] += weight;
                partner_sums[i + offsets[j]] += weight;
            }
        return n_exact;
    }

    #if defined(__GNUC__)
    typedef double dppca_v4 __attribute__((vector_size(32)));
    typedef long long dppca_m4 __attribute__((vector_size(32)));
    DPPCA_BAND_LOOPS(dppca_v4, , dppca_v4, 4, 4)
    DPPCA_WEIGHT_LOOP(dppca_v4, , dppca_v4, dppca_m4, 4)
    #endif
    #if defined(DPPCA_X86)
    #include <immintrin.h>
    typedef double dppca_v8 __attribute__((vector_size(64)));
    typedef long long dppca_m8 __attribute__((vector_size(64)));
    #  define DPPCA_AVX2 __attribute__((target("avx2,fma")))
    #  define DPPCA_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma")))
    DPPCA_BAND_LOOPS(dppca_avx2, DPPCA_AVX2, dppca_v4, 4, 8)
    DPPCA_WEIGHT_LOOP(dppca_avx2, DPPCA_AVX2, dppca_v4, dppca_m4, 4)
    DPPCA_BAND_LOOPS(dppca_avx512, DPPCA_AVX512, dppca_v8, 8, 16)
    DPPCA_WEIGHT_LOOP(dppca_avx512, DPPCA_AVX512, dppca_v8, dppca_m8, 8)
    /* The pairs (t, t + o), o = 1 ... h (h <= 32), of the owners t < count in one
       pass, for AVX-512: eight owners at a time in the lanes, against the partner
       columns s = t0 + 1 ... t0 + 7 + h broadcast from memory (owner lane l meets
       column s at offset s - t0 - l; the few (lane, column) cells outside the band
       are masked). Dot products, weights (as in NAME##_weights) and the gather
       g[k, t] = sum_o w a_(t + o) all stream without unaligned loads or shuffles.
       Adds the weights to weight_sums (index t, and index s for the partners), and
       lists the exact pairs as (t, o) in exact_pairs; returns their number. The
       gather goes to sums[k, t] (overwritten), or, when products is not NULL (no
       other pairs touch these owners, so their weight sums c_t are complete once
       the group's weights are in), the scaled rows c_t a_t[k] - 2 g[k, t] go to
       products[k, t] instead. Reads columns up to n_lanes + 8 * DPPCA_WINDOW_PASS. */
    #define DPPCA_WINDOW_PASS 20
    #if defined(__clang__)
    #  define DPPCA_UNROLL _Pragma("unroll")
    #else
    #  define DPPCA_UNROLL _Pragma("GCC unroll 20")
    #endif
    #define DPPCA_SPLAT8(v) ((dppca_v8){(v), (v), (v), (v), (v), (v), (v), (v)})
    /* The sums of the eight lanes of each of the eight vectors at x (x[8 j + l]):
       {sum_l x[l], sum_l x[8 + l], ...}, added pairwise. */
    DPPCA_AVX512 static inline __attribute__((always_inline)) dppca_v8
    dppca_avx512_lane_sums(const double* x) {
        __m512d v[8], a[4], b[2];
        int j;
        for (j = 0; j < 8; j++) v[j] = _mm512_loadu_pd(x + 8 * j);
        for (j = 0; j < 4; j++)
            a[j] = _mm512_add_pd(_mm512_unpacklo_pd(v[2 * j], v[2 * j + 1]),
                                 _mm512_unpackhi_pd(v[2 * j], v[2 * j + 1]));
        for (j = 0; j < 2; j++)
            b[j] = _mm512_add_pd(_mm512_shuffle_f64x2(a[2 * j], a[2 * j + 1], 0x88),
                                 _mm512_shuffle_f64x2(a[2 * j], a[2 * j + 1], 0xDD));
        return (dppca_v8)_mm512_add_pd(_mm512_shuffle_f64x2(b[0], b[1], 0x88),
                                       _mm512_shuffle_f64x2(b[0], b[1], 0xDD));
    }
    DPPCA_AVX512 static Py_ssize_t dppca_avx512_window(
            const double* rows, Py_ssize_t ld, Py_ssize_t p, Py_ssize_t count,
            Py_ssize_t h, const double* norms, double relative_floor,
            double absolute_floor, double weight_floor, double* weight_sums,
            double* sums, Py_ssize_t sums_ld, double* products, Py_ssize_t products_ld,
            double* partner_lanes, double* cells, Py_ssize_t* exact_pairs) {
        Py_ssize_t i, k, u, pass, lane, n_exact = 0;
        Py_ssize_t n_passes = (h + 7 + DPPCA_WINDOW_PASS - 1) / DPPCA_WINDOW_PASS;
        dppca_v8 relative = relative_floor - (dppca_v8){0};
        dppca_v8 absolute = absolute_floor - (dppca_v8){0};
        dppca_v8 floor = weight_floor - (dppca_v8){0}, one = 1.0 - (dppca_v8){0};
        dppca_m8 index = {0, 1, 2, 3, 4, 5, 6, 7};
        for (i = 0; i < count; i += 8) {
            dppca_v8 own, owned = {0}, complete;
            dppca_m8 live = (index + (long long)i) < (long long)count;
            DPPCA_LOAD(own, norms + i);
            for (pass = 0; pass < n_passes; pass++) {
                Py_ssize_t first = 1 + i + pass * DPPCA_WINDOW_PASS;
                dppca_v8 acc[DPPCA_WINDOW_PASS], x;
                dppca_m8 lost_cells[DPPCA_WINDOW_PASS], any_lost = {0};
                long long flag = 0;
                DPPCA_UNROLL
                for (u = 0; u < DPPCA_WINDOW_PASS; u++) acc[u] = (dppca_v8){0};
                for (k = 0; k < p; k++) {
                    const double* column = rows + k * ld + first;
                    DPPCA_LOAD(x, rows + k * ld + i);
                    DPPCA_UNROLL
                    for (u = 0; u < DPPCA_WINDOW_PASS; u++)
                        acc[u] += x * DPPCA_SPLAT8(column[u]);
                }
                DPPCA_UNROLL
                for (u = 0; u < DPPCA_WINDOW_PASS; u++) {
                    long long offset = pass * DPPCA_WINDOW_PASS + u + 1;
                    dppca_m8 band = live & (index < offset) & (index >= offset - h);
                    dppca_v8 both = own + DPPCA_SPLAT8(norms[first + u]);
                    dppca_v8 squared = both - (acc[u] + acc[u]);
                    dppca_v8 threshold = relative * both + absolute, weight;
                    dppca_m8 keep = (squared >= threshold) & band;
                    dppca_m8 below = squared < floor, lost = band & ~keep;
                    squared = (dppca_v8)(((dppca_m8)squared & ~below)
                                         | ((dppca_m8)floor & below));
                    weight = (dppca_v8)((dppca_m8)(one / squared) & keep);
                    DPPCA_STORE(cells + (pass * DPPCA_WINDOW_PASS + u) * 8, weight);
                    owned += weight;
                    {
                        /* the partner's lanes; added up once it is final */
                        dppca_v8 lanes;
                        DPPCA_LOAD(lanes, partner_lanes + (first + u) * 8);
                        lanes += weight;
                        DPPCA_STORE(partner_lanes + (first + u) * 8, lanes);
                    }
                    lost_cells[u] = lost;
                    any_lost |= lost;
                }
                /* the exact pairs, listed only when there are some: testing every
                   lane of every cell would cost as much as the weights */
                for (lane = 0; lane < 8; lane++) flag |= any_lost[lane];
                if (flag)
                    for (u = 0; u < DPPCA_WINDOW_PASS; u++)
                        for (lane = 0; lane < 8; lane++)
                            if (lost_cells[u][lane]) {
                                exact_pairs[2 * n_exact] = i + lane;
                                exact_pairs[2 * n_exact + 1] =
                                    pass * DPPCA_WINDOW_PASS + u + 1 - lane;
                                n_exact++;
                            }
            }
            {
                /* positions i ... i + 7 are partners of no later group: their
                   lanes are final */
                dppca_v8 previous, zero = {0};
                DPPCA_LOAD(previous, weight_sums + i);
                previous += owned;
                previous += dppca_avx512_lane_sums(partner_lanes + i * 8);
                DPPCA_STORE(weight_sums + i, previous);
                for (u = 0; u < 8; u++) DPPCA_STORE(partner_lanes + (i + u) * 8, zero);
            }
            DPPCA_LOAD(complete, weight_sums + i);
            for (pass = 0; pass < n_passes; pass++) {
                Py_ssize_t first = 1 + i + pass * DPPCA_WINDOW_PASS;
                dppca_v8 w[DPPCA_WINDOW_PASS], out, part[4];
                DPPCA_UNROLL
                for (u = 0; u < DPPCA_WINDOW_PASS; u++)
                    DPPCA_LOAD(w[u], cells + (pass * DPPCA_WINDOW_PASS + u) * 8);
                for (k = 0; k < p; k++) {
                    const double* column = rows + k * ld + first;
                    for (u = 0; u < 4; u++)
                        part[u] = w[u] * DPPCA_SPLAT8(column[u]);
                    DPPCA_UNROLL
                    for (u = 4; u < DPPCA_WINDOW_PASS; u++)
                        part[u % 4] += w[u] * DPPCA_SPLAT8(column[u]);
                    out = (part[0] + part[1]) + (part[2] + part[3]);
                    if (pass > 0) {
                        dppca_v8 earlier;
                        DPPCA_LOAD(earlier, sums + k * sums_ld + i);
                        out += earlier;
                    }
                    if (products != NULL && pass == n_passes - 1) {
                        dppca_v8 own_row;
                        DPPCA_LOAD(own_row, rows + k * ld + i);
                        out = complete * own_row - (out + out);
                        DPPCA_STORE(products + k * products_ld + i, out);
                    } else {
                        DPPCA_STORE(sums + k * sums_ld + i, out);
                    }
                }
            }
        }
        return n_exact;
    }
    #endif

    /* The p x p accumulation of the design path, for AVX-512, in place of a DGEMM:
       cells += A^T R over count columns, for A (p rows, stride lda) and R (p rows,
       stride ldr), both laid out coordinate by coordinate as the band loops leave
       them. Tiles of 5 rows of A by 5 rows of R keep 25 eight-lane partial sums in
       registers while the columns stream past (the rows of A from L1, R from L2;
       5 divides the usual p = 10, 50, 100); the partial sums stay eight lanes
       wide in ``cells`` (dppca_cells_to_acc adds the lanes once, at the end), so
       nothing is packed or reduced per call. Tiles past p repeat row p - 1, and
       their cells are ignored. Reads columns up to count rounded up to 8; the
       lanes past count are masked off in R. */
    #define DPPCA_TILE_A 5
    #define DPPCA_TILE_R 5
    #if defined(DPPCA_X86)
    DPPCA_AVX512 static void dppca_avx512_products(
            const double* A, Py_ssize_t lda, const double* R, Py_ssize_t ldr,
            Py_ssize_t p, Py_ssize_t count, double* cells, int fresh) {
        Py_ssize_t ti, tj, i, j, l, k;
        Py_ssize_t n_ti = (p + DPPCA_TILE_A - 1) / DPPCA_TILE_A;
        Py_ssize_t n_tj = (p + DPPCA_TILE_R - 1) / DPPCA_TILE_R;
        Py_ssize_t full = count / 8 * 8;
        dppca_m8 index = {0, 1, 2, 3, 4, 5, 6, 7};
        dppca_m8 tail = index < (long long)(count - full);
        for (ti = 0; ti < n_ti; ti++) {
            const double* a[DPPCA_TILE_A];
            for (i = 0; i < DPPCA_TILE_A; i++) {
                k = ti * DPPCA_TILE_A + i;
                a[i] = A + (k < p ? k : p - 1) * lda;
            }
            for (tj = 0; tj < n_tj; tj++) {
                const double* r[DPPCA_TILE_R];
                dppca_v8 s[DPPCA_TILE_A][DPPCA_TILE_R], x[DPPCA_TILE_A], y;
                double* cell = cells
                               + (ti * n_tj + tj) * (DPPCA_TILE_A * DPPCA_TILE_R * 8);
                for (j = 0; j < DPPCA_TILE_R; j++) {
                    k = tj * DPPCA_TILE_R + j;
                    r[j] = R + (k < p ? k : p - 1) * ldr;
                }
                DPPCA_UNROLL
                for (i = 0; i < DPPCA_TILE_A; i++)
                    DPPCA_UNROLL
                    for (j = 0; j < DPPCA_TILE_R; j++) {
                        if (fresh) s[i][j] = (dppca_v8){0};
                        else DPPCA_LOAD(s[i][j], cell + (i * DPPCA_TILE_R + j) * 8);
                    }
                for (l = 0; l < full; l += 8) {
                    DPPCA_UNROLL
                    for (i = 0; i < DPPCA_TILE_A; i++) DPPCA_LOAD(x[i], a[i] + l);
                    DPPCA_UNROLL
                    for (j = 0; j < DPPCA_TILE_R; j++) {
                        DPPCA_LOAD(y, r[j] + l);
                        DPPCA_UNROLL
                        for (i = 0; i < DPPCA_TILE_A; i++) s[i][j] += x[i] * y;
                    }
                }
                if (full < count) {
                    DPPCA_UNROLL
                    for (i = 0; i < DPPCA_TILE_A; i++) DPPCA_LOAD(x[i], a[i] + full);
                    DPPCA_UNROLL
                    for (j = 0; j < DPPCA_TILE_R; j++) {
                        DPPCA_LOAD(y, r[j] + full);
                        y = (dppca_v8)((dppca_m8)y & tail);
                        DPPCA_UNROLL
                        for (i = 0; i < DPPCA_TILE_A; i++) s[i][j] += x[i] * y;
                    }
                }
                DPPCA_UNROLL
                for (i = 0; i < DPPCA_TILE_A; i++)
                    DPPCA_UNROLL
                    for (j = 0; j < DPPCA_TILE_R; j++)
                        DPPCA_STORE(cell + (i * DPPCA_TILE_R + j) * 8, s[i][j]);
            }
        }
    }
    #endif

    /* Size of the cells of dppca_products for p, in doubles. */
    static Py_ssize_t dppca_cells_size(Py_ssize_t p) {
        return ((p + DPPCA_TILE_A - 1) / DPPCA_TILE_A)
               * ((p + DPPCA_TILE_R - 1) / DPPCA_TILE_R)
               * DPPCA_TILE_A * DPPCA_TILE_R * 8;
    }

    /* cells += A^T R (cells = A^T R when fresh; see dppca_avx512_products) when
       this CPU runs AVX-512;
       returns 0 (and does nothing) otherwise: the caller then uses DGEMM. */
    static int dppca_products(const double* A, Py_ssize_t lda, const double* R,
                              Py_ssize_t ldr, Py_ssize_t p, Py_ssize_t count,
                              double* cells, int fresh) {
    #if defined(DPPCA_X86)
        dppca_avx512_products(A, lda, R, ldr, p, count, cells, fresh);
        return 1;
    #else
        return 0;
    #endif
    }

    /* acc[k1 + k2 p] += the eight lanes of the cell (k1, k2), added pairwise
       (cells in the order dppca_avx512_products keeps them). */
    static void dppca_cells_to_acc(const double* cells, Py_ssize_t p, double* acc) {
        Py_ssize_t ti, tj, i, j, k1, k2;
        Py_ssize_t n_ti = (p + DPPCA_TILE_A - 1) / DPPCA_TILE_A;
        Py_ssize_t n_tj = (p + DPPCA_TILE_R - 1) / DPPCA_TILE_R;
        const double* c = cells;
        for (ti = 0; ti < n_ti; ti++)
            for (tj = 0; tj < n_tj; tj++)
                for (i = 0; i < DPPCA_TILE_A; i++)
                    for (j = 0; j < DPPCA_TILE_R; j++, c += 8) {
                        k1 = ti * DPPCA_TILE_A + i;
                        k2 = tj * DPPCA_TILE_R + j;
                        if (k1 < p && k2 < p)
                            acc[k1 + k2 * p] += ((c[0] + c[1]) + (c[2] + c[3]))
                                                + ((c[4] + c[5]) + (c[6] + c[7]));
                    }
    }

    /* The AVX-512 window loop when this CPU runs it (dppca_select_kernels said 8
       lanes), else nothing: the caller then uses the band loops. */
    static Py_ssize_t dppca_window(
            const double* rows, Py_ssize_t ld, Py_ssize_t p, Py_ssize_t count,
            Py_ssize_t h, const double* norms, double relative_floor,
            double absolute_floor, double weight_floor, double* weight_sums,
            double* sums, Py_ssize_t sums_ld, double* products, Py_ssize_t products_ld,
            double* partner_lanes, double* cells, Py_ssize_t* exact_pairs) {
    #if defined(DPPCA_X86)
        return dppca_avx512_window(rows, ld, p, count, h, norms, relative_floor,
                                   absolute_floor, weight_floor, weight_sums, sums,
                                   sums_ld, products, products_ld, partner_lanes, cells,
                                   exact_pairs);
    #else
        return 0;
    #endif
    }

    #if defined(__GNUC__)
    static dppca_dots_fn dppca_band_dots = dppca_v4_dots;
    static dppca_gather_fn dppca_band_gather = dppca_v4_gather;
    static dppca_weights_fn dppca_band_weights = dppca_v4_weights;
    static dppca_scaled_fn dppca_scaled_rows = dppca_v4_scaled;
    #else
    static dppca_dots_fn dppca_band_dots = dppca_plain_dots;
    static dppca_gather_fn dppca_band_gather = dppca_plain_gather;
    static dppca_weights_fn dppca_band_weights = dppca_plain_weights;
    static dppca_scaled_fn dppca_scaled_rows = dppca_plain_scaled;
    #endif

    /* Picks the widest loops this CPU (and OS) runs; returns their lane count. */
    static int dppca_select_kernels(void) {
    #if defined(DPPCA_X86)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
                && __builtin_cpu_supports("avx512vl")) {
            dppca_band_dots = dppca_avx512_dots;
            dppca_band_gather = dppca_avx512_gather;
            dppca_band_weights = dppca_avx512_weights;
            dppca_scaled_rows = dppca_avx512_scaled;
            return 8;
        }
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            dppca_band_dots = dppca_avx2_dots;
            dppca_band_gather = dppca_avx2_gather;
            dppca_band_weights = dppca_avx2_weights;
            dppca_scaled_rows = dppca_avx2_scaled;
            return 4;
        }
    #endif
    #if defined(__GNUC__)
        return 4;
    #else
        return 1;
    #endif
    }

    /* max |x| over size doubles (0 for none), one pass, without branches. */
    DPPCA_CLONES static double dppca_max_abs(const double* x, Py_ssize_t size) {
        Py_ssize_t i;
        double largest = 0.0;
    #if defined(__GNUC__)
        dppca_m4 magnitude = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL,
                              0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
        dppca_v4 best[4] = {{0}, {0}, {0}, {0}};
        for (i = 0; i + 16 <= size; i += 16) {
            int part;
            for (part = 0; part < 4; part++) {
                dppca_v4 value;
                dppca_m4 above;
                DPPCA_LOAD(value, x + i + 4 * part);
                value = (dppca_v4)((dppca_m4)value & magnitude);
                above = value > best[part];
                best[part] = (dppca_v4)(((dppca_m4)value & above)
                                        | ((dppca_m4)best[part] & ~above));
            }
        }
        for (int part = 0; part < 4; part++)
            for (int lane = 0; lane < 4; lane++)
                if (best[part][lane] > largest) largest = best[part][lane];
    #else
        i = 0;
    #endif
        for (; i < size; i++) {
            double value = x[i] < 0 ? -x[i] : x[i];
            if (value > largest) largest = value;
        }
        return largest;
    }

    /* rows[k width + l] = X[order[(first + l) mod n], k], l < count: the rows,
       transposed, as they are (dppca_finish_rows scales and centres them once the
       task's scale is known); returns the largest |x| among them. The rows are
       read in a random order, eight at a time (one cache line of each output row);
       the rows DPPCA_AHEAD tiles ahead are prefetched, every cache line of each. */
    #define DPPCA_AHEAD 3
    DPPCA_CLONES static double dppca_local_rows(
            const double* X, const Py_ssize_t* order, Py_ssize_t n, Py_ssize_t p,
            Py_ssize_t first, Py_ssize_t count, Py_ssize_t width, double* rows) {
        Py_ssize_t l, k, q, tile, position = first % n, ahead, line;
        const double* source[8];
        double largest[8] = {0, 0, 0, 0, 0, 0, 0, 0}, result = 0.0;
        for (l = 0; l < count; l += 8) {
            tile = count - l < 8 ? count - l : 8;
            for (q = 0; q < tile; q++) {
                source[q] = X + order[position] * p;
                position = (position + 1 == n) ? 0 : position + 1;
            }
    #if defined(__GNUC__)
            ahead = (position + 8 * (DPPCA_AHEAD - 1)) % n;
            for (q = 0; q < 8; q++) {
                const double* row = X + order[ahead] * p;
                for (line = 0; line < p; line += 8) __builtin_prefetch(row + line, 0, 1);
                __builtin_prefetch(row + p - 1, 0, 1);
                ahead = (ahead + 1 == n) ? 0 : ahead + 1;
            }
    #endif
            if (tile == 8) {
                for (k = 0; k < p; k++) {
                    double* out = rows + k * width + l;
                    for (q = 0; q < 8; q++) {
                        double value = source[q][k];
                        double magnitude = value < 0 ? -value : value;
                        out[q] = value;
                        largest[q] = magnitude > largest[q] ? magnitude : largest[q];
                    }
                }
            } else {
                for (k = 0; k < p; k++)
                    for (q = 0; q < tile; q++) {
                        double value = source[q][k];
                        double magnitude = value < 0 ? -value : value;
                        rows[k * width + l + q] = value;
                        largest[q] = magnitude > largest[q] ? magnitude : largest[q];
                    }
            }
        }
        for (q = 0; q < 8; q++) result = largest[q] > result ? largest[q] : result;
        return result;
    }

    /* rows[k width + l] = rows[k width + l] high low - centre[k] (centre already
       scaled) and norms[l] = sum_k rows[k width + l]^2, l < count. */
    DPPCA_CLONES static void dppca_finish_rows(
            double* rows, Py_ssize_t width, Py_ssize_t count, Py_ssize_t p,
            double high, double low, const double* centre, double* norms) {
        Py_ssize_t l, k;
        for (l = 0; l < count; l++) norms[l] = 0.0;
        for (k = 0; k < p; k++) {
            double* row = rows + k * width;
            double shift = centre[k];
            for (l = 0; l < count; l++) {
                double value = row[l] * high * low - shift;
                row[l] = value;
                norms[l] += value * value;
            }
        }
    }
    """
    int DPPCA_LANES
    double dppca_max_abs(const double* x, Py_ssize_t size) noexcept nogil
    int dppca_select_kernels() noexcept nogil
    int DPPCA_WINDOW_PASS
    Py_ssize_t dppca_cells_size(Py_ssize_t p) noexcept nogil
    int dppca_products(const double* A, Py_ssize_t lda, const double* R,
                       Py_ssize_t ldr, Py_ssize_t p, Py_ssize_t count,
                       double* cells, int fresh) noexcept nogil
    void dppca_cells_to_acc(const double* cells, Py_ssize_t p,
                            double* acc) noexcept nogil
    Py_ssize_t dppca_window(const double* rows, Py_ssize_t ld, Py_ssize_t p,
                            Py_ssize_t count, Py_ssize_t h, const double* norms,
                            double relative_floor, double absolute_floor,
                            double weight_floor, double* weight_sums, double* sums,
                            Py_ssize_t sums_ld, double* products,
                            Py_ssize_t products_ld, double* partner_lanes,
                            double* cells, Py_ssize_t* exact_pairs) noexcept nogil
    void dppca_band_dots(const double* owners, const double* partners,
                         Py_ssize_t ld, Py_ssize_t p, Py_ssize_t n_lanes,
                         const Py_ssize_t* offsets, Py_ssize_t n_offsets,
                         double* dots, Py_ssize_t dots_ld) noexcept nogil
    void dppca_band_gather(const double* partners, Py_ssize_t ld, Py_ssize_t p,
                           Py_ssize_t n_lanes, const Py_ssize_t* offsets,
                           Py_ssize_t n_offsets, const double* weights,
                           Py_ssize_t weights_ld, double* sums,
                           Py_ssize_t sums_ld) noexcept nogil
    Py_ssize_t dppca_band_weights(const double* dots, Py_ssize_t dots_ld,
                                  Py_ssize_t count, const Py_ssize_t* offsets,
                                  Py_ssize_t n_offsets, const double* owner_norms,
                                  const double* partner_norms, double relative_floor,
                                  double absolute_floor, double weight_floor,
                                  double* weights, Py_ssize_t weights_ld,
                                  double* owner_sums,
                                  double* partner_sums) noexcept nogil
    void dppca_scaled_rows(const double* rows, Py_ssize_t rows_ld, const double* sums,
                           const double* gathered, Py_ssize_t ld, Py_ssize_t p,
                           Py_ssize_t n_lanes, double* products,
                           Py_ssize_t products_ld) noexcept nogil
    double dppca_local_rows(const double* X, const Py_ssize_t* order, Py_ssize_t n,
                          Py_ssize_t p, Py_ssize_t first, Py_ssize_t count,
                          Py_ssize_t width, double* rows) noexcept nogil
    void dppca_finish_rows(double* rows, Py_ssize_t width, Py_ssize_t count,
                           Py_ssize_t p, double high, double low,
                           const double* centre, double* norms) noexcept nogil

# The widest band loops this CPU runs (8 lanes: AVX-512, 4: AVX2 or baseline).
KERNEL_LANES = dppca_select_kernels()

# A pair leaves the Gram sum when its Gram squared distance D2 = |a|^2 + |b|^2 - 2 a.b
# falls below GRAM_RELATIVE_FLOOR * S + GRAM_ABSOLUTE_FLOOR, S = |a|^2 + |b|^2 (rows
# centred, after the power-of-two prescaling that puts max |x| in [0.5, 1)). Rounding
# in the Gram product, the norms and the accumulated Gram-form terms is a few ulps
# of S per pair, so a kept pair's term carries a relative error of a few times
# eps * S / D2 <= 16 eps. The absolute floor sends pairs whose S nears the subnormal
# range (where products lose relative accuracy) to the exact path: a kept pair has
# S >= D2 / 2 >= 2**-901, far above it.
GRAM_RELATIVE_FLOOR = 0.0625
GRAM_ABSOLUTE_FLOOR = 2.0 ** -900

# The exact path uses |d|^2 as computed when it lies in [2**-960, 2**1000]: no
# overflow, and squares that underflow are below 2**-75 of it. Otherwise (or when
# the difference overflowed) d is first rescaled by an exact power of two near its
# largest coordinate.
cdef double SAFE_SQUARED_LOW = 2.0 ** -960
cdef double SAFE_SQUARED_HIGH = 2.0 ** 1000

# Unit vectors buffered before each DSYRK: about 256 KiB.
UNIT_BUFFER_BYTES = 262144

cdef char UPPER = b'U'
cdef char NO_TRANS = b'N'
cdef char TRANS = b'T'
cdef double ONE = 1.0
cdef double ZERO = 0.0


cdef struct ExactPairs:
    # Pairs computed from their exact difference: (shrunk) unit vectors wait in
    # ``units`` (``filled`` of ``capacity`` rows of p) until a DSYRK adds them to ``acc``.
    double* units
    Py_ssize_t filled
    Py_ssize_t capacity
    Py_ssize_t n_units      # units buffered so far (0: acc is still all zeros)
    double* acc
    double* diff
    # Coincident pairs seen, and the lexicographically first one in the caller's
    # original row numbering (first_i < first_j; -1 when none).
    Py_ssize_t n_coincident
    Py_ssize_t first_i
    Py_ssize_t first_j
    # The floor, floor_mantissa * 2**floor_exponent in the units of the original rows
    # (floor_mantissa == 0: no floor).
    double floor_mantissa
    int floor_exponent


cdef struct Workspace:
    # Buffers of the Gram path, sized for the largest block (b rows). A, B and
    # weighted have row stride p + 1 (see _centre_block).
    double* A
    double* B
    double* gram            # b x b: A B^T, then the weights W
    double* weighted        # b x (p + 1): sum over J of W_IJ [B_J 1]
    double* norms_a
    double* norms_b
    double* column_sums     # W^T 1 for the current block pair
    double* diagonal_sums   # weights of the A^T diag(.) A term
    double* scratch         # b x (p + 1): rows scaled by sqrt(weight) for DSYRK
    double* cross           # p x p
    double* acc             # p x p, upper triangle


# ----------------------------------------------------------------- exact pair path
cdef double _rescaled_difference(const double* x_i, const double* x_j, Py_ssize_t p,
                                 double* diff, int* scale_exponent) noexcept nogil:
    """Write (x_i - x_j) * 2**-e into diff, 2**e near its largest coordinate.

    Returns |diff|^2 (in [0.25, p]), or 0 when the rows coincide, and stores e in
    scale_exponent. Finite inputs near +-DBL_MAX can overflow the subtraction; the
    difference is then taken at half scale, exact at those magnitudes (and e counts
    the halving). Power-of-two scaling leaves the unit vector unchanged.
    """
    cdef Py_ssize_t k
    cdef int exponent, halved = 0
    cdef double largest = 0.0, squared_norm = 0.0
    for k in range(p):
        diff[k] = x_i[k] - x_j[k]
        largest = max(largest, fabs(diff[k]))
    if largest > DBL_MAX:
        halved = 1
        largest = 0.0
        for k in range(p):
            diff[k] = 0.5 * x_i[k] - 0.5 * x_j[k]
            largest = max(largest, fabs(diff[k]))
    scale_exponent[0] = 0
    if largest == 0.0:
        return 0.0
    frexp(largest, &exponent)
    for k in range(p):
        diff[k] = ldexp(diff[k], -exponent)
        squared_norm += diff[k] * diff[k]
    scale_exponent[0] = exponent + halved
    return squared_norm


cdef double _exact_squared_norm(const double* x_i, const double* x_j, Py_ssize_t p,
                                double* diff, int* scale_exponent) noexcept nogil:
    """Write (x_i - x_j) * 2**-e into diff and e into scale_exponent; return |diff|^2
    (0: the rows coincide).

    The common case costs one pass (e = 0); only a difference whose squared norm
    leaves the safe range (or overflows) is rescaled.
    """
    cdef Py_ssize_t k
    cdef double squared_norm = 0.0
    for k in range(p):
        diff[k] = x_i[k] - x_j[k]
        squared_norm += diff[k] * diff[k]
    # Written so that NaN (from an overflowed difference) fails the test too.
    if SAFE_SQUARED_LOW <= squared_norm <= SAFE_SQUARED_HIGH:
        scale_exponent[0] = 0
        return squared_norm
    return _rescaled_difference(x_i, x_j, p, diff, scale_exponent)


cdef void _flush_units(ExactPairs* exact, Py_ssize_t p) noexcept nogil:
    """acc += U^T U (upper) for the buffered unit rows U, via DSYRK."""
    cdef int n = <int>p, k_dim = <int>exact.filled, ld = <int>p
    if exact.filled > 0:
        dsyrk(&UPPER, &NO_TRANS, &n, &k_dim, &ONE, exact.units, &ld, &ONE, exact.acc,
              &ld)
    exact.filled = 0


cdef void _add_exact_pair(ExactPairs* exact, const double* x_i, const double* x_j,
                          Py_ssize_t p, Py_ssize_t row_i,
                          Py_ssize_t row_j) noexcept nogil:
    """Buffer the vector v of x_i - x_j with v v^T = d d^T / max(|d|^2, floor), or note
    a coincident pair (rows numbered row_i and row_j in the caller's original
    numbering).

    v = u sqrt(min(1, |d|^2 / floor)) for the unit vector u. With diff = d 2**-e,
    |d|^2 / floor = (|diff|^2 / mantissa) 2**(2 e - exponent): ldexp keeps that ratio
    right (or saturates it to 0 or inf, where the true ratio is that far) whatever the
    magnitudes of d and of the floor.
    """
    cdef Py_ssize_t k
    cdef int scale_exponent
    cdef double squared_norm = _exact_squared_norm(x_i, x_j, p, exact.diff,
                                                   &scale_exponent)
    cdef double inverse_norm, ratio
    cdef double* unit
    cdef Py_ssize_t low, high
    if squared_norm == 0.0:
        low = min(row_i, row_j)
        high = max(row_i, row_j)
        exact.n_coincident += 1
        if (exact.first_i < 0 or low < exact.first_i
                or (low == exact.first_i and high < exact.first_j)):
            exact.first_i = low
            exact.first_j = high
        return
    inverse_norm = 1.0 / sqrt(squared_norm)
    if exact.floor_mantissa > 0.0:
        ratio = ldexp(squared_norm / exact.floor_mantissa,
                      2 * scale_exponent - exact.floor_exponent)
        if ratio < 1.0:
            inverse_norm = inverse_norm * sqrt(ratio)
    unit = exact.units + exact.filled * p
    for k in range(p):
        unit[k] = exact.diff[k] * inverse_norm
    exact.filled += 1
    exact.n_units += 1
    if exact.filled == exact.capacity:
        _flush_units(exact, p)


# --------------------------------------------------------------------- Gram path
cdef void _centre_block(const double* rows, Py_ssize_t n_rows, Py_ssize_t p,
                        const double* centre, double* out,
                        double* squared_norms) noexcept nogil:
    """out[i, :p] = rows[i] - centre, out[i, p] = 1, squared_norms[i] = |out[i, :p]|^2.

    ``out`` has row stride p + 1: the trailing column of ones makes the DGEMM that
    forms W B also return the row sums W 1.
    """
    cdef Py_ssize_t i, k
    cdef double value, total
    for i in range(n_rows):
        total = 0.0
        for k in range(p):
            value = rows[i * p + k] - centre[k]
            out[i * (p + 1) + k] = value
            total = total + value * value
        out[i * (p + 1) + p] = 1.0
        squared_norms[i] = total


cdef inline uint64_t _store_weight(double* gram_row, double* column_sums,
                                   Py_ssize_t j, double squared_distance,
                                   double margin) noexcept nogil:
    """gram_row[j] = 1 / squared_distance, or 0 when margin < 0 (returns 1 then)."""
    cdef uint64_t margin_bits, weight_bits, goes_exact
    cdef double weight = 1.0 / squared_distance
    memcpy(&margin_bits, &margin, sizeof(double))
    memcpy(&weight_bits, &weight, sizeof(double))
    goes_exact = margin_bits >> 63
    weight_bits = weight_bits & (goes_exact - 1)
    memcpy(&weight, &weight_bits, sizeof(double))
    gram_row[j] = weight
    column_sums[j] += weight
    return goes_exact


cdef Py_ssize_t _weight_row(double* gram_row, double norm_i,
                            const double* norms_j, Py_ssize_t start,
                            Py_ssize_t stop, double* column_sums,
                            double relative_floor, double absolute_floor,
                            double weight_floor) noexcept nogil:
    """Turn one row of A B^T into weights w = 1 / max(D2, weight_floor) in place;
    return #exact pairs.

    A pair is kept when D2 >= relative_floor * S + absolute_floor; any other pair
    gets w = 0 here and is left to the exact path (a kept pair's w is never 0, as
    D2 and weight_floor are at most 4 p, so the zeros mark those pairs).

    Why the bit operations: under GCC's default -ftrapping-math a floating-point
    comparison or select keeps this, the hottest scalar loop, from being vectorised.
    The sign bits of ``margin`` and ``below`` give the same decisions, and masking
    bits with them leaves the loop free of branches and comparisons. The loop is
    written twice, with and without the floor: a test inside it (even one the
    compiler unswitches) stops the vectorisation, and the floor's bit operations
    would cost spherical_kendall (no floor) 10-15% of this loop.
    """
    cdef Py_ssize_t j
    cdef uint64_t n_exact = 0, below_bits, distance_bits, floor_bits, floored
    cdef double both, squared_distance, margin, below
    if weight_floor > 0.0:
        memcpy(&floor_bits, &weight_floor, sizeof(double))
        for j in range(start, stop):
            both = norm_i + norms_j[j]
            squared_distance = both - 2.0 * gram_row[j]
            margin = squared_distance - (relative_floor * both + absolute_floor)
            # max(D2, weight_floor) by bits: floored is all ones when D2 < weight_floor
            below = squared_distance - weight_floor
            memcpy(&below_bits, &below, sizeof(double))
            memcpy(&distance_bits, &squared_distance, sizeof(double))
            floored = 0 - (below_bits >> 63)
            distance_bits = (distance_bits & ~floored) | (floor_bits & floored)
            memcpy(&squared_distance, &distance_bits, sizeof(double))
            n_exact += _store_weight(gram_row, column_sums, j, squared_distance, margin)
    else:
        for j in range(start, stop):
            both = norm_i + norms_j[j]
            squared_distance = both - 2.0 * gram_row[j]
            margin = squared_distance - (relative_floor * both + absolute_floor)
            n_exact += _store_weight(gram_row, column_sums, j, squared_distance, margin)
    return <Py_ssize_t>n_exact


cdef void _add_weighted_squares(const double* rows, Py_ssize_t n_rows, Py_ssize_t p,
                                const double* weights, double* scratch,
                                double* acc) noexcept nogil:
    """acc += sum_i weights[i] rows[i, :p] rows[i, :p]^T (upper), via DSYRK.

    ``rows`` and ``scratch`` have row stride p + 1; the weights are >= 0.
    """
    cdef Py_ssize_t i, k
    cdef double root
    cdef int n = <int>p, k_dim = <int>n_rows, ld = <int>(p + 1), ldc = <int>p
    for i in range(n_rows):
        root = sqrt(weights[i])
        for k in range(p):
            scratch[i * (p + 1) + k] = root * rows[i * (p + 1) + k]
    dsyrk(&UPPER, &NO_TRANS, &n, &k_dim, &ONE, scratch, &ld, &ONE, acc, &ldc)


cdef void _subtract_cross_terms(const double* A, const double* weighted,
                                Py_ssize_t n_rows, Py_ssize_t p, double* cross,
                                double* acc) noexcept nogil:
    """acc -= M + M^T (upper) for M = A^T T, T = weighted[:, :p] (stride p + 1)."""
    cdef Py_ssize_t k, l
    cdef int n = <int>p, k_dim = <int>n_rows, ld = <int>(p + 1), ldc = <int>p
    # cross (column-major) = T^T A = M^T; only M + M^T is needed.
    dgemm(&NO_TRANS, &TRANS, &n, &n, &k_dim, &ONE, <double*>weighted, &ld,
          <double*>A, &ld, &ZERO, cross, &ldc)
    for l in range(p):
        for k in range(l + 1):
            acc[k + l * p] -= cross[k + l * p] + cross[l + k * p]


cdef void _block_pair(Workspace* work, ExactPairs* exact, const double* X,
                      const Py_ssize_t* order, Py_ssize_t start_i, Py_ssize_t size_i,
                      Py_ssize_t start_j, Py_ssize_t size_j, bint diagonal,
                      Py_ssize_t p, double relative_floor,
                      double absolute_floor, double weight_floor) noexcept nogil:
    """Weights of the block pair (I, J), with A = work.A and B = work.B centred alike.

    Adds W [B 1] to work.weighted, B^T diag(W^T 1) B to work.acc (or, on the diagonal
    where B = A, W^T 1 to work.diagonal_sums), and sends unreliable pairs to the
    exact path, which reads the original rows X.
    """
    cdef const double* B = work.A if diagonal else work.B
    cdef const double* norms_j = work.norms_a if diagonal else work.norms_b
    cdef double* gram_row
    cdef Py_ssize_t i, j, first_col
    cdef int rows_i = <int>size_i, rows_j = <int>size_j, ld = <int>(p + 1)
    cdef int p_dim = <int>p, p_plus = <int>(p + 1)

    # gram (row-major size_i x size_j) = A B^T
    dgemm(&TRANS, &NO_TRANS, &rows_j, &rows_i, &p_dim, &ONE, <double*>B, &ld,
          work.A, &ld, &ZERO, work.gram, &rows_j)
    memset(work.column_sums, 0, size_j * sizeof(double))
    for i in range(size_i):
        gram_row = work.gram + i * size_j
        # On the diagonal only the pairs i < j count: W is strictly upper triangular.
        first_col = i + 1 if diagonal else 0
        memset(gram_row, 0, first_col * sizeof(double))
        if _weight_row(gram_row, work.norms_a[i], norms_j, first_col, size_j,
                       work.column_sums, relative_floor, absolute_floor,
                       weight_floor):
            for j in range(first_col, size_j):
                if gram_row[j] == 0.0:
                    _add_exact_pair(exact, X + (start_i + i) * p,
                                    X + (start_j + j) * p, p,
                                    order[start_i + i], order[start_j + j])
    # weighted (row-major size_i x (p + 1)) += W [B 1]
    dgemm(&NO_TRANS, &NO_TRANS, &p_plus, &rows_i, &rows_j, &ONE, <double*>B, &ld,
          work.gram, &rows_j, &ONE, work.weighted, &ld)
    if diagonal:
        for i in range(size_i):
            work.diagonal_sums[i] += work.column_sums[i]
    else:
        _add_weighted_squares(work.B, size_j, p, work.column_sums, work.scratch,
                              work.acc)


cdef void _block_run(Workspace* work, ExactPairs* exact, const double* X,
                     const double* X_scaled, const double* centre,
                     const Py_ssize_t* block_starts, const Py_ssize_t* order,
                     Py_ssize_t block_i, Py_ssize_t first_j, Py_ssize_t stop_j,
                     Py_ssize_t p, double relative_floor,
                     double absolute_floor, double weight_floor) noexcept nogil:
    """Add the pairs of the block pairs (block_i, J), first_j <= J < stop_j.

    Every block is centred on ``centre`` (that of block_i), so A = X_I - c is built
    once and W_IJ [B_J 1] accumulates over J; the run then adds
    A^T diag(W 1 + diagonal sums) A - M - M^T with M = A^T sum_J W_IJ B_J.
    """
    cdef Py_ssize_t start_i = block_starts[block_i]
    cdef Py_ssize_t size_i = block_starts[block_i + 1] - start_i
    cdef Py_ssize_t block_j, start_j, i

    _centre_block(X_scaled + start_i * p, size_i, p, centre, work.A, work.norms_a)
    memset(work.weighted, 0, size_i * (p + 1) * sizeof(double))
    memset(work.diagonal_sums, 0, size_i * sizeof(double))
    for block_j in range(first_j, stop_j):
        start_j = block_starts[block_j]
        if block_j != block_i:
            _centre_block(X_scaled + start_j * p, block_starts[block_j + 1] - start_j,
                          p, centre, work.B, work.norms_b)
        _block_pair(work, exact, X, order, start_i, size_i, start_j,
                    block_starts[block_j + 1] - start_j, block_j == block_i, p,
                    relative_floor, absolute_floor, weight_floor)
    for i in range(size_i):
        work.diagonal_sums[i] += work.weighted[i * (p + 1) + p]
    _add_weighted_squares(work.A, size_i, p, work.diagonal_sums, work.scratch,
                          work.acc)
    _subtract_cross_terms(work.A, work.weighted, size_i, p, work.cross, work.acc)


# ------------------------------------------------------------------ entry points
cdef ExactPairs _exact_pairs(double[::1] units, double[::1] acc, double[::1] diff,
                             Py_ssize_t p, double floor_mantissa, int floor_exponent):
    cdef ExactPairs exact
    exact.units = &units[0]
    exact.filled = 0
    exact.n_units = 0
    exact.capacity = units.shape[0] // p
    exact.acc = &acc[0]
    exact.diff = &diff[0]
    exact.n_coincident = 0
    exact.first_i = -1
    exact.first_j = -1
    exact.floor_mantissa = floor_mantissa
    exact.floor_exponent = floor_exponent
    return exact


def max_abs(const double[:, ::1] X):
    """Largest ``|x|`` over a C-contiguous float64 array (0.0 when it is empty), in
    one pass; NaN is not looked for (callers pass finite rows)."""
    cdef double largest = 0.0
    if X.shape[0] and X.shape[1]:
        with nogil:
            largest = dppca_max_abs(&X[0, 0], X.shape[0] * X.shape[1])
    return largest


def _unit_buffer(p):
    return np.empty(max(16, UNIT_BUFFER_BYTES // (8 * p)) * p)


def _symmetric_from_upper(acc, p):
    """Full symmetric ``(p, p)`` array from a column-major upper-triangle buffer."""
    upper = np.asarray(acc).reshape(p, p).T  # upper[k, l] = acc[k + l * p]
    return np.triu(upper) + np.triu(upper, 1).T


def all_pairs_partial(const double[:, ::1] X, const double[:, ::1] X_scaled,
                      const double[:, ::1] centres, const Py_ssize_t[::1] block_starts,
                      const Py_ssize_t[:, ::1] runs, const Py_ssize_t[::1] order,
                      double floor_mantissa=0.0, int floor_exponent=0,
                      double scaled_floor=0.0):
    """Unnormalised sum of d d^T / max(|d|^2, floor) over the pairs of some block pairs.

    Parameters
    ----------
    X : ndarray of shape (n, p), float64, C-contiguous
        The rows, in block order, at their original scale (for exact differences).
    X_scaled : ndarray of shape (n, p)
        ``X`` times the power of two that puts ``max |X|`` in [0.5, 1) (Gram work).
    centres : ndarray of shape (n_blocks, p)
        A centre per block, on the scale of ``X_scaled``.
    block_starts : ndarray of shape (n_blocks + 1,), intp
        Block ``b`` is rows ``block_starts[b]:block_starts[b + 1]``.
    runs : ndarray of shape (n_runs, 3), intp
        Each row ``(I, J0, J1)`` asks for the block pairs ``(I, J)``,
        ``I <= J0 <= J < J1``; the pairs of ``(I, I)`` are those with ``i < j``.
    order : ndarray of shape (n,), intp
        Original row number of each row of ``X`` (to report coincident pairs).
    floor_mantissa, floor_exponent : float, int
        The floor is ``floor_mantissa * 2**floor_exponent`` in the units of ``X``;
        ``floor_mantissa`` is 0 (no floor) or in [0.5, 1).
    scaled_floor : float
        The same floor in the units of ``X_scaled``, at most ``4 p`` (the caller
        clamps it: every squared distance of ``X_scaled`` is below ``4 p``).

    Returns
    -------
    total : ndarray of shape (p, p)
        Sum of ``d d^T / max(|d|^2, floor)`` over the non-coincident pairs,
        ``d = x_i - x_j``.
    n_coincident : int
        Number of pairs with ``x_i == x_j``.
    first_coincident : tuple of two int
        The lexicographically first coincident pair, original numbering, or
        ``(-1, -1)``.
    """
    cdef Py_ssize_t p = X.shape[1], q
    cdef Py_ssize_t b = int(np.max(np.diff(block_starts))) if runs.shape[0] else 0
    cdef double relative_floor = GRAM_RELATIVE_FLOOR
    cdef double absolute_floor = GRAM_ABSOLUTE_FLOOR
    if not 0.0 <= scaled_floor <= 4.0 * p:
        raise ValueError(f"scaled_floor must lie in [0, 4 p], got {scaled_floor!r}.")
    if runs.shape[0] == 0:
        return np.zeros((p, p)), 0, (-1, -1)

    # Buffers, allocated here with the GIL held and kept alive by these names.
    cdef double[::1] A = np.empty(b * (p + 1))
    cdef double[::1] B = np.empty(b * (p + 1))
    cdef double[::1] gram = np.empty(b * b)
    cdef double[::1] weighted = np.empty(b * (p + 1))
    cdef double[::1] norms = np.empty(4 * b)
    cdef double[::1] scratch = np.empty(b * (p + 1))
    cdef double[::1] cross = np.empty(p * p)
    cdef double[::1] acc = np.zeros(p * p)
    cdef double[::1] acc_exact = np.zeros(p * p)
    cdef double[::1] diff = np.empty(p)
    cdef double[::1] units = _unit_buffer(p)
    cdef ExactPairs exact = _exact_pairs(units, acc_exact, diff, p, floor_mantissa,
                                         floor_exponent)
    cdef Workspace work
    work.A = &A[0]
    work.B = &B[0]
    work.gram = &gram[0]
    work.weighted = &weighted[0]
    work.norms_a = &norms[0]
    work.norms_b = &norms[b]
    work.column_sums = &norms[2 * b]
    work.diagonal_sums = &norms[3 * b]
    work.scratch = &scratch[0]
    work.cross = &cross[0]
    work.acc = &acc[0]

    with nogil:
        for q in range(runs.shape[0]):
            _block_run(&work, &exact, &X[0, 0], &X_scaled[0, 0],
                       &centres[runs[q, 0], 0], &block_starts[0], &order[0],
                       runs[q, 0], runs[q, 1], runs[q, 2], p, relative_floor,
                       absolute_floor, scaled_floor)
        _flush_units(&exact, p)
    total = _symmetric_from_upper(acc, p) + _symmetric_from_upper(acc_exact, p)
    return total, exact.n_coincident, (exact.first_i, exact.first_j)




# --------------------------------------------------------------- pair-design path
cdef enum:
    # Ring positions per block of design_partial: its p x block buffers stay in L2,
    # and the block is the inner dimension of one DGEMM.
    DESIGN_BLOCK = 128
    # Offsets whose band dot products and weights are held at once.
    DESIGN_OFFSET_CHUNK = 32
    # Extra columns of the local copies, for the lanes past a block's last position
    # (at least DPPCA_LANES) and the window loop's columns past the band (its
    # passes of DPPCA_WINDOW_PASS = 20 columns).
    DESIGN_LANE_PAD = 8 + 2 * 20
    # Row stride of the block buffers: a whole number of 1 KiB would put their rows
    # in a few cache sets only.
    BUFFER_LD = DESIGN_BLOCK + 8
    # Columns of scaled rows queued before one accumulation (fewer, longer calls:
    # the accumulation's fixed cost per call is that of about 30 columns).
    PRODUCT_COLUMNS = 4 * DESIGN_BLOCK
    PRODUCTS_LD = PRODUCT_COLUMNS + 8


cdef struct DesignBlock:
    # Local, centred, prescaled copies of the rows the task reads, transposed:
    # coordinate k of local position l at rows[k * width + l].
    double* rows            # positions start ... start + width - 1
    double* half_rows       # positions start + half ... (antipodal partners)
    double* norms           # |row|^2 at each local position
    double* half_norms
    Py_ssize_t width
    Py_ssize_t p
    double* weight_sums     # sum of the kept weights at each local position
    double* half_sums       # ... of the antipodal partners of the current block
    double* dots            # chunk x block: band dot products
    double* weights         # chunk x block: kept weights (0: exact path or padding)
    double* gathered        # p x block: sum_o w a_(t + o) for the block's owners
    double* products        # p x PRODUCT_COLUMNS: the scaled rows queued for acc
    const double* queued_rows   # the local rows they multiply (stride width)
    Py_ssize_t n_queued
    double* acc             # p x p column-major: sum_t a_t r_t^T
    # With AVX-512 the products go to eight-lane cells instead (dppca_products),
    # added into acc at the end of the task.
    bint hand
    double* cells_acc
    bint cells_fresh        # no accumulation yet: the first one writes the cells
    # The window loop (offsets 1 ... h, AVX-512): its weight cells and exact pairs.
    bint window
    double* cells
    # Eight lanes of weight per local position, from the window loop's pairs where
    # the position is the partner (added into weight_sums once final).
    double* partner_lanes
    Py_ssize_t* exact_pairs


cdef inline Py_ssize_t _lanes(Py_ssize_t count) noexcept nogil:
    return (count + DPPCA_LANES - 1) // DPPCA_LANES * DPPCA_LANES


cdef void _band_weights(DesignBlock* block, ExactPairs* exact, const double* X,
                        const Py_ssize_t* order, Py_ssize_t n, Py_ssize_t start,
                        Py_ssize_t t0, Py_ssize_t count,
                        const Py_ssize_t* steps, Py_ssize_t n_steps,
                        const double* partner_norms, double* partner_sums,
                        Py_ssize_t partner_shift, double relative_floor,
                        double absolute_floor, double weight_floor) noexcept nogil:
    """Weights of the pairs (t, t + steps[j]) of the block's ``count`` owners from
    their band dot products; pairs whose Gram distance is unreliable go to the exact
    path (weight 0).

    The partner of local owner l under step s has local index l + s in
    ``partner_norms`` / ``partner_sums`` and ring position t + s + partner_shift.
    A kept pair's weight is never 0 (its squared distance and the floor are at most
    4 p), so the zeros among the first ``count`` lanes are the exact pairs.
    """
    cdef Py_ssize_t j, i, local = t0 - start, ring_partner
    cdef Py_ssize_t b = BUFFER_LD, p = block.p
    cdef double* weights
    if dppca_band_weights(block.dots, b, count, steps, n_steps, block.norms + local,
                          partner_norms + local, relative_floor, absolute_floor,
                          weight_floor, block.weights, b, block.weight_sums + local,
                          partner_sums + local) == 0:
        return
    for j in range(n_steps):
        weights = block.weights + j * b
        for i in range(count):
            if weights[i] == 0.0:
                ring_partner = order[(t0 + i + steps[j] + partner_shift) % n]
                _add_exact_pair(exact, X + order[t0 + i] * p, X + ring_partner * p,
                                p, order[t0 + i], ring_partner)


cdef void _flush_products(DesignBlock* block) noexcept nogil:
    """acc += A^T R for the queued local rows A (stride block.width) and their scaled
    rows R = block.products (stride PRODUCTS_LD), via DGEMM (or into the cells, with
    AVX-512); empties the queue."""
    cdef int p = <int>block.p, k_dim = <int>block.n_queued, lda = <int>block.width
    cdef int ldb = <int>PRODUCTS_LD
    if block.n_queued > 0 and block.hand:
        dppca_products(block.queued_rows, block.width, block.products, PRODUCTS_LD,
                       block.p, block.n_queued, block.cells_acc, block.cells_fresh)
        block.cells_fresh = False
    elif block.n_queued > 0:
        dgemm(&TRANS, &NO_TRANS, &p, &p, &k_dim, &ONE, <double*>block.queued_rows,
              &lda, block.products, &ldb, &ONE, block.acc, &p)
    block.n_queued = 0


cdef void _queue_products(DesignBlock* block, const double* rows, const double* sums,
                          Py_ssize_t count, bint minus_gathered) noexcept nogil:
    """Queue the local rows ``rows[:, i]``, i < count, with their scaled rows
    ``sums[i] rows[k, i] (- 2 gathered[k, i])``, for acc += A^T R. The queue holds
    consecutive local rows only (whole lanes of them, up to PRODUCT_COLUMNS); it is
    flushed first when these do not extend it."""
    if count <= 0:
        return
    dppca_scaled_rows(rows, block.width, sums,
                      block.gathered if minus_gathered else NULL, BUFFER_LD, block.p,
                      _lanes(count), _queue_slot(block, rows, count), PRODUCTS_LD)
    block.n_queued += count


cdef double* _queue_slot(DesignBlock* block, const double* rows,
                         Py_ssize_t count) noexcept nogil:
    """Where the scaled rows of ``rows[:, i]``, i < count, go in the queue (the
    caller writes them and adds count to n_queued), flushing it first if they do
    not extend it."""
    if block.n_queued and (rows != block.queued_rows + block.n_queued
                           or block.n_queued % DPPCA_LANES
                           or block.n_queued + count > PRODUCT_COLUMNS):
        _flush_products(block)
    if block.n_queued == 0:
        block.queued_rows = rows
    return block.products + block.n_queued


cdef void _design_block(DesignBlock* block, ExactPairs* exact, const double* X,
                        const Py_ssize_t* order, Py_ssize_t n, Py_ssize_t start,
                        Py_ssize_t t0, Py_ssize_t count,
                        const Py_ssize_t* offsets, Py_ssize_t n_offsets,
                        Py_ssize_t half_offset, Py_ssize_t n_half,
                        double relative_floor, double absolute_floor,
                        double weight_floor) noexcept nogil:
    """The pairs owned by ring positions t0 ... t0 + count - 1 (n_half of them, from
    t0, also own their antipodal pair)."""
    cdef Py_ssize_t local = t0 - start, lanes = _lanes(count), chunk, size
    cdef Py_ssize_t chunk_index
    cdef Py_ssize_t p = block.p, b = BUFFER_LD
    cdef Py_ssize_t zero_step = 0
    cdef double* owners = block.rows + local
    cdef Py_ssize_t n_chunks = ((n_offsets + DESIGN_OFFSET_CHUNK - 1)
                                // DESIGN_OFFSET_CHUNK)
    cdef Py_ssize_t n_exact, q, ring_owner, ring_partner
    # Without antipodal pairs the window loop completes the owners' weight sums and
    # writes their scaled rows straight into the queue.
    cdef bint fused = block.window and n_half == 0
    cdef double* queue_slot = _queue_slot(block, owners, count) if fused else NULL
    if not block.window:
        memset(block.gathered, 0, p * b * sizeof(double))
    else:
        n_exact = dppca_window(owners, block.width, p, count, n_offsets,
                               block.norms + local, relative_floor, absolute_floor,
                               weight_floor, block.weight_sums + local,
                               block.gathered, b, queue_slot, PRODUCTS_LD,
                               block.partner_lanes + 8 * local, block.cells,
                               block.exact_pairs)
        for q in range(n_exact):
            ring_owner = order[t0 + block.exact_pairs[2 * q]]
            ring_partner = order[(t0 + block.exact_pairs[2 * q]
                                  + block.exact_pairs[2 * q + 1]) % n]
            _add_exact_pair(exact, X + ring_owner * p, X + ring_partner * p, p,
                            ring_owner, ring_partner)
        n_chunks = 0
    for chunk_index in range(n_chunks):
        chunk = chunk_index * DESIGN_OFFSET_CHUNK
        size = min(DESIGN_OFFSET_CHUNK, n_offsets - chunk)
        dppca_band_dots(owners, owners, block.width, p, lanes, offsets + chunk, size,
                        block.dots, b)
        _band_weights(block, exact, X, order, n, start, t0, count, offsets + chunk,
                      size, block.norms, block.weight_sums, 0, relative_floor,
                      absolute_floor, weight_floor)
        dppca_band_gather(owners, block.width, p, lanes, offsets + chunk, size,
                          block.weights, b, block.gathered, b)
    if n_half > 0:
        memset(block.half_sums, 0, b * sizeof(double))
        dppca_band_dots(owners, block.half_rows + local, block.width, p,
                        _lanes(n_half), &zero_step, 1, block.dots, b)
        _band_weights(block, exact, X, order, n, start, t0, n_half, &zero_step, 1,
                      block.half_norms, block.half_sums - local,
                      half_offset, relative_floor, absolute_floor, weight_floor)
        dppca_band_gather(block.half_rows + local, block.width, p, _lanes(n_half),
                          &zero_step, 1, block.weights, b, block.gathered, b)
        # the antipodes' own terms w a a^T
        _queue_products(block, block.half_rows + local, block.half_sums, n_half,
                        False)
    # Every pair touching these owners is now in (earlier owners come first): their
    # weight sums are complete.
    if fused:
        block.n_queued += count
    else:
        _queue_products(block, owners, block.weight_sums + local, count, True)


cdef void _add_partner_lanes(DesignBlock* block, Py_ssize_t first) noexcept nogil:
    """weight_sums[s] += the lanes of partner_lanes at s, for s >= first."""
    cdef Py_ssize_t s
    cdef double* lanes
    for s in range(first, block.width):
        lanes = block.partner_lanes + 8 * s
        block.weight_sums[s] += (((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
                                 + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])))


cdef struct TaskScale:
    # The power of two 2**-exponent (as high * low) that puts the largest |x| among
    # a task's rows and the centre in [0.5, 1), and the floor in those units.
    int exponent
    double high
    double low
    double scaled_floor     # the floor the Gram path uses, in the prescaled units
    double floor_mantissa   # the floor the exact path uses, in the units of X
    int floor_exponent
    double factor           # the task's sum is multiplied by this


cdef TaskScale _task_scale(double largest, Py_ssize_t p, double floor_mantissa,
                           int floor_exponent) noexcept nogil:
    """The prescaling of a task whose rows and centre have max |x| = largest, and
    its floor.

    Prescaled rows have max |x| < 1, so after centring every squared distance is
    below ``cap = 4 p``; a floor above ``cap`` (in prescaled units) gives every pair
    the weight ``1 / floor`` and is replaced by ``cap``, the sum being multiplied by
    ``cap / floor``. Mantissas and integer exponents keep this free of overflow.
    """
    cdef TaskScale scale
    cdef int cap_exponent, high_exponent
    cdef double cap_mantissa
    frexp(largest, &scale.exponent)
    high_exponent = max(-1000, min(1000, -scale.exponent))
    scale.high = ldexp(1.0, high_exponent)
    scale.low = ldexp(1.0, -scale.exponent - high_exponent)
    cap_mantissa = frexp(4.0 * p, &cap_exponent)
    cap_exponent += 2 * scale.exponent
    scale.factor = 1.0
    if floor_mantissa == 0.0 or floor_exponent < cap_exponent or (
            floor_exponent == cap_exponent and floor_mantissa <= cap_mantissa):
        scale.floor_mantissa = floor_mantissa
        scale.floor_exponent = floor_exponent
        scale.scaled_floor = ldexp(floor_mantissa,
                                   floor_exponent - 2 * scale.exponent)
    else:
        scale.factor = ldexp(cap_mantissa / floor_mantissa,
                             cap_exponent - floor_exponent)
        scale.floor_mantissa = cap_mantissa
        scale.floor_exponent = cap_exponent
        scale.scaled_floor = 4.0 * p
    return scale


cdef bint _consecutive_from_one(const Py_ssize_t[::1] offsets) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(offsets.shape[0]):
        if offsets[j] != j + 1:
            return False
    return True


def design_partial(const double[:, ::1] X, const Py_ssize_t[::1] order,
                   const Py_ssize_t[::1] offsets, Py_ssize_t half_offset,
                   Py_ssize_t start, Py_ssize_t stop, const double[::1] centre,
                   double floor_mantissa=0.0, int floor_exponent=0):
    """Unnormalised sum of d d^T / max(|d|^2, floor) over the design pairs owned by
    some ring positions, through the weighted Laplacian of the design.

    Ring position ``t`` in ``[start, stop)`` owns the pairs ``(t, t + o mod n)`` for
    each ``o`` in ``offsets`` and, when ``half_offset > 0`` and ``t < half_offset``,
    the pair ``(t, t + half_offset)``; every design pair has exactly one owner.

    The rows the task reads (owners and partners) are copied, prescaled by the
    power of two that puts the largest of their ``|x|`` and of the centre's in
    [0.5, 1), and centred. With these rows ``a`` and the weights ``w`` of the
    pairs, the sum is ``(M + M^T) / 2`` for ``M = sum_t a_t (c_t a_t - 2 g_t)^T``,
    where ``c_t`` sums the weights of the pairs at ``t`` and ``g_t`` the ``w a_s``
    of the pairs ``(t, s)`` that ``t`` owns: O(p) work per pair (a band dot product
    for the weight and a band gather for ``g``) plus one p x p accumulation per
    run of positions (DGEMM, or a register-tiled loop with AVX-512), instead of a
    p x p outer product per pair. Pairs whose Gram distance
    lost precision (the test of :func:`all_pairs_partial`) are computed exactly
    instead, from ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, p), float64, C-contiguous
        The rows in their original order and scale.
    order : ndarray of shape (n,), intp
        Original row number at each ring position.
    offsets : ndarray of shape (n_offsets,), intp
        Forward offsets, each in ``[1, n/2)``.
    half_offset : int
        ``n / 2`` when the design pairs antipodes, else 0.
    start, stop : int
        Range of ring positions.
    centre : ndarray of shape (p,)
        Subtracted from every row (in the units of ``X``; finite).
    floor_mantissa, floor_exponent : float, int
        The floor, ``floor_mantissa * 2**floor_exponent`` (``math.frexp``; a zero
        mantissa: no floor).

    Returns
    -------
    total, n_coincident, first_coincident
        As for :func:`all_pairs_partial`.
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1], b = DESIGN_BLOCK
    cdef Py_ssize_t n_offsets = offsets.shape[0], j
    cdef Py_ssize_t reach = 0
    cdef Py_ssize_t width, half_count = max(0, min(stop, half_offset) - start)
    cdef Py_ssize_t t0, count, n_half, first, block_index
    cdef double relative_floor = GRAM_RELATIVE_FLOOR
    cdef double absolute_floor = GRAM_ABSOLUTE_FLOOR
    cdef double largest
    cdef TaskScale scale
    if not (floor_mantissa == 0.0 or 0.5 <= floor_mantissa < 1.0):
        raise ValueError(f"floor_mantissa must be 0 or lie in [0.5, 1), got "
                         f"{floor_mantissa!r}.")
    if stop <= start:
        return np.zeros((p, p)), 0, (-1, -1)
    for j in range(n_offsets):
        reach = max(reach, offsets[j])
    width = _lanes((stop - start) + reach + DESIGN_LANE_PAD)

    # Buffers, allocated here with the GIL held and kept alive by these names.
    cdef double[::1] rows = np.empty(p * width)
    cdef double[::1] half_rows = np.empty(p * width if half_count else 1)
    cdef double[::1] norms = np.empty(width)
    cdef double[::1] half_norms = np.empty(width if half_count else 1)
    cdef double[::1] weight_sums = np.zeros(width)
    cdef double[::1] half_sums = np.empty(BUFFER_LD)
    cdef double[::1] dots = np.empty(DESIGN_OFFSET_CHUNK * BUFFER_LD)
    cdef double[::1] weights = np.empty(DESIGN_OFFSET_CHUNK * BUFFER_LD)
    cdef double[::1] gathered = np.empty(p * BUFFER_LD)
    cdef double[::1] products = np.empty(p * PRODUCTS_LD)
    cdef double[::1] acc = np.zeros(p * p)
    cdef double[::1] acc_exact = np.zeros(p * p)
    cdef double[::1] diff = np.empty(p)
    cdef double[::1] units = _unit_buffer(p)
    cdef double[::1] scaled_centre = np.empty(p)
    cdef ExactPairs exact
    cdef double[::1] cells = np.empty(2 * DPPCA_WINDOW_PASS * 8)
    cdef Py_ssize_t[::1] exact_pairs = np.empty(2 * DESIGN_BLOCK * DESIGN_OFFSET_CHUNK,
                                                dtype=np.intp)
    cdef DesignBlock block
    block.window = (KERNEL_LANES == 8 and 0 < n_offsets <= DESIGN_OFFSET_CHUNK
                    and _consecutive_from_one(offsets))
    block.hand = KERNEL_LANES == 8
    cdef double[::1] cells_acc = np.empty(dppca_cells_size(p) if block.hand else 1)
    block.cells_acc = &cells_acc[0]
    block.cells_fresh = True
    block.cells = &cells[0]
    cdef double[::1] partner_lanes = np.zeros(8 * width if block.window else 1)
    block.partner_lanes = &partner_lanes[0]
    block.exact_pairs = &exact_pairs[0]
    block.rows = &rows[0]
    block.half_rows = &half_rows[0]
    block.norms = &norms[0]
    block.half_norms = &half_norms[0]
    block.width = width
    block.p = p
    block.weight_sums = &weight_sums[0]
    block.half_sums = &half_sums[0]
    block.dots = &dots[0]
    block.weights = &weights[0]
    block.gathered = &gathered[0]
    block.products = &products[0]
    block.n_queued = 0
    block.acc = &acc[0]

    with nogil:
        largest = max(dppca_local_rows(&X[0, 0], &order[0], n, p, start, width,
                                       width, block.rows),
                      dppca_max_abs(&centre[0], p))
        if half_count:
            largest = max(largest, dppca_local_rows(
                &X[0, 0], &order[0], n, p, start + half_offset,
                half_count + DESIGN_LANE_PAD, width, block.half_rows))
        scale = _task_scale(largest, p, floor_mantissa, floor_exponent)
        for j in range(p):
            scaled_centre[j] = centre[j] * scale.high * scale.low
        dppca_finish_rows(block.rows, width, width, p, scale.high, scale.low,
                          &scaled_centre[0], block.norms)
        if half_count:
            dppca_finish_rows(block.half_rows, width, half_count + DESIGN_LANE_PAD, p,
                              scale.high, scale.low, &scaled_centre[0],
                              block.half_norms)
    exact = _exact_pairs(units, acc_exact, diff, p, scale.floor_mantissa,
                         scale.floor_exponent)
    with nogil:
        for block_index in range((stop - start + b - 1) // b):
            t0 = start + block_index * b
            count = min(b, stop - t0)
            n_half = max(0, min(count, half_offset - t0))
            _design_block(&block, &exact, &X[0, 0], &order[0], n, start, t0, count,
                          &offsets[0] if n_offsets else NULL, n_offsets,
                          half_offset, n_half, relative_floor, absolute_floor,
                          scale.scaled_floor)
        # The partners past the last owner: their terms w a a^T, from the pairs here
        # (with the window loop's last lanes added).
        if block.window:
            _add_partner_lanes(&block, stop - start)
        for block_index in range((reach + b - 1) // b):
            first = stop - start + block_index * b
            count = min(b, stop - start + reach - first)
            _queue_products(&block, block.rows + first, block.weight_sums + first,
                            count, False)
        _flush_products(&block)
        _flush_units(&exact, p)
        if block.hand and not block.cells_fresh:
            dppca_cells_to_acc(block.cells_acc, p, block.acc)
    upper = np.asarray(acc).reshape(p, p)
    total = upper + upper.T
    total *= 0.5
    if exact.n_units:
        total += _symmetric_from_upper(acc_exact, p)
    if scale.factor != 1.0:
        total *= scale.factor
    return total, exact.n_coincident, (exact.first_i, exact.first_j)


def _design_partial_direct(const double[:, ::1] X_ring, const Py_ssize_t[::1] order,
                   const Py_ssize_t[::1] offsets, Py_ssize_t half_offset,
                   Py_ssize_t start, Py_ssize_t stop, double floor_mantissa=0.0,
                   int floor_exponent=0):
    """The direct loop of :func:`design_partial`: every pair from its exact
    difference, one (shrunk) unit vector per pair added by DSYRK.

    The reference that the Laplacian kernel is measured and tested against (it was
    the design kernel before it); not used by the package.

    Ring position ``t`` in ``[start, stop)`` owns the pairs ``(t, t + o mod n)`` for
    each ``o`` in ``offsets`` and, when ``half_offset > 0`` and ``t < half_offset``,
    the pair ``(t, t + half_offset)``; every design pair has exactly one owner.

    Parameters
    ----------
    X_ring : ndarray of shape (n, p), float64, C-contiguous
        The rows in ring order (ring position ``t`` holds original row ``order[t]``).
    order : ndarray of shape (n,), intp
        Original row number at each ring position.
    offsets : ndarray of shape (n_offsets,), intp
        Forward offsets, each in ``[1, n/2)``.
    half_offset : int
        ``n / 2`` when the design pairs antipodes, else 0.
    start, stop : int
        Range of ring positions.
    floor_mantissa, floor_exponent : float, int
        The floor, as for :func:`all_pairs_partial`.

    Returns
    -------
    total, n_coincident, first_coincident
        As for :func:`all_pairs_partial`.
    """
    cdef Py_ssize_t n = X_ring.shape[0], p = X_ring.shape[1]
    cdef Py_ssize_t n_offsets = offsets.shape[0], t, q, partner
    cdef double[::1] acc = np.zeros(p * p)
    cdef double[::1] diff = np.empty(p)
    cdef double[::1] units = _unit_buffer(p)
    cdef ExactPairs exact = _exact_pairs(units, acc, diff, p, floor_mantissa,
                                         floor_exponent)

    with nogil:
        for t in range(start, stop):
            for q in range(n_offsets):
                partner = t + offsets[q]
                if partner >= n:
                    partner -= n
                _add_exact_pair(&exact, &X_ring[t, 0], &X_ring[partner, 0], p,
                                order[t], order[partner])
            if half_offset > 0 and t < half_offset:
                partner = t + half_offset
                _add_exact_pair(&exact, &X_ring[t, 0], &X_ring[partner, 0], p,
                                order[t], order[partner])
        _flush_units(&exact, p)
    return _symmetric_from_upper(acc, p), exact.n_coincident, (exact.first_i,
                                                               exact.first_j)
