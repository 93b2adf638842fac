# cython: language_level=3
"""Compiled kernels for the spherical Kendall matrix.

Two entry points, both called by :mod:`sklearn_dppca._kendall` once per parallel
task; each returns the *unnormalised* partial sum of ``u u^T`` over its pairs:

``all_pairs_partial``
    Sums over all pairs of rows in a list of block pairs with the Gram-product
    formulation (two DGEMMs and one DSYRK per block pair, O(b^2 p) work). Pairs whose
    Gram distance would be inaccurate are taken out of the Gram sum and computed
    exactly from their difference vector instead.
``design_partial``
    Sums over the pairs of a circulant pair design (the incomplete U-statistic),
    each pair computed exactly from its difference vector; the unit vectors are
    buffered and added with DSYRK.

Both release the GIL for all their numerical work, allocate their buffers (as NumPy
arrays, so that ``tracemalloc`` sees them) before releasing it, and never write to
their inputs.

Matrix layout: BLAS is column-major and our arrays are row-major, so a C array of
``rows x cols`` is handed to BLAS as its transpose. Accumulators are ``p x p``
column-major arrays of which only the upper triangle (row ``k <= `` column ``l``,
element ``k + l * p``) is maintained until the final symmetrisation.
"""

import numpy as np

from libc.float cimport DBL_MAX
from libc.math cimport fabs, frexp, ldexp, sqrt
from libc.string cimport memset
from scipy.linalg.cython_blas cimport dgemm, dsyrk

# A pair goes to the exact path when its Gram squared distance
# D2 = |a|^2 + |b|^2 - 2 a.b falls to or below this share of S = |a|^2 + |b|^2.
# Rounding in the Gram product, the norms and the four accumulated Gram-form terms
# is a few ulps of S per pair, so the relative error of a kept pair's term is about
# (a few) * eps / GRAM_RELATIVE_FLOOR ~ 1e-15; see the module notes in _kendall.py.
GRAM_RELATIVE_FLOOR = 0.0625
# Below this S (after the power-of-two prescaling that puts max |x| in [0.5, 1)),
# products of coordinates can fall into the subnormal range and lose relative
# accuracy; such pairs are rare and go to the exact path. 2**-900 leaves a margin
# of 2**120 above the subnormal range.
GRAM_NORM_FLOOR = 2.0 ** -900

# The exact path squares the coordinates of a difference directly when its largest
# magnitude lies in [2**-500, 2**500]; outside, it first rescales the difference by
# an exact power of two so that neither the squares overflow nor they underflow.
cdef double SAFE_LOW = 2.0 ** -500
cdef double SAFE_HIGH = 2.0 ** 500

# Unit vectors buffered by ``design_partial`` before each DSYRK: about 256 KiB.
DESIGN_BUFFER_BYTES = 262144


cdef struct CoincidentPairs:
    # Number of coincident pairs seen and the lexicographically first one, in the
    # caller's original row numbering (first_i < first_j; -1 when none).
    Py_ssize_t count
    Py_ssize_t first_i
    Py_ssize_t first_j


cdef inline void _note_coincident(CoincidentPairs* seen, Py_ssize_t row_a,
                                  Py_ssize_t row_b) noexcept nogil:
    cdef Py_ssize_t low = row_a if row_a < row_b else row_b
    cdef Py_ssize_t high = row_b if row_a < row_b else row_a
    seen.count += 1
    if (seen.first_i < 0 or low < seen.first_i
            or (low == seen.first_i and high < seen.first_j)):
        seen.first_i = low
        seen.first_j = high


cdef double _difference(const double* x_i, const double* x_j, Py_ssize_t p,
                        double* diff) noexcept nogil:
    """Write x_i - x_j into diff and return its largest absolute coordinate.

    Finite inputs near +-DBL_MAX can overflow the subtraction; the difference is then
    taken at half scale, which is exact at those magnitudes and leaves the unit
    vector unchanged.
    """
    cdef Py_ssize_t k
    cdef double largest = 0.0, magnitude
    for k in range(p):
        diff[k] = x_i[k] - x_j[k]
        magnitude = fabs(diff[k])
        if magnitude > largest:
            largest = magnitude
    if largest > DBL_MAX:
        largest = 0.0
        for k in range(p):
            diff[k] = 0.5 * x_i[k] - 0.5 * x_j[k]
            magnitude = fabs(diff[k])
            if magnitude > largest:
                largest = magnitude
    return largest


