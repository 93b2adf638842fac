"""Private principal directions from the noisy spherical Kendall matrix (g-DPPCA)."""

import math
import warnings

import numpy as np
from sklearn.utils import Bunch

from ._base import _PrivateProjection, orient_components
from ._kendall import pair_scatter, spherical_kendall
from ._nonprivate import nonprivate_reference
from ._summary import FitSummary, budget_line, directions_table, reference_line
from ._spread import release_spreads, spread_parts
from ._variances import random_pairs
from ._validation import (
    check_bool,
    check_budget_params,
    check_choice,
    check_n_components,
    check_n_jobs,
    check_pairs,
    check_share,
    validate_features,
)
from .privacy import (
    PrivacyLedger,
    PrivacyUtilityWarning,
    check_generator,
    positive_quantile,
    symmetric_matrix_gaussian,
)
from .privacy._calibration import NOISE_METHODS

SENSITIVITY_RULES = ("standard", "tight")
#: Share of the loading part spent on the private radius (``radial="clipped"``).
RADIUS_SHARE = 0.2
#: ``radius_level="auto"``: ``clip(1 - 22 / sqrt(n eps), 0.5, 0.99)`` (see
#: :func:`auto_radius_level`).
AUTO_LEVEL = (22.0, 0.5, 0.99)


def auto_radius_level(n_samples, eps):
    """The radius level for ``radius_level="auto"``, from public ``n`` and the
    directions' ``eps``: ``clip(1 - 22 / sqrt(n eps), 0.5, 0.99)``.

    A higher level brings the estimand closer to the covariance (on standardised
    digits the noise-free gap to scikit-learn's PCA falls from 0.75, spherical, to
    0.66 at level 0.5 and 0.29 at 0.9) and costs signal (Gaussian data, n = 2000,
    eps = 1: error 1.27 times the spherical one at 0.5, 1.83 times at 0.9), so the
    level rises with ``n eps``: 0.5 at n eps = 2,000, 0.75 at 8,000, 0.94 at
    130,000 (adult at eps = 4). Measured in ``bench_which_pca.py``.
    """
    scale, low, high = AUTO_LEVEL
    return float(np.clip(1.0 - scale / math.sqrt(n_samples * eps), low, high))


def kendall_sensitivity(n_samples, rule):
    """Frobenius sensitivity of the (complete or incomplete) spherical Kendall matrix.

    One row of ``n`` touches ``n - 1`` of the ``n (n - 1) / 2`` pair terms (``m`` of
    the ``n m / 2`` terms with ``pairs=m``); each term ``u u^T`` has unit Frobenius
    norm, so it moves by at most 2 (``"standard"``, Kim & Jung's bound, giving
    ``4 / n``) and in fact by at most ``sqrt(2)`` because
    ``||u u^T - v v^T||_F^2 = 2 - 2 (u . v)^2`` (``"tight"``, giving
    ``2 sqrt(2) / n``).
    """
    per_term = 2.0 if rule == "standard" else math.sqrt(2.0)
    return 2.0 * per_term / n_samples


def loading_parts(radial, radius):
    """The budget tree of the directions: one Gaussian leaf, or with
    ``radial="clipped"`` and a private radius, the radius search and the matrix."""
    if radial == "spherical" or not isinstance(radius, str):
        return "gaussian"
    return {"radius": (RADIUS_SHARE, "pure"), "statistic": (1.0 - RADIUS_SHARE, "gaussian")}


def private_radius(X, level, leaf, rng, ledger):
    """The clip radius ``c``: a private ``level`` quantile of ``||x_a - x_b||``
    over a random matching (one changed row changes one distance), on the
    scale-free grid of :func:`~sklearn_dppca.privacy.positive_quantile`."""
    first, second = random_pairs(X.shape[0], rng)
    differences = X[first].astype(np.float64) - X[second]
    squared = np.einsum("ij,ij->i", differences, differences)
    return math.sqrt(positive_quantile(squared, level, leaf.eps, rng, ledger=ledger,
                                       step=leaf.path))


