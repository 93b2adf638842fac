"""The hyperparameters the three estimators share, documented once.

Each estimator's docstring holds a line ``{shared: <name>}`` where a shared
entry goes; :func:`shared_parameters` puts the entry there when the class is
defined, so that the three pages cannot drift apart
(``tests/test_param_docs.py``).
"""

import re

#: The shared numpydoc entries, by parameter name (four spaces before the name,
#: eight before the description, as in a class docstring).
_SHARED = {
    'delta': """\
    delta : float, default=1e-5
        Total privacy budget, in (0, 1).""",
    'noise': """\
    noise : {"analytic", "classical"}, default="analytic"
        Gaussian calibration of each part under ``accounting="basic"``.
        ``"analytic"`` (Balle & Wang 2018) is valid for every eps and never
        noisier; ``"classical"`` is the classical formula
        ``sigma = Delta sqrt(2 ln(1.25/delta)) / eps`` (warns for eps >= 1, raises
        where its delta exceeds the claimed one).""",
    'sensitivity': """\
    sensitivity : {"tight", "standard"}, default="tight"
        Frobenius sensitivity used: the exact worst case ``2 sqrt(2)/n``
        (:func:`kendall_sensitivity`; a factor ``sqrt(2)`` less noise) or Kim &
        Jung's ``4/n``.""",
    'accounting': """\
    accounting : {"gdp", "basic"}, default="gdp"
        How the Gaussian parts compose. ``"gdp"``: as one ``mu``-GDP block (Dong,
        Roth & Su 2022), exact; the pure-eps parts (quantile searches) compose
        beside it. ``"basic"``: each part calibrated alone at its share of
        ``(eps, delta)``, the shares added. See the user guide, "Privacy
        accounting".""",
    'accountant': """\
    accountant : PrivacyAccountant, default=None
        A total budget for the data set, charged by every fit before any
        computation (:class:`BudgetExceededError` when it would run out).""",
    'radius': """\
    radius : "auto" or float, default="auto"
        The clip radius ``c`` of ``radial="clipped"`` in the units of ``X``
        (after the spreads with ``scale=True``): a private quantile of the
        distances between randomly paired rows (``RADIUS_SHARE`` = 20% of the
        directions' eps), or a public number.""",
    'radius_level': """\
    radius_level : "auto" or float, default="auto"
        Level of that quantile. Higher levels bring the estimand closer to the
        covariance and cost signal (more pairs count below their full weight).
        ``"auto"``: ``clip(1 - 22 / sqrt(n eps_d), 0.5, 0.99)`` with ``eps_d`` the
        directions' eps (:func:`auto_radius_level`, public numbers only).""",
    'random_state': """\
    random_state : None, int or numpy.random.Generator, default=None
        Drives every draw. NumPy's generators are not cryptographic; use None for
        releases you publish.""",
    'row_blocks': """\
    row_blocks : None, int or list of int, default=None
        The public row blocks of the fit: every statistic is a sum over blocks
        of rows (pair designs and random matchings drawn within each block), on
        Dask workers for a Dask ``X``. None: blocks from ``n`` alone, one block
        up to 1,000,000 rows, for an in-memory and a Dask ``X`` alike (a Dask
        ``X`` is rechunked to them; its own chunks never decide). An int: blocks
        of that many rows (the last takes the rest); a list: the block sizes.
        An in-memory and a Dask fit with the same blocks release the same
        values. More than one block pairs rows within blocks: ``pairs="auto"``
        picks a design the blocks hold, an int ``pairs`` needs every block of
        at least ``pairs + 1`` rows, and ``"all"`` is refused; see the user
        guide, "Scaling out".""",
}

#: Fitted attributes the three estimators share, written once as well.
_SHARED_ATTRIBUTES = {
    'pairs_': """\
    pairs_ : "all" or int
        The pair design the fit used: ``pairs`` with ``"auto"`` resolved from
        the row blocks (public).""",
    'scale_': """\
    scale_ : ndarray of shape (n_features,) or None
        What each column was divided by (``scale=True``, else None): its private
        spread, or with declared ``bounds`` its box's public unit ``width /
        sqrt(12)`` where the private spread was not estimable; NaN where a
        column kept its own unit.""",
    'scale_origin_': """\
    scale_origin_ : ndarray of shape (n_features,) or None
        Per column, ``"private"``, ``"box"`` or ``"none"``: where ``scale_``
        came from (``scale=True``, else None).""",
}

#: Fitted attributes of the scree the two estimators that release one share
#: (DPKendallDirections' ``noise_scale_`` is its matrix's, a float).
_SCREE_ATTRIBUTES = {
    'noise_scale_': """\
    noise_scale_ : ndarray of shape (n_components,)
        Standard deviation of each raw variance: its Gaussian noise and, for
        a clipped variance, the clipping allowance added in squares (the loss
        a clipped value's reading gives at its released bound; see the user
        guide's "The clipping allowance"). A clipped value is read at the
        middle of the losses its allowance gives (moved up by half of it),
        and its sd keeps the whole allowance. Raised to the value where a
        clip bound or a tail count made it not estimable.""",
    'total_variance_noise_scale_': """\
    total_variance_noise_scale_ : float
        Its standard deviation: the noise and, for a clipped total, the
        clipping allowance (as for ``noise_scale_``; the total is read at
        the middle of its losses too).""",
    'explained_variance_ratio_noise_scale_': """\
    explained_variance_ratio_noise_scale_ : ndarray of shape (n_components,)
        Standard deviation of each share in ``explained_variance_ratio_``
        (a share of 1, not percent): the noise of the variance and of the
        total, to first order and with the covariance of one release where
        the total holds the variance's noise, and the difference of their
        clipping allowances (both move the same way). NaN where the share is
        not estimable. The scree's PVE bars show +-2 of it.""",
}

_PLACEHOLDER = re.compile(r"^ *\{shared: (\w+)\}$", re.MULTILINE)


def shared_parameters(cls):
    """Class decorator: each ``{shared: <name>}`` line of ``cls``'s docstring
    becomes the shared entry of ``<name>`` (a KeyError for an unknown name, when
    the class is defined)."""
    entries = {**_SHARED, **_SHARED_ATTRIBUTES, **_SCREE_ATTRIBUTES}
    cls.__doc__ = _PLACEHOLDER.sub(lambda match: entries[match.group(1)], cls.__doc__)
    return cls
