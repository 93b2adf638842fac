"""Snapping of released noisy values to a power-of-two grid (after Mironov 2012).

Why. Floating-point noise is not the noise of the proof. ``value + noise`` with a
noise drawn by a floating-point sampler takes only some of the representable values
near ``value``, and which ones depends on ``value``: the low-order bits of a release
can tell neighbouring data sets apart, whatever the noise scale (Mironov, "On
significance of the least significant bits for differential privacy", CCS 2012).
Rounding every released value to a grid much coarser than the float spacing, but
much finer than the noise, removes those bits at a negligible cost in accuracy.

What snapping does. Unless turned off (``with snapping(False):``), every noisy
value released by :func:`~sklearn_dppca.privacy.gaussian_mechanism`,
:func:`~sklearn_dppca.privacy.laplace_mechanism`,
:func:`~sklearn_dppca.privacy.symmetric_matrix_gaussian` (and so by
:func:`~sklearn_dppca.privacy.dyadic_argmax` and the mean estimators built on
them, :func:`~sklearn_dppca.privacy.huber_mean`,
:func:`~sklearn_dppca.privacy.pmwm_mean`) is rounded, after the noise, to the
nearest multiple of a power of two ``Lambda`` (ties to even). The histogram
counts need no snapping: their noise is integer, sampled exactly
(:func:`~sklearn_dppca.privacy.additive_histogram`,
:func:`~sklearn_dppca.privacy.sparse_histogram`). By default
``Lambda`` is the smallest power of two ``>= noise_scale / 2**10`` of that
mechanism call (so ``Lambda < noise_scale / 2**9``), and the rounding error is at
most ``Lambda / 2 < noise_scale / 2**10`` (standard deviation
``Lambda / sqrt(12) < noise_scale / 1700``). Rounding to a power of two is exact
arithmetic: ``x / Lambda`` and ``k * Lambda`` are exact in binary floating point.
Each ledger entry of a snapped call records ``"snapped": Lambda``. Snapping is on
by default, in every thread; ``with snapping(False):`` turns it off and
``with snapping(grid=g):`` fixes the grid, each in the current thread (a context
variable) until the ``with`` block ends.

What it does NOT do. Mironov's snapping mechanism is provably ``eps``-DP only as a
whole: the input is clamped to a public ``[-B, B]``, the Laplace noise is sampled
from a uniform double in a prescribed way, the result is rounded to ``Lambda >=``
the noise scale and clamped again, and the guarantee degrades to roughly
``eps + 12 B eta / lambda`` (``eta`` the machine epsilon). We round to a much finer
grid (``Lambda`` about ``sigma / 1024``, to keep the accuracy cost negligible), do not
clamp inputs or outputs, keep NumPy's samplers, and apply the same rounding to the
Gaussian mechanism, for which Mironov's proof does not speak. So snapping here is a
hardening: it removes the known low-order-bit leak of naive floating-point noise,
but it is not a proof that the floating-point implementation meets the stated
``(eps, delta)``. For that, discrete samplers (e.g. the discrete Gaussian of
Canonne, Kamath & Steinke 2020) are the principled route. The Durfee quantile
searches release only grid indices (never a noisy float) and are not snapped.
"""

import contextlib
import contextvars
import math

import numpy as np

from .._validation import POSITIVE, Boolean, check_param

# Default grid: the smallest power of two >= noise_scale / 2**_GRID_BITS.
_GRID_BITS = 10

# None (off) or a dict {"grid": None or a fixed power of two}; on by default (the
# default value is the same in every thread).
_STATE = contextvars.ContextVar("sklearn_dppca_snapping", default={"grid": None})


def _check_grid(grid):
    """None, or a power of two (> 0, finite): rounding to it is then exact."""
    grid = check_param(grid, [None, POSITIVE], "grid")
    if grid is None:
        return None
    mantissa, _ = math.frexp(grid)
    if mantissa != 0.5:
        raise ValueError(
            f"grid must be a power of two (rounding to it is then exact), got {grid!r}."
        )
    return grid