def private_clipped_kendall(X, *, budget, radius, radius_level, noise, sensitivity,
                            pairs, n_jobs, rng, ledger, progress=None):
    """The noisy clipped Kendall matrix ``mean d d^T / max(||d||^2, c^2)``.

    The generalized Kendall matrix of Raymaekers & Rousseeuw (2019) with radial
    function ``h(r) = min(r, c)``, divided by ``c^2``. Each term ``a a^T`` with
    ``a = d / max(||d||, c)`` has ``||a|| <= 1``, and
    ``||a a^T - b b^T||_F^2 = ||a||^4 + ||b||^4 - 2 (a . b)^2 <= 2``, so one
    changed row moves the matrix by at most ``2 sqrt(2) / n`` in Frobenius norm
    for every pair design: the tight Kendall bound (:func:`kendall_sensitivity`).
    ``c^2`` times it, halved, is the pair scatter clipped in norm at ``c``: the
    covariance when ``c`` is large, the spherical Kendall matrix (times ``c^2``)
    when it is small. ``budget``: a Gaussian leaf (public ``radius``) or the view
    of :func:`loading_parts`. Returns the Bunch of
    :func:`private_kendall_directions` plus ``radius``.
    """
    statistic = budget if not hasattr(budget, "part") else budget["statistic"]
    if isinstance(radius, str):
        leaf = budget["radius"]
        if radius_level == "auto":   # the part's eps: the search has RADIUS_SHARE of it
            radius_level = auto_radius_level(X.shape[0], leaf.eps / RADIUS_SHARE)
        radius = private_radius(X, radius_level, leaf, rng, ledger)
    matrix = pair_scatter(X, floor=radius**2, pairs=pairs, random_state=rng,
                          n_jobs=n_jobs, progress=progress)
    released = _released_eigen(matrix, X.shape[0], statistic, noise, sensitivity, rng,
                               ledger)
    released.radius = radius
    _warn_if_radius_collapsed(released)
    return released


#: A clipped matrix whose trace (the mean of min(||d||^2 / c^2, 1)) is this high,
#: one noise sd off, has nearly every pair beyond its radius: about 0.7 at the
#: default level 0.5 (lower at higher levels), 1 when the search collapsed.
COLLAPSED_TRACE = 0.85


def _warn_if_radius_collapsed(released):
    """Warn when the radius sits below nearly all pair distances (post-processing).

    The trace of the clipped matrix is the mean of ``min(||d||^2 / c^2, 1)``:
    about 0.7 at the default level, 1 when the radius search stopped at the
    bottom of its scale-free grid (small ``n eps``). Such a matrix is the
    spherical Kendall matrix, and variances read off it are ``c^2`` small.
    """
    p = released.kendall_matrix.shape[0]
    trace = float(np.trace(released.kendall_matrix))
    if trace - released.noise_scale * math.sqrt(p) >= COLLAPSED_TRACE:
        warnings.warn(
            "The private clip radius sits below nearly every pair distance (its "
            "search stopped far too early): the clipped matrix is the spherical "
            "Kendall matrix, and variances read off it (the 'matrix' scree) are "
            "about 0. Give the directions more eps, or use more rows.",
            PrivacyUtilityWarning,
            stacklevel=4,
        )


def release_directions(X, *, radial, radius, radius_level, budget, noise, sensitivity,
                       pairs, duplicates, n_jobs, rng, ledger, progress=None):
    """The directions' release for ``radial``: spherical or clipped Kendall matrix.

    ``budget`` is ``plan.node("loading")`` (or the directions' node): a leaf, or the
    view of :func:`loading_parts`.
    """
    if radial == "clipped":
        return private_clipped_kendall(
            X, budget=budget, radius=radius, radius_level=radius_level, noise=noise,
            sensitivity=sensitivity, pairs=pairs, n_jobs=n_jobs, rng=rng, ledger=ledger,
            progress=progress)
    return private_kendall_directions(
        X, budget=budget, noise=noise, sensitivity=sensitivity, pairs=pairs,
        duplicates=duplicates, n_jobs=n_jobs, rng=rng, ledger=ledger, progress=progress)


