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
it, and never write to their inputs. They check every index they are given
(``order``, ``offsets``, ``start``, ``stop``, ``block_starts``, ``runs``) before the
work, which runs without bounds checks: a bad argument is a ``ValueError``.

The streaming loops of the design path run on one of several routes (AVX-512,
AVX2, portable vectors, plain loops), picked at import or forced with the
environment variable ``SKLEARN_DPPCA_KERNEL`` (see ``doc/install.rst``).

Layout: BLAS is column-major and our arrays are row-major, so a C array of
``rows x cols`` reaches BLAS as its transpose. Accumulators are ``p x p`` column-major
arrays of which only the upper triangle (row ``k <=`` column ``l``, element
``k + l * p``) is kept until the final symmetrisation.
"""

import os

import numpy as np

from libc.float cimport DBL_MAX
from libc.math cimport fabs, frexp, ldexp, sqrt
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemm, dsyrk

# The streaming loops of design_partial and the row helpers, in C
# (sklearn_dppca/_kernel/: dppca_kernel.h says what each computes and which routes
# exist). They trust their arguments: every wrapper below checks the indices it
# passes (order, offsets, start, stop) before the first call.
cdef extern from "dppca_kernel.h":
    ctypedef Py_ssize_t dppca_index
    ctypedef struct dppca_trace:
        double floor
        double sum
    int DPPCA_LANES
    int DPPCA_WINDOW_PASS
    int DPPCA_NARROW
    int DPPCA_ROUTE_AUTO
    int DPPCA_ROUTE_AVX512
    int DPPCA_ROUTE_AVX2
    int DPPCA_ROUTE_PORTABLE
    int DPPCA_ROUTE_PLAIN
    int dppca_route_supported(int route) noexcept nogil
    int dppca_set_route(int route) noexcept nogil
    int dppca_current_route() noexcept nogil
    int dppca_current_lanes() noexcept nogil
    double dppca_max_abs(const double* x, Py_ssize_t size) noexcept nogil
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
                            double* cells, Py_ssize_t* exact_pairs,
                            dppca_trace* trace) noexcept nogil
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
                                  double* owner_sums, double* partner_sums,
                                  dppca_trace* trace) noexcept nogil
    Py_ssize_t dppca_narrow(const double* owners, const double* partners,
                            Py_ssize_t ld, Py_ssize_t p, Py_ssize_t count,
                            const Py_ssize_t* offsets, Py_ssize_t n_offsets,
                            double weight_floor, double tiny, double* sums,
                            dppca_trace* trace, Py_ssize_t* exact_pairs) noexcept nogil
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

# The C side takes ptrdiff_t for Py_ssize_t (so that it needs no Python header): a
# build where they differ in size fails here, at compile time.
cdef extern from *:
    """
    typedef char dppca_index_is_py_ssize_t[
        sizeof(dppca_index) == sizeof(Py_ssize_t) ? 1 : -1];
    """

# ------------------------------------------------------------------------ routes
# The loops the design path runs (see dppca_kernel.h): the environment variable
# SKLEARN_DPPCA_KERNEL, read once at import, forces one; "auto" (or unset) takes
# the widest this CPU runs. A forced route the CPU cannot run is an error at
# import, not a silent fallback: the variable exists to test a route, and a test
# that ran another one would pass for nothing.
ROUTES = {"auto": DPPCA_ROUTE_AUTO, "avx512": DPPCA_ROUTE_AVX512,
          "avx2": DPPCA_ROUTE_AVX2, "portable": DPPCA_ROUTE_PORTABLE,
          "plain": DPPCA_ROUTE_PLAIN}
_ROUTE_NAMES = {code: name for name, code in ROUTES.items()}
ROUTE_VARIABLE = "SKLEARN_DPPCA_KERNEL"


def available_routes():
    """The routes this build and this CPU run, widest first (``"auto"`` left out)."""
    return [name for name in ("avx512", "avx2", "portable", "plain")
            if dppca_route_supported(ROUTES[name])]


def current_route():
    """Name of the route in use (never ``"auto"``)."""
    return _ROUTE_NAMES[dppca_current_route()]


def _set_route(name):
    """Switch the route (``"auto"`` or a name of :func:`available_routes`); returns
    the route in use before. Not thread safe: for tests and the import only, while
    no kernel runs."""
    global KERNEL_LANES
    previous = current_route()
    if name not in ROUTES:
        raise ValueError(f"{ROUTE_VARIABLE} must be one of {', '.join(ROUTES)}; got "
                         f"{name!r}.")
    lanes = dppca_set_route(ROUTES[name])
    if lanes < 0:
        raise RuntimeError(
            f"{ROUTE_VARIABLE}={name}: this CPU (or this build) cannot run the "
            f"{name} kernel; it runs {', '.join(available_routes())}. Unset the "
            f"variable, or set it to auto, to take the widest of those.")
    KERNEL_LANES = lanes
    return previous


# The lane count of the route in use (8: AVX-512, 4: AVX2 or portable vectors, 1:
# plain loops); informative, the kernels ask the C side.
KERNEL_LANES = 0
_set_route(os.environ.get(ROUTE_VARIABLE, "auto").strip().lower() or "auto")

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

# The narrow loop sends a pair to the exact path below this squared distance in
# the prescaled units (coincident pairs, and squares near the subnormal range):
# the default GRAM_ABSOLUTE_FLOOR, so a riding total's floor at or below it clips
# every kept pair on either path (_kept_share).
cdef double NARROW_TINY = 2.0 ** -900

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
    # Coincident pairs seen (each a zero term).
    Py_ssize_t n_coincident
    # The floor, floor_mantissa * 2**floor_exponent in the units of the original rows
    # (floor_mantissa == 0: no floor).
    double floor_mantissa
    int floor_exponent
    # The riding clipped total's floor F (as the floor) and these pairs' sum of
    # min(|d|^2 / F, 1).
    double trace_mantissa
    int trace_exponent
    double trace_share


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
                          Py_ssize_t p) noexcept nogil:
    """Buffer the vector v of x_i - x_j with v v^T = d d^T / max(|d|^2, floor), or count
    a coincident pair (a zero term).

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
    if squared_norm == 0.0:
        exact.n_coincident += 1
        return
    if exact.trace_mantissa > 0.0:
        exact.trace_share += min(1.0, ldexp(squared_norm / exact.trace_mantissa,
                                            2 * scale_exponent - exact.trace_exponent))
    else:
        exact.trace_share += 1.0
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
                      Py_ssize_t start_i, Py_ssize_t size_i,
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
                                    X + (start_j + j) * p, p)
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
                     const Py_ssize_t* block_starts,
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
        _block_pair(work, exact, X, start_i, size_i, start_j,
                    block_starts[block_j + 1] - start_j, block_j == block_i, p,
                    relative_floor, absolute_floor, weight_floor)
    for i in range(size_i):
        work.diagonal_sums[i] += work.weighted[i * (p + 1) + p]
    _add_weighted_squares(work.A, size_i, p, work.diagonal_sums, work.scratch,
                          work.acc)
    _subtract_cross_terms(work.A, work.weighted, size_i, p, work.cross, work.acc)



