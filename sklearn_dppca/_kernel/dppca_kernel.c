/* The streaming loops of the m-partner (design) path and the row helpers of a
   task; the interface, and what each function computes, is in dppca_kernel.h.

   The band loops walk band diagonals of the ring (owner t, partner t + o) with the
   positions t in the vector lanes, so the accumulators stay in registers while a
   coordinate's row streams past. GCC/Clang vector extensions give the SIMD. The
   default build targets the baseline ISA only, so on x86 the loops are also
   compiled for AVX2/FMA (4 lanes) and AVX-512 (8 lanes, 16 offsets at a time) and
   a route is picked once, at import (dppca_set_route); compilers without vector
   extensions (MSVC) get plain loops. ``n_lanes`` is a multiple of DPPCA_LANES;
   every read stays within the first ``n_lanes + max(offsets)`` columns of each
   row. */
#include <string.h>

#include "dppca_kernel.h"

/* Compiler checks. Everything GCC- or Clang-specific (vector extensions, target
   attributes, __builtin_cpu_*, prefetch, unrolling pragmas) sits behind them, so
   that any C99 compiler builds the plain loops. */
#if defined(__GNUC__)                       /* GCC, Clang, and compilers like them */
#  define DPPCA_VECTORS 1
#  define DPPCA_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#  define DPPCA_INLINE static __forceinline
#else
#  define DPPCA_INLINE static
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#  define DPPCA_X86 1
#endif
/* The row helpers are also built for x86-64-v3 and -v4 (GCC 11 names those
   levels; Clang's attribute takes no "arch=" level, it keeps the baseline build). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && __GNUC__ >= 11
#  define DPPCA_ROW_LEVELS 1
#endif
#define DPPCA_LOAD(v, x) memcpy(&(v), (x), sizeof(v))
#define DPPCA_STORE(x, v) memcpy((x), &(v), sizeof(v))

typedef void (*dppca_dots_fn)(const double*, const double*, dppca_index,
                              dppca_index, dppca_index, const dppca_index*,
                              dppca_index, double*, dppca_index);
typedef void (*dppca_gather_fn)(const double*, dppca_index, dppca_index, dppca_index,
                                const dppca_index*, dppca_index, const double*,
                                dppca_index, double*, dppca_index);
typedef dppca_index (*dppca_weights_fn)(
    const double*, dppca_index, dppca_index, const dppca_index*, dppca_index,
    const double*, const double*, double, double, double, double*, dppca_index,
    double*, double*, dppca_trace*);
typedef void (*dppca_scaled_fn)(const double*, dppca_index, const double*,
                                const double*, dppca_index, dppca_index, dppca_index,
                                double*, dppca_index);
typedef dppca_index (*dppca_narrow_fn)(const double*, const double*, dppca_index,
                                       dppca_index, dppca_index, const dppca_index*,
                                       dppca_index, double, double, double*,
                                       dppca_trace*, dppca_index*);

/* The band loops for one vector type VEC of L lanes, G offsets at a time.

   NAME##_dots: dots[j dots_ld + i] = sum_k owners[k ld + i]
                                            partners[k ld + i + offsets[j]]
   NAME##_gather: sums[k sums_ld + i] += sum_j weights[j weights_ld + i]
                                               partners[k ld + i + offsets[j]]
   NAME##_scaled: products[k ld + i] = sums[i] rows[k rows_ld + i]
                                       (- 2 gathered[k ld + i]) */
