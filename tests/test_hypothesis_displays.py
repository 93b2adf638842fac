"""Property-based tests of the displays on generated releases.

Every display's ``from_estimator`` and ``plot_overview`` read the fitted-attribute
contract (``components_``, ``explained_variance_``, ``frame_``, ``bin_edges_``,
``score_histogram(s)_``, ``synthetic_scores_``, ``groups_``, ``nonprivate_``...).
Instead of fitting an estimator per case, each case generates the RELEASED values
directly and loads them with :func:`~sklearn_dppca.load_release` (from a dict of
arrays, or through a JSON round trip), or hands them over as a small object that only
has the contract's attributes:

* directions: random orthonormal rows, signed axis rows, or a rotation of a few
  coordinates (exact zeros elsewhere), ``p = 1..8``, ``k = 1..p``;
* variances: random, all or trailing zeros, 1e-300, subnormal, 1e300, equal values,
  mixed extremes, unsorted (DPScree with ``monotone=False``); the PVE consistent
  (all zero when every variance is 0) or, rarely, all zero;
* per-variable private variances (random, some zero, extremes; ones with a
  released ``scale``), a total variance at least the sum of the retained ones,
  noise scales;
* the score summary: frames with centres and radii from 1e-300 (and subnormal) to
  1e300, 1..30 cells per axis, histograms all zero / one hot cell / random /
  uniform, 1..5 group labels (strings incl. unicode and long ones, ints, a mix)
  with per-group histograms and 0..45 synthetic points (groups without points),
  the histogram threshold and the expected number of noise-only cells;
* unique feature names incl. long, unicode, numeric-looking and ``$``-containing
  ones; the non-private reference absent or present; releases of DPPCA, DPScree,
  DPKendallDirections; keyword options of each ``from_estimator`` (valid and a few
  invalid ones).

The outcome is always either a display whose drawn coordinates and axis limits are
finite and whose documented artists exist with the right shapes, or a ``ValueError``
/ ``TypeError`` whose message names the problem, raised exactly when the input has
that problem (predicted independently from the generated input). Never another
exception, never a ``RuntimeWarning`` (errors, see ``strict_warnings``).

Cost: one figure and one axes per test are reused; between cases the artists, extra
axes (twin axes, colour bars, facets) and axes state are removed, with a full
``ax.clear()`` every ``FULL_CLEAR_EVERY`` cases (``ax.clear()`` alone costs ~8 ms,
about half a case). To catch render-time errors (mathtext, limits) the figure is
rendered (``canvas.draw()``) after every ``DRAW_EVERY`` cases, and every
``DEFAULT_FIGURE_EVERY`` cases the call is repeated with ``ax=None`` (a new figure,
the default constrained layout) and rendered. A case
costs ~15 ms, nearly all of it matplotlib (the colour bar of a score plot alone
~10 ms): ~30 s per display at the nominal count.

Example counts: ``DISPLAY_EXAMPLES`` (2000) nominal cases per display and
``OVERVIEW_EXAMPLES`` (300) for ``plot_overview``. The default ``ci`` profile runs one
in twenty of them (100 per display), ``HYPOTHESIS_PROFILE=thorough`` all of them; see
tests/_hypothesis_support.py.
"""

import json
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import AutoLocator, ScalarFormatter

from sklearn_dppca import load_release
from sklearn_dppca._release_layout import FORMAT, NONPRIVATE_KEY
from sklearn_dppca.display import (
    BiplotDisplay,
    LoadingDisplay,
    ScoreDisplay,
    ScreeDisplay,
    VariableDisplay,
    plot_overview,
)

from ._hypothesis_support import (
    boolean as _bool,
    integer as _int,
    pick as _pick,
    profile_examples,
    profile_settings as _settings,
    run_contract,
    strict_warnings as _strict_warnings,
)


