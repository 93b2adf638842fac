"""Exact sums of clipped half squared differences over all pairs of a sample.

``clipped_pair_mean`` releases (through a mechanism) the mean over pairs of
``min((y_i - y_j)^2 / 2, C)``, whose sensitivity ``2 C / n`` is small: the
computed value must be right to a small fraction of it. Floating prefix sums are
not (they cancel across long runs of close values), so the sum here is exact in
integers on a fine grid, and only the last division rounds.

The steps, for sorted values:

1. *Clusters.* A gap wider than the reach ``sqrt(2 C)`` separates two clusters;
   no close pair crosses it.
2. *Grid.* Each value becomes the integer ``Y = floor((y - c) / delta)``, with
   ``c`` its cluster's smallest value and ``delta`` a power of two at most
   ``2**-72`` of the reach and of the range. ``y - c`` is split exactly into two
   floats (Knuth's two-sum), so ``Y`` is the exact floor (one unit more only
   where a scaled rounding error underflows). ``Y`` is kept as
   ``high * 2**60 + low`` in two int64.
3. *Close partners.* A pair is close when its grid difference is at most
   ``R = floor(sqrt(2 C) / delta)``, an exact integer. A float search brackets the
   end of each value's run of close partners, and a bisection on the integer
   coordinates finds it exactly.
4. *Sum.* ``sum over close pairs (Y_j - Y_i)^2`` is assembled from products of
   20-bit limbs of ``Y`` and of ``w_i Y_i - 2 L_i`` (window sums ``L_i``, counts
   ``w_i``); the limb products are summed as integer-valued floats below
   ``2**52`` (exact in any order) and put together in Python integers.

Error, per pair: the grid moves a difference by less than ``2 delta``, and the
close/far decision is taken on the grid, so each term differs from the exact
``min(d^2 / 2, C)`` by less than ``2 delta sqrt(2 C) <= 2**-70 C`` (and by less
than ``2 delta min(sqrt(2 C), range) <= 2**-71 min(2 C, range^2)``); the mean
over pairs is then exact on the grid and rounded once to a float (at most
``2**-53 C``, as the mean is at most ``C``).
"""

import math
from fractions import Fraction

import numpy as np

# The grid step is a power of two at most 2**-_GRID_BITS of min(reach, range):
# the grid error is then below 2**(2 - _GRID_BITS) C per pair, and below a
# relative 2**(1 - _GRID_BITS) n^2 of the result.
_GRID_BITS = 72
# low holds the low _LOW_BITS bits of a grid coordinate, high the rest. A
# coordinate is below n * 2**(_GRID_BITS + 1), so (high, low) splits it exactly
# for n < 2**(_LOW_BITS + 52 - _GRID_BITS) = 2**40.
_LOW_BITS = 60
_LOW_MASK = (1 << _LOW_BITS) - 1
_LIMB_BITS = 20
_LIMB_MASK = (1 << _LIMB_BITS) - 1
# Rows per float product: limb products (< 2**40) summed over 2**12 rows stay
# below 2**52, so every partial sum is an exact integer in float64.
_CHUNK = 1 << (52 - 2 * _LIMB_BITS)
# Rows per block of the exact sum (bounds the memory; 2**20 / _CHUNK float
# partial sums, each below 2**52, add up in int64).
_ROWS = 1 << 20


def clipped_pair_sum(y, clip):
    """The mean of ``min((y_i - y_j)^2 / 2, clip)`` over the pairs, exact on the
    grid and rounded once.

    ``y`` is sorted and finite, with at least two values; ``clip`` is positive
    and may be ``inf``. Returns a float (``inf`` if the exact value overflows).
    """
    n = y.size
    with np.errstate(over="ignore"):
        span = y[-1] - y[0]
    if span == 0:
        return 0.0
    reach = math.sqrt(2.0) * math.sqrt(clip)
    if math.isinf(reach) and math.isinf(span):
        return math.inf  # the mean exceeds span^2 / n^2, beyond any float
    grid_exponent = math.frexp(min(reach, span))[1] - 1 - _GRID_BITS
    if math.isinf(clip):
        cluster_end, origin = np.full(n, n), np.full(n, y[0])
        high, low = _grid_coordinates(y, origin, grid_exponent)
        end = cluster_end
    else:
        # Float margins far wider than every rounding above and far narrower
        # than the reach: a pair closer than reach_low is close on the grid, one
        # further than reach_high is far.
        reach_low, reach_high = reach * (1 - 2.0**-40), reach * (1 + 2.0**-40)
        cluster_end, origin = _clusters(y, reach_high)
        high, low = _grid_coordinates(y, origin, grid_exponent)
        end = _close_ends(y, high, low, _grid_reach(clip, grid_exponent),
                          reach_low, reach_high, cluster_end)
    n_pairs = n * (n - 1) // 2
    n_far = n_pairs - int(np.sum(end - np.arange(1, n + 1)))
    squares = Fraction(_window_square_sum(high, low, end)) * Fraction(2) ** (2 * grid_exponent)
    total = squares / 2 + (Fraction(clip) * n_far if n_far else 0)
    try:
        return float(total / n_pairs)
    except OverflowError:
        return math.inf


