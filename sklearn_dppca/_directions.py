"""The private directions estimator, DPKendallDirections."""

from ._algorithms._directions import loading_parts
from ._algorithms._nonprivate import nonprivate_reference
from ._algorithms._spread import spread_parts
from ._param_docs import shared_parameters
from ._base import _PrivateProjection
from ._bunch import Bunch
from ._algorithms._plan import plan_settings
from ._validation import (
    PAIRS,
    UNIT_OPEN,
    Interval,
    check_n_components,
)


@shared_parameters
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
    ``p`` and the column names are public. Repeated rows are allowed: a pair of
    identical rows has no direction and adds a zero term, which the sensitivity
    covers, so ties in the data never make a fit fail (see the user guide, "Input
    contracts").

    Parameters
    ----------
    n_components : int, default=None
        Number of directions kept in ``components_``; None keeps all ``p``.
    eps : float, default=1.0
        Privacy budget, > 0.
    {shared: delta}
    {shared: noise}
    {shared: sensitivity}
    {shared: accounting}
    {shared: accountant}
    pairs : "auto", "all" or int, default="auto"
        ``"all"``: the full U-statistic, O(n^2 p). An int ``m``: each row is paired
        with ``m`` others by a data-independent random design (incomplete
        U-statistic, O(n m p): linear in n); the sensitivity is unchanged.
        ``"auto"``: every pair up to ``AUTO_ALL_ROWS`` = 2,000 rows in one block,
        above (and in row blocks) ``AUTO_PARTNERS`` = 64 partners per row up
        to eps 1 and ``64 eps^2`` beyond, at most 512 from eps 2.83: a rule of
        the block sizes and the grant alone, linear in ``n``; its directions'
        error is within 4% of all pairs' at eps 1 and 5% at eps 4 on 20,000
        rows (user guide, "Large data sets"). The design used is ``pairs_``.
    radial : {"spherical", "clipped", "covariance"}, default="spherical"
        The pair terms: unit directions (the spherical Kendall matrix),
        differences clipped in norm at ``radius`` (see above), or, with
        ``bounds``, the noisy covariance about the box's private mean (Dwork,
        Talwar, Thakurta & Zhang 2014, "Analyze Gauss"): the mean is released
        first (a part of the budget, ``loading/mean``), then ``mean z z^T``
        with ``z = (x - m) / R``, ``R`` the farthest any point of the box lies
        from that mean (public once the mean is), with Frobenius sensitivity
        ``sqrt(2) / n`` (``loading/statistic``; ``radius`` is not used). A
        ValueError without ``bounds``. See the user guide, "Which PCA?".
    {shared: radius}
    {shared: radius_level}
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
    {shared: random_state}
    n_jobs : int, default=None
        Parallel workers for the Kendall kernel (joblib; works with the Dask
        backend).
    {shared: row_blocks}
    bounds : None, list of (float, float) or dict, default=None
        Public per-column ranges ``(low, high)``, known without the data (a
        codebook, a questionnaire's scale): a list of one pair per column, or a
        dict column name -> pair for a DataFrame (every column covered). Never
        read off the data; each ``low < high``, finite. Values outside a range
        are clipped to it, without error or warning (a map of each row alone,
        so every sensitivity still holds).
        The spreads (``scale=True``) are then each column's variance about
        the box's private mean, bounded by the box, with no search;
        ``radius="auto"`` is capped at the box's diagonal; and
        ``radial="covariance"`` is available. See the user guide, "Public
        bounds".

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Private directions (orthonormal rows), largest absolute loading positive.
    kendall_matrix_ : ndarray of shape (n_features, n_features)
        The released noisy Kendall matrix (with ``radial="covariance"``, the
        covariance about the box's private mean over ``radius_**2``).
    kendall_eigenvalues_ : ndarray of shape (n_features,)
        Its eigenvalues, descending.
    noise_scale_ : float
        Standard deviation of the diagonal noise (off-diagonal: divided by sqrt(2)).
    kendall_noise_scale_ : float
        The same (the name :class:`DPPCA` and :class:`DPScree` use).
    components_noise_scale_ : ndarray of shape (n_components, n_features) or None
        Approximate noise sd of each entry of ``components_``: first-order
        perturbation theory on the released Kendall matrix (post-processing),
        capped at 1 where eigenvalues nearly tie; None without a released matrix.
    {shared: scale_}
    {shared: scale_origin_}
    radius_ : float or None
        The clip radius of ``radial="clipped"`` (private or public) or
        ``"covariance"`` (the farthest any point of the declared box lies from
        its private mean: the matrix is in units of its square), else None.
    n_components_ : int
        Number of directions kept.
    n_samples_ : int
        Number of rows of the fit (public).
    {shared: pairs_}
    n_features_in_ : int
        Number of columns seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of the columns seen during ``fit``. Defined only when ``X`` has
        string column names.
    privacy_spent_ : tuple (eps, delta)
        Total privacy spent by the fit (at most ``(eps, delta)``).
    privacy_ledger_ : list of dict
        One entry per mechanism call (see the user guide, "Reading the ledger").
    plan_ : pandas.DataFrame
        The plan the fit followed, decided before any data were read: one row
        per mechanism step with its budget, its predicted noise, whether it was
        run (``released``), the eps it would need and the split that would buy
        its part at this eps (see :meth:`plan`, here with ``splits=True``).
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

    Public ranges of the columns (from a codebook, not from the data) allow the
    noisy covariance about the box's private mean, whose radius is the
    farthest any point of the box lies from that mean (at least half the
    box's diagonal):

    >>> box = [(-20.0, 20.0), (-8.0, 8.0), (-4.0, 4.0)]
    >>> cov = DPKendallDirections(n_components=1, radial="covariance", bounds=box,
    ...                           random_state=0).fit(X)
    >>> bool(cov.radius_ >= (20**2 + 8**2 + 4**2) ** 0.5)
    True
    """

    _parameter_constraints = {
        **_PrivateProjection._common_constraints,
        "n_components": [None, Interval("int", 1, None)],
        "pairs": PAIRS,
        "scale_share": [UNIT_OPEN],
    }

    def __init__(self, n_components=None, *, eps=1.0, delta=1e-5, noise="analytic",
                 sensitivity="tight", accounting="gdp", accountant=None, pairs="auto",
                 radial="spherical", radius="auto", radius_level="auto", scale=False,
                 scale_share=0.2, compute_nonprivate=False, random_state=None,
                 n_jobs=None, row_blocks=None, bounds=None):
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
        self.scale = scale
        self.scale_share = scale_share
        self.compute_nonprivate = compute_nonprivate
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.row_blocks = row_blocks
        self.bounds = bounds

    def fit(self, X, y=None):
        """Release private directions of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows are the individuals to protect. DataFrame columns that are not
            numeric are dropped with a warning.
        y : None
            Ignored.

        Returns
        -------
        self : DPKendallDirections
            The fitted estimator.
        """
        return self._fit_sequence(X, y)

    def _spec(self, params, n_samples, n_features, names, ledger):
        """The public part of a fit on ``n_samples`` x ``n_features`` (column
        ``names``): its refusals, the number of components, the budget tree and
        the plan's settings."""
        k = check_n_components(params["n_components"], n_features)
        return Bunch(parts=self._budget_parts(params, names), grant=params,
                     settings=plan_settings(params, n_samples, n_features, k),
                     pairs=params["pairs"], n_components=k)

    def _release(self, X, spec, params, rng, ledger, targets):
        """The spreads (``scale=True``) and the directions, after the charge."""
        plan = spec.plan
        X = self._scale_columns(X, plan, params, rng, ledger)
        released = self._release_directions(
            X, plan.node("loading"), params, rng, ledger, pairs=params["pairs"])
        self.radius_ = released.radius
        self.n_samples_ = X.shape[0]
        self.n_components_ = spec.n_components
        self.kendall_matrix_ = released.kendall_matrix
        self.kendall_eigenvalues_ = released.eigenvalues
        self.noise_scale_ = self.kendall_noise_scale_ = released.noise_scale
        self.components_ = released.eigenvectors[:, :spec.n_components].T.copy()
        self.nonprivate_ = (
            nonprivate_reference(X.array(), self.components_) if self.compute_nonprivate
            else None
        )

    def _budget_parts(self, params, names):
        """The budget tree: the spreads (``scale=True``) and the Kendall matrix."""
        loading = loading_parts(params["radial"], params["radius"])
        if not params["scale"]:
            return {"loading": (1.0, loading)}
        share = params["scale_share"]
        return {"scale": (share, spread_parts(names, params["bounds"] is not None)),
                "loading": (1.0 - share, loading)}
