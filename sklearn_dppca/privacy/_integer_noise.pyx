# cython: language_level=3
"""Exact integer noise, compiled: Bernoulli(exp(-gamma)), the integer exponential
(geometric), the discrete Laplace and the discrete Gaussian; and the quantile
search's two compiled steps, its counts below a grid (:func:`counts_below`) and
its first crossing.

Canonne, Kamath and Steinke (2020), Algorithms 1-3, one draw at a time. Every
random choice is a uniform integer below a bound, made from the generator's raw
64-bit words by masked rejection (exact), and every decision an integer
comparison: no float enters a draw. The laws are those of ``_discrete.py``'s
docstring; the draws differ from NumPy's own ``integers`` stream (they read the
bit generator directly), and are reproducible under a seed.

The bounds keep every product in 64 bits: rates ``s / t`` with ``t < 2**40``, and
the discrete Gaussian's ``sigma2 = m t / 2**k`` with ``2**(k+1) m t < 2**41``. A
proposal so far out that its acceptance's numerator would overflow (beyond
``2**31`` grid steps of the mean, probability below ``exp(-10**6)`` at every
scale used) is decided by the Python path on exact fractions.
"""


import numpy as np

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int64_t, uint64_t
from numpy.random cimport bitgen_t

cnp.import_array()

cdef uint64_t _PRODUCT_LIMIT = (<uint64_t>1) << 62


cdef struct Bits:
    # the generator and the unused bits of its last 64-bit word
    bitgen_t *source
    uint64_t word
    int left


cdef inline int _bit_length(uint64_t value) noexcept nogil:
    """The number of bits of ``value`` (0 for 0)."""
    cdef int length = 0
    cdef int step = 32
    while step:
        if value >> step:
            value >>= step
            length += step
        step >>= 1
    return length + <int>(value != 0)


cdef inline uint64_t _take(Bits *bits, int count) noexcept nogil:
    """``count`` fresh random bits (``1 <= count <= 63``): from the word in hand,
    or a new word (the bits left unused are dropped: every bit is iid uniform)."""
    cdef uint64_t value
    if bits.left < count:
        bits.word = bits.source.next_uint64(bits.source.state)
        bits.left = 64
    value = bits.word & (((<uint64_t>1) << count) - 1)
    bits.word >>= count
    bits.left -= count
    return value


cdef inline uint64_t _below(Bits *bits, uint64_t bound) noexcept nogil:
    """A uniform integer in ``[0, bound)``, ``1 <= bound <= 2**63``: as many random
    bits as ``bound - 1`` has, redrawn while the value is past the bound."""
    cdef int count = _bit_length(bound - 1)
    cdef uint64_t value
    if count == 0:         # one value: no draw needed
        return 0
    while True:
        value = _take(bits, count)
        if value < bound:
            return value


cdef inline int _bernoulli_exp_unit(Bits *bits, uint64_t num,
                                    uint64_t den) noexcept nogil:
    """Bernoulli(exp(-num/den)) for ``0 <= num <= den``: the count ``K`` of the
    first failure of Bernoulli(gamma / K), K = 1, 2, ..., is odd with probability
    ``exp(-gamma)``. (``K`` past ``2**62 / den`` has probability below
    ``1 / (2**21)!``: it stops there.)"""
    cdef uint64_t k = 1
    while den * (k + 1) < _PRODUCT_LIMIT and _below(bits, den * k) < num:
        k += 1
    return <int>(k & 1)


cdef inline int _bernoulli_exp(Bits *bits, uint64_t num, uint64_t den) noexcept nogil:
    """Bernoulli(exp(-num/den)): one Bernoulli(exp(-1)) per whole unit, then one
    for the fraction."""
    cdef uint64_t whole = num // den
    cdef uint64_t unit
    for unit in range(whole):
        if not _bernoulli_exp_unit(bits, 1, 1):
            return 0
    return _bernoulli_exp_unit(bits, num % den, den)