cdef double _inverse_squared_norm(double* diff, Py_ssize_t p,
                                  double largest) noexcept nogil:
    """Return 1 / |diff|^2, first rescaling diff by a power of two if needed.

    ``largest`` is max_k |diff[k]| > 0. Scaling by 2**-e is exact, so the unit
    vector diff / |diff| is unchanged while |diff|^2 stays in a safe range.
    """
    cdef Py_ssize_t k
    cdef int exponent
    cdef double squared_norm = 0.0
    if largest < SAFE_LOW or largest > SAFE_HIGH:
        frexp(largest, &exponent)
        for k in range(p):
            diff[k] = ldexp(diff[k], -exponent)
    for k in range(p):
        squared_norm += diff[k] * diff[k]
    return 1.0 / squared_norm


cdef void _add_exact_pair(const double* x_i, const double* x_j, Py_ssize_t p,
                          double* diff, double* acc, CoincidentPairs* seen,
                          Py_ssize_t row_i, Py_ssize_t row_j) noexcept nogil:
    """Add d d^T / |d|^2 (upper triangle) for d = x_i - x_j, or note a coincidence."""
    cdef Py_ssize_t k, l
    cdef double largest, inverse, scaled
    largest = _difference(x_i, x_j, p, diff)
    if largest == 0.0:
        _note_coincident(seen, row_i, row_j)
        return
    inverse = _inverse_squared_norm(diff, p, largest)
    for l in range(p):
        scaled = diff[l] * inverse
        for k in range(l + 1):
            acc[k + l * p] += diff[k] * scaled


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


cdef Py_ssize_t _weight_row(double* gram_row, double norm_i,
                            const double* norms_j, Py_ssize_t start,
                            Py_ssize_t stop, double* column_sums,
                            double relative_floor, double norm_floor) noexcept nogil:
    """Turn one row of A B^T into weights w = 1 / D2 in place; return #exact pairs.

    A pair whose distance is not reliable from the Gram product gets w = 0 here
    (1 / D2 is never 0 otherwise, so the zeros mark the pairs for the exact path).
    Written without calls or early exits so that the compiler can vectorise it.
    """
    cdef Py_ssize_t j, n_exact = 0
    cdef double both, squared_distance, weight
    cdef int reliable
    for j in range(start, stop):
        both = norm_i + norms_j[j]
        squared_distance = both - 2.0 * gram_row[j]
        # Bitwise & and a select (no branch) keep the loop vectorisable; the
        # division of an unreliable pair is computed and then discarded.
        reliable = (squared_distance > relative_floor * both) & (both > norm_floor)
        weight = 1.0 / squared_distance
        weight = weight if reliable else 0.0
        n_exact += 1 - reliable
        gram_row[j] = weight
        column_sums[j] += weight
    return n_exact


cdef void _add_scaled_syrk(const double* rows, Py_ssize_t n_rows, Py_ssize_t p,
                           const double* weights, double* scratch,
                           double* acc) noexcept nogil:
    """acc += sum_i weights[i] rows[i, :p] rows[i, :p]^T (upper), via DSYRK.

    ``rows`` and ``scratch`` have row stride p + 1; weights are >= 0.
    """
    cdef Py_ssize_t i, k
    cdef double root
    cdef int n = <int>p, k_dim = <int>n_rows, ld = <int>(p + 1), ldc = <int>p
    cdef double one = 1.0
    cdef char upper = b'U'
    cdef char no_trans = b'N'
    if n_rows == 0:
        return
    for i in range(n_rows):
        root = sqrt(weights[i])
        for k in range(p):
            scratch[i * (p + 1) + k] = root * rows[i * (p + 1) + k]
    dsyrk(&upper, &no_trans, &n, &k_dim, &one, scratch, &ld, &one, acc, &ldc)