# ------------------------------------------------------------ argument checks
# The kernels run without bounds checks (and the C side has none): every index
# they will follow is checked here, once per call, so that a wrong argument is a
# ValueError rather than a read or write out of bounds. O(n) per call (order is
# scanned), small beside the pairs' work.
cdef int _check_order(const Py_ssize_t[::1] order, Py_ssize_t n) except -1:
    """Every ring position holds a row number."""
    return _check_order_window(order, n, 0, n)


cdef int _check_order_window(const Py_ssize_t[::1] order, Py_ssize_t n,
                             Py_ssize_t first, Py_ssize_t count) except -1:
    """The ring positions ``first, ..., first + count - 1`` (mod ``n``) hold row
    numbers: all a task reads of ``order``. Checking the whole ring in every
    task cost more than the task's pairs (128 tasks of a million rows)."""
    cdef Py_ssize_t i, t, bad = -1
    if order.shape[0] != n:
        raise ValueError(f"order must have one entry per row ({n}), got "
                         f"{order.shape[0]}.")
    with nogil:
        for i in range(min(count, n)):
            t = (first + i) % n
            if order[t] < 0 or order[t] >= n:
                bad = t
                break
    if bad >= 0:
        raise ValueError(f"order[{bad}] = {order[bad]} is not a row number in "
                         f"[0, {n}).")
    return 0


