"""Turn a ``random_state`` into the one NumPy generator every draw comes from."""

import numbers

import numpy as np


def check_generator(random_state):
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` seeds a fresh generator from operating-system entropy (what a
        published release should use); an int seeds a reproducible generator; a
        ``Generator`` is used as it is; a legacy ``RandomState`` (scikit-learn's
        convention) is advanced once to draw a seed, so repeated calls differ.

    Returns
    -------
    numpy.random.Generator

    Notes
    -----
    NumPy's generators are not cryptographic sources. Reproducible seeds are for
    tests and experiments; publish releases made with ``random_state=None``.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be non-negative, got {random_state}.")
        return np.random.default_rng(int(random_state))
    raise TypeError(
        "random_state must be None, an int, a numpy.random.Generator or a "
        f"numpy.random.RandomState, got {type(random_state).__name__}."
    )