def check_matrix_scree(method, radial):
    """The ``"matrix"`` scree reads a clipped matrix: ``radial`` (of the directions
    released or reused) must be ``"clipped"``. Checked before any computation."""
    if method == "matrix" and radial != "clipped":
        given = "public (an array)" if radial is None else radial
        raise ValueError("The 'matrix' scree reads the variances off the clipped Kendall "
                         "matrix: it needs radial='clipped' directions (released in "
                         f"this fit or reused), got {given} directions.")


def private_kendall_directions(X, *, budget, noise, sensitivity, pairs, duplicates,
                               n_jobs, rng, ledger, progress=None):
    """Release the noisy Kendall matrix and its eigen-decomposition.

    ``budget`` is the :class:`~sklearn_dppca.privacy.Allocation` of the Gaussian
    leaf that pays for it (its path names the ledger step).

    Returns a Bunch with ``kendall_matrix`` (released, symmetric), ``eigenvalues``
    (descending), ``eigenvectors`` (columns, deterministic signs) and
    ``noise_scale`` (diagonal standard deviation).
    """
    kendall = spherical_kendall(X, duplicates=duplicates, n_jobs=n_jobs, pairs=pairs,
                                random_state=rng, progress=progress)
    released = _released_eigen(kendall, X.shape[0], budget, noise, sensitivity, rng,
                               ledger)
    released.radius = None
    return released


def _released_eigen(matrix, n_samples, leaf, noise, sensitivity, rng, ledger):
    """The matrix plus symmetric Gaussian noise on ``leaf``, and its eigenpairs."""
    noisy, noise_scale = symmetric_matrix_gaussian(
        matrix, kendall_sensitivity(n_samples, sensitivity), rng=rng, noise=noise,
        ledger=ledger, **leaf.mechanism_budget())
    eigenvalues, eigenvectors = np.linalg.eigh(noisy)
    order = np.argsort(eigenvalues)[::-1]
    return Bunch(
        kendall_matrix=noisy,
        eigenvalues=eigenvalues[order],
        eigenvectors=orient_components(eigenvectors[:, order]),
        noise_scale=noise_scale,
    )