cdef int _check_design(Py_ssize_t n, const Py_ssize_t[::1] order,
                       const Py_ssize_t[::1] offsets, Py_ssize_t half_offset,
                       Py_ssize_t start, Py_ssize_t stop,
                       bint whole_order=True) except -1:
    """The ring arguments of design_partial and _design_partial_direct (the
    whole ``order``, or with ``whole_order=False`` its length only: the caller
    then checks the windows it reads with :func:`_check_order_window`)."""
    cdef Py_ssize_t j
    if not 0 <= start <= stop <= n:
        raise ValueError(f"start and stop must satisfy 0 <= start <= stop <= n = {n}, "
                         f"got start={start}, stop={stop}.")
    if not 0 <= half_offset <= n // 2:
        raise ValueError(f"half_offset must lie in [0, n // 2] = [0, {n // 2}], got "
                         f"{half_offset}.")
    for j in range(offsets.shape[0]):
        if not 0 < offsets[j] < n:
            raise ValueError(f"offsets[{j}] = {offsets[j]} is not in [1, n) = "
                             f"[1, {n}).")
    if whole_order:
        _check_order(order, n)
    elif order.shape[0] != n:
        raise ValueError(f"order must have one entry per row ({n}), got "
                         f"{order.shape[0]}.")
    return 0


cdef int _check_blocks(Py_ssize_t n, Py_ssize_t p, Py_ssize_t n_scaled,
                       Py_ssize_t p_scaled, Py_ssize_t n_centres, Py_ssize_t p_centres,
                       const Py_ssize_t[::1] block_starts,
                       const Py_ssize_t[:, ::1] runs) except -1:
    """The block arguments of all_pairs_partial."""
    cdef Py_ssize_t q, b, n_blocks = block_starts.shape[0] - 1
    if (n_scaled, p_scaled) != (n, p):
        raise ValueError(f"X_scaled must have the shape of X ({n}, {p}), got "
                         f"({n_scaled}, {p_scaled}).")
    if p_centres != p:
        raise ValueError(f"centres must have {p} columns, got {p_centres}.")
    if n_blocks < 0:
        raise ValueError("block_starts must have at least one entry.")
    for b in range(n_blocks + 1):
        if not 0 <= block_starts[b] <= n or (
                b > 0 and block_starts[b] < block_starts[b - 1]):
            raise ValueError(f"block_starts must be non-decreasing row numbers in "
                             f"[0, {n}]; block_starts[{b}] = {block_starts[b]}.")
    if runs.shape[0] and runs.shape[1] != 3:
        raise ValueError(f"runs must have 3 columns, got {runs.shape[1]}.")
    for q in range(runs.shape[0]):
        if not (0 <= runs[q, 0] <= runs[q, 1] <= runs[q, 2] <= n_blocks
                and runs[q, 0] < min(n_blocks, n_centres)):
            raise ValueError(f"runs[{q}] = ({runs[q, 0]}, {runs[q, 1]}, "
                             f"{runs[q, 2]}) is not (I, J0, J1) with 0 <= I <= J0 "
                             f"<= J1 <= {n_blocks} and a centre for I.")
    return 0


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
    exact.floor_mantissa = floor_mantissa
    exact.floor_exponent = floor_exponent
    exact.trace_mantissa = 0.0
    exact.trace_exponent = 0
    exact.trace_share = 0.0
    return exact


def max_abs(const double[:, ::1] X):
    """Largest ``|x|`` over a C-contiguous float64 array (0.0 when it is empty), in
    one pass; NaN is not looked for (callers pass finite rows)."""
    cdef double largest = 0.0
    if X.shape[0] and X.shape[1]:
        with nogil:
            largest = dppca_max_abs(&X[0, 0], X.shape[0] * X.shape[1])
    return largest


cdef inline double _clipped_square(double first, double second,
                                   double floor) noexcept nogil:
    cdef double difference = first - second
    cdef double square = difference * difference
    return square if square < floor else floor