#define DPPCA_BAND_LOOPS(NAME, ATTR, VEC, L, G) \
ATTR DPPCA_INLINE void NAME##_dots_group( \
        const double* owners, const double* partners, dppca_index ld, \
        dppca_index p, const dppca_index* offsets, dppca_index group, \
        double* dots, dppca_index dots_ld) { \
    dppca_index k, g; \
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
        const double* owners, const double* partners, dppca_index ld, \
        dppca_index p, dppca_index n_lanes, const dppca_index* offsets, \
        dppca_index n_offsets, double* dots, dppca_index dots_ld) { \
    dppca_index i, j; \
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
ATTR DPPCA_INLINE void NAME##_gather_group( \
        const double* partners, dppca_index ld, dppca_index p, \
        const dppca_index* offsets, dppca_index group, const double* weights, \
        dppca_index weights_ld, double* sums, dppca_index sums_ld) { \
    dppca_index k, g; \
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
        const double* partners, dppca_index ld, dppca_index p, dppca_index n_lanes, \
        const dppca_index* offsets, dppca_index n_offsets, const double* weights, \
        dppca_index weights_ld, double* sums, dppca_index sums_ld) { \
    dppca_index i, j; \
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
        const double* rows, dppca_index rows_ld, const double* sums, \
        const double* gathered, dppca_index ld, dppca_index p, \
        dppca_index n_lanes, double* products, dppca_index products_ld) { \
    dppca_index i, k; \
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
ATTR static dppca_index NAME##_weights( \
        const double* dots, dppca_index dots_ld, dppca_index count, \
        const dppca_index* offsets, dppca_index n_offsets, \
        const double* owner_norms, const double* partner_norms, \
        double relative_floor, double absolute_floor, double weight_floor, \
        double* weights, dppca_index weights_ld, double* owner_sums, \
        double* partner_sums, dppca_trace* trace) { \
    dppca_index i, j, lane, n_exact = 0; \
    VEC relative = relative_floor - (VEC){0}, absolute = absolute_floor - (VEC){0}; \
    VEC floor = weight_floor - (VEC){0}, one = 1.0 - (VEC){0}; \
    VEC trace_floor = trace->floor - (VEC){0}, riding = {0}; \
    MASK index, counts = {0}; \
    for (lane = 0; lane < L; lane++) index[lane] = lane; \
    dppca_index n_lanes = (count + DPPCA_LANES - 1) / DPPCA_LANES * DPPCA_LANES; \
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
            below = squared < trace_floor; \
            riding += (VEC)((((MASK)squared & below) \
                              | ((MASK)trace_floor & ~below)) & keep); \
            below = squared < floor; \
            squared = (VEC)(((MASK)squared & ~below) | ((MASK)floor & below)); \
            weight = (VEC)((MASK)(one / squared) & keep); \
            DPPCA_STORE(weights + j * weights_ld + i, weight); \
            sum += weight; \
        } \
        DPPCA_STORE(owner_sums + i, sum); \
    } \
    for (lane = 0; lane < L; lane++) { \
        n_exact -= counts[lane]; \
        trace->sum += riding[lane]; \
    } \
    for (j = 0; j < n_offsets; j++) { \
        const double* weight_row = weights + j * weights_ld; \
        double* partner_row = partner_sums + offsets[j]; \
        for (i = 0; i < count; i++) partner_row[i] += weight_row[i]; \
    } \
    return n_exact; \
}

/* Plain loops (one lane) for compilers without vector extensions. */
DPPCA_BAND_LOOPS(dppca_plain, , double, 1, 1)
static dppca_index dppca_plain_weights(
        const double* dots, dppca_index dots_ld, dppca_index count,
        const dppca_index* offsets, dppca_index n_offsets,
        const double* owner_norms, const double* partner_norms,
        double relative_floor, double absolute_floor, double weight_floor,
        double* weights, dppca_index weights_ld, double* owner_sums,
        double* partner_sums, dppca_trace* trace) {
    dppca_index i, j, n_exact = 0;
    dppca_index n_lanes = (count + DPPCA_LANES - 1) / DPPCA_LANES * DPPCA_LANES;
    for (j = 0; j < n_offsets; j++)
        for (i = 0; i < count; i++) {
            double both = owner_norms[i] + partner_norms[i + offsets[j]];
            double squared = both - 2.0 * dots[j * dots_ld + i], weight = 0.0;
            if (squared >= relative_floor * both + absolute_floor) {
                weight = 1.0 / (squared < weight_floor ? weight_floor : squared);
                trace->sum += squared < trace->floor ? squared : trace->floor;
            } else {
                n_exact++;
            }
            weights[j * weights_ld + i] = weight;
            owner_sums[i] += weight;
            partner_sums[i + offsets[j]] += weight;
        }
    /* the lanes past count hold 0, as in the vector loops: the gather reads them */
    for (j = 0; j < n_offsets; j++)
        for (i = count; i < n_lanes; i++) weights[j * weights_ld + i] = 0.0;
    return n_exact;
}