def _grid_reach(clip, grid_exponent):
    """The largest integer ``R`` with ``(R delta)^2 / 2 <= clip``, exactly, capped
    above every grid difference (so that ``R >> _LOW_BITS`` fits an int64)."""
    limit = math.isqrt(math.floor(Fraction(clip) * 2 / Fraction(2) ** (2 * grid_exponent)))
    return min(limit, (1 << (_LOW_BITS + 61)) - 1)


def _clusters(y, reach_high):
    """End index (exclusive) of each value's cluster, and its smallest value."""
    n = y.size
    # fl(gap) > reach_high implies the exact gap exceeds it: a certain split.
    with np.errstate(over="ignore"):
        split = np.diff(y) > reach_high
    starts = np.concatenate(([0], np.flatnonzero(split) + 1))
    ends = np.append(starts[1:], n)
    cluster = np.cumsum(np.concatenate(([0], split)))
    return ends[cluster], y[starts][cluster]


def _two_sum(a, b):
    """``a + b`` as a float and its exact rounding error (Knuth)."""
    total = a + b
    b_part = total - a
    return total, (a - (total - b_part)) + (b - b_part)


def _grid_coordinates(y, origin, grid_exponent):
    """``floor((y - origin) / 2**grid_exponent)`` as ``(high, low)`` int64 with
    ``value = high * 2**_LOW_BITS + low`` and ``0 <= low < 2**_LOW_BITS``."""
    difference, error = _two_sum(y, -origin)
    scaled = np.ldexp(difference, -grid_exponent)
    tail = np.ldexp(error, -grid_exponent)
    whole = np.floor(scaled)
    # floor(fraction + tail) exactly: round, then step down when the rounded sum
    # is an integer and the exact one lies just below it.
    rounded, rest = _two_sum(scaled - whole, tail)
    step = np.floor(rounded)
    step -= (step == rounded) & (rest < 0)
    high = np.floor(np.ldexp(whole, -_LOW_BITS))
    low = (whole - np.ldexp(high, _LOW_BITS)).astype(np.int64) + step.astype(np.int64)
    high = high.astype(np.int64) + (low >> _LOW_BITS)
    low &= _LOW_MASK
    below = high < 0  # y >= origin: only an underflowed tail can get here
    high[below], low[below] = 0, 0
    return high, low


def _close_ends(y, high, low, limit, reach_low, reach_high, cluster_end):
    """For each i, the first index j > i with ``Y_j - Y_i > limit`` (or the
    cluster's end): a float bracket, then an exact bisection on the grid."""
    n = y.size
    after = np.arange(1, n + 1)
    with np.errstate(over="ignore"):
        # nextafter makes the rounded sums bounds of the exact ones.
        sure_in = np.nextafter(y + reach_low, -np.inf)
        sure_out = np.nextafter(y + reach_high, np.inf)
    lo = np.searchsorted(y, sure_in, side="right")
    hi = np.minimum(np.searchsorted(y, sure_out, side="right"), cluster_end)
    lo = np.clip(lo, after, hi)
    rows = np.flatnonzero(lo < hi)
    # Y_i + limit for those rows, normalised like the coordinates (no overflow).
    last_low = low[rows] + (limit & _LOW_MASK)
    last_high = high[rows] + (limit >> _LOW_BITS) + (last_low >> _LOW_BITS)
    last_low &= _LOW_MASK
    first, stop = lo[rows], hi[rows]
    while rows.size:
        middle = (first + stop) // 2
        inside = (high[middle] < last_high) | (
            (high[middle] == last_high) & (low[middle] <= last_low))
        first = np.where(inside, middle + 1, first)
        stop = np.where(inside, stop, middle)
        lo[rows] = first
        still = first < stop
        rows, first, stop = rows[still], first[still], stop[still]
        last_low, last_high = last_low[still], last_high[still]
    return lo


