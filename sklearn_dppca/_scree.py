"""Private variances along given or private directions (the DP scree)."""

import inspect

import numpy as np
from sklearn.frozen import FrozenEstimator
from ._bunch import Bunch
from sklearn.utils.validation import check_is_fitted

from ._algorithms._directions import loading_parts
from ._algorithms._nonprivate import nonprivate_reference
from ._algorithms._scree import check_matrix_scree
from ._algorithms._spread import spread_parts
from ._algorithms._scree_settings import (
    SCREE_METHODS,
    TOTAL_SHARE,
    check_method_params,
    check_scree_before_charge,
    resolve_clip,
    scree_parts,
    scree_variants,
)
from ._param_docs import shared_parameters
from ._base import (
    _PrivateProjection,
    _VarianceMixin,
    ratio_threshold,
    scree_classical_check,
)
from ._algorithms._plan import plan_settings
from ._algorithms._projection import column_divisors, scale_origins
from ._validation import (
    UNIT_OPEN,
    Boolean,
    Interval,
    InvalidParameterError,
    Options,
    check_n_components,
    warn_user,
)


@shared_parameters
class DPScree(_VarianceMixin, _PrivateProjection):
    """Differentially private variances along principal directions (the DP scree).

    The variance along a unit direction ``v`` is ``E[(v.(x_i - x_j))^2] / 2`` for
    independent rows, so no centre (and no private location) is needed: every method
    works on pairwise differences and is translation invariant.

    Methods:

    * ``"clipped"`` (default): a clipped U-statistic over pairs, released for all k
      components by one Gaussian mechanism. With ``clip="norm"`` each pair
      difference is shrunk to norm ``sqrt(2 C)`` and ``U_l`` is the mean of
      ``(v_l.d_clipped)^2 / 2``; the term vectors are non-negative and sum to at most
      ``C``, so the k-vector has L2 sensitivity ``2 sqrt(2) C / n`` whatever k, and
      ONE private quantile (of ``||x_a - x_b||^2 / 2`` over a random matching) gives
      ``C``. With ``clip="component"`` (the R package dppca's form) each component is clipped
      at its own ``C_l`` from its own private quantile,
      ``U_l = mean min((v_l.(x_i - x_j))^2 / 2, C_l)`` in O(n log n); the vector
      ``(U_l / C_l)`` is released (L2 sensitivity ``2 sqrt(k) / n``), so each
      component's noise is proportional to its own bound and components on small
      scales survive next to large ones (columns in different units). The quantile
      budget is then split over the k components, and at small ``n eps`` the
      searches stop far below the intended level (see the user guide, "The
      clipped scree and its clip bound"). ``clip="auto"``
      (default) takes per-component bounds only when the ``n/2`` paired values leave
      enough counts in the tail for k searches (see :func:`choose_clip`), and norm
      clipping otherwise. ``clip="scaled"`` (opt-in; it needs directions
      released here or reused) clips in norm, with one private quantile as
      ``"norm"``, the coordinates ``v_l.d / s_l``, ``s_l`` each component's scale
      read off the released Kendall matrix (free post-processing): each
      variance's noise is then on its own scale (the smallest one's noise drops
      several-fold, PC1's about doubles; see the user guide, "Which PCA?").
      With ``elliptical="auto"`` (default) the clipped variances are combined
      with those the released Kendall matrix implies under an elliptical model
      (as ``"kendall"`` reads them, times the released total, bias-corrected by
      their bootstrap) where every pair agrees within two sds of their
      difference (both noises and ``lambda sqrt(2 / n)`` of sampling) and every
      elliptical variance stands half that sd above zero: the total, the
      variances and the elliptical ratios are then fitted jointly by weighted
      least squares (the ratios measure ``lambda_l / T`` without the
      total's noise), free post-processing of released values; on data that are
      not elliptical the test fails and the clipped release is kept as it is.
    * ``"huber"``: noisy gradient descent on a Huber loss after a private scale,
      on ``n/2`` randomly paired values (Yu, Ren & Zhou 2024). NOT usable at
      moderate ``n eps``: each component gets ``eps / k`` of the variances'
      share, its private scale step (a noisy argmax over 81 dyadic bins) is then
      decided by the noise, not by the data, and the estimate is off by orders
      of magnitude (medians 220 and 65 times the truth of PC1 and PC2 on
      ``gau``, ``n = 5000``, eps 1, k 5; it warns). At ``n = 50,000`` the medians are still 1.2 and 0.65 of
      PC1 and PC2. Use it only to compare with the paper, not for a scree
      (user guide, "Choosing a scree method").
    * ``"pmwm"``: private winsorised mean between private quantiles, on randomly
      paired values (Ramsay & Spicker 2025). Biased low at moderate ``n eps / k``:
      the upper trimming quantile, searched with ``eps / (4 k)`` of the
      variances' share on each side, stops far below its level (on ``gau``,
      ``n = 5000``, eps 1, k 5: PC1 at 0.71 and PC2 at 0.47 of the truth; at
      ``n = 50,000`` within 4%). Use ``"clipped"`` unless ``n eps / k`` is about
      10,000 or more (user guide, "Choosing a scree method").
    * ``"kendall"``: no release of its own but the private total variance (the
      whole scree budget buys it, clipped as high as that budget allows); the
      variances are ``total * ratios``, the ratios read off the released Kendall
      matrix's eigenvalues through the map an elliptical law implies
      (:mod:`sklearn_dppca._algorithms._kendall_spectrum`), with noise sds from a
      parametric bootstrap of both releases (free post-processing). It needs
      the Kendall matrix: directions released here or reused from a fitted
      estimator. It is a MODEL: more accurate than ``"clipped"`` on Gaussian
      data, badly biased on real tables that are not elliptical, and wrecked by
      the noisy trailing Kendall eigenvalues at small ``n eps`` (the measurements
      are in the user guide, "Variances from the Kendall matrix"). Use it only
      for data you know to be close to elliptical.
    * ``"matrix"``: with ``radial="clipped"`` directions (released here or
      reused), the variances ``(c^2 / 2) v^T M v`` and the total
      ``(c^2 / 2) trace(M)`` read off the released clipped matrix ``M``: no
      release of its own (the directions take the whole budget), but the
      clipping is in all columns at the directions' radius.

    ``huber`` and ``pmwm`` split the budget evenly over components.

    Parameters
    ----------
    n_components : int, float or None, default=None
        Number of components; None keeps all available directions. A float in
        (0, 1) keeps the fewest leading components whose cumulative private PVE
        (``explained_variance_ratio_``) reaches it: the scree of all available
        directions is released and paid for (as with None), then truncated, so
        the choice is post-processing of released values and spends nothing
        more. If the PVE of all of them stays below it, all are kept.
    eps : float, default=1.0
        Total privacy budget this fit spends, directions included.
    {shared: delta}
    scree_method : {"clipped", "huber", "pmwm", "kendall", "matrix"}, default="clipped"
        How the variances are released (see above); DPPCA's parameter of the
        same name.
    scree_params : dict, default=None
        Tuning values of the method (unknown names are an error):
        ``clipped``: ``clip`` ("auto", "norm", "component" or "scaled"), ``C``
        ("auto" or a public bound: on ``||d||^2 / 2`` for "norm", per component
        for "component"; "auto" or "box" for "scaled"), ``elliptical`` ("auto"
        or "off": the combination with the Kendall-implied variances),
        ``quantile_share`` (0.25), ``quantile_level`` ("auto": 0.97 on small
        tables, higher with more rows and budget; a number in (0, 1): lower levels
        cut noise, higher ones cut clipping bias), ``pairs`` ("auto", "all" or m
        partners per row, "norm" only; "auto" as in :class:`DPKendallDirections`,
        which also sets the pairs of directions this estimator releases),
        ``bound`` ("auto": the first its plan can buy of "own", the variances'
        own search and the total's, and "total", the total's search alone; with
        declared ``bounds`` first "box-own" and "box", each of those weighed
        against the box's moments, the quieter taken);
        ``huber``: ``m2_frac`` (0.25), ``k_min`` (-40), ``k_max`` (40),
        ``block_size`` (16);
        ``pmwm``: ``beta`` (1.01), ``trim_const`` (10), ``eta`` (0.01), ``a`` (0),
        ``b`` (inf), ``split`` (True).
    directions : None, FrozenEstimator or array, default=None
        None: private directions are released first with ``directions_share`` of
        the budget. A fitted :class:`DPKendallDirections` or :class:`DPPCA` frozen
        by scikit-learn's :class:`~sklearn.frozen.FrozenEstimator`: its
        ``components_`` are reused and its whole ledger is carried into this one
        (its spend counts against ``eps, delta``); clones (cross-validation, grid
        search) share it, and its parameters are not this estimator's (as
        with any frozen estimator). A fitted estimator given bare is refused, since
        a clone would have to fit it, and pay, again. An array of shape (k,
        n_features) with orthonormal rows: public directions, no spend.
    directions_share : float, default=0.4
        Share of ``eps`` and ``delta`` spent on directions when ``directions=None``
        (of what the spreads leave, with ``scale=True``).
    scale : bool, default=False
        Divide each column by a private estimate of its spread first (released
        as ``scale_``): the PCA of the correlation matrix. Reused directions
        fitted with ``scale=True`` bring their ``scale_`` (``scale`` must agree).
        A column left in its own unit (its spread not estimable, no
        ``bounds``) makes every variance "not estimable" (NaN: mixed units),
        and without ``bounds`` the scree is run only where the plan buys the
        spreads too (see :class:`DPPCA`).
    scale_share : float, default=0.2
        Share of ``eps`` and ``delta`` spent on the spreads when they are
        released here.
    monotone : bool, default=True
        Post-process the variances to a non-increasing, non-negative sequence
        (isotonic regression; free). Pooling is for noise: where a later
        component's released variance exceeds an earlier one's by more than
        three joint noise sds, the components are put in the order of their
        released variances instead (``components_`` with them).
    whiten : bool, default=False
        ``transform`` divides each projection by the square root of its private
        variance.
    {shared: noise}
    {shared: sensitivity}
    {shared: accounting}
    {shared: accountant}
    radial : {"spherical", "clipped", "covariance"}, default="spherical"
        The pair terms of the directions released here (see
        :class:`DPKendallDirections`).
    {shared: radius}
    {shared: radius_level}
    compute_nonprivate : bool, default=False
        Also store the ordinary PCA variances along the released directions in
        ``nonprivate_``. It is NOT private: use it to judge the private result,
        never publish it.
    {shared: random_state}
    n_jobs : int, default=None
        Workers for the Kendall kernel when directions are released here.
    {shared: row_blocks}
    bounds : None, list of (float, float) or dict, default=None
        Public per-column ranges ``(low, high)``, known without the data (a
        codebook, a questionnaire's scale): a list of one pair per column, or a
        dict column name -> pair for a DataFrame (every column covered). Never
        read off the data; each ``low < high``, finite. Values outside a range
        are clipped to it, without error or warning (a map of each row alone,
        so every sensitivity still holds).
        With ``scale=True`` the box is divided by the spreads. The spreads' clip
        bounds are ``w_j^2 / 2`` (``w_j = high_j - low_j``), with no search. The
        clipped scree's searched bounds (and the total variance's) are capped
        at the box's: ``(sum_j |v_jl| w_j)^2 / 2`` per component, the smaller of
        ``sum_j w_j^2 / 2`` and their sum under one norm bound, ``sum_j w_j^2 /
        2`` for the total. Where the fit's plan cannot buy the searches, the
        variances and the total are second moments about the box's private
        mean instead, each term bounded by the box (``scree/mean``: the mean
        about the box's centre in units of its diagonal, sensitivity ``1 /
        n``; then the variances and the rest, the total less them, in one
        release, each moment bounded by ``(h_l + |c_l - m_l|)^2``); so are
        they where those moments are the quieter, and a variance whose heavy
        tail past its searched bound the private tail counts show (the others
        then stay clipped);
        ``scree_params={"C":
        "box"}`` takes them always (a codebook's wide ranges make them
        loose, see the user guide, "Public bounds"; ``clip`` is then not
        read). It also enables ``radial="covariance"`` and caps
        ``radius="auto"`` at the box's diagonal.

    method : str, default="deprecated"
        Deprecated in 0.1 (removed in 0.3): use ``scree_method``.
    method_params : dict, default="deprecated"
        Deprecated in 0.1 (removed in 0.3): use ``scree_params``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The directions the variances are taken along (released here, reused or
        public), orthonormal rows.
    explained_variance_ : ndarray of shape (n_components,)
        Private variances after post-processing.
    explained_variance_raw_ : ndarray of shape (n_components,)
        Private variances as released (may be negative or unordered), after
        the clipped scree's elliptical combination where it applies and read
        at the middle of the losses their clipping allowance gives (a
        clipped value moved up by half of it; see ``noise_scale_``).
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Share of the private total variance, as in scikit-learn's PCA: in [0, 1],
        summing below 1 when fewer than all components are kept.
    {shared: explained_variance_ratio_noise_scale_}
    total_variance_ : float
        Private total variance (the trace of the covariance; a clipped pairwise
        second moment released with a quarter of the scree budget), raised to at
        least the sum of ``explained_variance_``.
    {shared: total_variance_noise_scale_}
    feature_variance_ : ndarray of shape (n_features,)
        Each column's variance in the units the components act on (after the
        spreads with ``scale=True``, so near 1 then), implied by the scree and the
        total: ``sum_l lambda_l v_jl^2`` plus an even share of the variance the
        retained components leave (free post-processing; exact when the
        discarded eigenvalues are equal). The variable circle divides by its
        square root, so no arrow leaves the unit circle.
    feature_variance_noise_scale_ : ndarray of shape (n_features,)
        Its noise sd, propagated from the scree's and the total's.
    {shared: scale_}
    {shared: scale_origin_}
    {shared: noise_scale_}
    clip_bounds_ : ndarray of shape (n_components,) or None
        Released clip bounds (``scree_method="clipped"``): one in norm or one
        per component; None where the box's moments gave every variance, NaN
        for each variance they gave where a heavy tail past its searched bound
        sent it to the box (declared ``bounds``).
    method_label_ : str
        The scree method that released the variances.
    kendall_matrix_ : ndarray of shape (n_features, n_features) or None
        The released noisy Kendall matrix behind the directions (released here or
        carried from a reused estimator); None for public directions.
    kendall_noise_scale_ : float or None
        Standard deviation of its diagonal noise (off-diagonal: divided by
        sqrt(2)); None for public directions.
    components_noise_scale_ : ndarray of shape (n_components, n_features) or None
        Approximate noise sd of each entry of ``components_``: first-order
        perturbation theory on the released Kendall matrix (post-processing),
        capped at 1 where eigenvalues nearly tie; None without a released matrix.
    radius_ : float or None
        The clip radius of directions with ``radial="clipped"``, or with
        ``"covariance"`` the farthest any point of the declared box lies from its
        private mean, else None.
    n_components_ : int
        Number of components kept.
    n_samples_ : int
        Number of rows of the fit (public).
    {shared: pairs_}
    n_features_in_ : int
        Number of columns seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of the columns seen during ``fit``. Defined only when ``X`` has
        string column names.
    privacy_spent_ : tuple (eps, delta)
        Total privacy spent by the fit, reused directions' ledger included.
    privacy_ledger_ : list of dict
        One entry per mechanism call (see the user guide, "Reading the ledger").
    plan_ : pandas.DataFrame
        The plan the fit followed, decided before any data were read: one row
        per mechanism step with its budget, its predicted noise, whether it was
        run (``released``), the eps it would need and the split that would buy
        its part at this eps (see :meth:`plan`, here with ``splits=True``).
    nonprivate_ : Bunch or None
        The ordinary PCA of the data, aligned to ``components_`` (``components``,
        ``explained_variance``, ``explained_variance_ratio``, ``total_variance``,
        ``feature_variance``, ``scores``), when ``compute_nonprivate=True``. NOT
        private.

    See Also
    --------
    DPKendallDirections : The private directions alone.
    DPPCA : Directions, variances and the score summary on one budget.
    sklearn_dppca.display.ScreeDisplay : The scree plot of a fit.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca import DPScree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)) * [3.0, 2.0, 1.0] + 50
    >>> scree = DPScree(eps=1.0, random_state=0).fit(X)
    >>> scree.explained_variance_.shape
    (3,)

    With public ranges of the columns (from a codebook, not from the data) and
    ``C="box"``, the variances are moments about the box's private mean, and no
    search runs; the variances and the rest (the total less them) are one
    release, on the budgets of both:

    >>> box = [(30.0, 70.0), (35.0, 65.0), (40.0, 60.0)]
    >>> bounded = DPScree(eps=1.0, bounds=box, scree_params={"C": "box"},
    ...                   random_state=0).fit(X)
    >>> [entry["step"] for entry in bounded.privacy_ledger_]
    ['loading', 'scree/mean', 'scree/variances/statistic', 'gaussian block']

    Directions fitted before are reused frozen (scikit-learn's
    ``FrozenEstimator``); their ledger comes with them, within ``eps, delta``:

    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn_dppca import DPKendallDirections
    >>> kendall = DPKendallDirections(eps=0.5, delta=5e-6, random_state=0).fit(X)
    >>> reused = DPScree(eps=1.0, directions=FrozenEstimator(kendall),
    ...                  random_state=0).fit(X)
    >>> bool(np.array_equal(reused.components_, kendall.components_))
    True
    >>> reused.privacy_spent_
    (1.0, 1e-05)
    """

    _parameter_constraints = {
        **_PrivateProjection._common_constraints,
        "n_components": [None, Interval("int", 1, None), UNIT_OPEN],
        "scree_method": [Options(*SCREE_METHODS)],
        "scree_params": [None, dict],
        # deprecated in 0.1 for the names DPPCA uses; removed in 0.3
        "method": [Options("deprecated", *SCREE_METHODS)],
        "method_params": ["deprecated", None, dict],
        "directions": "no_validation",
        "directions_share": [UNIT_OPEN],
        "scale_share": [UNIT_OPEN],
        "monotone": [Boolean()],
        "whiten": [Boolean()],
    }

    def __init__(self, n_components=None, *, eps=1.0, delta=1e-5, scree_method="clipped",
                 scree_params=None, directions=None, directions_share=0.4, scale=False,
                 scale_share=0.2, monotone=True, whiten=False, noise="analytic",
                 sensitivity="tight", accounting="gdp", accountant=None,
                 radial="spherical", radius="auto", radius_level="auto",
                 compute_nonprivate=False, random_state=None, n_jobs=None,
                 row_blocks=None, bounds=None, method="deprecated",
                 method_params="deprecated"):
        self.radial = radial
        self.radius = radius
        self.radius_level = radius_level
        self.n_components = n_components
        self.eps = eps
        self.delta = delta
        self.scree_method = scree_method
        self.scree_params = scree_params
        self.method = method
        self.method_params = method_params
        self.directions = directions
        self.directions_share = directions_share
        self.scale = scale
        self.scale_share = scale_share
        self.monotone = monotone
        self.whiten = whiten
        self.noise = noise
        self.sensitivity = sensitivity
        self.accounting = accounting
        self.accountant = accountant
        self.compute_nonprivate = compute_nonprivate
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.row_blocks = row_blocks
        self.bounds = bounds

    def fit(self, X, y=None):
        """Release private variances (and, if needed, directions) of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows are the individuals to protect. DataFrame columns that are not
            numeric are dropped with a warning.
        y : None
            Ignored.

        Returns
        -------
        self : DPScree
            The fitted estimator.
        """
        return self._fit_sequence(X, y)

    def _validated_params(self):
        """The hyperparameters, with the deprecated ``method`` and
        ``method_params`` read as ``scree_method`` and ``scree_params`` (a
        FutureWarning; both spellings given: a ValueError)."""
        params = super()._validated_params()
        for old, new in (("method", "scree_method"), ("method_params", "scree_params")):
            if params[old] == "deprecated":
                continue
            if params[new] != self._default(new):
                raise ValueError(f"{old} and {new} are one parameter: give {new} only "
                                 f"({old} is deprecated).")
            warn_user(f"DPScree's {old} was renamed {new} in 0.1 (the name DPPCA "
                      f"uses); {old} will be removed in 0.3.", FutureWarning)
            params[new] = params[old]
        if params["method_params"] != "deprecated":
            # a refusal names the parameter as the user spelled it (the fit
            # sequence checks scree_params under its own name)
            check_method_params(params["scree_method"], params["scree_params"],
                                "method_params")
        return params

    @classmethod
    def _default(cls, name):
        return inspect.signature(cls.__init__).parameters[name].default

    def _spec(self, params, n_samples, n_features, names, ledger):
        """The public part of a fit (:meth:`_prepare`), with the check of the
        scree's own calibrations."""
        fit = self._prepare(params, n_samples, n_features, names, ledger)
        fit.check = scree_classical_check(params["scree_method"], fit.method_params,
                                          n_samples)
        fit.pairs = fit.directions_pairs
        fit.scree_params = fit.method_params    # (the name DPPCA's spec uses)
        return fit

    def _release(self, X, spec, params, rng, ledger, targets):
        """The spreads, the directions and the scree, after the charge."""
        plan, method = spec.plan, params["scree_method"]
        X = self._scaled(X, spec.reused, plan, params, rng, ledger)
        total_bound = self._total_bound_first(X, spec, params, rng, ledger)
        kendall = self._kendall_release(X, plan, params, rng, ledger,
                                        spec.directions_pairs)
        directions = kendall.eigenvectors if spec.given is None else spec.given
        self.n_samples_ = X.shape[0]
        self.n_components_ = spec.n_components
        self.components_ = directions[:spec.n_components]
        self.method_label_ = method
        self._fit_scree(X, method=method, params=spec.method_params,
                        budget=plan.part("scree") if "scree" in plan else None,
                        noise=params["noise"],
                        pairs=spec.directions_pairs,
                        monotone=params["monotone"], rng=rng, ledger=ledger,
                        kendall=kendall, total_bound=total_bound)
        if spec.threshold is not None:
            self._keep_for_ratio(spec.threshold)
        self.nonprivate_ = (nonprivate_reference(X.array(), self.components_)
                            if params["compute_nonprivate"] else None)

    def _prepare(self, params, n_samples, n_features, names, ledger):
        """Everything a fit on ``n_samples`` x ``n_features`` decides before it
        reads the data (public): the method's params, the reused or public
        directions and the grant they leave (a reused estimator's ledger goes into
        ``ledger``), the number of components, the budget tree and the plan's
        settings. Refuses, before any charge, what these settings cannot do."""
        method = params["scree_method"]
        # (merged with its defaults and settled for the blocks by the fit sequence)
        method_params = params["scree_params"]
        reused = self._reused_scale(params["scale"])
        check_matrix_scree(method, self._directions_radial(params))
        if method == "kendall" and self.directions is not None and self._reused() is None:
            # public (the arguments alone): refused before any charge
            raise ValueError("scree_method='kendall' reads the variances off the released "
                             "Kendall matrix: directions must be None or a frozen "
                             "fitted DPKendallDirections/DPPCA, not an array.")
        given, grant = self._given_directions(n_features, params, ledger,
                                              spends_more=method != "matrix")
        n_available = n_features if given is None else given.shape[0]
        # a float: release the scree of every available component (as None
        # does), then keep the leading ones its PVE needs, post-processing
        threshold = ratio_threshold(params["n_components"])
        n_components = check_n_components(
            None if threshold is not None else params["n_components"], n_available)
        parts, scree_share = self._budget_parts(params, given is None, reused is not None,
                                                names)
        bounded = params["bounds"] is not None

        def planned(given_params):
            """The method's resolved params, the budget tree and the plan's settings."""
            resolved = resolve_clip(given_params, n_samples, n_components,
                                    grant["eps"] * scree_share * (1 - TOTAL_SHARE),
                                    scaled=given is None or self._reused() is not None)
            check_scree_before_charge(method, resolved, n_samples, n_components,
                                      bounded=bounded)
            scree = scree_parts(method, resolved, n_components, bounded)
            return resolved, plan_settings(grant, n_samples, n_features, n_components,
                                           scree_params=resolved, scree_method=method), \
                dict(parts) if scree is None else {**parts, "scree": (scree_share, scree)}

        method_params, settings, parts = self._scree_choice(
            scree_variants(method, method_params, bounded), planned, grant)
        # directions released here pair rows as the scree does
        return Bunch(method_params=method_params, reused=reused, given=given,
                     grant=grant, threshold=threshold, n_components=n_components,
                     parts=parts, settings=settings,
                     directions_pairs=params["pairs"])

    def _budget_parts(self, params, release_directions, reused_scale, names):
        """The budget tree but the scree's own part, and the scree's share.

        Released here, the spreads take ``scale_share`` and the directions
        ``directions_share`` of the rest; the scree takes what is left (the
        ``"matrix"`` scree has no release: the directions take it all).
        """
        parts, rest = {}, 1.0
        if params["scale"] and not reused_scale:
            share = params["scale_share"]
            parts["scale"] = (share, spread_parts(names, params["bounds"] is not None))
            rest = 1.0 - share
        if release_directions:
            share = 1.0 if params["scree_method"] == "matrix" else params["directions_share"]
            parts["loading"] = (rest * share,
                                   loading_parts(params["radial"], params["radius"]))
            rest *= 1.0 - share
        return parts, rest

    def _reused(self):
        """The fitted estimator whose directions are reused (``directions`` is a
        :class:`~sklearn.frozen.FrozenEstimator` of it), or None: directions
        released here (None) or public (an array).

        A fitted estimator given bare is refused: scikit-learn's ``clone`` (a
        grid search, cross-validation) would hand the clone an unfitted copy,
        whose directions would have to be fitted, and paid for, again. Frozen,
        every clone shares the one release (scikit-learn's own convention for a
        fitted estimator as a parameter).
        """
        directions = self.directions
        if isinstance(directions, FrozenEstimator):
            reused = directions.estimator
            check_is_fitted(reused, "components_")
            if not hasattr(reused, "privacy_ledger_"):
                # (a non-private PCA's directions are not a release to build on)
                raise InvalidParameterError(
                    "directions must freeze a fitted DPKendallDirections or DPPCA, "
                    "whose ledger the scree carries; got a FrozenEstimator of "
                    f"{type(reused).__name__}.")
            return reused
        if _is_estimator(directions):
            raise InvalidParameterError(
                f"directions is a {type(directions).__name__} given bare: pass the "
                "fitted estimator frozen, directions=FrozenEstimator(fitted) (from "
                "sklearn.frozen), so that clones share its release instead of "
                "fitting it again.")
        return None

    def _directions_radial(self, params):
        """How the directions' matrix was formed: this fit's ``radial``, a reused
        estimator's, or None for public directions."""
        reused = self._reused()
        if self.directions is None:
            return params["radial"]
        if reused is not None:
            if getattr(reused, "radial", None) == "covariance":
                return "covariance"
            return "clipped" if getattr(reused, "radius_", None) else "spherical"
        return None

    def _reused_scale(self, scale):
        """The spreads of reused directions fitted with ``scale=True`` (or None).

        ``scale`` must agree with how the reused directions were fitted.
        """
        estimator = self._reused()
        if estimator is None or not hasattr(estimator, "scale_"):
            return None
        reused = estimator.scale_
        if (reused is not None) != scale:
            raise ValueError(f"scale={scale} but directions was fitted with "
                             f"scale={reused is not None}; they must agree.")
        return reused

    def _scaled(self, X, reused, plan, params, rng, ledger):
        """Divide X by the spreads: the reused directions' ones (their origins
        with them), or this fit's (:meth:`_scale_columns`)."""
        if reused is None:
            return self._scale_columns(X, plan, params, rng, ledger)
        self.scale_ = reused
        self.scale_origin_ = scale_origins(reused,
                                           getattr(self._reused(), "scale_origin_", None))
        return X / column_divisors(reused)

    def _kendall_release(self, X, plan, params, rng, ledger, pairs="all"):
        """The Kendall matrix behind the directions: released here (``directions``
        None), or that of a reused estimator; None for public directions.

        Sets ``kendall_matrix_`` and ``kendall_noise_scale_``. Returns a Bunch with
        ``matrix``, ``noise_scale`` and ``eigenvectors`` (rows), or None.
        """
        reused = self._reused()
        if "loading" in plan:
            released = self._release_directions(X, plan.node("loading"), params, rng,
                                                ledger, pairs=pairs)
            kendall = Bunch(matrix=released.kendall_matrix,
                            noise_scale=released.noise_scale,
                            eigenvectors=released.eigenvectors.T, radius=released.radius)
        elif reused is not None:
            kendall = Bunch(matrix=reused.kendall_matrix_,
                            noise_scale=reused.kendall_noise_scale_,
                            eigenvectors=None, radius=getattr(reused, "radius_", None))
        else:
            kendall = None
        self.radius_ = None if kendall is None else kendall.radius
        self.kendall_matrix_ = None if kendall is None else kendall.matrix
        self.kendall_noise_scale_ = None if kendall is None else kendall.noise_scale
        return kendall

    def _given_directions(self, n_features, params, ledger, spends_more=True):
        """Reused or public directions (None: released here) and the grant left
        (``params`` with ``eps`` and ``delta`` lowered by the reused spend).

        Reused directions bring their ledger, whose spend counts against
        ``(eps, delta)``; public ones cost nothing.
        """
        if self.directions is None:
            return None, params
        reused = self._reused()
        if reused is not None:
            return self._reused_directions(reused, n_features, params, ledger, spends_more)
        return _public_directions(self.directions, n_features), params

    def _reused_directions(self, estimator, n_features, params, ledger,
                           spends_more=True):
        if estimator.n_features_in_ != n_features:
            raise ValueError(
                f"directions was fitted on {estimator.n_features_in_} features, "
                f"X has {n_features}."
            )
        eps, delta = params["eps"], params["delta"]
        ledger.extend(estimator.privacy_ledger_, prefix="directions")
        spent_eps, spent_delta = ledger.spent()
        # (an exact composition spends a hair below its grant: "all of it" still;
        # a scree that spends nothing more may take the directions' whole grant)
        if spends_more and (spent_eps >= eps * (1 - 1e-9)
                            or spent_delta >= delta * (1 - 1e-9)):
            raise ValueError(
                f"directions already spent eps={spent_eps:g}, delta={spent_delta:g}; "
                f"eps and delta of DPScree are the total budget including the reused "
                f"directions (got eps={eps:g}, delta={delta:g}): raise them."
            )
        return estimator.components_, {**params, "eps": max(eps - spent_eps, 0.0),
                                       "delta": max(delta - spent_delta, 0.0)}


def _is_estimator(value):
    return hasattr(value, "fit") and hasattr(value, "get_params")


def _public_directions(directions, n_features):
    """Validate an array of public directions: shape (k, p), orthonormal rows."""
    try:
        directions = np.asarray(directions, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise InvalidParameterError(
            "directions must be None, a FrozenEstimator of a fitted "
            "DPKendallDirections/DPPCA, or an array "
            f"of shape (k, {n_features})."
        ) from error
    if directions.ndim != 2 or directions.shape[1] != n_features or directions.shape[0] < 1:
        raise ValueError(
            f"directions must have shape (k, {n_features}) with 1 <= k, got {directions.shape}."
        )
    if not np.all(np.isfinite(directions)):
        raise ValueError("directions must be finite.")
    gram = directions @ directions.T
    if not np.allclose(gram, np.eye(directions.shape[0]), atol=1e-6):
        raise ValueError("directions must have orthonormal rows.")
    return directions