DISPLAY_EXAMPLES = 2000
# plot_overview builds a new 7-panel figure per case (~0.15 s without, ~0.4 s with
# the constrained layout): 300 cases take ~1 minute, 2000 would take ~6 minutes.
OVERVIEW_EXAMPLES = 300
# Rendering costs several cases. A display test renders its figure every 200 cases
# and repeats the call on a default figure every 1000, but at least four and two
# times per run under a profile that runs fewer cases; the overview test renders
# every 50th of its figures, at least three per run.
DRAW_EVERY = max(1, min(200, profile_examples(DISPLAY_EXAMPLES) // 4))
DEFAULT_FIGURE_EVERY = max(1, min(1000, profile_examples(DISPLAY_EXAMPLES) // 2))
FULL_CLEAR_EVERY = 20
OVERVIEW_DRAW_EVERY = max(1, min(50, profile_examples(OVERVIEW_EXAMPLES) // 3))
OVERVIEW_CONSTRAINED_EVERY = 10


# ---------------------------------------------------------------- released values

def _choice(rng, values):
    """A secondary choice, from the generator hypothesis seeded."""
    return values[int(rng.integers(len(values)))]


UNICODE_NAMES = ["température", "Größe", "重量", "ñandú", "α β", "🙂 score", "naïve café",
                 "العمر", "x\u0301", "Ωmega"]
DOLLAR_NAMES = ["cost ($)", "a $ b $ c", "$x_1$", "price_$_usd_$", "$^$", "100$"]
NUMERIC_NAMES = ["0", "1.5", "-3", "1e300", "nan", "inf"]
LABEL_POOLS = {
    "letters": ["a", "b", "c", "d", "e"],
    "words": ["north", "south-east", "Größe", "重量", "group with a rather long name " * 2],
    "ints": [0, 1, 2, 3, 4],
    "big ints": [10**12, -1, 7, 0, 2**40],
    "mixed": ["1", 1, "x", 2, "$a_b$"],
    "dollars": ["$^$", "cost ($)", "a", "b", "c"],
}


def _orthonormal(rng, k, p, style):
    """k orthonormal rows of length p."""
    if style == "axis":
        V = np.zeros((k, p))
        V[np.arange(k), rng.permutation(p)[:k]] = rng.choice([-1.0, 1.0], k)
        return V
    if style == "block" and p > k:
        m = int(rng.integers(k, p + 1))
        Q, _ = np.linalg.qr(rng.standard_normal((m, k)))
        V = np.zeros((k, p))
        V[:, rng.permutation(p)[:m]] = Q.T
        return V
    Q, _ = np.linalg.qr(rng.standard_normal((p, k)))
    return np.ascontiguousarray(Q.T)


def _variances(rng, k, style, monotone):
    if style == "random":
        v = 10.0 ** rng.uniform(-3, 3, k)
    elif style == "zeros":
        v = np.zeros(k)
    elif style == "trailing zeros":
        v = 10.0 ** rng.uniform(-1, 1, k)
        v[int(rng.integers(0, k)):] = 0.0
    elif style == "tiny":
        v = 1e-300 * rng.uniform(0.1, 10, k)
    elif style == "subnormal":
        v = 5e-324 * rng.integers(0, 10, k)
    elif style == "huge":
        v = 1e300 * rng.uniform(0.1, 1.0, k)
    elif style == "equal":
        v = np.full(k, rng.choice([5e-324, 1e-300, 1.0, 1e300]))
    else:  # "extremes"
        v = rng.choice([0.0, 5e-324, 1e-300, 1e-150, 1.0, 1e150, 1e300], k)
    if monotone:
        v = np.sort(v)[::-1]
    return np.ascontiguousarray(v, dtype=float)


def _ratio(v, total=None):
    """The PVE the estimators release: v / total (default the sum of v), all zero
    when the total is 0."""
    top = float(np.max(v)) if v.size else 0.0
    if top <= 0:
        return np.zeros_like(v)
    scaled = v / top
    return scaled / (np.sum(scaled) if total is None else total / top)


def _total(rng, v):
    """A total variance >= sum(v): the sum, or up to 4 times more (p > k)."""
    top = float(np.max(v)) if v.size else 0.0
    if top <= 0:
        return float(_choice(rng, [0.0, 1.0, 1e-300]))
    return top * float(np.sum(v / top)) * float(_choice(rng, [1.0, 1.0, 1.5, 4.0]))


def _feature_variances(rng, p, style):
    if style == "ones":
        return np.ones(p)
    if style == "zeros":
        v = 10.0 ** rng.uniform(-1, 1, p)
        v[rng.random(p) < 0.4] = 0.0
        return v
    if style == "extremes":
        return rng.choice([0.0, 5e-324, 1e-300, 1.0, 1e300], p)
    return 10.0 ** rng.uniform(-3, 3, p)


def _magnitude(rng, style, positive=False):
    if style == "zero":
        value = 0.0
    elif style == "unit":
        value = rng.standard_normal()
    elif style == "tiny":
        value = 1e-300 * rng.uniform(1, 10)
    elif style == "subnormal":
        value = 5e-324 * float(rng.integers(1, 1000))
    elif style == "huge":
        value = 1e300 * rng.uniform(0.1, 1)
    else:  # "any"
        value = 10.0 ** rng.uniform(-300, 300)
    if positive:
        return abs(value) if value != 0 else 1.0
    return value * rng.choice([-1.0, 1.0])


def _histogram(rng, shape, style):
    if style == "zero":
        return np.zeros(shape)
    if style == "hot":
        H = np.zeros(shape)
        H[tuple(rng.integers(0, s) for s in shape)] = float(rng.uniform(0.5, 30))
        return H
    if style == "uniform":
        return np.ones(shape)
    counts = rng.exponential(size=shape) * (rng.random(shape) < rng.uniform(0.05, 1))
    return counts


def _normalised(counts):
    total = float(np.sum(counts))
    return counts / total if total > 0 else np.zeros_like(counts, dtype=float)


class Case:
    """A generated release: the object handed to the displays and the facts that
    predict their errors."""

    def __init__(self, release, obj, source, facts):
        self.release = release
        self.obj = obj
        self.source = source
        self.facts = facts

    def __repr__(self):
        facts = {key: value for key, value in self.facts.items() if key != "names"}
        return f"Case(source={self.source}, facts={facts})"


class FittedAttributes:
    """Only the fitted-attribute contract: a plain object, not a ReleasedPCA."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)

    def fit(self, X=None, y=None):  # makes it an estimator for check_is_fitted
        return self

    def __sklearn_is_fitted__(self):
        return True

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False))


def _as_plain_object(released, rng):
    attributes = {}
    for name in dir(released):
        if name.startswith("_") or not name.endswith("_"):
            continue
        value = getattr(released, name)
        if isinstance(value, np.ndarray):
            value = np.array(value)       # writable copies
        attributes[name] = value
    frame = attributes.get("frame_")
    if frame is not None and rng.random() < 0.5:
        attributes["frame_"] = dict(frame)     # a frame given as a dict
    if attributes.get("bin_edges_") is not None and rng.random() < 0.5:
        attributes["bin_edges_"] = list(attributes["bin_edges_"])
    attributes.pop("estimator_class_", None)
    return FittedAttributes(**attributes)


def _names(rng, p, style):
    """p unique feature names."""
    if style == "default":
        return [f"x{j}" for j in range(p)]
    if style == "long":
        return [f"{'a very long variable name ' * 3}number {j}" for j in range(p)]
    pool = {"unicode": UNICODE_NAMES, "numeric": NUMERIC_NAMES, "dollars": DOLLAR_NAMES,
            "mixed": UNICODE_NAMES + NUMERIC_NAMES + DOLLAR_NAMES + ["", " ", "x" * 80]
            }[style]
    names = []
    for name in rng.choice(pool, p):
        name = str(name)
        while name in names:
            name += "'"
        names.append(name)
    return names


@st.composite
def releases(draw, score=False):
    """A release of DPPCA (mostly), DPScree or DPKendallDirections.

    ``score=True``: almost always a DPPCA release with a score summary (for the
    displays that need one). The first value of each choice is the common case
    (hypothesis favours it). Hypothesis draws the structure; the secondary choices
    and the numbers come from a generator it seeds (fewer draws: cheaper cases).
    """
    rng = np.random.default_rng(_int(draw, 0, 2**32 - 1))
    estimator = _pick(draw, ["DPPCA"] * (12 if score else 6)
                      + ["DPScree", "DPKendallDirections"])
    p = _pick(draw, [3, 2, 4, 5, 1, 6, 7, 8])
    # mostly 2 or 3 components (the common use), sometimes all of them, sometimes 1
    k = min(p, _pick(draw, [2, 2, 2, 3, 3, 8] + ([] if score else [1])))
    direction_style = _choice(rng, ["random", "random", "axis", "block"])
    components = _orthonormal(rng, k, p, direction_style)
    names = _names(rng, p, _choice(rng, ["default", "default", "default", "long",
                                         "unicode", "numeric", "dollars", "mixed"]))
    n_samples = _pick(draw, [2, 3, 7, 25, 100, 5000, 10**6, 10**7])

    release = {
        "format": FORMAT,
        "software": {"name": "sklearn-dppca", "version": "0.1.0"},
        "estimator": {"class": estimator, "params": {}, "seeded": False},
        "n_features": p, "feature_names": names, "n_components": k,
        "components": components,
    }
    for key in ("explained_variance", "explained_variance_raw", "explained_variance_ratio",
                "noise_scale", "clip_bounds", "kendall_matrix", "kendall_eigenvalues",
                "axes", "frame", "bin_edges", "score_histogram", "groups",
                "score_histograms", "synthetic_scores", "synthetic_groups", "budget",
                "scale", "feature_variance", "feature_variance_noise_scale",
                "total_variance", "total_variance_noise_scale", "histogram_threshold",
                "expected_noise_cells"):
        release[key] = None
    scaled = rng.random() < 0.3
    if scaled:
        release["scale"] = 10.0 ** rng.uniform(-3, 3, p)
    facts = {"estimator": estimator, "p": p, "k": k, "names": names, "variances": None,
             "axes": None, "frame": False, "group_histograms": False,
             "synthetic_groups": False, "n_synthetic": 0, "nonprivate": False,
             "increasing_edges": True}

    variances = None
    if estimator == "DPKendallDirections":
        K = rng.standard_normal((p, p)) * 0.1
        release["kendall_matrix"] = (K + K.T) / 2
        release["kendall_eigenvalues"] = np.sort(rng.uniform(0, 1, p))[::-1]
        release["noise_scale"] = float(rng.uniform(0.01, 1))
        release["estimator"]["params"] = {"eps": 1.0, "pairs": "all"}
    else:
        monotone = estimator == "DPPCA" or _bool(draw)
        style = _pick(draw, ["random", "random", "random", "zeros", "trailing zeros",
                             "tiny", "subnormal", "huge", "equal", "extremes"])
        variances = _variances(rng, k, style, monotone)
        total = _total(rng, variances)
        ratio = _ratio(variances, total)
        if rng.random() < 0.05:
            ratio = np.zeros(k)          # a PVE released as all zero
        feature_style = "ones" if scaled else _choice(
            rng, ["random", "random", "zeros", "extremes"])
        release["feature_variance"] = _feature_variances(rng, p, feature_style)
        release["feature_variance_noise_scale"] = rng.uniform(0, 1, p)
        release["total_variance"] = total
        release["total_variance_noise_scale"] = float(rng.uniform(0, 1))
        release["explained_variance"] = variances
        release["explained_variance_raw"] = variances - rng.uniform(0, 1, k) * np.where(
            variances > 0, variances, 1.0)
        release["explained_variance_ratio"] = ratio
        release["noise_scale"] = rng.uniform(0, 1, k)
        release["clip_bounds"] = rng.uniform(0.1, 2, 1)
        release["estimator"]["params"] = (
            {"scree_method": "clipped", "histogram": "additive"} if estimator == "DPPCA"
            else {"method": "huber", "monotone": monotone})
        facts["variances"] = variances
        facts["variance_style"] = style
        facts["feature_variances"] = release["feature_variance"]

    labels = None
    if estimator == "DPPCA" and _int(draw, 0, 2) == 0:
        pool = LABEL_POOLS[_pick(draw, sorted(LABEL_POOLS))]
        labels = list(pool[: _int(draw, 1, 5)])
        release["groups"] = labels

    if estimator == "DPPCA" and k >= 2:
        pair = _pick(draw, [(0, 1), (0, 1), (0, 1), (1, 0), "random"])
        if pair == "random":
            pair = tuple(int(v) for v in rng.choice(k, 2, replace=False))
        a, b = pair
        bins = (_pick(draw, [1, 2, 3, 5, 20, 20, 30]),
                _pick(draw, [1, 2, 3, 5, 20, 20, 30]))
        center_style = _pick(draw, ["unit", "unit", "zero", "tiny", "subnormal", "huge",
                                    "any"])
        radius_style = _pick(draw, ["unit", "unit", "tiny", "subnormal", "huge", "any"])
        center = np.array([_magnitude(rng, center_style) for _ in range(2)])
        radius = _magnitude(rng, radius_style, positive=True)
        half_width = max(1.2 * radius, 8.0 * max(bins) * float(np.max(np.spacing(
            np.abs(center)))))
        extent = (center[0] - half_width, center[0] + half_width,
                  center[1] - half_width, center[1] + half_width)
        edges = (np.linspace(extent[0], extent[1], bins[0] + 1),
                 np.linspace(extent[2], extent[3], bins[1] + 1))
        facts["increasing_edges"] = bool(np.all(np.diff(edges[0]) > 0)
                                         and np.all(np.diff(edges[1]) > 0))
        styles = ["random", "random", "zero", "hot", "uniform"]
        n_points = _pick(draw, [0, 1, 3, 12, 45])

        def points(count):
            count = int(count)
            # uniform over the frame and a little beyond it (the jitter)
            return center + half_width * rng.uniform(-1.1, 1.1, (count, 2))

        if labels is None:
            counts = _histogram(rng, bins, _choice(rng, styles))
            histogram = _normalised(counts)
            synthetic = points(n_points if histogram.sum() > 0 else 0)
            synthetic_groups = None
        else:
            counts = np.array([_histogram(rng, bins, _choice(rng, styles))
                               for _ in labels])
            totals = counts.reshape(len(labels), -1).sum(axis=1)
            sizes = (rng.multinomial(n_points, totals / totals.sum())
                     if totals.sum() > 0 else np.zeros(len(labels), dtype=int))
            histogram = _normalised(counts.sum(axis=0))
            release["score_histograms"] = [_normalised(c) for c in counts]
            synthetic = np.vstack([points(size) for size in sizes])
            synthetic_groups = [label for label, size in zip(labels, sizes)
                                for _ in range(size)]
            release["synthetic_groups"] = synthetic_groups
            facts["group_histograms"] = facts["synthetic_groups"] = True
        if _choice(rng, ["additive", "additive", "sparse"]) == "additive":
            release["histogram_threshold"] = float(_choice(rng, [0.0, 2.5, 40.0, 1e300]))
            release["expected_noise_cells"] = float(_choice(rng, [0.4, 0.0, 3.0, 1e-9,
                                                                  500.0]))
        else:
            release["expected_noise_cells"] = 0.0
        facts["expected_noise_cells"] = release["expected_noise_cells"]
        release.update(
            axes=[a, b], bins=None,
            frame={"center": center, "radius": radius, "half_width": half_width,
                   "extent": list(extent)},
            bin_edges=list(edges), score_histogram=histogram, synthetic_scores=synthetic)
        del release["bins"]
        facts.update(axes=(a, b), frame=True, n_synthetic=len(synthetic))

    if (estimator != "DPKendallDirections" and _int(draw, 0, 3) == 0) or (
            estimator == "DPKendallDirections" and _int(draw, 0, 5) == 0):
        # the non-private reference, on n_samples rows
        n_samples = int(rng.integers(2, 40))
        V_ref = _orthonormal(rng, k, p, "random")
        V_ref *= np.where(np.sum(V_ref * components, axis=1) < 0, -1.0, 1.0)[:, None]
        lam_ref = np.sort(10.0 ** rng.uniform(-3, 3, k))[::-1]
        if rng.random() < 0.2:
            lam_ref[-1] = 0.0
        scores = rng.standard_normal((n_samples, k)) * np.sqrt(lam_ref)
        scores -= scores.mean(axis=0)
        total_ref = _total(rng, lam_ref)
        # a covariance diagonal consistent with these eigenvalues: at least the
        # variance the k components carry
        diagonal = (lam_ref[:, None] * V_ref ** 2).sum(axis=0) * rng.uniform(1, 3, p)
        reference = {"components": V_ref, "explained_variance": lam_ref,
                     "explained_variance_ratio": _ratio(lam_ref, total_ref),
                     "scores": scores, "score_histogram": None,
                     "feature_variance": diagonal, "total_variance": total_ref}
        if facts["frame"]:
            reference["score_histogram"] = _normalised(_histogram(
                rng, np.shape(release["score_histogram"]),
                _choice(rng, ["random", "zero", "hot", "uniform"])))
        release[NONPRIVATE_KEY] = reference
        facts["nonprivate"] = True
        facts["nonprivate_variances"] = lam_ref
    release["n_samples"] = n_samples
    facts["n_samples"] = n_samples

    release["privacy_ledger"] = [
        {"step": f"step {i} ✓", "mechanism": "gaussian (analytic)",
         "eps": float(rng.uniform(0, 1 / 6)), "delta": 1e-6,    # sums to <= 1
         "noise_scale": _choice(rng, [0.5, 1e-300, 1e300, "inf"])}
        for i in range(int(rng.integers(1, 7)))
    ]
    release["privacy_spent"] = {"eps": 1.0, "delta": 1e-5}
    release["budget"] = {"loading": [0.4, 4e-6], "scree": [0.2, 2e-6],
                         "score": [0.4, 4e-6]}

    source = _pick(draw, ["dict", "dict", "dict", "json", "object"])
    if not facts["increasing_edges"]:
        # load_release rejects such edges (tests/test_release.py); a display handed
        # a fitted object that holds them must reject them too
        spread = [np.linspace(0.0, 1.0, len(edge)) for edge in release["bin_edges"]]
        obj = _as_plain_object(load_release(dict(release, bin_edges=spread)), rng)
        obj.bin_edges_ = tuple(release["bin_edges"])
        return Case(release, obj, "object", facts)
    if source == "json":
        text = json.dumps(release, default=lambda value: value.tolist(), allow_nan=False)
        obj = load_release(json.loads(text))
    else:
        obj = load_release(release)
        if source == "object":
            obj = _as_plain_object(obj, rng)
    return Case(release, obj, source, facts)


# --------------------------------------------------------------------- predictions

def _valid_pair(pair, k):
    """What check_axes_pair accepts, predicted independently."""
    try:
        values = tuple(pair)
    except TypeError:
        return False
    return (len(values) == 2
            and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                    for v in values)
            and values[0] != values[1] and k >= 2
            and all(0 <= v < k for v in values))


def _valid_variables(variables, names):
    if variables is None:
        return True
    if isinstance(variables, str):
        return variables == "all" or variables in names
    items = list(variables)
    return bool(items) and all(
        (isinstance(v, str) and v in names)
        or (isinstance(v, (int, np.integer)) and not isinstance(v, bool)
            and 0 <= v < len(names))
        for v in items)


def _selected(variables, names):
    """Indices drawn for a valid ``variables`` (at most 30 variables: all of them)."""
    if variables is None or variables == "all":
        return list(range(len(names)))
    if isinstance(variables, str):
        variables = [variables]
    lookup = {name: j for j, name in enumerate(names)}
    return list(dict.fromkeys(lookup[v] if isinstance(v, str) else int(v)
                              for v in variables))


MAY = "may"   # a rule condition: the error is allowed, not required


def _run(call, rules):
    """``call()``: a result, or one of the errors whose condition holds.

    ``rules`` is a list of (condition, exception types, message regex); when some
    condition is true, the call must raise an error matching one of the true rules
    (an input with several problems may report any of them); a rule whose condition
    is ``MAY`` allows its error without requiring it.
    """
    expected = [(types, pattern) for condition, types, pattern in rules
                if condition is True or (condition is not MAY and bool(condition))]
    optional = [(types, pattern) for condition, types, pattern in rules
                if condition is MAY]
    return run_contract(call, expected, optional, result_event="a display")


# ------------------------------------------------------------------------ figures

_POSITION = (0.12, 0.2, 0.7, 0.7)


class Canvas:
    """One figure and one axes reused by every case of a test."""

    def __init__(self):
        self.figure = Figure(figsize=(6.4, 4.8))
        FigureCanvasAgg(self.figure)
        self.ax = self.figure.add_axes(_POSITION)
        self.count = 0
        self.renders = 0
        self.default_figures = 0

    def fresh_axes(self):
        """The axes, emptied; and whether this case also renders."""
        figure, ax = self.figure, self.ax
        self.count += 1
        for other in list(figure.axes):       # twin axes, colour bars, facets
            if other is not ax:
                figure.delaxes(other)
        figure.legends.clear()
        figure.texts.clear()
        figure._suptitle = None
        if self.count % FULL_CLEAR_EVERY == 0:
            ax.clear()
        else:
            for artist in [*ax.lines, *ax.collections, *ax.patches, *ax.texts,
                           *ax.images, *ax.tables, *ax.artists]:
                artist.remove()
            ax.containers.clear()
            if ax.legend_ is not None:
                ax.legend_.remove()
            ax.set_title("")
            ax.set_xlabel("")
            ax.set_ylabel("")
            for axis in (ax.xaxis, ax.yaxis):
                axis.set_major_locator(AutoLocator())
                axis.set_major_formatter(ScalarFormatter())
            ax.set_xlim(0.0, 1.0)
            ax.set_ylim(0.0, 1.0)
            ax.set_autoscale_on(True)
        ax.set_axis_on()
        ax.set_aspect("auto")
        ax.set_position(_POSITION)
        return ax, self.count

    def render(self):
        with _strict_warnings():
            self.figure.canvas.draw()

    def close(self):
        self.figure.clear()


@pytest.fixture(scope="module")
def canvases():
    """One Canvas per test (an Axes once twinned, by the scree, stays marked as
    twinned in matplotlib and refuses the equal-aspect box of the other displays)."""
    made = {}

    def get(name):
        if name not in made:
            made[name] = Canvas()
        return made[name]

    yield get
    for canvas in made.values():
        canvas.close()
    plt.close("all")


def _limits_ok(ax):
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    limits = np.array([x0, x1, y0, y1], dtype=float)
    return bool(np.all(np.isfinite(limits)) and x0 != x1 and y0 != y1)


def _check_figure(figure, name):
    for ax in figure.axes:
        assert _limits_ok(ax), \
            f"{name}: non-finite or empty axis limits {ax.get_xlim()}, {ax.get_ylim()}"
        for text in ax.texts:
            assert np.all(np.isfinite(np.asarray(text.get_position(), dtype=float))), \
                f"{name}: a text at a non-finite position"


def _finite(values, what):
    values = np.asarray(values, dtype=float)
    assert np.all(np.isfinite(values)), f"{what} is not finite: {values}"
    return values


def _arrow_ends(arrows):
    return np.array([arrow.xy for arrow in arrows], dtype=float).reshape(-1, 2)


def _draw_default(call):
    """The same call on a new figure (``ax=None``: constrained layout), rendered."""
    display = call(None)
    if display is None:
        return
    figure = display.figure_
    try:
        with _strict_warnings():
            figure.canvas.draw()
        _check_figure(figure, "ax=None")
    finally:
        plt.close(figure)


def _property(canvas, case, call, rules, check):
    """Run one case: the call on the shared axes (and on a sampled one, rendered)."""
    ax, count = canvas.fresh_axes()
    display = _run(lambda: call(ax), rules)
    if display is None:
        return
    check(display)
    _check_figure(canvas.figure, type(display).__name__)
    # the first displayed case after every DRAW_EVERY-th (DEFAULT_FIGURE_EVERY-th)
    if canvas.renders < count // DRAW_EVERY:
        canvas.renders += 1
        canvas.render()
    if canvas.default_figures < count // DEFAULT_FIGURE_EVERY:
        canvas.default_figures += 1
        _run(lambda: _draw_default(call), rules)


# --------------------------------------------------------------------- option draws

def _axes_option(draw, k, fitted):
    choice = _pick(draw, ["none"] * 6 + ["fitted", "pair", "invalid"])
    if choice == "none":
        return None
    if choice == "fitted":
        return fitted if fitted is not None else (0, 1)
    if choice == "pair":      # two different components (valid when k >= 2)
        first = _int(draw, 0, max(k - 1, 0))
        return (first, (first + 1 + _int(draw, 0, max(k - 2, 0))) % max(k, 2))
    return _pick(draw, [(0, 0), (0, k), (-1, 0), (0,), (0, 1, 2), (True, 0),
                        (0.0, 1.0), "01", 3])


def _variables_option(draw, names):
    p = len(names)
    choice = _pick(draw, ["none"] * 6 + ["all", "names", "indices", "invalid"])
    if choice == "none":
        return None
    if choice == "all":
        return "all"
    if choice == "names":
        return draw(st.lists(st.sampled_from(names), min_size=1, max_size=p))
    if choice == "indices":
        return draw(st.lists(st.integers(0, p - 1), min_size=1, max_size=p))
    return _pick(draw, [[], ["no such variable"], [p], [-1], [True], [0.5],
                                 "no such variable"])


@st.composite
def scree_cases(draw):
    case = draw(releases())
    options = {"kind": _pick(draw, ["both", "both", "pve", "variance"]),
               "cumulative": _bool(draw),
               "show_nonprivate": _bool(draw)}
    return case, options


@st.composite
def loading_cases(draw):
    case = draw(releases())
    k = case.facts["k"]
    kind = _pick(draw, ["vector", "vector", "point", "heatmap"])
    components = None
    if _int(draw, 0, 1 if kind == "heatmap" else 19) == 1:
        components = _pick(draw, [
            list(range(k)), [k - 1], [0, 0], [], [k], [-1], 0, "0"])
    options = {"kind": kind, "axes": _axes_option(draw, k, case.facts["axes"]),
               "variables": _variables_option(draw, case.facts["names"]),
               "components": components, "show_nonprivate": _bool(draw)}
    return case, options


@st.composite
def score_cases(draw):
    case = draw(releases(score=True))
    options = {"kind": _pick(draw, ["histogram", "histogram", "points", "both"]),
               "groups": _pick(draw, ["colors", "colors", "facets", None]),
               "center": _bool(draw),
               "axes": _axes_option(draw, case.facts["k"], case.facts["axes"]),
               "show_nonprivate": _bool(draw)}
    return case, options


@st.composite
def variable_cases(draw):
    case = draw(releases())
    options = {"axes": _axes_option(draw, case.facts["k"], case.facts["axes"]),
               "variables": _variables_option(draw, case.facts["names"]),
               "show_nonprivate": _bool(draw)}
    return case, options


@st.composite
def biplot_cases(draw):
    case = draw(releases(score=True))
    alpha = _pick(draw, [1.0, 1.0, 1.0, 0.0, 0.5, 0, 1, 0.25, 1.0, 0.0, "invalid"])
    if alpha == "invalid":
        alpha = _pick(draw, [1.5, -0.5, float("nan"), True, "1"])
    options = {"alpha": alpha, "center": _bool(draw),
               "axes": _axes_option(draw, case.facts["k"], case.facts["axes"]),
               "variables": _variables_option(draw, case.facts["names"]),
               "show_nonprivate": _bool(draw)}
    return case, options


def _biplot_magnitudes(case, alpha, center):
    """(largest drawn coordinate, gamma) of the biplot, in extended precision.

    An independent oracle of the biplot's range: the formulas of
    ``biplot_coordinates`` in ``np.longdouble`` (exponents up to 4932).
    """
    L = np.longdouble
    obj, facts = case.obj, case.facts
    a, b = facts["axes"]
    lam = np.asarray(obj.explained_variance_, dtype=L)[[a, b]]
    d = np.sqrt((L(facts["n_samples"]) - 1) * lam) ** L(float(alpha))
    frame = obj.frame_
    c = np.asarray(frame["center"] if isinstance(frame, dict) else frame.center, dtype=L)
    S = np.asarray(obj.synthetic_scores_, dtype=L).reshape(-1, 2)
    G = (S - (c if center else L(0))) / d
    H = np.asarray(obj.components_, dtype=L)[[a, b]].T * d
    r_G = np.quantile(np.hypot(*(G - G.mean(axis=0)).T), 0.9) if len(G) else L(0)
    r_H = np.max(np.hypot(H[:, 0], H[:, 1]))
    gamma = r_G / r_H if r_G > 0 and r_H > 0 else L(0)
    origin = np.zeros(2, dtype=L) if center else c / d
    drawn = np.concatenate([G.ravel(), (gamma * H).ravel(), origin])
    return float(np.max(np.abs(drawn))), float(gamma)


def _valid_alpha(alpha):
    return (not isinstance(alpha, bool) and isinstance(alpha, (int, float))
            and math.isfinite(alpha) and 0 <= alpha <= 1)


def _component_indices_ok(components, k):
    if components is None:
        return True
    if isinstance(components, (int, np.integer)) and not isinstance(components, bool):
        components = [components]
    if isinstance(components, str):
        return False
    items = list(components)
    return bool(items) and all(
        isinstance(c, (int, np.integer)) and not isinstance(c, bool) and 0 <= c < k
        for c in items)


# -------------------------------------------------------------------------- tests

@_settings(DISPLAY_EXAMPLES)
@given(generated=scree_cases())
def test_scree_display_property(canvases, generated):
    canvas = canvases('scree')
    case, options = generated
    facts = case.facts
    has_variances = facts["variances"] is not None
    rules = [
        (not has_variances, (TypeError,), r"ScreeDisplay needs .*no private variances"),
        (has_variances and options["cumulative"] and options["kind"] == "variance",
         (ValueError,), r"cumulative=True"),
    ]

    def call(ax):
        return ScreeDisplay.from_estimator(case.obj, ax=ax, **options)

    def check(display):
        k = facts["k"]
        variance = facts["variances"]
        ratio = np.asarray(case.obj.explained_variance_ratio_)
        if options["kind"] != "variance":
            heights = _finite([bar.get_height() for bar in display.bars_], "bar heights")
            np.testing.assert_allclose(heights, 100 * ratio, rtol=1e-12, atol=0)
            assert len(display.bar_labels_) == (k if k <= 12 else 0)
        else:
            assert display.bars_ is None
        if options["kind"] != "pve":
            np.testing.assert_array_equal(display.line_.get_ydata(), variance)
        else:
            assert display.line_ is None
        assert (display.cumulative_line_ is not None) == options["cumulative"]
        if options["kind"] == "both":
            assert display.variance_ax_ is not None and _limits_ok(display.variance_ax_)
        # the noise is always shown: on the variances, or (in PVE units) on the bars
        assert (display.bar_errorbars_ is not None
                or display.line_errorbars_ is not None
                or (options["kind"] == "pve" and not case.obj.total_variance_ > 0))
        reference = facts["nonprivate"] and options["show_nonprivate"]
        expected = (2 if options["kind"] == "both" else 1) if reference else 0
        assert len(display.nonprivate_lines_) == expected
        assert display.ax_ is not None and display.figure_ is not None

    _property(canvas, case, call, rules, check)


@_settings(DISPLAY_EXAMPLES)
@given(generated=loading_cases())
def test_loading_display_property(canvases, generated):
    canvas = canvases('loading')
    case, options = generated
    facts = case.facts
    k, names = facts["k"], facts["names"]
    kind = options["kind"]
    axes = options["axes"]
    if axes is None:
        axes = facts["axes"] if facts["axes"] is not None else (0, 1)
    rules = [
        (kind != "heatmap" and options["components"] is not None, (ValueError,),
         r"components selects"),
        (kind != "heatmap" and not _valid_pair(axes, k), (ValueError, TypeError), r"^axes"),
        (kind == "heatmap" and not _component_indices_ok(options["components"], k),
         (ValueError, TypeError), r"^components"),
        (not _valid_variables(options["variables"], names), (ValueError, TypeError), r"^variables"),
    ]

    def call(ax):
        return LoadingDisplay.from_estimator(case.obj, ax=ax, **options)

    def check(display):
        V = np.asarray(case.obj.components_)
        selected = _selected(options["variables"], names)
        assert display.variables_ == [names[j] for j in selected]
        reference = facts["nonprivate"] and options["show_nonprivate"]
        if kind == "heatmap":
            comps = (list(range(min(k, 10))) if options["components"] is None
                     else list(np.atleast_1d(options["components"])))
            image = np.asarray(display.image_.get_array())
            assert image.shape == (len(selected), len(comps))
            np.testing.assert_array_equal(image, V[np.ix_(comps, selected)].T)
            assert display.colorbar_ is not None
            assert (display.nonprivate_cells_ is not None) == reference
            return
        a, b = axes
        expected = np.column_stack([V[a, selected], V[b, selected]])
        if kind == "vector":
            ends = _arrow_ends(display.arrows_)
            np.testing.assert_array_equal(ends, expected)
            assert len(display.nonprivate_arrows_) == (len(selected) if reference else 0)
        else:
            np.testing.assert_array_equal(display.scatter_.get_offsets(), expected)
            assert (display.nonprivate_scatter_ is not None) == reference
        assert len(display.texts_) == len(selected)

    _property(canvas, case, call, rules, check)


@_settings(DISPLAY_EXAMPLES)
@given(generated=score_cases())
def test_score_display_property(canvases, generated):
    canvas = canvases('score')
    case, options = generated
    facts = case.facts
    kind, groups, axes = options["kind"], options["groups"], options["axes"]
    has_score = facts["frame"]
    axes_problem = axes is not None and (
        not _valid_pair(axes, facts["k"]) or tuple(axes) != facts["axes"])
    rules = [
        (not has_score, (TypeError,), r"ScoreDisplay needs .*no score summary"),
        (has_score and axes_problem, (ValueError, TypeError), r"^axes"),
        (has_score and groups == "facets" and kind in ("histogram", "both")
         and not facts["group_histograms"], (ValueError,), r"needs group_histograms"),
        (has_score and groups == "facets" and kind in ("points", "both")
         and not facts["synthetic_groups"], (ValueError,), r"needs synthetic_groups"),
        (has_score and not facts["increasing_edges"], (ValueError,), r"bin_edges"),
    ]

    def call(ax):
        return ScoreDisplay.from_estimator(case.obj, ax=ax, **options)

    def check(display):
        axs = np.atleast_1d(np.asarray(display.ax_, dtype=object))
        assert all(isinstance(ax, Axes) and _limits_ok(ax) for ax in axs)
        if groups == "facets":
            assert len(axs) == len(display.groups_)
        if kind in ("histogram", "both"):
            assert display.mesh_ is not None
            assert display.colorbar_ is not None
        if kind in ("points", "both"):
            scatters = display.scatter_ if isinstance(display.scatter_, list) else [
                display.scatter_]
            offsets = np.vstack([np.asarray(s.get_offsets(), dtype=float).reshape(-1, 2)
                                 for s in scatters])
            _finite(offsets, "synthetic points drawn")
            if groups is None or not facts["synthetic_groups"]:
                assert len(offsets) == facts["n_synthetic"]
        assert display.noise_text_ is not None
        assert "noise-only cells expected" in display.noise_text_.get_text()

    _property(canvas, case, call, rules, check)


@_settings(DISPLAY_EXAMPLES)
@given(generated=variable_cases())
def test_variable_display_property(canvases, generated):
    canvas = canvases('variable')
    case, options = generated
    facts = case.facts
    k, names = facts["k"], facts["names"]
    has_variances = facts["variances"] is not None
    axes = options["axes"]
    if axes is None:
        axes = facts["axes"] if facts["axes"] is not None else (0, 1)
    rules = [
        (not has_variances, (TypeError,), r"VariableDisplay needs .*no private variances"),
        (has_variances and not _valid_pair(axes, k), (ValueError, TypeError), r"^axes"),
        (has_variances and not _valid_variables(options["variables"], names),
         (ValueError, TypeError), r"^variables"),
    ]

    def call(ax):
        return VariableDisplay.from_estimator(case.obj, ax=ax, **options)

    def check(display):
        coordinates = _finite(display.coordinates_, "correlation coordinates")
        assert coordinates.shape == (len(display.variables_), 2)
        radius = np.hypot(coordinates[:, 0], coordinates[:, 1])
        assert np.all(radius <= 1 + 1e-9), f"outside the unit circle: {radius}"
        np.testing.assert_array_equal(_arrow_ends(display.arrows_), coordinates)
        # inside the circle as computed; beyond it, marked and put on it
        with np.errstate(all="ignore"):
            computed = np.hypot(display.correlations_[:, 0], display.correlations_[:, 1])
        np.testing.assert_array_equal(display.beyond_, ~(computed <= 1))
        inside = ~display.beyond_
        np.testing.assert_array_equal(coordinates[inside], display.correlations_[inside])
        np.testing.assert_allclose(radius[display.beyond_], 1.0, rtol=1e-9)
        # omitted exactly when the private variance of the variable is 0
        zero = [names[j] for j in range(len(names)) if facts["feature_variances"][j] == 0]
        assert display.omitted_ == zero
        assert len(display.texts_) == len(display.variables_)
        assert set(display.variables_).isdisjoint(display.omitted_)
        selected = [names[j] for j in _selected(options["variables"], names)]
        assert set(display.variables_) <= set(selected)

    _property(canvas, case, call, rules, check)


@_settings(DISPLAY_EXAMPLES)
@given(generated=biplot_cases())
def test_biplot_display_property(canvases, generated):
    canvas = canvases('biplot')
    case, options = generated
    facts = case.facts
    k, names = facts["k"], facts["names"]
    has_score = facts["frame"] and facts["variances"] is not None
    axes = options["axes"]
    axes_problem = axes is not None and (
        not _valid_pair(axes, k) or tuple(axes) != facts["axes"])
    alpha = options["alpha"]
    zero_variance = has_score and np.any(facts["variances"][list(facts["axes"])] == 0)
    out_of_range = False
    if has_score and _valid_alpha(alpha) and not (alpha > 0 and zero_variance):
        with np.errstate(all="ignore"):
            largest, gamma = _biplot_magnitudes(case, alpha, options["center"])
        # well inside the display's 1e306 (rounding): must draw; else may refuse
        out_of_range = not (largest <= 1e305 and gamma <= 1e307)
        event(f"biplot in range: {not out_of_range}")
    rules = [
        (not has_score, (TypeError,), r"BiplotDisplay needs"),
        (has_score and axes_problem, (ValueError, TypeError), r"^axes"),
        (has_score and not _valid_alpha(alpha), (ValueError, TypeError), r"^alpha must be"),
        (has_score and _valid_alpha(alpha) and alpha > 0 and zero_variance,
         (ValueError,), r"alpha=\S+ divides .* use alpha=0"),
        (MAY if has_score and _valid_alpha(alpha) and not (alpha > 0 and zero_variance)
         and out_of_range else False,
         (ValueError,), r"alpha=\S+: the biplot coordinates leave the floating-point "
         r"range .* use alpha=0"),
        (has_score and not _valid_variables(options["variables"], names), (ValueError, TypeError),
         r"^variables"),
    ]

    def call(ax):
        return BiplotDisplay.from_estimator(case.obj, ax=ax, **options)

    def check(display):
        assert math.isfinite(display.gamma_) and display.gamma_ >= 0
        G = _finite(display.observation_coordinates_, "observation coordinates")
        assert G.shape == (facts["n_synthetic"], 2)
        arrows = _finite(display.variable_coordinates_, "variable coordinates")
        assert arrows.shape == (facts["p"], 2)
        origin = _finite(display.arrow_origin_, "arrow origin")
        selected = _selected(options["variables"], names)
        assert display.variables_ == [names[j] for j in selected]
        np.testing.assert_allclose(_arrow_ends(display.arrows_),
                                   origin + arrows[selected], rtol=1e-12, atol=0)
        if display.nonprivate_gamma_ is not None:
            assert math.isfinite(display.nonprivate_gamma_)
            _finite(_arrow_ends(display.nonprivate_arrows_), "non-private arrows")

    _property(canvas, case, call, rules, check)


# -------------------------------------------------------------------- plot_overview

@st.composite
def overview_cases(draw):
    case = draw(releases())
    options = {}
    choice = _pick(draw, ["none"] * 8 + ["pair", "invalid"])
    if choice == "pair":
        k = case.facts["k"]
        first = _int(draw, 0, max(k - 1, 0))
        options["axes"] = (first, (first + 1 + _int(draw, 0, max(k - 2, 0))) % max(k, 2))
    elif choice == "invalid":
        options["axes"] = _pick(draw, [(0, 0), (0, 9), (0,)])
    panel = _pick(draw, ["none"] * 6 + ["biplot alpha 0", "score both",
                                                 "score facets", "loading heatmap",
                                                 "loading point", "scree pve"])
    options.update({
        "none": {}, "biplot alpha 0": {"biplot_kw": {"alpha": 0}},
        "score both": {"score_kw": {"kind": "both"}},
        "score facets": {"score_kw": {"groups": "facets"}},
        "loading heatmap": {"loading_kw": {"kind": "heatmap"}},
        "loading point": {"loading_kw": {"kind": "point"}},
        "scree pve": {"scree_kw": {"kind": "pve"}},
    }[panel])
    return case, options


_overview_count = {"n": 0}


@_settings(OVERVIEW_EXAMPLES)
@given(generated=overview_cases())
def test_plot_overview_property(generated):
    case, options = generated
    facts = case.facts
    k = facts["k"]
    _overview_count["n"] += 1
    count = _overview_count["n"]
    two_axes = k >= 2
    axes = options.get("axes")
    if axes is None:
        axes = facts["axes"] if facts["axes"] is not None else (0, 1)
    axes_ok = not two_axes or _valid_pair(axes, k)
    score_drawn = (facts["frame"] and axes_ok and tuple(axes) == facts["axes"])
    alpha = options.get("biplot_kw", {}).get("alpha", 1.0)
    zero_variance = score_drawn and np.any(facts["variances"][list(axes)] == 0)
    loading_kind = options.get("loading_kw", {}).get("kind")
    rules = [
        (two_axes and not axes_ok, (ValueError, TypeError), r"^axes"),
        (axes_ok and not two_axes and loading_kind in ("vector", "point"),
         (ValueError, TypeError), r"^axes"),
        (axes_ok and score_drawn and options.get("score_kw", {}).get("groups") == "facets"
         and not facts["group_histograms"], (ValueError,), r"needs group_histograms"),
    ]
    fig_kw = {} if count % OVERVIEW_CONSTRAINED_EVERY == 0 else {"layout": None}
    try:
        figure = _run(lambda: plot_overview(case.obj, figsize=(12, 8), **options,
                                            **fig_kw), rules)
        if figure is None:
            return
        has_variances = facts["variances"] is not None
        expected = {"loading"}
        if has_variances:
            expected.add("scree")
            if two_axes:
                expected.add("variable")
        optional = set()
        if score_drawn and has_variances:
            expected.add("score")
            if not (alpha > 0 and zero_variance):
                with np.errstate(all="ignore"):
                    largest, gamma = _biplot_magnitudes(case, alpha, True)
                in_range = largest <= 1e305 and gamma <= 1e307
                (expected if in_range else optional).add("biplot")
        assert expected <= set(figure.displays_) <= expected | optional
        _check_figure(figure, "plot_overview")
        if count % OVERVIEW_DRAW_EVERY == 0:
            with _strict_warnings():
                figure.canvas.draw()
    finally:
        plt.close("all")