cdef double _clipped_run(const double* first, const double* second, Py_ssize_t count,
                         double floor) noexcept nogil:
    """Sum of ``min((first_i - second_i)^2, floor)`` over ``count`` values: four
    running sums (independent chains, so the loop is not bound by one add's
    latency); an infinite square (an overflowed difference) counts ``floor``."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef Py_ssize_t i = 0
    while i + 4 <= count:
        s0 += _clipped_square(first[i], second[i], floor)
        s1 += _clipped_square(first[i + 1], second[i + 1], floor)
        s2 += _clipped_square(first[i + 2], second[i + 2], floor)
        s3 += _clipped_square(first[i + 3], second[i + 3], floor)
        i += 4
    while i < count:
        s0 += _clipped_square(first[i], second[i], floor)
        i += 1
    return (s0 + s1) + (s2 + s3)


def ring_clipped_sum(const double[::1] values, const Py_ssize_t[::1] offsets,
                     Py_ssize_t half_offset, double floor):
    """Sum of ``min((v_t - v_s)^2, floor)`` over the pairs of a ring design on
    one column in ring order: ``(t, t + o mod n)`` for every ``t`` and every
    forward offset ``o`` in ``offsets``, and ``(t, t + half_offset)`` for ``t <
    half_offset`` when ``half_offset > 0``.

    The terms are those of ``sklearn_dppca._data._statistics``' numpy form,
    each at most ``floor``, summed in another order (a sum of ``N`` terms of at
    most ``floor`` is within ``N`` rounding units of ``floor`` of exact in any
    order). Values must be finite; every offset must lie in ``[1, n)`` and
    ``2 half_offset <= n``.
    """
    cdef Py_ssize_t n = values.shape[0], n_offsets = offsets.shape[0], j, offset
    cdef double total = 0.0
    if not floor > 0.0:
        raise ValueError(f"floor must be positive, got {floor!r}.")
    if half_offset < 0 or 2 * half_offset > n:
        raise ValueError(f"half_offset must be in [0, n/2], got {half_offset}.")
    for j in range(n_offsets):
        if not 1 <= offsets[j] < n:
            raise ValueError(f"offsets must lie in [1, {n}), got {offsets[j]}.")
    if n == 0:
        return 0.0
    with nogil:
        for j in range(n_offsets):
            offset = offsets[j]
            total += _clipped_run(&values[0], &values[offset], n - offset, floor)
            total += _clipped_run(&values[n - offset], &values[0], offset, floor)
        if half_offset:
            total += _clipped_run(&values[0], &values[half_offset], half_offset, floor)
    return total


def column_max_abs(const double[:, ::1] X):
    """Each column's largest ``|x|`` of a C-contiguous float64 array, in one pass
    over its rows (NaN for a column holding a NaN; 0 for no rows): the rows'
    check and the scale of each column, without NumPy's temporary ``|X|`` and
    strided reduction (a fifth of their time at 200,000 x 10)."""
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1], i, j
    cdef double value
    cdef double[::1] largest = np.zeros(p)
    cdef unsigned char[::1] missing = np.zeros(p, dtype=np.uint8)
    with nogil:
        for i in range(n):
            for j in range(p):
                value = fabs(X[i, j])
                if value > largest[j]:
                    largest[j] = value
                elif value != value:
                    missing[j] = 1
    out = np.asarray(largest)
    out[np.asarray(missing, dtype=bool)] = np.nan
    return out


def matched_squared_distances(const double[:, ::1] X, const Py_ssize_t[::1] first,
                              const Py_ssize_t[::1] second):
    """``|x_first[i] - x_second[i]|^2`` for every pair ``i`` of a matching, in
    one pass over the pairs (the differences are not kept: the total
    variance's clip search reads only their squared norms). Every index must
    lie in ``[0, n)``; rows finite (as a fit's are: within ``2**500``, so no
    square overflows)."""
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1], count = first.shape[0], i, j
    cdef Py_ssize_t a, b
    cdef double total, difference
    if second.shape[0] != count:
        raise ValueError("first and second must have the same length.")
    for i in range(count):
        if not (0 <= first[i] < n and 0 <= second[i] < n):
            raise ValueError(f"pair indices must lie in [0, {n}).")
    cdef double[::1] out = np.empty(count)
    with nogil:
        for i in range(count):
            a, b = first[i], second[i]
            total = 0.0
            for j in range(p):
                difference = X[a, j] - X[b, j]
                total += difference * difference
            out[i] = total
    return np.asarray(out)


def _unit_buffer(p):
    p = max(p, 1)
    return np.empty(max(16, UNIT_BUFFER_BYTES // (8 * p)) * p)


def _symmetric_from_upper(acc, p):
    """Full symmetric ``(p, p)`` array from a column-major upper-triangle buffer."""
    upper = np.asarray(acc).reshape(p, p).T  # upper[k, l] = acc[k + l * p]
    return np.triu(upper) + np.triu(upper, 1).T


def all_pairs_partial(const double[:, ::1] X, const double[:, ::1] X_scaled,
                      const double[:, ::1] centres, const Py_ssize_t[::1] block_starts,
                      const Py_ssize_t[:, ::1] runs,
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
    """
    cdef Py_ssize_t p = X.shape[1], q
    cdef Py_ssize_t b = 0
    cdef double relative_floor = GRAM_RELATIVE_FLOOR
    cdef double absolute_floor = GRAM_ABSOLUTE_FLOOR
    if not 0.0 <= scaled_floor <= 4.0 * p:
        raise ValueError(f"scaled_floor must lie in [0, 4 p], got {scaled_floor!r}.")
    _check_blocks(X.shape[0], p, X_scaled.shape[0], X_scaled.shape[1],
                  centres.shape[0], centres.shape[1], block_starts, runs)
    if runs.shape[0] == 0:
        return np.zeros((p, p)), 0
    b = int(np.max(np.diff(block_starts)))

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
                       &centres[runs[q, 0], 0], &block_starts[0],
                       runs[q, 0], runs[q, 1], runs[q, 2], p, relative_floor,
                       absolute_floor, scaled_floor)
        _flush_units(&exact, p)
    total = _symmetric_from_upper(acc, p) + _symmetric_from_upper(acc_exact, p)
    return total, exact.n_coincident




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
    # The clipped total riding on the pass (its floor in the prescaled units).
    dppca_trace trace


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
                          partner_sums + local, &block.trace) == 0:
        return
    for j in range(n_steps):
        weights = block.weights + j * b
        for i in range(count):
            if weights[i] == 0.0:
                ring_partner = order[(t0 + i + steps[j] + partner_shift) % n]
                _add_exact_pair(exact, X + order[t0 + i] * p, X + ring_partner * p, p)


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
                               block.exact_pairs, &block.trace)
        for q in range(n_exact):
            ring_owner = order[t0 + block.exact_pairs[2 * q]]
            ring_partner = order[(t0 + block.exact_pairs[2 * q]
                                  + block.exact_pairs[2 * q + 1]) % n]
            _add_exact_pair(exact, X + ring_owner * p, X + ring_partner * p, p)
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
                   double floor_mantissa=0.0, int floor_exponent=0,
                   double trace_mantissa=0.0, int trace_exponent=0):
    """Unnormalised sum of d d^T / max(|d|^2, floor) over the design pairs owned by
    some ring positions, through the weighted Laplacian of the design; and, riding
    on the same pairs, the parts of the clipped sum of min(|d|^2, trace floor).

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
    trace_mantissa, trace_exponent : float, int
        The trace floor ``F``, as the floor (a zero mantissa: ``F = 0``).

    Returns
    -------
    total, n_coincident
        As for :func:`all_pairs_partial`.
    share : float
        The sum of ``min(|d|^2 / F, 1)`` over the pairs (a coincident pair adds
        0): ``F / 2`` times it is the sum of ``min(|d|^2 / 2, F / 2)``, the trace
        of the pair scatter clipped in norm at ``sqrt(F)``. ``F = 0``: the number
        of pairs that do not coincide.
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
    for name, mantissa in (("floor_mantissa", floor_mantissa),
                           ("trace_mantissa", trace_mantissa)):
        if not (mantissa == 0.0 or 0.5 <= mantissa < 1.0):
            raise ValueError(f"{name} must be 0 or lie in [0.5, 1), got {mantissa!r}.")
    if centre.shape[0] != p:
        raise ValueError(f"centre must have {p} entries, got {centre.shape[0]}.")
    _check_design(n, order, offsets, half_offset, start, stop, whole_order=False)
    if stop == start or p == 0:
        return np.zeros((p, p)), 0, 0.0
    for j in range(n_offsets):
        reach = max(reach, offsets[j])
    width = _lanes((stop - start) + reach + DESIGN_LANE_PAD)
    _check_order_window(order, n, start, width)
    if half_count:
        _check_order_window(order, n, start + half_offset, half_count + DESIGN_LANE_PAD)

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
    # rows of a few coordinates: their pairs straight from the differences
    cdef bint narrow = p <= DPPCA_NARROW
    cdef double[::1] narrow_sums = np.zeros(p * (p + 1) // 2 if narrow else 1)
    # the window loop and the hand-written accumulation: the AVX-512 route only
    block.window = (not narrow and dppca_current_lanes() == 8
                    and 0 < n_offsets <= DESIGN_OFFSET_CHUNK
                    and _consecutive_from_one(offsets))
    block.hand = dppca_current_lanes() == 8
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
    block.trace.sum = 0.0

    with nogil:
        largest = max(dppca_local_rows(&X[0, 0], &order[0], n, p, start, width,
                                       width, block.rows),
                      dppca_max_abs(&centre[0], p))
        if half_count:
            largest = max(largest, dppca_local_rows(
                &X[0, 0], &order[0], n, p, start + half_offset,
                half_count + DESIGN_LANE_PAD, width, block.half_rows))
        scale = _task_scale(largest, p, floor_mantissa, floor_exponent)
        # (narrow rows are not centred: their pairs' differences are taken
        # directly, exact to one rounding wherever the rows lie)
        for j in range(p):
            scaled_centre[j] = 0.0 if narrow else centre[j] * scale.high * scale.low
        dppca_finish_rows(block.rows, width, width, p, scale.high, scale.low,
                          &scaled_centre[0], block.norms)
        if half_count:
            dppca_finish_rows(block.half_rows, width, half_count + DESIGN_LANE_PAD, p,
                              scale.high, scale.low, &scaled_centre[0],
                              block.half_norms)
    exact = _exact_pairs(units, acc_exact, diff, p, scale.floor_mantissa,
                         scale.floor_exponent)
    exact.trace_mantissa = trace_mantissa
    exact.trace_exponent = trace_exponent
    # (0 or inf where F leaves the range of the prescaled units: every pair is
    # then at or above it, or below it, as in the units of X)
    block.trace.floor = ldexp(trace_mantissa, trace_exponent - 2 * scale.exponent)
    if narrow:
        with nogil:
            _narrow_pairs(&block, &exact, &X[0, 0], &order[0], n, start, stop,
                          &offsets[0] if n_offsets else NULL, n_offsets, half_offset,
                          scale.scaled_floor, &narrow_sums[0])
            _flush_units(&exact, p)
        return _task_result(_symmetric_from_rows(narrow_sums, p), &exact, acc_exact,
                            scale.factor, block.trace,
                            (stop - start) * n_offsets + half_count)
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
    return _task_result(total, &exact, acc_exact, scale.factor, block.trace,
                        (stop - start) * n_offsets + half_count)


cdef _task_result(total, ExactPairs* exact, double[::1] acc_exact, double factor,
                  dppca_trace trace, Py_ssize_t n_pairs):
    """A design task's ``(total, n_coincident, share)``: the sum of its kept
    pairs ``total`` (a p x p array, added to in place) with the exact path's, times
    the task's ``factor``; the riding total's share of its ``n_pairs`` pairs."""
    cdef Py_ssize_t p = total.shape[0]
    if exact.n_units:
        total += _symmetric_from_upper(acc_exact, p)
    if factor != 1.0:
        total *= factor
    return total, exact.n_coincident, exact.trace_share + _kept_share(
        trace, n_pairs - exact.n_units - exact.n_coincident)


cdef void _narrow_pairs(DesignBlock* block, ExactPairs* exact, const double* X,
                        const Py_ssize_t* order, Py_ssize_t n, Py_ssize_t start,
                        Py_ssize_t stop, const Py_ssize_t* offsets,
                        Py_ssize_t n_offsets, Py_ssize_t half_offset,
                        double weight_floor, double* sums) noexcept nogil:
    """The design pairs of narrow rows (:c:func:`dppca_narrow`), in blocks of
    DESIGN_BLOCK owners and DESIGN_OFFSET_CHUNK offsets (the size of the list of
    exact pairs); the pairs it lists (D2 below GRAM_ABSOLUTE_FLOOR in the
    prescaled units: coincident, or at the bottom of the range) go to the exact
    path, on the rows of X."""
    cdef Py_ssize_t b = DESIGN_BLOCK, p = block.p, t0, count, chunk, size, q, n_exact
    cdef Py_ssize_t local, n_half, owner, block_index, chunk_index, zero_step = 0
    for block_index in range((stop - start + b - 1) // b):
        t0 = start + block_index * b
        count = min(b, stop - t0)
        local = t0 - start
        for chunk_index in range((n_offsets + DESIGN_OFFSET_CHUNK - 1)
                                 // DESIGN_OFFSET_CHUNK):
            chunk = chunk_index * DESIGN_OFFSET_CHUNK
            size = min(DESIGN_OFFSET_CHUNK, n_offsets - chunk)
            n_exact = dppca_narrow(block.rows + local, block.rows + local, block.width,
                                   p, count, offsets + chunk, size, weight_floor,
                                   NARROW_TINY, sums, &block.trace, block.exact_pairs)
            for q in range(n_exact):
                owner = t0 + block.exact_pairs[2 * q]
                _add_exact_pair(exact, X + order[owner] * p, X + order[
                    (owner + offsets[chunk + block.exact_pairs[2 * q + 1]]) % n] * p, p)
        n_half = max(0, min(count, half_offset - t0))
        if n_half:
            n_exact = dppca_narrow(block.rows + local, block.half_rows + local,
                                   block.width, p, n_half, &zero_step, 1, weight_floor,
                                   NARROW_TINY, sums, &block.trace, block.exact_pairs)
            for q in range(n_exact):
                owner = t0 + block.exact_pairs[2 * q]
                _add_exact_pair(exact, X + order[owner] * p,
                                X + order[(owner + half_offset) % n] * p, p)


cdef _symmetric_from_rows(double[::1] sums, Py_ssize_t p):
    """The symmetric p x p matrix of its upper triangle listed row by row."""
    total = np.empty((p, p))
    cdef Py_ssize_t k, l, c = 0
    for k in range(p):
        for l in range(k, p):
            total[k, l] = total[l, k] = sums[c]
            c += 1
    return total


cdef double _kept_share(dppca_trace trace, Py_ssize_t n_kept):
    """The kept pairs' sum of min(D2 / F, 1) from their sum of min(D2, F) in the
    prescaled units. A kept pair has D2 >= 2**-900 there, so a floor at or below
    that clips every one of them (a floor that underflowed to 0 too); one that
    overflowed to inf clips none, and their shares, below 2**-1000 each, are 0."""
    if trace.floor <= GRAM_ABSOLUTE_FLOOR:
        return <double>n_kept
    return trace.sum / trace.floor


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
    total, n_coincident
        As for :func:`all_pairs_partial`.
    """
    cdef Py_ssize_t n = X_ring.shape[0], p = X_ring.shape[1]
    cdef Py_ssize_t n_offsets = offsets.shape[0], t, q, partner
    cdef double[::1] acc = np.zeros(p * p)
    cdef double[::1] diff = np.empty(p)
    cdef double[::1] units = _unit_buffer(p)
    cdef ExactPairs exact
    _check_design(n, order, offsets, half_offset, start, stop)
    if p == 0:
        return np.zeros((0, 0)), 0
    exact = _exact_pairs(units, acc, diff, p, floor_mantissa, floor_exponent)

    with nogil:
        for t in range(start, stop):
            for q in range(n_offsets):
                partner = t + offsets[q]
                if partner >= n:
                    partner -= n
                _add_exact_pair(&exact, &X_ring[t, 0], &X_ring[partner, 0], p)
            if half_offset > 0 and t < half_offset:
                partner = t + half_offset
                _add_exact_pair(&exact, &X_ring[t, 0], &X_ring[partner, 0], p)
        _flush_units(&exact, p)
    return _symmetric_from_upper(acc, p), exact.n_coincident