/* Narrow rows (p <= DPPCA_NARROW): the pairs (owner i, partner i + offsets[j]),
   i < count, from their differences d = a - b, rows prescaled and not centred
   (one rounding per coordinate, whatever the rows' distance from each other or
   from the origin: no Gram form, no precision test). With w = 1 / max(D2,
   weight_floor), D2 = |d|^2: sums[c] += w d_k d_l for the c-th (k <= l) of the
   upper triangle, row by row, and trace->sum += min(D2, trace->floor); a pair
   with D2 < tiny (coincident, or so close that its squares leave the normal
   range) is listed in exact_pairs as (i, j) instead. Returns their number.
   NAME##_narrow_p is the loop for one p (a constant where it is inlined, so
   that the coordinates and the cells stay in registers). */
#define DPPCA_NARROW_LOOP(NAME, ATTR, VEC, MASK, L) \
ATTR DPPCA_INLINE dppca_index NAME##_narrow_p( \
        const double* owners, const double* partners, dppca_index ld, \
        const dppca_index p, dppca_index count, const dppca_index* offsets, \
        dppca_index n_offsets, double weight_floor, double tiny, double* sums, \
        dppca_trace* trace, dppca_index* exact_pairs) { \
    dppca_index i, j, k, l, c, lane, n_exact = 0; \
    VEC floor = weight_floor - (VEC){0}, small = tiny - (VEC){0}; \
    VEC one = 1.0 - (VEC){0}, trace_floor = trace->floor - (VEC){0}, riding = {0}; \
    VEC cells[DPPCA_NARROW * (DPPCA_NARROW + 1) / 2]; \
    MASK index; \
    for (c = 0; c < p * (p + 1) / 2; c++) cells[c] = (VEC){0}; \
    for (lane = 0; lane < L; lane++) index[lane] = lane; \
    for (j = 0; j < n_offsets; j++) { \
        const double* par = partners + offsets[j]; \
        for (i = 0; i < count; i += L) { \
            VEC d[DPPCA_NARROW], a, b, squared = {0}, weight; \
            MASK valid = (index + (long long)i) < (long long)count, keep, under; \
            for (k = 0; k < p; k++) { \
                DPPCA_LOAD(a, owners + k * ld + i); \
                DPPCA_LOAD(b, par + k * ld + i); \
                d[k] = a - b; \
                squared += d[k] * d[k]; \
            } \
            keep = (squared >= small) & valid; \
            under = squared < trace_floor; \
            riding += (VEC)((((MASK)squared & under) \
                             | ((MASK)trace_floor & ~under)) & keep); \
            under = squared < floor; \
            weight = (VEC)((MASK)(one / (VEC)(((MASK)squared & ~under) \
                                              | ((MASK)floor & under))) & keep); \
            for (c = 0, k = 0; k < p; k++) { \
                VEC scaled = weight * d[k]; \
                for (l = k; l < p; l++) cells[c++] += scaled * d[l]; \
            } \
            { \
                MASK lost = valid & ~keep; \
                long long flag = 0; \
                for (lane = 0; lane < L; lane++) flag |= lost[lane]; \
                if (flag) \
                    for (lane = 0; lane < L; lane++) \
                        if (lost[lane]) { \
                            exact_pairs[2 * n_exact] = i + lane; \
                            exact_pairs[2 * n_exact + 1] = j; \
                            n_exact++; \
                        } \
            } \
        } \
    } \
    for (c = 0; c < p * (p + 1) / 2; c++) \
        for (lane = 0; lane < L; lane++) sums[c] += cells[c][lane]; \
    for (lane = 0; lane < L; lane++) trace->sum += riding[lane]; \
    return n_exact; \
} \
ATTR static dppca_index NAME##_narrow( \
        const double* owners, const double* partners, dppca_index ld, \
        dppca_index p, dppca_index count, const dppca_index* offsets, \
        dppca_index n_offsets, double weight_floor, double tiny, double* sums, \
        dppca_trace* trace, dppca_index* exact_pairs) { \
    switch (p) { \
    case 1: return NAME##_narrow_p(owners, partners, ld, 1, count, offsets, \
                                   n_offsets, weight_floor, tiny, sums, trace, \
                                   exact_pairs); \
    case 2: return NAME##_narrow_p(owners, partners, ld, 2, count, offsets, \
                                   n_offsets, weight_floor, tiny, sums, trace, \
                                   exact_pairs); \
    case 3: return NAME##_narrow_p(owners, partners, ld, 3, count, offsets, \
                                   n_offsets, weight_floor, tiny, sums, trace, \
                                   exact_pairs); \
    default: return NAME##_narrow_p(owners, partners, ld, DPPCA_NARROW, count, \
                                    offsets, n_offsets, weight_floor, tiny, sums, \
                                    trace, exact_pairs); \
    } \
}