class DPKendallDirections(_PrivateProjection):
    """Differentially private principal directions (g-DPPCA, Kim & Jung 2025).

    The spherical Kendall matrix ``K = 2/(n(n-1)) sum_{i<j} u_ij u_ij^T`` of the unit
    pairwise differences ``u_ij = (x_i - x_j) / ||x_i - x_j||`` is perturbed by
    symmetric Gaussian noise calibrated to its Frobenius sensitivity; the private
    directions are the eigenvectors of the noisy matrix, ordered by decreasing noisy
    eigenvalue. ``K`` is translation invariant, so no centring (and no private
    location) is needed. Under elliptical models ``K`` shares its eigenvectors with
    the covariance matrix; its eigenvalues are not variances (see
    :class:`DPScree` for those).

    With ``radial="clipped"`` each pair term is ``d d^T / max(||d||^2, c^2)``
    instead (the generalized Kendall matrix of Raymaekers & Rousseeuw 2019 with
    radial function ``min(r, c)``, over ``c^2``): pairs farther apart than ``c``
    count by their direction, closer ones by their size. Halved and times ``c^2``
    it is the pair scatter clipped in norm at ``c``, the covariance for a large
    ``c``, so its directions approach those of :class:`sklearn.decomposition.PCA`
    on data that are not elliptical, with the same sensitivity and no data bounds:
    ``c`` is a private quantile of the pair distances (released as ``radius_``).
    See the user guide, "Which PCA?".

    Privacy: ``(eps, delta)``-DP under fixed-size replacement adjacency; ``n``,
    ``p`` and the column names are public.

    Parameters
    ----------
    n_components : int, default=None
        Number of directions kept in ``components_``; None keeps all ``p``.
    eps : float, default=1.0
        Privacy budget, > 0.
    delta : float, default=1e-5
        Privacy budget, in (0, 1).
    noise : {"analytic", "classical"}, default="analytic"
        Gaussian calibration of each part under ``accounting="basic"``.
        ``"analytic"`` (Balle & Wang 2018) is valid for every eps and never
        noisier; ``"classical"`` is the classical formula
        ``sigma = Delta sqrt(2 ln(1.25/delta)) / eps`` (warns for eps >= 1, raises
        where its delta exceeds the claimed one).
    sensitivity : {"tight", "standard"}, default="tight"
        Frobenius sensitivity used: the exact worst case ``2 sqrt(2)/n``
        (:func:`kendall_sensitivity`; a factor ``sqrt(2)`` less noise) or Kim &
        Jung's ``4/n``.
    accounting : {"gdp", "basic"}, default="gdp"
        How the Gaussian parts compose. ``"gdp"``: as one ``mu``-GDP block (Dong,
        Roth & Su 2022), exact; the pure-eps parts (quantile searches) compose
        beside it. ``"basic"``: each part calibrated alone at its share of
        ``(eps, delta)``, the shares added. See the user guide, "Privacy
        accounting".
    accountant : PrivacyAccountant, default=None
        A total budget for the data set, charged by every fit before any
        computation (:class:`BudgetExceededError` when it would run out).
    pairs : "all" or int, default="all"
        ``"all"``: the full U-statistic, O(n^2 p). An int ``m``: each row is paired
        with ``m`` others by a data-independent random design (incomplete
        U-statistic, O(n m p^2): linear in n); the sensitivity is unchanged.
    duplicates : {"ignore", "raise"}, default="ignore"
        Coincident pairs contribute a zero term (``"ignore"``) or raise a
        ``ValueError`` (``"raise"``, the R package's behaviour).
    radial : {"spherical", "clipped"}, default="spherical"
        The pair terms: unit directions (the spherical Kendall matrix) or
        differences clipped in norm at ``radius`` (see above).
    radius : "auto" or float, default="auto"
        The clip radius ``c`` of ``radial="clipped"`` in the units of ``X``
        (after the spreads with ``scale=True``): a private quantile of the
        distances between randomly paired rows (``RADIUS_SHARE`` = 20% of the
        directions' eps), or a public number.
    radius_level : "auto" or float, default="auto"
        Level of that quantile. Higher levels bring the estimand closer to the
        covariance and cost signal (more pairs count below their full weight).
        ``"auto"``: ``clip(1 - 22 / sqrt(n eps_d), 0.5, 0.99)`` with ``eps_d`` the
        directions' eps (:func:`auto_radius_level`, public numbers only).
    scale : bool, default=False
        Divide each column by a private estimate of its spread first (released
        as ``scale_``, with ``scale_share`` of the budget): the directions of the
        correlation matrix rather than of the raw columns, for tables in mixed
        units. See the user guide, "Units and scaling".
    scale_share : float, default=0.2
        Share of ``eps`` and ``delta`` spent on the spreads when ``scale=True``.
    compute_nonprivate : bool, default=False
        Also store the ordinary PCA in ``nonprivate_``. It is NOT private: use it
        to judge the private result, never publish it.
    random_state : None, int or numpy.random.Generator, default=None
        Drives every draw. NumPy's generators are not cryptographic; use None for
        releases you publish.
    n_jobs : int, default=None
        Parallel workers for the Kendall kernel (joblib; works with the Dask
        backend).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Private directions (orthonormal rows), largest absolute loading positive.
    kendall_matrix_ : ndarray of shape (n_features, n_features)
        The released noisy Kendall matrix.
    kendall_eigenvalues_ : ndarray of shape (n_features,)
        Its eigenvalues, descending.
    noise_scale_ : float
        Standard deviation of the diagonal noise (off-diagonal: divided by sqrt(2)).
    kendall_noise_scale_ : float
        The same (the name :class:`DPPCA` and :class:`DPScree` use).
    scale_ : ndarray of shape (n_features,) or None
        The private spreads the columns were divided by (``scale=True``), else None.
    radius_ : float or None
        The clip radius of ``radial="clipped"`` (private or public), else None.
    n_components_ : int
    n_samples_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        Defined only when ``X`` has string column names.
    privacy_spent_ : tuple (eps, delta)
    privacy_ledger_ : list of dict
        One entry per mechanism call.
    nonprivate_ : Bunch or None
        Ordinary PCA (``components``, ``explained_variance``,
        ``explained_variance_ratio``, ``scores``) when ``compute_nonprivate=True``.

    See Also
    --------
    DPScree : Private variances along the directions.
    DPPCA : The integrated private PCA with score summary.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca import DPKendallDirections
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3)) * [3.0, 1.0, 0.5]
    >>> est = DPKendallDirections(n_components=2, eps=1.0, random_state=0).fit(X)
    >>> est.components_.shape
    (2, 3)
    >>> est.transform(X).shape
    (500, 2)
    """

    def __init__(self, n_components=None, *, eps=1.0, delta=1e-5, noise="analytic",
                 sensitivity="tight", accounting="gdp", accountant=None, pairs="all",
                 duplicates="ignore", radial="spherical", radius="auto",
                 radius_level="auto", scale=False, scale_share=0.2,
                 compute_nonprivate=False, random_state=None, n_jobs=None):
        self.n_components = n_components
        self.eps = eps
        self.delta = delta
        self.noise = noise
        self.sensitivity = sensitivity
        self.accounting = accounting
        self.accountant = accountant
        self.radial = radial
        self.radius = radius
        self.radius_level = radius_level
        self.pairs = pairs
        self.duplicates = duplicates
        self.scale = scale
        self.scale_share = scale_share
        self.compute_nonprivate = compute_nonprivate
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        """Release private directions of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows are the individuals to protect. DataFrame columns that are not
            numeric are dropped with a warning.
        y : ignored

        Returns
        -------
        self
        """
        eps, delta = check_budget_params(self.eps, self.delta)
        check_choice(self.noise, NOISE_METHODS, "noise")
        check_choice(self.sensitivity, SENSITIVITY_RULES, "sensitivity")
        check_choice(self.duplicates, ("ignore", "raise"), "duplicates")
        pairs = check_pairs(self.pairs)
        check_n_jobs(self.n_jobs)
        X = validate_features(self, X, reset=True)
        n_components = check_n_components(self.n_components, X.shape[1])
        rng = check_generator(self.random_state)
        plan = self._plan_budget(self._budget_parts(), eps, delta, X.shape[0])
        ledger = PrivacyLedger()
        self.scale_ = None
        if "scale" in plan:
            spreads = release_spreads(X, budget=plan.part("scale"), noise=self.noise,
                                      rng=rng, ledger=ledger,
                                      feature_names=self._feature_names())
            X, self.scale_ = spreads.X, spreads.scale
        released = release_directions(
            X, **self._radial_params(),
            budget=plan.node("loading"), noise=self.noise, sensitivity=self.sensitivity,
            pairs=pairs, duplicates=self.duplicates, n_jobs=self.n_jobs, rng=rng,
            ledger=ledger,
        )
        self.radius_ = released.radius
        self.n_samples_ = X.shape[0]
        self.n_components_ = n_components
        self.kendall_matrix_ = released.kendall_matrix
        self.kendall_eigenvalues_ = released.eigenvalues
        self.noise_scale_ = self.kendall_noise_scale_ = released.noise_scale
        self.components_ = released.eigenvectors[:, :n_components].T.copy()
        self.nonprivate_ = (
            nonprivate_reference(X, self.components_) if self.compute_nonprivate else None
        )
        self._set_privacy(ledger, eps, delta, plan)
        return self

    def _budget_parts(self):
        """The budget tree: the spreads (``scale=True``) and the Kendall matrix."""
        radial = self._radial_params()
        loading = loading_parts(radial["radial"], radial["radius"])
        if not check_bool(self.scale, "scale"):
            return {"loading": (1.0, loading)}
        share = check_share(self.scale_share, "scale_share")
        return {"scale": (share, spread_parts(self._feature_names())),
                "loading": (1.0 - share, loading)}

    def summary(self):
        """The summary: data size, components, budget, the directions.

        Returns
        -------
        FitSummary
            ``str()`` of it is the plain-text summary; it renders as HTML in Jupyter.
        """
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        heading, table = directions_table(self.components_, self._feature_names())
        return FitSummary(
            "DP PC Directions Summary",
            [
                (None, [
                    f"Data: {self.n_samples_} observations x {self.n_features_in_} variables",
                    f"Components: {self.n_components_} PC directions",
                ]),
                (heading, table),
                (None, [
                    budget_line(*self.privacy_spent_),
                    reference_line(self.nonprivate_ is not None),
                    "The full direction matrix is available in components_.",
                ]),
            ],
        )
