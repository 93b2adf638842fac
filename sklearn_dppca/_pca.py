"""The integrated private PCA: directions, scree and score summary on one budget."""

import time

import numpy as np
from ._bunch import Bunch

from ._algorithms._directions import loading_parts
from ._algorithms._nonprivate import nonprivate_reference
from ._algorithms._scores import (
    HISTOGRAM_METHODS,
    SYNTHETIC_SAMPLING,
    auto_bins,
    check_histogram_budget,
    exact_score_histogram,
    release_score_summary,
    score_parts,
    score_unit,
)
from ._algorithms._scree import check_matrix_scree
from ._algorithms._spread import spread_parts
from ._algorithms._scree_settings import (
    SCREE_METHODS,
    TOTAL_SHARE,
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
from ._budget_split import check_budget_split
from ._algorithms._plan import plan_settings
from ._data._input import group_codes
from ._progress import BlockProgress, PairProgress
from ._validation import (
    NON_NEGATIVE,
    PAIRS,
    UNIT_OPEN,
    Boolean,
    Interval,
    Options,
    Pair,
    check_component_pair,
    check_labels,
    check_n_components,
    validate_params,
    warn_user,
)
from .privacy import PrivacyBudget, PrivacyUtilityWarning

def _check_groups(groups, y, X):
    """The public label list and each row's position in it (or None, None), in
    the rows' blocks (:func:`group_codes`)."""
    if groups is None:
        return None, None
    labels = check_labels(groups, "groups")
    if y is None:
        raise ValueError("groups is set, so fit(X, y) needs y: each row's group label.")
    return labels, group_codes(y, labels, X)


# synthetic score points drawn by default: n_samples, up to this many
_MAX_DEFAULT_SYNTHETIC = 100_000


@shared_parameters
class DPPCA(_VarianceMixin, _PrivateProjection):
    """Differentially private PCA with a private score summary (as the R package dppca's dp_pca).

    One privacy budget ``(eps, delta)`` is split over three releases that every
    picture shares:

    * ``loading``: the private directions (noisy spherical Kendall matrix, as
      :class:`DPKendallDirections`);
    * ``scree``: the private variances along those directions (as :class:`DPScree`);
    * ``score``: a private summary of the scores on ``axes``: a frame (35% of the
      score eps, delta 0: two private medians and a private radial quantile) and a
      2-D histogram on it (65% of the eps, all of the score delta), from which
      synthetic score points are drawn for free.

    With ``groups`` (a public list of labels), ``fit(X, y)`` also releases one
    histogram per group on the common frame; every group gets the whole histogram
    budget, because one changed row moves one count in the concatenated vector.
    With ``groups=None``, ``y`` is ignored (as :class:`sklearn.decomposition.PCA`
    does).

    The data must meet the input contracts, each a public rule on one row: finite
    values with ``|x| <= 2**500`` (the data domain) and, with ``groups``, a label
    from the list. Data outside them raise a ``ValueError`` that states the rule
    and quotes no value, row or label; the guarantee covers all neighbouring data
    sets inside them. Repeated rows are allowed (a pair of identical rows adds a
    zero term). See the user guide, "Input contracts".

    Parameters
    ----------
    n_components : int, float or None, default=2
        Components kept; the score summary needs at least 2. None keeps all. A
        float in (0, 1) keeps the fewest leading components whose cumulative
        private PVE (``explained_variance_ratio_``) reaches it: the scree of all
        components is released and paid for (as with None), then truncated
        before the score summary, so the choice is post-processing of released
        values and spends nothing more. With a ``score`` share, the components
        up to the larger of ``axes`` (at least 2) are kept whatever the PVE, and
        the score summary is released as with None.
    eps : float, default=1.0
        Total privacy budget, > 0.
    {shared: delta}
    budget_split : dict, default=None
        Shares of ``loading``, ``scree``, ``scale`` and ``score`` (of both eps and
        delta). Default ``{"loading": 0.35, "scree": 0.3, "score": 0.35}``, and
        ``{"loading": 0.3, "scree": 0.25, "scale": 0.2, "score": 0.25}`` with
        ``scale=True`` (``scale`` is required then, and an error without it);
        shares summing above 1 are an error; a missing or 0 ``score`` share skips
        the score summary (in a Pipeline, where nothing reads it, give its share
        to the others). The scree part also pays for the private total variance
        (a quarter of it). Within each part, the shares go on down a budget tree
        (the ledger's steps); under ``accounting="gdp"`` a Gaussian part's share
        is its share of ``mu^2`` and a quantile search's its share of eps (see
        the user guide, "Privacy accounting").
    scree_method : {"clipped", "huber", "pmwm", "kendall", "matrix"}, default="clipped"
        See :class:`DPScree`. ``"kendall"`` reads the variances off the released
        Kendall matrix (an elliptical model) and spends the scree part on the
        total variance alone. ``"matrix"`` (with ``radial="clipped"``) reads
        variances and total off the released clipped matrix: one mechanism for
        loading and scree, whose ``scree`` share goes to the loading.
    scree_params : dict, default=None
        Tuning values of the scree method (see :class:`DPScree`).
    monotone : bool, default=True
        Post-process the private variances to a non-increasing, non-negative
        sequence (isotonic regression, free; see :class:`DPScree`): pooling
        noise only; where the directions' order breaks the variances' by more
        than noise, the components take the variances' order. False only
        clamps them at 0, so a later component may show more variance than an
        earlier one, as released. A float ``n_components`` reads the PVE after
        this post-processing.
    histogram : {"additive", "sparse"}, default="additive"
        Gaussian noise on every cell (L2 sensitivity sqrt(2)) or the stability
        histogram (Laplace on non-empty cells plus a threshold, L1 sensitivity 2).
    bins : "auto", int or (int, int), default="auto"
        Cells per axis of the score histogram. ``"auto"``
        (:func:`~sklearn_dppca._algorithms._scores.auto_bins`, from public numbers only: ``n``,
        the number of declared groups and the histogram's noise) takes at most
        ``clip(round(sqrt(n / n_groups) / 3), 4, 20)`` and fewer while an
        average cell of the cloud would hold less than twice the noise
        threshold: 8 x 8 for the gau data (5,000 rows) at eps = 0.5, 11 x 11 at
        eps = 1, 20 x 20 at eps = 4 (10 x 10 with its 5 groups at eps = 1).
    axes : (int, int), default=(0, 1)
        The two components (0-based) of the score summary.
    n_synthetic : int, default=None
        Number of synthetic score points; None uses ``n_samples`` (public), at most
        100,000 (more points add nothing to a picture, but memory on a large table
        and megabytes to a release file).
    synthetic_jitter : float, default=0.25
        Gaussian jitter of the synthetic points, in cell widths (0 turns it off).
    synthetic_sampling : {"uniform", "center"}, default="uniform"
        Where a synthetic point is placed in the cell drawn for it: uniformly
        anywhere in the cell, or at the cell's centre (as the R package can);
        ``synthetic_jitter`` applies in both cases. Post-processing of the
        released histogram: no privacy cost.
    histogram_threshold : "auto" or float, default="auto"
        With ``histogram="additive"``, noisy counts below this many noise standard
        deviations are set to 0 before normalising and drawing synthetic points
        (free post-processing of the release). ``"auto"`` picks it so that the
        expected number of cells that hold only noise yet pass, over the whole
        grid with every group's cells, is 0.25 (3.2 sd on 20 x 20 cells, 3.7 sd
        with 5 groups); the number is ``expected_noise_cells_``. Clamping at 0
        alone (``0``, the R package's behaviour) leaves half of the empty cells
        positive, each drawn like a real cluster.
    groups : list, default=None
        Public list of group labels; ``y`` then holds each row's label.
    scale : bool, default=False
        Divide each column by a private estimate of its spread first (released
        as ``scale_``, paid by the ``scale`` part of ``budget_split``): the PCA
        of the correlation matrix, for tables in mixed units. Translation
        invariant. With ``bounds``, a column whose spread is not estimable (or
        every column, when the plan cannot buy the spreads) is divided by its
        box's public unit, ``width / sqrt(12)``, instead of keeping its unit
        (``scale_origin_``). Without ``bounds`` such a column keeps its own
        unit; the variances, PVE and total are then "not estimable" (NaN: in
        mixed units they are no correlation PCA's), and where the plan cannot
        buy the spreads the scree is not run (its budget buys the spreads
        first, else goes to the other parts); see the user guide, "Units and
        scaling".
    {shared: noise}
    {shared: sensitivity}
    {shared: accounting}
    {shared: accountant}
    radial : {"spherical", "clipped", "covariance"}, default="spherical"
        The directions' pair terms (see :class:`DPKendallDirections`).
    {shared: radius}
    {shared: radius_level}
    pairs : "auto", "all" or int, default="auto"
        All pairs of rows, or ``m`` partners per row by a data-independent design;
        ``"auto"``: all pairs up to 2,000 rows, above 64 partners per row up to
        eps 1 and ``64 eps^2`` beyond, at most 512 (see
        :class:`DPKendallDirections`; the design used is ``pairs_``). The clipped
        scree uses the same design unless ``scree_params`` sets its own.
    compute_nonprivate : bool, default=False
        Store the ordinary PCA (and the exact histogram on the same grid) in
        ``nonprivate_``. NOT private: for comparison only, never publish it.
    whiten : bool, default=False
        ``transform`` divides by the square root of the private variances.
    {shared: random_state}
    n_jobs : int, default=None
        Parallel workers for the Kendall kernel (joblib).
    verbose : int, default=0
        Print progress of each stage.
    {shared: row_blocks}
    bounds : None, list of (float, float) or dict, default=None
        Public per-column ranges ``(low, high)``, known without the data (a
        codebook, a questionnaire's scale): a list of one pair per column, or a
        dict column name -> pair for a DataFrame (every column covered). Never
        read off the data; each ``low < high``, finite. Values outside a range
        are clipped to it, without error or warning (a map of each row alone,
        so every sensitivity still holds).
        The box replaces the searches it makes unnecessary, and their budget
        goes to the rest: the spreads' (``scale=True``: each column's variance
        about the box's private mean, bounded by the box) and the score
        frame's six (the frame is the square around the box's projection on
        ``axes``; the histogram takes the whole score part, which is bought
        only where the same fit without bounds buys it: the box never takes
        the directions' or the scree's budget for a picture). It caps the
        scree's and the total variance's searched clip bounds at the box's;
        where the plan cannot buy those searches, where the box's moments are
        the quieter, or where a heavy tail past a searched bound would bias a
        clipped variance, the variances (that one) and the total are moments
        about the box's private mean instead (see
        :class:`DPScree`; ``scree_params={"C": "box"}`` always). It caps
        ``radius="auto"`` at the box's diagonal and enables
        ``radial="covariance"``. See the user guide, "Public bounds".

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Private directions (orthonormal rows), largest absolute loading positive.
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
    {shared: noise_scale_}
    clip_bounds_ : ndarray of shape (n_components,) or None
        Released clip bounds of the scree (``scree_method="clipped"``): one in
        norm or one per component; None where the box's moments gave every
        variance, NaN for each variance they gave where a heavy tail past its
        searched bound sent it to the box (declared ``bounds``).
    total_variance_ : float
        Private total variance (the trace of the covariance), raised to at least
        the sum of ``explained_variance_``.
    {shared: total_variance_noise_scale_}
    feature_variance_ : ndarray of shape (n_features,)
        Each column's variance in the units the components act on, implied by the
        scree and the total (free post-processing; see :class:`DPScree`).
    feature_variance_noise_scale_ : ndarray of shape (n_features,)
        Its noise sd, propagated from the scree's and the total's.
    {shared: scale_}
    {shared: scale_origin_}
    method_label_ : str
        The scree method that released the variances.
    radius_ : float or None
        The clip radius of ``radial="clipped"`` (private or public) or
        ``"covariance"`` (the farthest any point of the declared box lies from
        its private mean: the matrix is in units of its square), else None.
    kendall_matrix_ : ndarray of shape (n_features, n_features)
        The released noisy Kendall matrix (with ``radial="covariance"``, the
        covariance about the box's private mean over ``radius_**2``).
    kendall_noise_scale_ : float
        Noise sd of its diagonal (off-diagonal: divided by sqrt(2)).
    components_noise_scale_ : ndarray of shape (n_components, n_features) or None
        Approximate noise sd of each entry of ``components_``: first-order
        perturbation theory on the released Kendall matrix (post-processing),
        capped at 1 where eigenvalues nearly tie; None without a released matrix.
    axes_ : tuple of int
        The two components (0-based) of the score summary.
    frame_ : Bunch or None
        ``center`` (2,), ``radius``, ``half_width`` (1.2 radius), ``extent``
        ``(x_min, x_max, y_min, y_max)``.
    bin_edges_ : tuple of two ndarrays or None
        Cell edges of the score histogram along each axis (None: no summary).
    score_histogram_ : ndarray of shape bins or None
        Normalised private histogram, indexed ``[ix, iy]`` (with groups: the sum of
        the group histograms, normalised).
    groups_ : list or None
        The declared public group labels (``groups``), or None.
    score_histograms_ : dict or None
        Label -> normalised private histogram of that group.
    histogram_threshold_ : float or None
        The count below which additive cells were set to 0 (None: sparse).
    expected_noise_cells_ : float or None
        Expected number of noise-only cells passing it, over the whole grid
        (0 for the sparse histogram, which adds noise to non-empty cells only).
    synthetic_scores_ : ndarray of shape (n_synthetic, 2) or None
        Score points drawn from the private histograms (free post-processing).
    synthetic_groups_ : ndarray of shape (n_synthetic,) or None
        The group label of each synthetic point (with ``groups``).
    budget_ : dict
        Each part's nominal share of the grant, ``(share * eps, share * delta)``
        (what it spends alone under basic accounting; the ledger has what each
        mechanism spent).
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
        The ordinary PCA of the data aligned to ``components_`` and the exact
        score histogram on the released grid, when ``compute_nonprivate=True``.
        NOT private.
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

    See Also
    --------
    DPKendallDirections : The private directions alone.
    DPScree : Private variances along given or private directions.
    export_release : Write what the fit released as JSON.
    sklearn_dppca.display.plot_overview : The five pictures of a fit.

    Examples
    --------
    >>> from sklearn_dppca import DPPCA
    >>> from sklearn_dppca.datasets import make_gaussian_clusters
    >>> X, y = make_gaussian_clusters(200, return_groups=True, random_state=0)
    >>> groups = ["G1", "G2", "G3", "G4", "G5"]   # declared, not read off y
    >>> pca = DPPCA(eps=5.0, groups=groups, random_state=0).fit(X, y)
    >>> bool(pca.plan_.released.all())    # 1,000 rows: eps 5 buys every part
    True
    >>> pca.score_histogram_.shape
    (5, 5)
    >>> sorted(pca.score_histograms_) == groups
    True
    >>> pca.transform(X).shape
    (1000, 2)

    Public ranges of the columns (from a codebook, not from the data) replace
    the frame's searches; with ``C="box"`` the scree's too (moments about the
    box's private mean; the variances and the rest, the total less them, in one
    release on the budgets of both), and they allow the noisy covariance
    (about the box's private mean: the loading's two steps). The score summary
    is bought only where the fit without bounds buys it (here not: its budget
    goes to the directions and the scree):

    >>> box = [(-30.0, 30.0)] * X.shape[1]
    >>> bounded = DPPCA(eps=1.0, bounds=box, radial="covariance",
    ...                 scree_params={"C": "box"}, random_state=0).fit(X)
    >>> [entry["step"] for entry in bounded.privacy_ledger_]
    ['loading/mean', 'loading/statistic', 'scree/mean', 'scree/variances/statistic', 'gaussian block']
    """

    _parameter_constraints = {
        **_PrivateProjection._common_constraints,
        "n_components": [None, Interval("int", 1, None), UNIT_OPEN],
        "budget_split": [None, dict],
        "scree_method": [Options(*SCREE_METHODS)],
        "scree_params": [None, dict],
        "histogram": [Options(*HISTOGRAM_METHODS)],
        "bins": ["auto", Interval("int", 1, None), Pair(Interval("int", 1, None))],
        "axes": [Pair(Interval("int", 0, None))],
        "n_synthetic": [None, Interval("int", 0, None)],
        "synthetic_jitter": [NON_NEGATIVE],
        "synthetic_sampling": [Options(*SYNTHETIC_SAMPLING)],
        "monotone": [Boolean()],
        "histogram_threshold": ["auto", NON_NEGATIVE],
        "groups": "no_validation",
        "pairs": PAIRS,
        "whiten": [Boolean()],
        "verbose": [Interval("int", 0, None), Boolean()],
    }

    def __init__(self, n_components=2, *, eps=1.0, delta=1e-5, budget_split=None,
                 scree_method="clipped", scree_params=None, monotone=True,
                 histogram="additive", bins="auto", axes=(0, 1), n_synthetic=None,
                 synthetic_jitter=0.25, synthetic_sampling="uniform",
                 histogram_threshold="auto", groups=None, scale=False,
                 noise="analytic", sensitivity="tight", accounting="gdp",
                 accountant=None, radial="spherical", radius="auto",
                 radius_level="auto", pairs="auto",
                 compute_nonprivate=False, whiten=False, random_state=None, n_jobs=None,
                 verbose=0, row_blocks=None, bounds=None):
        self.n_components = n_components
        self.eps = eps
        self.delta = delta
        self.budget_split = budget_split
        self.scree_method = scree_method
        self.scree_params = scree_params
        self.monotone = monotone
        self.histogram = histogram
        self.bins = bins
        self.axes = axes
        self.n_synthetic = n_synthetic
        self.synthetic_jitter = synthetic_jitter
        self.synthetic_sampling = synthetic_sampling
        self.histogram_threshold = histogram_threshold
        self.groups = groups
        self.scale = scale
        self.noise = noise
        self.sensitivity = sensitivity
        self.accounting = accounting
        self.accountant = accountant
        self.radial = radial
        self.radius = radius
        self.radius_level = radius_level
        self.pairs = pairs
        self.compute_nonprivate = compute_nonprivate
        self.whiten = whiten
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.row_blocks = row_blocks
        self.bounds = bounds

    def fit(self, X, y=None):
        """Release directions, variances and the score summary of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows are the individuals to protect. DataFrame columns that are not
            numeric are dropped with a warning.
        y : array-like of shape (n_samples,), default=None
            Group labels, read only when ``groups`` is set.

        Returns
        -------
        self : DPPCA
            The fitted estimator.
        """
        return self._fit_sequence(X, y)

    def _pass_progress(self, params):
        if not params["verbose"]:
            return Bunch(blocks=None, pairs=None)
        return Bunch(blocks=BlockProgress("DPPCA"), pairs=PairProgress("Kendall matrix"))

    def _targets(self, params, y, rows):
        """The group labels of the rows (``groups``: read off ``y``)."""
        labels, codes = _check_groups(params["groups"], y, rows)
        return Bunch(labels=labels, codes=codes)

    def _spec(self, params, n_samples, n_features, names, ledger):
        """The public part of a fit (:meth:`_prepare`), with the refusals of the
        allocated budget: the scree's own calibrations and the histogram's."""
        check_matrix_scree(params["scree_method"], params["radial"])
        fit = self._prepare(params, n_samples, n_features, names)
        scree_check = scree_classical_check(params["scree_method"], fit.scree_params,
                                            n_samples)

        def check(plan):
            scree_check(plan)
            if "score" in plan:
                check_histogram_budget(params["histogram"], plan["score/histogram"])

        fit.update(check=check, grant=params, pairs=params["pairs"])
        return fit

    def _release(self, X, spec, params, rng, ledger, targets):
        """The spreads, the directions, the scree and the score summary, after
        the charge."""
        start = time.perf_counter()
        plan, split, axes = spec.plan, params["split"], spec.axes
        n_components = spec.n_components
        with_scores = "score" in plan
        self.n_samples_ = X.shape[0]
        X = self._scale_columns(X, plan, params, rng, ledger)
        if "scale" in plan:
            self._progress("spreads released", start)
        total_bound = self._total_bound_first(X, spec, params, rng, ledger)
        released = self._release_directions(
            X, plan.node("loading"), params, rng, ledger, pairs=params["pairs"],
            progress=PairProgress("Kendall matrix") if params["verbose"] else None)
        self._progress("directions released", start)
        self.n_components_ = n_components
        self.components_ = released.eigenvectors[:, :n_components].T.copy()
        self.kendall_matrix_ = released.kendall_matrix
        self.kendall_noise_scale_ = released.noise_scale
        self.radius_ = released.radius
        self.method_label_ = params["scree_method"]
        # the score axes' view now: the rows ask the frame's first counts of the
        # scree's first pass
        scores = X.score_view(self.components_[list(axes)]) if with_scores else None
        before = self.components_
        self._fit_scree(X, method=params["scree_method"], params=spec.scree_params,
                        budget=plan.part("scree") if "scree" in plan else None,
                        noise=params["noise"], pairs=params["pairs"],
                        monotone=params["monotone"],
                        rng=rng, ledger=ledger,
                        kendall=Bunch(matrix=released.kendall_matrix,
                                      noise_scale=released.noise_scale,
                                      radius=released.radius),
                        total_bound=total_bound)
        self._progress("variances released", start)
        if with_scores and not np.array_equal(before[list(axes)],
                                              self.components_[list(axes)]):
            # the scree put the components in its order (post-processing): the
            # score axes follow the components they now name
            scores = X.score_view(self.components_[list(axes)])
        if spec.threshold is not None:
            # the score summary reads the components on ``axes``: keep them
            n_components = self._keep_for_ratio(
                spec.threshold, minimum=max(axes) + 1 if with_scores else 1)
        self.axes_ = axes
        self.groups_ = targets.labels
        # each part's budget after the plan: a part it could not buy gets none (its
        # share went to the others); the "matrix" scree is read off the loading
        shares = {part: spec.kept.get(part, (0.0, None))[0] for part in split}
        if params["scree_method"] == "matrix":
            shares.pop("scree")
        self.budget_ = {part: (params["eps"] * share, params["delta"] * share)
                        for part, share in shares.items()}
        self._set_score_summary(None)
        if with_scores:
            self._fit_scores(scores, params, plan, targets.labels, targets.codes, rng,
                             ledger)
            self._progress("score summary released", start)
        elif spec.with_scores:
            warn_user(
                "The score summary is not estimable with this budget and these rows: "
                "it is not run, and its budget went to the other parts (plan_ and the "
                "summary say what would buy it).",
                PrivacyUtilityWarning,
            )
        elif n_components < 2:
            warn_user(
                "n_components < 2: the score summary needs two components and is skipped; "
                "its budget is not spent.",
                UserWarning,
            )
        self.nonprivate_ = self._nonprivate(X) if params["compute_nonprivate"] else None

    def _prepare(self, params, n_samples, n_features, names, n_groups=None):
        """Everything a fit on ``n_samples`` x ``n_features`` decides before it
        reads the data (public): the scree's params, the components, the axes,
        the budget tree and the plan's settings; refuses, before any charge, what
        these settings cannot do."""
        split = params["split"]
        # (merged with its defaults and settled for the blocks by the fit sequence)
        scree_params = params["scree_params"]
        # a float: the scree of every component is released (as None does), the
        # number kept is chosen from its PVE before the score summary
        threshold = ratio_threshold(params["n_components"])
        n_components = check_n_components(
            None if threshold is not None else params["n_components"], n_features)
        with_scores = n_components >= 2 and split.get("score", 0) > 0
        axes = (check_component_pair(params["axes"], n_components)
                if n_components >= 2 else None)
        if n_groups is None:
            n_groups = 1 if params["groups"] is None else len(
                check_labels(params["groups"], "groups"))

        held = self._held_back(params, n_samples, n_features, names, n_groups,
                               with_scores)

        def planned(given):
            """The scree's resolved params, the plan's settings and the budget tree."""
            resolved = resolve_clip(given, n_samples, n_components,
                                    params["eps"] * split["scree"] * (1 - TOTAL_SHARE),
                                    scaled=True)
            check_scree_before_charge(params["scree_method"], resolved, n_samples,
                                      n_components, "scree_params",
                                      bounded=params["bounds"] is not None)
            settings = plan_settings(
                params, n_samples, n_features, n_components, scree_params=resolved,
                scree_method=params["scree_method"], n_groups=n_groups)
            settings["held back"] = held
            return resolved, settings, \
                self._budget_parts(params, resolved, n_components, with_scores, names)

        scree_params, settings, parts = self._scree_choice(
            scree_variants(params["scree_method"], scree_params,
                           params["bounds"] is not None), planned, params)
        return Bunch(scree_params=scree_params, threshold=threshold,
                     n_components=n_components, with_scores=with_scores, axes=axes,
                     parts=parts, settings=settings)

    def _held_back(self, params, n_samples, n_features, names, n_groups,
                   with_scores):
        """The score summary, held back where declared bounds alone would buy it
        (public: the plan of the same fit without bounds), with the eps at which
        that fit buys it; else nothing.

        A box makes the score frame free (no search), so a table too small for
        the summary without bounds can afford it with them; its share then no
        longer goes to the directions and the scree, and bounds would cost them
        accuracy (direction error 0.054 to 0.065 on wine at eps 4, its PC1
        variance within 20% in 3 fits of 10 against 6). Declared bounds never
        take the directions' or the scree's budget: the summary is bought with
        them exactly where it is without them.
        """
        if params["bounds"] is None or not with_scores:
            return {}
        # the same fit without bounds, or the nearest one there is: the box's own
        # settings (its covariance, its scree bounds) fall back to the defaults
        scree_params = dict(params["scree_params"] or {})
        if scree_params.get("C") == "box":
            scree_params["C"] = "auto"
        if scree_params.get("bound") in ("box", "box-own"):
            scree_params["bound"] = "auto"
        # (its scree need not wait for spreads: a box gives every column a unit)
        unbounded = dict(params, bounds=None, scree_params=scree_params,
                         scree_waits_for_scale=False,
                         radial="spherical" if params["radial"] == "covariance"
                         else params["radial"])
        fit = self._prepare(unbounded, n_samples, n_features, names, n_groups)
        _, rows, kept = self._bought(fit.parts, unbounded, fit.settings, part="score")
        if "score" in kept:
            return {}
        return {"score": max(row["eps_needed"] for row in rows
                             if row["step"].startswith("score/"))}

    def _validated_params(self):
        """The validated hyperparameters, the top-level split included."""
        params = validate_params(self)
        params["split"] = check_budget_split(params["budget_split"], params["scale"])
        PrivacyBudget(params["eps"], params["delta"]).split(params["split"])  # sum <= 1
        bins = params["bins"]
        params["bins"] = (bins, bins) if isinstance(bins, int) else bins
        return params

    def _budget_parts(self, params, scree_params, n_components, with_scores, names):
        """The fit's budget tree: the top-level split and each part's own tree.

        The ``"matrix"`` scree releases nothing: its share goes to the loading.
        """
        split = params["split"]
        bounded = params["bounds"] is not None
        scree = scree_parts(params["scree_method"], scree_params, n_components, bounded)
        loading_share = split["loading"] + (split["scree"] if scree is None else 0.0)
        parts = {"loading": (loading_share,
                             loading_parts(params["radial"], params["radius"]))}
        if "scale" in split:
            parts["scale"] = (split["scale"], spread_parts(names, bounded))
        if scree is not None:
            parts["scree"] = (split["scree"], scree)
        if with_scores:
            parts["score"] = (split["score"], score_parts(params["histogram"], bounded))
        return parts

    def _fit_scores(self, scores, params, plan, labels, codes, rng, ledger):
        """Release the score summary of ``scores`` (the rows on ``axes_``) and
        store it."""
        bins = params["bins"]
        if bins == "auto":
            bins = auto_bins(scores.shape[0], 1 if labels is None else len(labels),
                             params["histogram"], plan["score/histogram"])
        n_synthetic = params["n_synthetic"]
        summary = release_score_summary(
            scores, plan.part("score"), bins=bins, method=params["histogram"],
            threshold=params["histogram_threshold"],
            unit=score_unit(self.explained_variance_, self.noise_scale_, self.axes_),
            labels=labels, group_codes=codes,
            n_points=(min(self.n_samples_, _MAX_DEFAULT_SYNTHETIC) if n_synthetic is None
                      else n_synthetic),
            jitter=params["synthetic_jitter"], sampling=params["synthetic_sampling"],
            rng=rng, ledger=ledger)
        self._set_score_summary(summary, labels)

    def _set_score_summary(self, summary, labels=None):
        """Store a :func:`release_score_summary` release (None: no summary)."""
        if summary is None:
            self.histogram_threshold_ = self.expected_noise_cells_ = None
            self.frame_ = self.bin_edges_ = self.score_histogram_ = None
            self.score_histograms_ = self.synthetic_scores_ = self.synthetic_groups_ = None
            return
        self.frame_ = summary.frame
        self.bin_edges_ = summary.bin_edges
        self.histogram_threshold_ = summary.threshold
        self.expected_noise_cells_ = summary.expected_noise_cells
        self.score_histogram_ = summary.histogram
        self.synthetic_scores_ = summary.synthetic_scores
        if labels is not None:
            self.score_histograms_ = dict(zip(labels, summary.histograms))
            sizes = np.bincount(summary.synthetic_codes, minlength=len(labels))
            self.synthetic_groups_ = np.concatenate([
                np.full(size, label, dtype=object) for label, size in zip(labels, sizes)])

    def _progress(self, message, start):
        if self.verbose:
            print(f"[DPPCA] {message} ({time.perf_counter() - start:.1f} s)", flush=True)

    def _nonprivate(self, X):
        reference = nonprivate_reference(X.array(), self.components_)
        if self.frame_ is not None:
            scores = X.projected(self.components_[list(self.axes_)]).array()
            reference.score_histogram = exact_score_histogram(scores, self.bin_edges_)
        return reference