/* The narrow loop without vector extensions: four running sums per cell (by
   the owner's position modulo 4), as four lanes would keep them. */
static dppca_index dppca_plain_narrow(
        const double* owners, const double* partners, dppca_index ld, dppca_index p,
        dppca_index count, const dppca_index* offsets, dppca_index n_offsets,
        double weight_floor, double tiny, double* sums, dppca_trace* trace,
        dppca_index* exact_pairs) {
    dppca_index i, j, k, l, c, n_exact = 0;
    double d[DPPCA_NARROW], riding[4] = {0.0, 0.0, 0.0, 0.0};
    double cells[4][DPPCA_NARROW * (DPPCA_NARROW + 1) / 2];
    memset(cells, 0, sizeof(cells));
    for (j = 0; j < n_offsets; j++)
        for (i = 0; i < count; i++) {
            double squared = 0.0, weight;
            for (k = 0; k < p; k++) {
                d[k] = owners[k * ld + i] - partners[k * ld + i + offsets[j]];
                squared += d[k] * d[k];
            }
            if (!(squared >= tiny)) {
                exact_pairs[2 * n_exact] = i;
                exact_pairs[2 * n_exact + 1] = j;
                n_exact++;
                continue;
            }
            riding[i & 3] += squared < trace->floor ? squared : trace->floor;
            weight = 1.0 / (squared < weight_floor ? weight_floor : squared);
            for (c = 0, k = 0; k < p; k++)
                for (l = k; l < p; l++) cells[i & 3][c++] += weight * d[k] * d[l];
        }
    for (c = 0; c < p * (p + 1) / 2; c++)
        sums[c] += (cells[0][c] + cells[1][c]) + (cells[2][c] + cells[3][c]);
    trace->sum += (riding[0] + riding[1]) + (riding[2] + riding[3]);
    return n_exact;
}