cdef inline int64_t _geometric(Bits *bits, uint64_t s, uint64_t t) noexcept nogil:
    """``P(y)`` proportional to ``exp(-y s / t)``, ``y >= 0`` (CKS Algorithm 2's
    first steps): ``u`` uniform below ``t`` kept with probability ``exp(-u/t)``,
    plus ``t`` times a Geometric(1 - exp(-1)), in units of ``s``."""
    cdef uint64_t u, v
    while True:
        u = _below(bits, t)
        if not _bernoulli_exp_unit(bits, u, t):
            continue
        v = 0
        while _bernoulli_exp_unit(bits, 1, 1):
            v += 1
        return <int64_t>((u + t * v) // s)


cdef inline int64_t _laplace(Bits *bits, uint64_t s, uint64_t t) noexcept nogil:
    """``P(z)`` proportional to ``exp(-|z| s / t)`` (CKS Algorithm 2): a random
    sign, and ``-0`` redrawn so that 0 is counted once."""
    cdef int64_t y
    cdef int negative
    while True:
        y = _geometric(bits, s, t)
        negative = <int>_below(bits, 2)
        if negative and y == 0:
            continue
        return -y if negative else y


cdef Bits _bits(rng) except *:
    """Random bits from the bit generator of a ``numpy.random.Generator``."""
    cdef Bits bits
    bits.source = <bitgen_t *>PyCapsule_GetPointer(rng.bit_generator.capsule,
                                                   "BitGenerator")
    bits.word = 0
    bits.left = 0
    return bits


def exponential(rng, uint64_t s, uint64_t t, Py_ssize_t size, bint two_sided):
    """``size`` draws of rate ``s / t`` (int64): discrete Laplace when
    ``two_sided``, else integer exponentials (``>= 0``)."""
    cdef Bits state = _bits(rng)
    cdef Bits *bits = &state
    cdef cnp.ndarray[int64_t, ndim=1] out = np.empty(size, dtype=np.int64)
    cdef Py_ssize_t i
    for i in range(size):
        out[i] = _laplace(bits, s, t) if two_sided else _geometric(bits, s, t)
    return out


def gaussian(rng, uint64_t m, uint64_t t, unsigned int k, Py_ssize_t size, slow_accept):
    """``size`` draws of ``N_Z(0, m t / 2**k)`` (CKS Algorithm 3; int64).

    A discrete Laplace proposal ``y`` of scale ``t``, accepted with probability
    ``exp(-(2**k |y| - m)**2 / (2**(k+1) m t))``. ``slow_accept(y)`` decides a
    proposal whose numerator would overflow, on exact fractions.
    """
    cdef Bits state = _bits(rng)
    cdef Bits *bits = &state
    cdef cnp.ndarray[int64_t, ndim=1] out = np.empty(size, dtype=np.int64)
    cdef uint64_t den = ((<uint64_t>1) << (k + 1)) * m * t
    cdef int64_t y, offset
    cdef int64_t reach = (<int64_t>1) << 31
    cdef Py_ssize_t i = 0
    cdef int accepted
    while i < size:
        y = _laplace(bits, 1, t)
        offset = (y if y >= 0 else -y)
        if offset >= (reach >> k):
            accepted = bool(slow_accept(int(y)))
        else:
            offset = (offset << k) - <int64_t>m
            accepted = _bernoulli_exp(bits, <uint64_t>(offset * offset), den)
        if accepted:
            out[i] = y
            i += 1
    return out


def first_crossing(rng, counts, double target, uint64_t s, uint64_t t):
    """The first index ``i`` with ``counts[i] + E_i >= target`` for independent
    integer exponentials ``E_i`` of rate ``s / t``, or -1.

    ``P(E >= g) = exp(-g s / t)`` for an integer ``g >= 0``: each point is one
    Bernoulli(exp(-g s / t)) with ``g = ceil(target - counts[i])``, drawn only up to
    the first crossing. ``g s`` is split against ``t`` so that no product leaves
    64 bits (``t <= 2**40``, ``s < 2**22 t``).
    """
    cdef Bits state = _bits(rng)
    cdef Bits *bits = &state
    cdef cnp.ndarray[int64_t, ndim=1] values = np.ascontiguousarray(counts, dtype=np.int64)
    cdef Py_ssize_t i
    cdef double gap
    cdef uint64_t g, whole, rest, unit
    cdef int crossed
    for i in range(values.shape[0]):
        gap = target - <double>values[i]
        if gap <= 0:
            return i
        g = <uint64_t>gap
        if <double>g < gap:            # ceil
            g += 1
        # g s / t = (g // t) s + ((g % t) s) / t
        whole = (g // t) * s + ((g % t) * s) // t
        rest = ((g % t) * s) % t
        crossed = 1
        for unit in range(whole):
            if not _bernoulli_exp_unit(bits, 1, 1):
                crossed = 0
                break
        if crossed and _bernoulli_exp_unit(bits, rest, t):
            return i
    return -1


def bernoulli_exp(rng, num, uint64_t den):
    """Bernoulli(exp(-num/den)) for each of the int64 ``num >= 0`` (bool array)."""
    cdef Bits state = _bits(rng)
    cdef Bits *bits = &state
    cdef cnp.ndarray[int64_t, ndim=1] nums = np.ascontiguousarray(num, dtype=np.int64)
    cdef cnp.ndarray[cnp.npy_bool, ndim=1] out = np.empty(nums.shape[0], dtype=bool)
    cdef Py_ssize_t i
    for i in range(nums.shape[0]):
        out[i] = _bernoulli_exp(bits, <uint64_t>nums[i], den)
    return out


def counts_below(const double[::1] values, const double[::1] guess,
                 const double[::1] grid):
    """``#{x < t_i}`` for every point ``t_i`` of the increasing ``grid``: a
    search's whole read of the data, one pass over the values.

    Each value's bin, the number of grid points at or below it
    (``searchsorted(grid, x, "right")``; NaN past the end, as a sort puts it),
    is read off ``guess`` (a closed form of the grid's, any float: NaN and
    values out of range are clamped) where the grid confirms it, by binary
    search where it does not; the bins are counted and the counts summed from
    the bottom. Exact whatever the guesses (a good guess only saves the
    search).
    """
    cdef Py_ssize_t n = values.shape[0], size = grid.shape[0], i, bin_index
    cdef Py_ssize_t low, high, middle
    cdef double x, g
    if guess.shape[0] != n:
        raise ValueError(f"guess must have one entry per value ({n}), got "
                         f"{guess.shape[0]}.")
    cdef cnp.ndarray[int64_t, ndim=1] counts = np.zeros(size + 1, dtype=np.int64)
    cdef int64_t* bins = <int64_t*>counts.data
    with nogil:
        for i in range(n):
            x = values[i]
            if x != x:                       # NaN: past every grid point
                bins[size] += 1
                continue
            g = guess[i]
            # (NaN and out-of-range guesses are clamped; the check decides)
            if not g >= 0.0:
                bin_index = 0
            elif g >= <double>size:
                bin_index = size
            else:
                bin_index = <Py_ssize_t>g
            if (bin_index == 0 or grid[bin_index - 1] <= x) and \
                    (bin_index == size or x < grid[bin_index]):
                bins[bin_index] += 1
                continue
            low, high = 0, size              # first grid point above x
            while low < high:
                middle = (low + high) // 2
                if grid[middle] <= x:
                    low = middle + 1
                else:
                    high = middle
            bins[low] += 1
        for i in range(1, size + 1):
            bins[i] += bins[i - 1]
    return counts[:size]