def _window_square_sum(high, low, end):
    """``sum_i sum_{i < j < end_i} (Y_j - Y_i)^2`` exactly, as a Python int.

    It is ``sum_i Y_i (w_i Y_i - 2 L_i)``, with ``L_i`` the sum of ``Y`` over
    ``i``'s window and ``w_i`` the number of windows holding ``i`` plus the size
    of its own. The second factor is carried into limbs, and the limb products
    summed (by blocks of rows, to bound the memory).
    """
    n = high.size
    index = np.arange(n)
    held = np.cumsum(np.bincount(index + 1, minlength=n + 1)
                     - np.bincount(end, minlength=n + 1))[:n]
    weight = held + (end - index - 1)  # < 2n < 2**40: at most two limbs
    weight_limbs = 1 if int(weight.max()) <= _LIMB_MASK else 2
    n_high = max(1, -(-int(high.max()).bit_length() // _LIMB_BITS))
    prefixes = [np.concatenate(([0], np.cumsum(limb))) for limb in _limbs(high, low, n_high)]
    total = 0
    for start in range(0, n, _ROWS):
        rows = slice(start, start + _ROWS)
        limbs = _limbs(high[rows], low[rows], n_high)
        coefficients = _limb_products(
            [weight[rows] & _LIMB_MASK, weight[rows] >> _LIMB_BITS][:weight_limbs], limbs)
        for k, prefix in enumerate(prefixes):
            coefficients[k] -= 2 * (prefix[end[rows]] - prefix[start + 1:start + _ROWS + 1])
        # |coefficients| < 2**41 + 2**21 n: int64, and the factor < 2n 2**(20 m)
        # for m limbs of Y fits m + 2 limbs (n < 2**39).
        total += _dot(_carry(coefficients, len(limbs) + 2), limbs)
    return total


def _limbs(high, low, n_high):
    """20-bit limbs of ``high * 2**60 + low``, least significant first."""
    return ([(low >> shift) & _LIMB_MASK for shift in range(0, _LOW_BITS, _LIMB_BITS)]
            + [(high >> (_LIMB_BITS * k)) & _LIMB_MASK for k in range(n_high)])


def _limb_products(first, second):
    """Coefficients of the product of two limb expansions (not yet carried)."""
    coefficients = [np.zeros_like(first[0]) for _ in range(len(first) + len(second) - 1)]
    for a, x in enumerate(first):
        for b, z in enumerate(second):
            coefficients[a + b] += x * z
    return coefficients


def _carry(coefficients, n_limbs):
    """Signed coefficients -> ``n_limbs`` limbs, all in ``[0, 2**20)`` but the
    last, which keeps the sign (arithmetic shifts floor)."""
    limbs, carry = [], 0
    for k in range(n_limbs - 1):
        value = (coefficients[k] if k < len(coefficients) else 0) + carry
        limbs.append(value & _LIMB_MASK)
        carry = value >> _LIMB_BITS
    limbs.append(sum(coefficients[n_limbs - 1:], carry))
    return limbs


def _dot(first, second):
    """``sum_rows (sum_a first_a 2**(20a)) (sum_b second_b 2**(20b))`` exactly."""
    left = np.array(first, dtype=np.float64)
    right = np.array(second, dtype=np.float64)
    # At most _ROWS / _CHUNK partial sums below 2**52 each: int64.
    blocks = np.zeros((len(first), len(second)), dtype=np.int64)
    for start in range(0, left.shape[1], _CHUNK):
        blocks += (left[:, start:start + _CHUNK]
                   @ right[:, start:start + _CHUNK].T).astype(np.int64)
    return sum(int(blocks[a, b]) << (_LIMB_BITS * (a + b))
               for a in range(len(first)) for b in range(len(second)))