#if defined(DPPCA_VECTORS)
typedef double dppca_v4 __attribute__((vector_size(32)));
typedef long long dppca_m4 __attribute__((vector_size(32)));
DPPCA_BAND_LOOPS(dppca_v4, , dppca_v4, 4, 4)
DPPCA_WEIGHT_LOOP(dppca_v4, , dppca_v4, dppca_m4, 4)
DPPCA_NARROW_LOOP(dppca_v4, , dppca_v4, dppca_m4, 4)
#endif
#if defined(DPPCA_X86)
#include <immintrin.h>
typedef double dppca_v8 __attribute__((vector_size(64)));
typedef long long dppca_m8 __attribute__((vector_size(64)));
#  define DPPCA_AVX2 __attribute__((target("avx2,fma")))
#  define DPPCA_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma")))
DPPCA_BAND_LOOPS(dppca_avx2, DPPCA_AVX2, dppca_v4, 4, 8)
DPPCA_WEIGHT_LOOP(dppca_avx2, DPPCA_AVX2, dppca_v4, dppca_m4, 4)
DPPCA_NARROW_LOOP(dppca_avx2, DPPCA_AVX2, dppca_v4, dppca_m4, 4)
DPPCA_BAND_LOOPS(dppca_avx512, DPPCA_AVX512, dppca_v8, 8, 16)
DPPCA_WEIGHT_LOOP(dppca_avx512, DPPCA_AVX512, dppca_v8, dppca_m8, 8)
DPPCA_NARROW_LOOP(dppca_avx512, DPPCA_AVX512, dppca_v8, dppca_m8, 8)
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
#if defined(__clang__)
#  define DPPCA_UNROLL _Pragma("unroll")
#else
#  define DPPCA_UNROLL _Pragma("GCC unroll 20")
#endif
#define DPPCA_SPLAT8(v) ((dppca_v8){(v), (v), (v), (v), (v), (v), (v), (v)})
/* The sums of the eight lanes of each of the eight vectors at x (x[8 j + l]):
   {sum_l x[l], sum_l x[8 + l], ...}, added pairwise. */
