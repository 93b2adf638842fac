"""clipped_pair_mean against exact references, and its stated error bound.

The long chain (gaps just under ``sqrt(2 C)``, one cluster of ``n`` values) is the
case where float prefix sums over a whole cluster cancelled: the computed value of
neighbouring samples moved by up to a fifth of the sensitivity ``2 C / n`` where the
exact one moves by ``1e-14`` of it.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sklearn_dppca.privacy import clipped_pair_mean

from ._hypothesis_support import profile_settings


def exact_pair_mean(y, clip):
    """The definition in rational arithmetic, O(n^2)."""
    values = [Fraction(float(v)) for v in y]
    limit = Fraction(clip) if math.isfinite(clip) else None
    total = Fraction(0)
    for i, a in enumerate(values):
        for b in values[i + 1:]:
            term = (a - b) ** 2 / 2
            total += term if limit is None else min(term, limit)
    return total / (len(values) * (len(values) - 1) // 2)


def _two_product(a, b):
    """``a * b = p + e`` exactly (Dekker's splitting, no fused multiply-add)."""
    def split(x):
        scaled = x * 134217729.0
        high = scaled - (scaled - x)
        return high, x - high
    p = a * b
    a_high, a_low = split(a)
    b_high, b_low = split(b)
    return p, ((a_high * b_high - p) + a_high * b_low + a_low * b_high) + a_low * b_low


def exact_chain_mean(y, clip):
    """Exact mean, O(n), for samples where only sorted neighbours can be close."""
    y = np.sort(y)
    reach = math.sqrt(2 * clip)
    assert np.all(y[2:] - y[:-2] > 1.01 * reach)
    gaps = np.diff(y)
    near = gaps < 1.01 * reach
    back = gaps - y[1:]
    assert np.all(((y[1:] - (gaps - back)) + (-y[:-1] - back))[near] == 0)  # exact gaps
    square, error = _two_product(gaps, gaps)
    close = near & ((square < 2 * clip) | ((square == 2 * clip) & (error <= 0)))
    # fsum rounds the exact sum once: 2**-53 of at most n clip, negligible here.
    close_sum = Fraction(math.fsum(np.concatenate((square[close], error[close])))) / 2
    n_pairs = y.size * (y.size - 1) // 2
    return (close_sum + Fraction(clip) * (n_pairs - int(close.sum()))) / n_pairs


def error_bound(clip, exact, n):
    """The docstring's bound: ``(2**-53 + 2**-70) clip`` and a relative
    ``2**-53 + 2**-71 n^2``, whichever is smaller, plus half the smallest
    subnormal (the rounding of a subnormal result)."""
    relative = (Fraction(1, 2**53) + Fraction(n * n, 2**71)) * exact
    if math.isfinite(clip):
        relative = min(relative, (Fraction(1, 2**53) + Fraction(1, 2**70)) * Fraction(clip))
    return relative + Fraction(1, 2**1075)


def chain(n, clip=1.0):
    return np.arange(n) * (math.sqrt(2 * clip) * (1 - 1e-9))


def check_chain_neighbours(n):
    clip, y = 1.0, chain(n)
    sensitivity = 2 * clip / n
    value, exact = clipped_pair_mean(y, clip), exact_chain_mean(y, clip)
    assert abs(value - exact) <= 1e-9 * sensitivity
    # Adversarial replacements: an end moved past the other end, the middle sent
    # far out, the middle moved half way to its neighbour.
    for index, new_value in ((0, y[-1] + y[1]), (n // 2, 1e9), (n // 2, y[n // 2] + 0.7)):
        neighbour = y.copy()
        neighbour[index] = new_value
        moved, moved_exact = clipped_pair_mean(neighbour, clip), exact_chain_mean(neighbour,
                                                                                   clip)
        assert abs(moved - moved_exact) <= 1e-9 * sensitivity
        assert abs(moved - value) <= sensitivity * (1 + 1e-9)
        assert abs((moved - value) - float(moved_exact - exact)) <= 2e-9 * sensitivity


def test_long_chain_neighbours_move_by_the_exact_difference():
    # Float prefix sums over the chain were off by 1.9e-2 of the sensitivity here
    # (4e-1 at n = 1e6); the exact-on-a-grid sum is off by 0.
    check_chain_neighbours(1 << 18)


@pytest.mark.slow
@pytest.mark.parametrize("n", [10**6, 4 * 10**6])
def test_long_chain_neighbours_large(n):
    check_chain_neighbours(n)


def test_close_pairs_are_decided_exactly_at_a_large_offset():
    # At 2**40 the floats are 2**-12 apart and the reach is 5.6 of those steps:
    # the rounded y_i + reach reaches the value 6 steps up, whose exact term is
    # clip, not 1.148 clip. Deciding closeness in floats moved the mean of these
    # neighbours by 1.14 of the sensitivity.
    step = 2.0**-12
    clip, n = (5.6 * step) ** 2 / 2, 200
    y = np.full(n, 2.0**40)
    y[1] += 3 * step  # a bridge: one cluster
    neighbour = y.copy()
    neighbour[0] += 6 * step
    change = clipped_pair_mean(neighbour, clip) - clipped_pair_mean(y, clip)
    exact_change = exact_pair_mean(neighbour, clip) - exact_pair_mean(y, clip)
    assert abs(change) <= 2 * clip / n * (1 + 1e-9)
    assert abs(Fraction(change) - exact_change) <= 1e-9 * 2 * clip / n


_RNG = np.random.default_rng(7)
SAMPLES = {
    "normal": _RNG.standard_normal(70),
    "duplicated": _RNG.integers(0, 4, 70).astype(float),
    "huge offset": 1e12 + _RNG.standard_normal(70) * 1e-3,
    "mixed scales": np.concatenate((_RNG.standard_normal(30) * 1e-8,
                                    _RNG.standard_normal(30) * 1e3,
                                    [1e12, -1e12, 3e11, 5e-324, -5e-324,
                                     1e-300, 2.0, 2.0, 2.0, 1e12 + 1e-4])),
    "tiny": _RNG.standard_normal(60) * 1e-310,
    "huge": _RNG.standard_normal(60) * 1e150,
    "grid at the reach": np.repeat([0.0, 1.0, 2.0, 2.0 + 2.0**-51, 3.0], 12),
}
CLIPS = [5e-324, 1e-7, 0.02, 0.5, 1.0, 3.0, 1e30, 1e300, math.inf]


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("clip", CLIPS)
def test_agrees_with_the_exact_mean_within_the_bound(name, clip):
    y = SAMPLES[name]
    exact = exact_pair_mean(y, clip)
    assert abs(Fraction(clipped_pair_mean(y, clip)) - exact) <= error_bound(clip, exact,
                                                                             y.size)


def test_error_bound_on_many_pairs():
    # Integer values: every difference and square is exact, so fsum gives the
    # exact sum of the 4.5 million pair terms (a long run of ties and of close
    # pairs, and many pairs at exactly the reach).
    y = np.random.default_rng(8).integers(0, 1000, 3000).astype(float)
    rows, cols = np.triu_indices(y.size, k=1)
    squares = (y[rows] - y[cols]) ** 2
    for clip in (0.5, 2.0, 4.5, 800.0, 1e6, math.inf):
        terms = squares if math.isinf(clip) else np.minimum(squares, 2 * clip)
        exact = Fraction(math.fsum(terms)) / 2 / rows.size
        value = clipped_pair_mean(y, clip)
        assert abs(Fraction(value) - exact) <= error_bound(clip, exact, y.size)


@given(values=st.lists(st.one_of(st.floats(-1e6, 1e6),
                                 st.sampled_from([0.0, 1.0, 1e12, 1e12 + 2.0**-12])),
                       min_size=2, max_size=25),
       clip=st.one_of(st.floats(1e-30, 1e30), st.just(math.inf)))
@profile_settings(300)
def test_property_agrees_with_the_exact_mean(values, clip):
    exact = exact_pair_mean(values, clip)
    assert abs(Fraction(clipped_pair_mean(values, clip)) - exact) <= error_bound(
        clip, exact, len(values))


def test_overflowing_variance_is_inf():
    assert clipped_pair_mean([-1e308, 1e308], math.inf) == math.inf
    assert clipped_pair_mean([-1e308, 1e308], 1e300) == pytest.approx(1e300)