cdef void _subtract_cross_terms(const double* centred, const double* weighted,
                                Py_ssize_t n_rows, Py_ssize_t p, double* cross,
                                double* acc) noexcept nogil:
    """acc -= M + M^T (upper) with M = A^T T, A = centred, T = weighted (stride p+1)."""
    cdef Py_ssize_t k, l
    cdef int n = <int>p, k_dim = <int>n_rows, ld = <int>(p + 1), ldc = <int>p
    cdef double one = 1.0, zero = 0.0
    cdef char no_trans = b'N'
    cdef char trans = b'T'
    dgemm(&no_trans, &trans, &n, &n, &k_dim, &one, <double*>weighted, &ld,
          <double*>centred, &ld, &zero, cross, &ldc)
    for l in range(p):
        for k in range(l + 1):
            acc[k + l * p] -= cross[k + l * p] + cross[l + k * p]


cdef void _block_run(const double* X, const double* X_scaled,
                     const double* centre, const Py_ssize_t* block_starts,
                     Py_ssize_t block_i, Py_ssize_t first_j, Py_ssize_t stop_j,
                     Py_ssize_t p, const Py_ssize_t* order,
                     double* A, double* B, double* gram, double* weighted,
                     double* norms_a, double* norms_b, double* column_sums,
                     double* diagonal_sums, double* scratch, double* cross,
                     double* diff, double* acc, double* acc_exact,
                     CoincidentPairs* seen, double relative_floor,
                     double norm_floor) noexcept nogil:
    """Add the pairs of block pairs (block_i, J), first_j <= J < stop_j, to acc.

    All blocks are centred by ``centre`` (that of block_i), so A = X_I - c is built
    once and W_IJ B_J is accumulated over J into ``weighted`` (its last column
    collects the row sums W 1). For J = I only pairs i < j count: W is then strictly
    upper triangular and B = A, so the column sums join the row sums.
    """
    cdef Py_ssize_t start_i = block_starts[block_i]
    cdef Py_ssize_t size_i = block_starts[block_i + 1] - start_i
    cdef Py_ssize_t block_j, start_j, size_j, i, j, first_col, n_exact
    cdef const double* B_rows
    cdef const double* norms_j
    cdef double* gram_row
    cdef bint diagonal
    cdef int m_dim, n_dim, k_dim, ld = <int>(p + 1), p_plus = <int>(p + 1)
    cdef double one = 1.0, zero = 0.0
    cdef char no_trans = b'N'
    cdef char trans = b'T'

    _centre_block(X_scaled + start_i * p, size_i, p, centre, A, norms_a)
    memset(weighted, 0, size_i * (p + 1) * sizeof(double))
    memset(diagonal_sums, 0, size_i * sizeof(double))
    for block_j in range(first_j, stop_j):
        diagonal = block_j == block_i
        start_j = block_starts[block_j]
        size_j = block_starts[block_j + 1] - start_j
        if diagonal:
            B_rows = A
            norms_j = norms_a
        else:
            _centre_block(X_scaled + start_j * p, size_j, p, centre, B, norms_b)
            B_rows = B
            norms_j = norms_b
        # gram (row-major size_i x size_j) = A B^T
        m_dim = <int>size_j
        n_dim = <int>size_i
        k_dim = <int>p
        dgemm(&trans, &no_trans, &m_dim, &n_dim, &k_dim, &one, <double*>B_rows, &ld,
              A, &ld, &zero, gram, &m_dim)
        memset(column_sums, 0, size_j * sizeof(double))
        for i in range(size_i):
            gram_row = gram + i * size_j
            first_col = 0
            if diagonal:
                first_col = i + 1
                memset(gram_row, 0, first_col * sizeof(double))
            n_exact = _weight_row(gram_row, norms_a[i], norms_j, first_col, size_j,
                                  column_sums, relative_floor, norm_floor)
            if n_exact:
                for j in range(first_col, size_j):
                    if gram_row[j] == 0.0:
                        _add_exact_pair(X + (start_i + i) * p, X + (start_j + j) * p,
                                        p, diff, acc_exact, seen,
                                        order[start_i + i], order[start_j + j])
        # weighted (row-major size_i x (p+1)) += W [B 1]
        m_dim = p_plus
        n_dim = <int>size_i
        k_dim = <int>size_j
        dgemm(&no_trans, &no_trans, &m_dim, &n_dim, &k_dim, &one, <double*>B_rows, &ld,
              gram, &k_dim, &one, weighted, &ld)
        if diagonal:
            for i in range(size_i):
                diagonal_sums[i] += column_sums[i]
        else:
            _add_scaled_syrk(B, size_j, p, column_sums, scratch, acc)
    for i in range(size_i):
        diagonal_sums[i] += weighted[i * (p + 1) + p]
    _add_scaled_syrk(A, size_i, p, diagonal_sums, scratch, acc)
    _subtract_cross_terms(A, weighted, size_i, p, cross, acc)