DPPCA_AVX512 DPPCA_INLINE dppca_v8
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
DPPCA_AVX512 static dppca_index dppca_avx512_window(
        const double* rows, dppca_index ld, dppca_index p, dppca_index count,
        dppca_index h, const double* norms, double relative_floor,
        double absolute_floor, double weight_floor, double* weight_sums,
        double* sums, dppca_index sums_ld, double* products, dppca_index products_ld,
        double* partner_lanes, double* cells, dppca_index* exact_pairs,
        dppca_trace* trace) {
    dppca_index i, k, u, pass, lane, n_exact = 0;
    dppca_index n_passes = (h + 7 + DPPCA_WINDOW_PASS - 1) / DPPCA_WINDOW_PASS;
    dppca_v8 relative = relative_floor - (dppca_v8){0};
    dppca_v8 absolute = absolute_floor - (dppca_v8){0};
    dppca_v8 floor = weight_floor - (dppca_v8){0}, one = 1.0 - (dppca_v8){0};
    __m512d trace_floor = _mm512_set1_pd(trace->floor);
    dppca_v8 riding = {0};
    dppca_m8 index = {0, 1, 2, 3, 4, 5, 6, 7};
    for (i = 0; i < count; i += 8) {
        dppca_v8 own, owned = {0}, complete;
        dppca_m8 live = (index + (long long)i) < (long long)count;
        DPPCA_LOAD(own, norms + i);
        for (pass = 0; pass < n_passes; pass++) {
            dppca_index first = 1 + i + pass * DPPCA_WINDOW_PASS;
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
                riding += (dppca_v8)((dppca_m8)_mm512_min_pd((__m512d)squared,
                                                             trace_floor) & keep);
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
            dppca_index first = 1 + i + pass * DPPCA_WINDOW_PASS;
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
    for (lane = 0; lane < 8; lane++) trace->sum += riding[lane];
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
        const double* A, dppca_index lda, const double* R, dppca_index ldr,
        dppca_index p, dppca_index count, double* cells, int fresh) {
    dppca_index ti, tj, i, j, l, k;
    dppca_index n_ti = (p + DPPCA_TILE_A - 1) / DPPCA_TILE_A;
    dppca_index n_tj = (p + DPPCA_TILE_R - 1) / DPPCA_TILE_R;
    dppca_index full = count / 8 * 8;
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

dppca_index dppca_cells_size(dppca_index p) {
    return ((p + DPPCA_TILE_A - 1) / DPPCA_TILE_A)
           * ((p + DPPCA_TILE_R - 1) / DPPCA_TILE_R)
           * DPPCA_TILE_A * DPPCA_TILE_R * 8;
}

/* acc[k1 + k2 p] += the eight lanes of the cell (k1, k2), added pairwise
   (cells in the order dppca_avx512_products keeps them). */
void dppca_cells_to_acc(const double* cells, dppca_index p, double* acc) {
    dppca_index ti, tj, i, j, k1, k2;
    dppca_index n_ti = (p + DPPCA_TILE_A - 1) / DPPCA_TILE_A;
    dppca_index n_tj = (p + DPPCA_TILE_R - 1) / DPPCA_TILE_R;
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

/* ------------------------------------------------------------------ row helpers */
#define DPPCA_AHEAD 3
#define DPPCA_ROWS(name) dppca_rows_base_##name
#define DPPCA_ROWS_ATTR
#include "dppca_rows.h"
#undef DPPCA_ROWS
#undef DPPCA_ROWS_ATTR
#if defined(DPPCA_ROW_LEVELS)
#  define DPPCA_ROWS(name) dppca_rows_v3_##name
#  define DPPCA_ROWS_ATTR __attribute__((target("arch=x86-64-v3")))
#  include "dppca_rows.h"
#  undef DPPCA_ROWS
#  undef DPPCA_ROWS_ATTR
#  define DPPCA_ROWS(name) dppca_rows_v4_##name
#  define DPPCA_ROWS_ATTR __attribute__((target("arch=x86-64-v4")))
#  include "dppca_rows.h"
#  undef DPPCA_ROWS
#  undef DPPCA_ROWS_ATTR
#endif

/* ----------------------------------------------------------------------- routes */
typedef void (*dppca_finish_fn)(double*, dppca_index, dppca_index, dppca_index,
                                double, double, const double*, double*);
typedef double (*dppca_local_fn)(const double*, const dppca_index*, dppca_index,
                                 dppca_index, dppca_index, dppca_index, dppca_index,
                                 double*);
typedef double (*dppca_max_abs_fn)(const double*, dppca_index);

/* The loops of one route. */
typedef struct {
    int route;
    int lanes;
    dppca_dots_fn dots;
    dppca_gather_fn gather;
    dppca_weights_fn weights;
    dppca_scaled_fn scaled;
    dppca_narrow_fn narrow;
} dppca_loops;

static const dppca_loops dppca_plain_loops = {
    DPPCA_ROUTE_PLAIN, 1, dppca_plain_dots, dppca_plain_gather, dppca_plain_weights,
    dppca_plain_scaled, dppca_plain_narrow};
#if defined(DPPCA_VECTORS)
static const dppca_loops dppca_portable_loops = {
    DPPCA_ROUTE_PORTABLE, 4, dppca_v4_dots, dppca_v4_gather, dppca_v4_weights,
    dppca_v4_scaled, dppca_v4_narrow};
#else
/* without vector extensions the portable route is the plain loops */
static const dppca_loops dppca_portable_loops = {
    DPPCA_ROUTE_PORTABLE, 1, dppca_plain_dots, dppca_plain_gather,
    dppca_plain_weights, dppca_plain_scaled, dppca_plain_narrow};
#endif
#if defined(DPPCA_X86)
static const dppca_loops dppca_avx2_loops = {
    DPPCA_ROUTE_AVX2, 4, dppca_avx2_dots, dppca_avx2_gather, dppca_avx2_weights,
    dppca_avx2_scaled, dppca_avx2_narrow};
static const dppca_loops dppca_avx512_loops = {
    DPPCA_ROUTE_AVX512, 8, dppca_avx512_dots, dppca_avx512_gather,
    dppca_avx512_weights, dppca_avx512_scaled, dppca_avx512_narrow};
#endif

/* Until dppca_set_route runs (at import), the portable route: every entry point
   is safe to call on any CPU. */
static dppca_loops dppca_route = {
    DPPCA_ROUTE_PORTABLE, 0, NULL, NULL, NULL, NULL, NULL};
static int dppca_route_ready = 0;
static dppca_max_abs_fn dppca_max_abs_impl = dppca_rows_base_max_abs;
static dppca_local_fn dppca_local_rows_impl = dppca_rows_base_local_rows;
static dppca_finish_fn dppca_finish_rows_impl = dppca_rows_base_finish_rows;

int dppca_route_supported(int route) {
    switch (route) {
    case DPPCA_ROUTE_AUTO:
    case DPPCA_ROUTE_PORTABLE:
    case DPPCA_ROUTE_PLAIN:
        return 1;
#if defined(DPPCA_X86)
    case DPPCA_ROUTE_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
               && __builtin_cpu_supports("avx512vl");
    case DPPCA_ROUTE_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    default:
        return 0;
    }
}

/* The row helpers for a route: the highest ISA level the CPU runs, capped by the
   route (so that a forced AVX2 route runs what an AVX2-only CPU would). */
static void dppca_select_rows(int route) {
    dppca_max_abs_impl = dppca_rows_base_max_abs;
    dppca_local_rows_impl = dppca_rows_base_local_rows;
    dppca_finish_rows_impl = dppca_rows_base_finish_rows;
#if defined(DPPCA_ROW_LEVELS)
    __builtin_cpu_init();
    if (route == DPPCA_ROUTE_AVX512 && __builtin_cpu_supports("x86-64-v4")) {
        dppca_max_abs_impl = dppca_rows_v4_max_abs;
        dppca_local_rows_impl = dppca_rows_v4_local_rows;
        dppca_finish_rows_impl = dppca_rows_v4_finish_rows;
    } else if ((route == DPPCA_ROUTE_AVX512 || route == DPPCA_ROUTE_AVX2)
               && __builtin_cpu_supports("x86-64-v3")) {
        dppca_max_abs_impl = dppca_rows_v3_max_abs;
        dppca_local_rows_impl = dppca_rows_v3_local_rows;
        dppca_finish_rows_impl = dppca_rows_v3_finish_rows;
    }
#else
    (void)route;
#endif
}

int dppca_set_route(int route) {
    const dppca_loops* loops = NULL;
    if (!dppca_route_supported(route)) return -1;
    if (route == DPPCA_ROUTE_AUTO) {
        route = DPPCA_ROUTE_PORTABLE;
        if (dppca_route_supported(DPPCA_ROUTE_AVX2)) route = DPPCA_ROUTE_AVX2;
        if (dppca_route_supported(DPPCA_ROUTE_AVX512)) route = DPPCA_ROUTE_AVX512;
    }
    switch (route) {
#if defined(DPPCA_X86)
    case DPPCA_ROUTE_AVX512: loops = &dppca_avx512_loops; break;
    case DPPCA_ROUTE_AVX2: loops = &dppca_avx2_loops; break;
#endif
    case DPPCA_ROUTE_PLAIN: loops = &dppca_plain_loops; break;
    default: loops = &dppca_portable_loops; break;
    }
    dppca_route = *loops;
    dppca_select_rows(route);
    dppca_route_ready = 1;
    return dppca_route.lanes;
}

static void dppca_ensure_route(void) {
    if (!dppca_route_ready) dppca_set_route(DPPCA_ROUTE_PORTABLE);
}

int dppca_current_route(void) {
    dppca_ensure_route();
    return dppca_route.route;
}

int dppca_current_lanes(void) {
    dppca_ensure_route();
    return dppca_route.lanes;
}

/* ------------------------------------------------------------------ entry points */
void dppca_band_dots(const double* owners, const double* partners, dppca_index ld,
                     dppca_index p, dppca_index n_lanes, const dppca_index* offsets,
                     dppca_index n_offsets, double* dots, dppca_index dots_ld) {
    dppca_ensure_route();
    dppca_route.dots(owners, partners, ld, p, n_lanes, offsets, n_offsets, dots,
                     dots_ld);
}

void dppca_band_gather(const double* partners, dppca_index ld, dppca_index p,
                       dppca_index n_lanes, const dppca_index* offsets,
                       dppca_index n_offsets, const double* weights,
                       dppca_index weights_ld, double* sums, dppca_index sums_ld) {
    dppca_ensure_route();
    dppca_route.gather(partners, ld, p, n_lanes, offsets, n_offsets, weights,
                       weights_ld, sums, sums_ld);
}

dppca_index dppca_band_weights(const double* dots, dppca_index dots_ld,
                               dppca_index count, const dppca_index* offsets,
                               dppca_index n_offsets, const double* owner_norms,
                               const double* partner_norms, double relative_floor,
                               double absolute_floor, double weight_floor,
                               double* weights, dppca_index weights_ld,
                               double* owner_sums, double* partner_sums,
                               dppca_trace* trace) {
    dppca_ensure_route();
    return dppca_route.weights(dots, dots_ld, count, offsets, n_offsets, owner_norms,
                               partner_norms, relative_floor, absolute_floor,
                               weight_floor, weights, weights_ld, owner_sums,
                               partner_sums, trace);
}

dppca_index dppca_narrow(const double* owners, const double* partners, dppca_index ld,
                         dppca_index p, dppca_index count, const dppca_index* offsets,
                         dppca_index n_offsets, double weight_floor, double tiny,
                         double* sums, dppca_trace* trace, dppca_index* exact_pairs) {
    dppca_ensure_route();
    return dppca_route.narrow(owners, partners, ld, p, count, offsets, n_offsets,
                              weight_floor, tiny, sums, trace, exact_pairs);
}

void dppca_scaled_rows(const double* rows, dppca_index rows_ld, const double* sums,
                       const double* gathered, dppca_index ld, dppca_index p,
                       dppca_index n_lanes, double* products,
                       dppca_index products_ld) {
    dppca_ensure_route();
    dppca_route.scaled(rows, rows_ld, sums, gathered, ld, p, n_lanes, products,
                       products_ld);
}

int dppca_products(const double* A, dppca_index lda, const double* R,
                   dppca_index ldr, dppca_index p, dppca_index count, double* cells,
                   int fresh) {
#if defined(DPPCA_X86)
    /* only on the AVX-512 route: on any other this CPU may lack the instructions */
    if (dppca_current_route() == DPPCA_ROUTE_AVX512) {
        dppca_avx512_products(A, lda, R, ldr, p, count, cells, fresh);
        return 1;
    }
#else
    (void)A; (void)lda; (void)R; (void)ldr; (void)p; (void)count; (void)cells;
    (void)fresh;
#endif
    return 0;
}

dppca_index dppca_window(const double* rows, dppca_index ld, dppca_index p,
                         dppca_index count, dppca_index h, const double* norms,
                         double relative_floor, double absolute_floor,
                         double weight_floor, double* weight_sums, double* sums,
                         dppca_index sums_ld, double* products,
                         dppca_index products_ld, double* partner_lanes,
                         double* cells, dppca_index* exact_pairs,
                         dppca_trace* trace) {
#if defined(DPPCA_X86)
    if (dppca_current_route() == DPPCA_ROUTE_AVX512)
        return dppca_avx512_window(rows, ld, p, count, h, norms, relative_floor,
                                   absolute_floor, weight_floor, weight_sums, sums,
                                   sums_ld, products, products_ld, partner_lanes,
                                   cells, exact_pairs, trace);
#else
    (void)rows; (void)ld; (void)p; (void)count; (void)h; (void)norms;
    (void)relative_floor; (void)absolute_floor; (void)weight_floor;
    (void)weight_sums; (void)sums; (void)sums_ld; (void)products;
    (void)products_ld; (void)partner_lanes; (void)cells; (void)exact_pairs;
    (void)trace;
#endif
    return 0;
}

double dppca_max_abs(const double* x, dppca_index size) {
    dppca_ensure_route();
    return dppca_max_abs_impl(x, size);
}

double dppca_local_rows(const double* X, const dppca_index* order, dppca_index n,
                        dppca_index p, dppca_index first, dppca_index count,
                        dppca_index width, double* rows) {
    dppca_ensure_route();
    return dppca_local_rows_impl(X, order, n, p, first, count, width, rows);
}

void dppca_finish_rows(double* rows, dppca_index width, dppca_index count,
                       dppca_index p, double high, double low, const double* centre,
                       double* norms) {
    dppca_ensure_route();
    dppca_finish_rows_impl(rows, width, count, p, high, low, centre, norms);
}
