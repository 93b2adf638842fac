"""The explorer's fit inputs turned into DPPCA's parameters (through the request
layer the command line shares, :mod:`sklearn_dppca._requests`), and their
defaults, read off DPPCA."""

import math

from .._budget_split import BUDGET_PARTS, check_budget_split
from .._pca import DPPCA
from .._requests import budget_split, parse_bounds



# --------------------------------------------------------------------------------------
# fit parameters
# --------------------------------------------------------------------------------------
def _number(params, key, cast=float):
    value = params.get(key)
    try:
        number = cast(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number, got {value!r}.") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise ValueError(f"{key} must be a finite number, got {value!r}.")
    return number


def _whole(params, key, minimum):
    number = _number(params, key)
    if number != int(number) or number < minimum:
        raise ValueError(f"{key} must be a whole number >= {minimum}, got {params.get(key)!r}.")
    return int(number)


def _split(params, scale):
    """DPPCA's budget split from the page's shares: fractions of the fit's eps, as
    everywhere (:func:`~sklearn_dppca._requests.budget_split`)."""
    parts = ("loading", "scree", "score") + (("scale",) if scale else ())
    try:
        return budget_split({part: _number(params, f"split_{part}") for part in parts})
    except ValueError as error:
        raise ValueError(str(error).replace("the budget shares",
                                            "the budget shares (split_...)")) from None


def _score_axes(text, n_components):
    """The fit's score axes: ``"1,2"`` (1-based) -> ``(0, 1)``."""
    parts = [part.strip() for part in str(text if text is not None else "1,2").split(",")]
    try:
        axes = tuple(int(part) - 1 for part in parts)
    except ValueError:
        raise ValueError(f"score_axes must be two component numbers such as 1,2, got "
                         f"{text!r}.") from None
    if len(axes) != 2 or axes[0] == axes[1] or min(axes) < 0 \
            or max(axes) >= max(n_components, 2):
        raise ValueError(f"score_axes must be two different component numbers in "
                         f"1..{n_components} (n_components), got {text!r}.")
    return axes


def split_defaults(scale):
    """DPPCA's default budget split as the page's shares, by input id.

    Parameters
    ----------
    scale : bool
        Whether the fit scales its columns: DPPCA's default split then gives the
        private spreads a part of their own.

    Returns
    -------
    shares : dict
        ``split_<part>`` -> share, one per part of ``budget_split`` (0: no part).
    """
    split = check_budget_split(DPPCA().get_params()["budget_split"], scale)
    return {f"split_{part}": split.get(part, 0.0) for part in BUDGET_PARTS}


#: The most of a data set's total eps the page's first eps asks for: one click
#: must not spend the whole budget.
_DEFAULT_BUDGET_SHARE = 0.25


def fit_defaults(scale=None, budget=None):
    """The page's fit inputs, by input id, when none is given: DPPCA's defaults.

    Read off the estimator, so that the page cannot drift from it: ``bins`` 0 is
    DPPCA's ``"auto"``, ``score_axes`` are its ``axes`` numbered from 1, and the
    budget shares are its default split (see :func:`split_defaults`). With the
    data set's ``budget``, the eps is at most :data:`_DEFAULT_BUDGET_SHARE` of its
    total (two significant digits, rounded down), so that a click with the
    defaults spends a part of the budget, not all of it.

    Parameters
    ----------
    scale : bool, default=None
        The split for this ``scale``; None: DPPCA's default ``scale``.
    budget : (float, float), default=None
        The total ``(eps, delta)`` of the data set; None: DPPCA's eps as it is.

    Returns
    -------
    defaults : dict
        Input id -> value.
    """
    dppca = DPPCA().get_params()
    scale = dppca["scale"] if scale is None else scale
    eps = dppca["eps"] if budget is None else min(dppca["eps"],
                                                  _round_down(_DEFAULT_BUDGET_SHARE
                                                              * budget[0]))
    return {
        "n_components": dppca["n_components"], "eps": eps,
        "delta": dppca["delta"], **split_defaults(scale), "scale": scale,
        "radial": dppca["radial"], "accounting": dppca["accounting"],
        "scree_method": dppca["scree_method"], "histogram": dppca["histogram"],
        "bins": 0 if dppca["bins"] == "auto" else dppca["bins"],
        "score_axes": ",".join(str(axis + 1) for axis in dppca["axes"]),
        "nonprivate": dppca["compute_nonprivate"],
        # DPPCA's bounds=None: none declared
        "bounds": "" if dppca["bounds"] is None else dppca["bounds"],
    }


def _round_down(value):
    """``value`` rounded down to two significant digits (0.25, 0.12, 2.5)."""
    scale = 10.0 ** (math.floor(math.log10(value)) - 1)
    return round(math.floor(value / scale + 1e-9) * scale, 12)


def _bounds(text):
    """DPPCA's ``bounds`` from the page's text (the request layer's reading)."""
    text = "" if text is None else str(text).strip()
    return parse_bounds(text, "Public bounds") if text else None


def dppca_params(params, n_samples):
    """DPPCA's keyword arguments from the page's fit inputs (``params``: by input id).

    Keys: ``n_components``, ``eps``, ``delta``, ``split_loading``, ``split_scree``,
    ``split_score``, ``split_scale`` (with ``scale``), ``scale``, ``radial``,
    ``accounting``, ``scree_method``, ``histogram``, ``bins`` (0: automatic),
    ``score_axes`` (``"1,2"``), ``nonprivate`` and ``bounds`` (the page's text,
    ``0:10,-5:5`` or ``name=low:high,...``; empty: none). Missing keys take DPPCA's
    defaults (:func:`fit_defaults`). Raises ValueError naming the input.
    """
    scale = bool(params.get("scale", fit_defaults()["scale"]))
    params = {**fit_defaults(scale), **params}
    k = _whole(params, "n_components", 1)
    bins = _whole(params, "bins", 0)
    kwargs = dict(
        n_components=k, eps=_number(params, "eps"), delta=_number(params, "delta"),
        budget_split=_split(params, scale), scale=scale,
        radial=str(params["radial"]), accounting=str(params["accounting"]),
        scree_method=str(params["scree_method"]), histogram=str(params["histogram"]),
        bins="auto" if bins == 0 else bins,
        axes=_score_axes(params["score_axes"], k) if k >= 2 else (0, 1),
        compute_nonprivate=bool(params["nonprivate"]),
        bounds=_bounds(params["bounds"]),
        # the page never sets a seed (a release made with a known seed is not
        # private); tests do, for reproducible pictures
        random_state=params.get("random_state"),
    )
    return kwargs