def _symmetric_from_upper(acc, p):
    """Full symmetric ``(p, p)`` array from a column-major upper-triangle buffer."""
    upper_rowmajor = np.asarray(acc).reshape(p, p).T  # element [k, l] = acc[k + l p]
    return np.triu(upper_rowmajor) + np.triu(upper_rowmajor, 1).T


def all_pairs_partial(const double[:, ::1] X, const double[:, ::1] X_scaled,
                      const double[:, ::1] centres, const Py_ssize_t[::1] block_starts,
                      const Py_ssize_t[:, ::1] runs, const Py_ssize_t[::1] order):
    """Unnormalised sum of u u^T over the pairs of some block pairs.

    Parameters
    ----------
    X : ndarray of shape (n, p), float64, C-contiguous
        The rows, in block order, at their original scale (for exact differences).
    X_scaled : ndarray of shape (n, p)
        ``X`` times a power of two that puts ``max |X|`` in [0.5, 1) (for Gram work).
    centres : ndarray of shape (n_blocks, p)
        A centre per block, on the scale of ``X_scaled``.
    block_starts : ndarray of shape (n_blocks + 1,), intp
        Row ``block_starts[b]`` starts block ``b``; the last entry is ``n``.
    runs : ndarray of shape (n_runs, 3), intp
        Each row ``(I, J0, J1)`` asks for the block pairs ``(I, J)``, ``I <= J0 <= J
        < J1``; the pairs of a diagonal block pair ``(I, I)`` are those ``i < j``.
    order : ndarray of shape (n,), intp
        Original row number of each row of ``X`` (used to report coincident pairs).

    Returns
    -------
    total : ndarray of shape (p, p)
        Sum of ``d d^T / |d|^2`` over the non-coincident pairs, ``d = x_i - x_j``.
    n_coincident : int
        Number of pairs with ``x_i == x_j``.
    first_coincident : tuple of two int
        The lexicographically first coincident pair in original numbering, or
        ``(-1, -1)``.
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    cdef Py_ssize_t n_blocks = block_starts.shape[0] - 1
    cdef Py_ssize_t largest_block = 0, b, q
    for b in range(n_blocks):
        largest_block = max(largest_block, block_starts[b + 1] - block_starts[b])

    # Work buffers, allocated once per call.
    cdef double[::1] A = np.empty(largest_block * (p + 1))
    cdef double[::1] B = np.empty(largest_block * (p + 1))
    cdef double[::1] scratch = np.empty(largest_block * (p + 1))
    cdef double[::1] weighted = np.empty(largest_block * (p + 1))
    cdef double[::1] gram = np.empty(largest_block * largest_block)
    cdef double[::1] norms_a = np.empty(largest_block)
    cdef double[::1] norms_b = np.empty(largest_block)
    cdef double[::1] column_sums = np.empty(largest_block)
    cdef double[::1] diagonal_sums = np.empty(largest_block)
    cdef double[::1] cross = np.empty(p * p)
    cdef double[::1] diff = np.empty(p)
    cdef double[::1] acc = np.zeros(p * p)
    cdef double[::1] acc_exact = np.zeros(p * p)
    cdef CoincidentPairs seen
    cdef double relative_floor = GRAM_RELATIVE_FLOOR
    cdef double norm_floor = GRAM_NORM_FLOOR
    seen.count = 0
    seen.first_i = -1
    seen.first_j = -1

    if n == 0 or runs.shape[0] == 0:
        return np.zeros((p, p)), 0, (-1, -1)
    with nogil:
        for q in range(runs.shape[0]):
            _block_run(&X[0, 0], &X_scaled[0, 0], &centres[runs[q, 0], 0],
                       &block_starts[0], runs[q, 0], runs[q, 1], runs[q, 2], p,
                       &order[0], &A[0], &B[0], &gram[0], &weighted[0],
                       &norms_a[0], &norms_b[0], &column_sums[0],
                       &diagonal_sums[0], &scratch[0], &cross[0], &diff[0],
                       &acc[0], &acc_exact[0], &seen, relative_floor, norm_floor)
    total = (_symmetric_from_upper(acc, p) + _symmetric_from_upper(acc_exact, p))
    return total, seen.count, (seen.first_i, seen.first_j)


def design_partial(const double[:, ::1] X_ring, const Py_ssize_t[::1] order,
                   const Py_ssize_t[::1] offsets, Py_ssize_t half_offset,
                   Py_ssize_t start, Py_ssize_t stop):
    """Unnormalised sum of u u^T over the design pairs owned by ring positions.

    Ring position ``t`` in ``[start, stop)`` owns the pairs ``(t, t + o mod n)`` for
    each ``o`` in ``offsets`` and, when ``half_offset > 0`` and ``t < half_offset``,
    the pair ``(t, t + half_offset)``; every design pair has exactly one owner.

    Parameters
    ----------
    X_ring : ndarray of shape (n, p), float64, C-contiguous
        The rows in ring order (row ``t`` is original row ``order[t]``).
    order : ndarray of shape (n,), intp
        Original row number at each ring position.
    offsets : ndarray of shape (n_offsets,), intp
        Forward offsets, each in ``[1, n/2)``.
    half_offset : int
        ``n / 2`` when the design uses the antipodal pairs, else 0.
    start, stop : int
        Range of ring positions.

    Returns
    -------
    total, n_coincident, first_coincident
        As for :func:`all_pairs_partial`.
    """
    cdef Py_ssize_t n = X_ring.shape[0], p = X_ring.shape[1]
    cdef Py_ssize_t n_offsets = offsets.shape[0]
    cdef Py_ssize_t capacity = max(16, DESIGN_BUFFER_BYTES // (8 * p))
    cdef double[::1] units = np.empty(capacity * p)
    cdef double[::1] diff = np.empty(p)
    cdef double[::1] acc = np.zeros(p * p)
    cdef CoincidentPairs seen
    cdef Py_ssize_t t, q, partner, filled = 0
    seen.count = 0
    seen.first_i = -1
    seen.first_j = -1

    with nogil:
        for t in range(start, stop):
            for q in range(n_offsets + 1):
                if q < n_offsets:
                    partner = t + offsets[q]
                    if partner >= n:
                        partner -= n
                elif half_offset > 0 and t < half_offset:
                    partner = t + half_offset
                else:
                    break
                if _add_unit_difference(&X_ring[t, 0], &X_ring[partner, 0], p,
                                        &diff[0], &units[filled * p]):
                    filled += 1
                    if filled == capacity:
                        _flush_units(&units[0], filled, p, &acc[0])
                        filled = 0
                else:
                    _note_coincident(&seen, order[t], order[partner])
        _flush_units(&units[0], filled, p, &acc[0])
    return _symmetric_from_upper(acc, p), seen.count, (seen.first_i, seen.first_j)


cdef bint _add_unit_difference(const double* x_i, const double* x_j, Py_ssize_t p,
                               double* diff, double* unit) noexcept nogil:
    """Write (x_i - x_j) / |x_i - x_j| into unit; False if the rows coincide."""
    cdef Py_ssize_t k
    cdef double largest, inverse_norm
    largest = _difference(x_i, x_j, p, diff)
    if largest == 0.0:
        return False
    inverse_norm = sqrt(_inverse_squared_norm(diff, p, largest))
    for k in range(p):
        unit[k] = diff[k] * inverse_norm
    return True


cdef void _flush_units(const double* units, Py_ssize_t count, Py_ssize_t p,
                       double* acc) noexcept nogil:
    """acc += U^T U (upper) for the ``count`` buffered unit rows U, via DSYRK."""
    cdef int n = <int>p, k_dim = <int>count, ld = <int>p
    cdef double one = 1.0
    cdef char upper = b'U'
    cdef char no_trans = b'N'
    if count > 0:
        dsyrk(&upper, &no_trans, &n, &k_dim, &one, <double*>units, &ld, &one, acc, &ld)