@contextlib.contextmanager
def snapping(enabled=True, *, grid=None):
    """Set how released noisy values are rounded to a power-of-two grid in the block.

    Snapping is on by default (with the default grid); this context manager turns
    it off, or on with a fixed grid, until the block ends.

    Parameters
    ----------
    enabled : bool, default=True
        ``False`` turns snapping off inside the block.
    grid : float, default=None
        A fixed power of two to round every release to. None: per mechanism call,
        the smallest power of two ``>= noise_scale / 2**10``.

    Yields
    ------
    None
        The block runs with snapping on (or off, with ``enabled=False``); the
        previous setting is restored when it ends.

    Notes
    -----
    See the module :mod:`sklearn_dppca.privacy._snapping` for what snapping does
    and does not guarantee. Ledger entries of snapped calls carry
    ``"snapped": grid``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca.privacy import gaussian_mechanism, snapping
    >>> noisy, sigma = gaussian_mechanism(np.zeros(3), 1.0, 1.0, 1e-5,
    ...                                   np.random.default_rng(0))
    >>> grid = 2.0 ** np.ceil(np.log2(sigma / 2**10))
    >>> bool(np.all(noisy / grid == np.round(noisy / grid)))
    True
    >>> with snapping(False):
    ...     raw, _ = gaussian_mechanism(np.zeros(3), 1.0, 1.0, 1e-5,
    ...                                 np.random.default_rng(0))
    >>> bool(np.all(np.abs(raw - noisy) <= grid / 2))
    True
    """
    enabled = check_param(enabled, [Boolean()], "enabled")
    state = {"grid": _check_grid(grid)} if enabled else None
    token = _STATE.set(state)
    try:
        yield
    finally:
        _STATE.reset(token)


def _snapping_grid(noise_scale):
    """The grid a release with this noise scale is snapped to, or None when off."""
    state = _STATE.get()
    if state is None:
        return None
    if state["grid"] is not None:
        return state["grid"]
    target = float(noise_scale) / 2.0**_GRID_BITS
    if not (math.isfinite(target) and target > 0):
        return None
    mantissa, exponent = math.frexp(target)   # target = mantissa * 2**exponent
    return math.ldexp(1.0, exponent - 1 if mantissa == 0.5 else exponent)


def snap(noisy, noise_scale, ledger=None):
    """Round ``noisy`` to the current grid (identity when snapping is off).

    Parameters
    ----------
    noisy : float or ndarray
        A released noisy value (or array of them).
    noise_scale : float
        The noise scale of the mechanism call, which sets the default grid.
    ledger : PrivacyLedger, optional
        When given and snapping is on, its last entry (the call just recorded)
        gets ``"snapped": grid``.

    Returns
    -------
    float or ndarray
        Same type (Python float, NumPy scalar or array) and shape as ``noisy``:
        every finite value is a multiple of the
        grid (values beyond ``2**53`` grid steps already are).
    """
    grid = _snapping_grid(noise_scale)
    if grid is None:
        return noisy
    if ledger is not None and ledger.entries:
        ledger.entries[-1]["snapped"] = grid
    _, exponent = math.frexp(grid)
    exponent -= 1                               # grid == 2**exponent
    values = np.asarray(noisy, dtype=float)
    with np.errstate(under="ignore", over="ignore"):
        snapped = np.ldexp(np.round(np.ldexp(values, -exponent)), exponent)
    # ldexp back cannot overflow (|round(x / g)| * g <= |x| + g/2), except for a
    # finite value within g/2 of the largest float: keep those as they are.
    snapped = np.where(np.isfinite(snapped), snapped, values)
    if isinstance(noisy, np.ndarray):
        return snapped
    if isinstance(noisy, np.generic):
        return snapped[()]                      # a NumPy scalar stays one
    return float(snapped)
