"""Private variances along given or private directions (the DP scree)."""

import math
import warnings

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from ._base import _PrivateProjection
from ._directions import (
    SENSITIVITY_RULES,
    check_matrix_scree,
    loading_parts,
    release_directions,
)
from ._nonprivate import nonprivate_reference
from ._kendall_spectrum import elliptical_variances
from ._spread import release_spreads, spread_level, spread_parts
from ._summary import FitSummary, budget_line, directions_table, reference_line
from ._validation import (
    check_bool,
    check_budget_params,
    check_choice,
    check_max_abs,
    check_n_components,
    check_n_jobs,
    check_share,
    validate_features,
)
from ._variances import (
    SCREE_METHODS,
    TOTAL_SHARE,
    check_method_params,
    clipped_to_the_bound,
    explained_variance_ratio,
    implied_feature_variances,
    post_process_variances,
    private_total_variance,
    private_variances,
    resolve_clip,
    scree_parts,
)
from .privacy import PrivacyLedger, PrivacyUtilityWarning, check_generator
from .privacy._calibration import NOISE_METHODS
from .privacy._warnings import warn_noise_dominated


class _VarianceMixin:
    """The scree part of a fit, whitening and summary lines (DPScree and DPPCA)."""

    def _set_spreads(self, spreads):
        self.scale_ = None if spreads is None else spreads.scale

    def _fit_variances(self, X, method, params, budget, *, pairs, monotone, rng, ledger,
                       kendall=None):
        """Variances along ``components_`` and the total variance, on one budget.

        ``method="kendall"`` needs ``kendall``, a Bunch with the released Kendall
        ``matrix`` (whose eigenvectors are ``components_``) and its ``noise_scale``
        (see :meth:`_elliptical_variances`).

        ``budget``: the scree's part (:func:`scree_parts`), whose ``total
        variance`` takes ``TOTAL_SHARE`` of it. The total is always the
        norm-clipped U-statistic at the level of the clipped scree (the same
        clipped second moment, so the PVE is not biased by clipping). The
        per-column variances follow by post-processing: ones for scaled columns
        (their spread is 1 by construction, up to the spread's noise), else
        :func:`implied_feature_variances`.
        """
        if method == "kendall":
            return self._elliptical_variances(X, budget, kendall, pairs=pairs,
                                              monotone=monotone, rng=rng, ledger=ledger)
        if method == "matrix":
            return self._matrix_variances(kendall, monotone)
        raw, noise_scale, bounds = private_variances(
            X, self.components_, method=method, params=params,
            budget=budget.part("variances"), noise=self.noise, rng=rng, ledger=ledger)
        total, total_noise = self._total_variance(
            X, budget, pairs, params["quantile_level"] if method == "clipped" else None,
            rng, ledger)
        names = [f"PC{l + 1}" for l in range(len(raw))]
        noise_scale = _widen_if_clipped("variance", names, raw, noise_scale,
                                        _clipped_share_inputs(raw, bounds))
        self._set_released_variances(raw, noise_scale, bounds, total, total_noise, monotone)

    def _total_variance(self, X, budget, pairs, level, rng, ledger):
        """The private total variance and its noise sd (raised if at its bound)."""
        total, total_noise, total_bound = private_total_variance(
            X, budget.part("total variance"), self.noise, rng, ledger, pairs=pairs,
            quantile_level=level)
        total_noise = float(_widen_if_clipped("total variance", ["the data"],
                                              np.array([total]), np.array([total_noise]),
                                              (np.array([total]), np.array([total_bound]))
                                              )[0])
        return total, total_noise

    def _elliptical_variances(self, X, budget, kendall, *, pairs, monotone, rng, ledger):
        """``method="kendall"``: the total variance is the only release; the
        variances are ``total * ratios`` with the ratios read off the released
        Kendall eigenvalues under an elliptical model
        (:mod:`sklearn_dppca._kendall_spectrum`). The total's clip level is as
        high as its search's budget allows (:func:`spread_level`): its clipping
        bias is not cancelled by a ratio here.
        """
        level = spread_level(X.shape[0] // 2, budget["total variance/clip bound"].eps)
        total, total_noise = self._total_variance(X, budget, pairs, max(level, 0.5), rng,
                                                  ledger)
        raw, noise_scale = elliptical_variances(
            kendall.matrix, kendall.noise_scale, total, total_noise,
            self.components_.shape[0], rng)
        self._set_released_variances(raw, noise_scale, None, total, total_noise, monotone)

    def _matrix_variances(self, kendall, monotone):
        """``method="matrix"``: variances and total read off the released clipped
        Kendall matrix ``M`` (``radial="clipped"``, radius ``c``), free.

        ``(c^2 / 2) M`` is the pair scatter clipped in norm at ``c``: ``v^T M v``
        times ``c^2 / 2`` is the clipped variance along ``v`` and its trace the
        clipped total. The noise of ``M`` is symmetric Gaussian with diagonal sd
        ``s``, so ``v^T E v`` has sd ``s`` for a unit ``v`` and the trace ``s
        sqrt(p)``. The clipping is in all ``p`` columns at the directions' radius
        (a median distance by default): variances come out below the covariance's
        when many pairs are clipped, the PVE much less so.
        """
        half_square = kendall.radius**2 / 2
        matrix = kendall.matrix
        raw = half_square * np.einsum("lj,jk,lk->l", self.components_, matrix,
                                      self.components_)
        noise_scale = np.full(raw.shape, half_square * kendall.noise_scale)
        total = half_square * float(np.trace(matrix))
        total_noise = half_square * kendall.noise_scale * math.sqrt(matrix.shape[0])
        self._set_released_variances(raw, noise_scale, None, total, total_noise, monotone)

    def _set_released_variances(self, raw, noise_scale, bounds, total, total_noise,
                                monotone):
        names = [f"PC{l + 1}" for l in range(len(raw))]
        warn_noise_dominated("variance", names, raw, noise_scale)
        warn_noise_dominated("total variance", ["the data"], [total], [total_noise])
        self.explained_variance_raw_ = raw
        self.explained_variance_ = post_process_variances(raw, monotone)
        self.explained_variance_ratio_, self.total_variance_ = explained_variance_ratio(
            self.explained_variance_, total)
        self.total_variance_noise_scale_ = total_noise
        self.noise_scale_ = noise_scale
        self.clip_bounds_ = bounds
        self._set_feature_variances()

    def _set_feature_variances(self):
        # Implied by the scree and the total, scaled or not: the same clipped
        # second moment as both, so sum_l r_jl^2 <= 1 in the variable circle (a
        # column's own spread, a different clipping, could put an arrow past it).
        self.feature_variance_ = implied_feature_variances(
            self.components_, self.explained_variance_, self.total_variance_)
        # Propagated noise sd: the retained variances' noise through v_jl^2, the
        # rest's (total minus retained) through its even split (independent parts).
        loadings = self.components_**2
        n_rest = max(self.n_features_in_ - self.n_components_, 1)
        rest_share = np.clip(1.0 - loadings.sum(axis=0), 0.0, 1.0) / n_rest
        rest_noise = math.hypot(self.total_variance_noise_scale_, *self.noise_scale_)
        self.feature_variance_noise_scale_ = _column_norms(np.vstack([
            self.noise_scale_[:, None] * loadings, rest_noise * rest_share]))
        warn_noise_dominated("implied variance", self._feature_names(),
                             self.feature_variance_, self.feature_variance_noise_scale_,
                             stacklevel=4)

    def _projection_scale(self):
        if not self.whiten:
            return None
        # A zero private variance whitens to 0 instead of dividing by zero.
        variance = self.explained_variance_
        return np.where(variance > 0, np.sqrt(np.where(variance > 0, variance, 1.0)), np.inf)

    def _scree_lines(self):
        lines = [f"Scree method: {self.method_label_}; PVE is the share of the private "
                 "total variance"]
        for l, (variance, noise, ratio) in enumerate(
            zip(self.explained_variance_, self.noise_scale_, self.explained_variance_ratio_)
        ):
            lines.append(f"  PC{l + 1}: variance {variance:.4g} +- {noise:.2g} (noise sd)  "
                         f"PVE {100 * ratio:.1f}%")
        lines.append(f"  total variance {self.total_variance_:.4g} "
                     f"+- {self.total_variance_noise_scale_:.2g} (noise sd)")
        if self.scale_ is not None:
            lines.append("  columns divided by their private spreads (scale_)")
        return lines


def _column_norms(terms):
    """L2 norm of each column, without overflow for variances near the float range."""
    largest = np.max(np.abs(terms), axis=0)
    safe = np.where(largest > 0, largest, 1.0)
    return largest * np.sqrt(np.sum((terms / safe) ** 2, axis=0))


def _clipped_share_inputs(raw, bounds):
    """What to compare with the clip bounds: the sum under one norm bound, else each."""
    if bounds is None:
        return None
    if bounds.size == 1 and raw.size > 1:
        return np.array([raw.sum()]), bounds
    return raw, bounds


def _widen_if_clipped(what, names, raw, noise_scale, share_inputs):
    """Noise sd of estimates clipped at their bound raised to the estimate (free).

    Such a release says only that the statistic is at least about its bound (the
    bound's search stopped below nearly all the data): reporting its Gaussian sd
    alone would draw a confident value. With the sd raised to the estimate, the
    summary, the error bars and the noise warnings treat it as noise.
    """
    if share_inputs is None:
        return noise_scale
    clipped = clipped_to_the_bound(*share_inputs)
    if not np.any(clipped):
        return noise_scale
    if clipped.size == 1 and raw.size > 1:
        clipped = np.repeat(clipped, raw.size)
    listed = ", ".join(str(name) for name, flag in zip(names, clipped) if flag)
    warnings.warn(
        f"The private {what} of {listed} sits at its clip bound: its bound's search "
        "stopped below nearly all the data, so the release only says the value is "
        "at least about the bound. Its noise sd is reported as at least the value. "
        "Increase eps, or use more rows.",
        PrivacyUtilityWarning,
        stacklevel=4,
    )
    return np.where(clipped, np.maximum(noise_scale, np.abs(raw)), noise_scale)


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
      searches stop far below the intended level (p = 10, n = 2000, eps = 1: median
      worst top-3 error 0.66 against 0.27 with norm clipping). ``clip="auto"``
      (default) takes per-component bounds only when the ``n/2`` paired values leave
      enough counts in the tail for k searches (see :func:`choose_clip`), and norm
      clipping otherwise.
    * ``"huber"``: noisy gradient descent on a Huber loss after a private scale,
      on ``n/2`` randomly paired values (Yu, Ren & Zhou 2024).
    * ``"pmwm"``: private winsorised mean between private quantiles, on randomly
      paired values (Ramsay & Spicker 2025).
    * ``"kendall"``: no release of its own but the private total variance (the
      whole scree budget buys it, clipped as high as that budget allows); the
      variances are ``total * ratios``, the ratios read off the released Kendall
      matrix's eigenvalues through the map an elliptical law implies
      (:mod:`sklearn_dppca._kendall_spectrum`), with noise sds from a
      parametric bootstrap of both releases (free post-processing). It needs
      the Kendall matrix: directions released here or reused from a fitted
      estimator. It is a MODEL: on Gaussian data (p = 10, eps = 1) the worst
      top-3 error falls from 0.048 to 0.016 at n = 20,000 and from 0.14 to 0.12
      at n = 2,000; on real tables it can be badly biased (adult, scaled: 0.74
      against 0.04; digits: 0.35 against 0.16) and at small ``n eps`` the noisy
      trailing Kendall eigenvalues wreck the ratios (wine, breast cancer). Use
      it only for data you know to be close to elliptical.
    * ``"matrix"``: with ``radial="clipped"`` directions (released here or
      reused), the variances ``(c^2 / 2) v^T M v`` and the total
      ``(c^2 / 2) trace(M)`` read off the released clipped matrix ``M``: no
      release of its own (the directions take the whole budget), but the
      clipping is in all columns at the directions' radius.

    ``huber`` and ``pmwm`` split the budget evenly over components.

    Parameters
    ----------
    n_components : int, default=None
        Number of components; None keeps all available directions.
    eps : float, default=1.0
        Total privacy budget this fit spends, directions included.
    delta : float, default=1e-5
        Total privacy budget, in (0, 1).
    method : {"clipped", "huber", "pmwm", "kendall", "matrix"}, default="clipped"
    method_params : dict, default=None
        Tuning values of the method (unknown names are an error):
        ``clipped``: ``clip`` ("auto", "norm" or "component"), ``C`` ("auto" or a public
        bound: on ``||d||^2 / 2`` for "norm", per component for "component"),
        ``quantile_share`` (0.25), ``quantile_level`` (0.97: on p = 10 Gaussian data
        the median worst top-3 error is 0.29 / 0.27 / 0.33 at n = 2000 and
        0.049 / 0.065 / 0.045 at n = 20000 for levels 0.97 / 0.95 / 0.98: lower
        levels cut noise, higher ones cut clipping bias), ``beta`` (1.05),
        ``max_steps`` (5000), ``pairs`` ("all" or m partners per row, "norm" only);
        ``huber``: ``m2_frac`` (0.25), ``k_min`` (-40), ``k_max`` (40),
        ``block_size`` (16);
        ``pmwm``: ``beta`` (1.01), ``trim_const`` (10), ``eta`` (0.01), ``a`` (0),
        ``b`` (inf), ``split`` (True).
    directions : None, fitted DPKendallDirections or DPPCA, or array, default=None
        None: private directions are released first with ``directions_share`` of
        the budget. A fitted estimator: its ``components_`` are reused and its whole
        ledger is carried into this one (its spend counts against ``eps, delta``).
        An array of shape (k, n_features) with orthonormal rows: public directions,
        no spend.
    directions_share : float, default=0.4
        Share of ``eps`` and ``delta`` spent on directions when ``directions=None``
        (of what the spreads leave, with ``scale=True``).
    scale : bool, default=False
        Divide each column by a private estimate of its spread first (released
        as ``scale_``): the PCA of the correlation matrix. Reused directions
        fitted with ``scale=True`` bring their ``scale_`` (``scale`` must agree).
    scale_share : float, default=0.2
        Share of ``eps`` and ``delta`` spent on the spreads when they are
        released here.
    monotone : bool, default=True
        Post-process the variances to a non-increasing, non-negative sequence
        (isotonic regression; free).
    whiten : bool, default=False
        ``transform`` divides each projection by the square root of its private
        variance.
    noise : {"analytic", "classical"}, default="analytic"
        Calibration of each Gaussian part under ``accounting="basic"``.
    sensitivity : {"tight", "standard"}, default="tight"
        Sensitivity of the Kendall matrix when directions are released here
        (see :class:`DPKendallDirections`).
    accounting : {"gdp", "basic"}, default="gdp"
        Exact composition of the Gaussian parts as one ``mu``-GDP block, or
        basic composition (see :class:`DPKendallDirections`).
    accountant : PrivacyAccountant, default=None
        A total budget for the data set, charged before any computation.
    radial : {"spherical", "clipped"}, default="spherical"
    radius : "auto" or float, default="auto"
    radius_level : "auto" or float, default="auto"
        The pair terms of the directions released here (see
        :class:`DPKendallDirections`); ``radius_`` is released.
    random_state : None, int or numpy.random.Generator, default=None
    n_jobs : int, default=None
        Workers for the Kendall kernel when directions are released here.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    explained_variance_ : ndarray of shape (n_components,)
        Private variances after post-processing.
    explained_variance_raw_ : ndarray of shape (n_components,)
        Private variances as released (may be negative or unordered).
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Share of the private total variance, as in scikit-learn's PCA: in [0, 1],
        summing below 1 when fewer than all components are kept.
    total_variance_ : float
        Private total variance (the trace of the covariance; a clipped pairwise
        second moment released with a quarter of the scree budget), raised to at
        least the sum of ``explained_variance_``.
    total_variance_noise_scale_ : float
        Standard deviation of its noise.
    feature_variance_ : ndarray of shape (n_features,)
        Each column's variance in the units the components act on (after the
        spreads with ``scale=True``, so near 1 then), implied by the scree and the
        total: ``sum_l lambda_l v_jl^2`` plus an even share of the variance the
        retained components leave (free post-processing; exact when the
        discarded eigenvalues are equal). The variable circle divides by its
        square root, so no arrow leaves the unit circle.
    feature_variance_noise_scale_ : ndarray of shape (n_features,)
        Its noise sd, propagated from the scree's and the total's.
    scale_ : ndarray of shape (n_features,) or None
        The private spreads the columns were divided by, or None.
    noise_scale_ : ndarray of shape (n_components,)
        Standard deviation of the Gaussian noise on each raw variance.
    clip_bounds_ : ndarray of shape (n_components,) or None
        Released clip bounds (``method="clipped"``).
    n_components_, n_samples_, n_features_in_, feature_names_in_ : see DPKendallDirections
    privacy_spent_ : tuple (eps, delta)
    privacy_ledger_ : list of dict
    nonprivate_ : Bunch or None

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dppca import DPScree
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)) * [3.0, 2.0, 1.0] + 50
    >>> scree = DPScree(eps=1.0, random_state=0).fit(X)
    >>> scree.explained_variance_.shape
    (3,)
    """

    def __init__(self, n_components=None, *, eps=1.0, delta=1e-5, method="clipped",
                 method_params=None, directions=None, directions_share=0.4, scale=False,
                 scale_share=0.2, monotone=True, whiten=False, noise="analytic",
                 sensitivity="tight", accounting="gdp", accountant=None,
                 radial="spherical", radius="auto", radius_level="auto",
                 compute_nonprivate=False, random_state=None, n_jobs=None):
        self.radial = radial
        self.radius = radius
        self.radius_level = radius_level
        self.n_components = n_components
        self.eps = eps
        self.delta = delta
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

    def fit(self, X, y=None):
        """Release private variances (and, if needed, directions) of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        eps, delta = check_budget_params(self.eps, self.delta)
        method = check_choice(self.method, SCREE_METHODS, "method")
        params = check_method_params(method, self.method_params)
        check_choice(self.noise, NOISE_METHODS, "noise")
        check_choice(self.sensitivity, SENSITIVITY_RULES, "sensitivity")
        check_n_jobs(self.n_jobs)
        X = check_max_abs(validate_features(self, X, reset=True), "DPScree's variances")
        rng = check_generator(self.random_state)
        ledger = PrivacyLedger()
        reused = self._reused_scale()
        check_matrix_scree(method, self._directions_radial())
        given, (grant_eps, grant_delta) = self._given_directions(
            X, eps, delta, ledger, spends_more=method != "matrix")
        n_available = X.shape[1] if given is None else given.shape[0]
        n_components = check_n_components(self.n_components, n_available)
        parts, scree_share = self._budget_parts(given is None, reused is not None, method)
        params = resolve_clip(params, X.shape[0], n_components,
                              grant_eps * scree_share * (1 - TOTAL_SHARE))
        scree = scree_parts(method, params, n_components)
        if scree is not None:
            parts["scree"] = (scree_share, scree)
        plan = self._plan_budget(parts, grant_eps, grant_delta, X.shape[0])
        X = self._scaled(X, reused, plan, rng, ledger)
        kendall = self._kendall_release(X, plan, rng, ledger)
        directions = kendall.eigenvectors if given is None else given
        if method == "kendall" and kendall is None:
            raise ValueError("method='kendall' reads the variances off the released "
                             "Kendall matrix: directions must be None or a fitted "
                             "DPKendallDirections/DPPCA, not an array.")
        self.n_samples_ = X.shape[0]
        self.n_components_ = n_components
        self.components_ = directions[:n_components]
        self.method_label_ = method
        self._fit_variances(X, method, params,
                            plan.part("scree") if "scree" in plan else None,
                            pairs=params.get("pairs", "all"), monotone=self.monotone,
                            rng=rng, ledger=ledger, kendall=kendall)
        self.nonprivate_ = (
            nonprivate_reference(X, self.components_) if self.compute_nonprivate else None
        )
        self._set_privacy(ledger, eps, delta, plan)
        return self

    def _budget_parts(self, release_directions, reused_scale, method):
        """The budget tree but the scree's own part, and the scree's share.

        Released here, the spreads take ``scale_share`` and the directions
        ``directions_share`` of the rest; the scree takes what is left (the
        ``"matrix"`` scree has no release: the directions take it all).
        """
        radial = self._radial_params()
        parts, rest = {}, 1.0
        if check_bool(self.scale, "scale") and not reused_scale:
            share = check_share(self.scale_share, "scale_share")
            parts["scale"] = (share, spread_parts(self._feature_names()))
            rest = 1.0 - share
        if release_directions:
            share = 1.0 if method == "matrix" else check_share(self.directions_share,
                                                                "directions_share")
            parts["directions"] = (rest * share,
                                   loading_parts(radial["radial"], radial["radius"]))
            rest *= 1.0 - share
        return parts, rest

    def _directions_radial(self):
        """How the directions' matrix was formed: this fit's ``radial``, a reused
        estimator's, or None for public directions."""
        if self.directions is None:
            return self._radial_params()["radial"]
        if _is_estimator(self.directions):
            return "clipped" if getattr(self.directions, "radius_", None) else "spherical"
        return None

    def _reused_scale(self):
        """The spreads of reused directions fitted with ``scale=True`` (or None).

        ``scale`` must agree with how the reused directions were fitted.
        """
        scale = check_bool(self.scale, "scale")
        if not _is_estimator(self.directions) or not hasattr(self.directions, "scale_"):
            return None
        reused = self.directions.scale_
        if (reused is not None) != scale:
            raise ValueError(f"scale={scale} but directions was fitted with "
                             f"scale={reused is not None}; they must agree.")
        return reused

    def _scaled(self, X, reused, plan, rng, ledger):
        """Divide X by the spreads: reused ones, released ones, or none."""
        if reused is not None:
            self._set_spreads(Bunch(scale=reused))
            return X / reused
        if "scale" not in plan:
            self._set_spreads(None)
            return X
        spreads = release_spreads(X, budget=plan.part("scale"), noise=self.noise, rng=rng,
                                  ledger=ledger, feature_names=self._feature_names())
        self._set_spreads(spreads)
        return check_max_abs(spreads.X, "DPScree's variances (after scaling)")

    def _kendall_release(self, X, plan, rng, ledger):
        """The Kendall matrix behind the directions: released here (``directions``
        None), or that of a reused estimator; None for public directions.

        Sets ``kendall_matrix_`` and ``kendall_noise_scale_``. Returns a Bunch with
        ``matrix``, ``noise_scale`` and ``eigenvectors`` (rows), or None.
        """
        if "directions" in plan:
            released = release_directions(
                X, **self._radial_params(),
                budget=plan.node("directions"), noise=self.noise,
                sensitivity=self.sensitivity, pairs="all", duplicates="ignore",
                n_jobs=self.n_jobs, rng=rng, ledger=ledger)
            kendall = Bunch(matrix=released.kendall_matrix,
                            noise_scale=released.noise_scale,
                            eigenvectors=released.eigenvectors.T, radius=released.radius)
        elif _is_estimator(self.directions):
            kendall = Bunch(matrix=self.directions.kendall_matrix_,
                            noise_scale=self.directions.kendall_noise_scale_,
                            eigenvectors=None,
                            radius=getattr(self.directions, "radius_", None))
        else:
            kendall = None
        self.radius_ = None if kendall is None else kendall.radius
        self.kendall_matrix_ = None if kendall is None else kendall.matrix
        self.kendall_noise_scale_ = None if kendall is None else kendall.noise_scale
        return kendall

    def _given_directions(self, X, eps, delta, ledger, spends_more=True):
        """Reused or public directions (None: released here) and the grant left.

        Reused directions bring their ledger, whose spend counts against
        ``(eps, delta)``; public ones cost nothing.
        """
        directions = self.directions
        if directions is None:
            return None, (eps, delta)
        if _is_estimator(directions):
            return self._reused_directions(directions, X, eps, delta, ledger, spends_more)
        return _public_directions(directions, X.shape[1]), (eps, delta)

    def _reused_directions(self, estimator, X, eps, delta, ledger, spends_more=True):
        check_is_fitted(estimator, "components_")
        if estimator.n_features_in_ != X.shape[1]:
            raise ValueError(
                f"directions was fitted on {estimator.n_features_in_} features, "
                f"X has {X.shape[1]}."
            )
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
        return estimator.components_, (max(eps - spent_eps, 0.0),
                                       max(delta - spent_delta, 0.0))

    def summary(self):
        """Data size, budget, private variances and PVE, the directions.

        Returns
        -------
        FitSummary
        """
        check_is_fitted(self)
        heading, table = directions_table(self.components_, self._feature_names())
        return FitSummary(
            "DP Scree Summary",
            [
                (None, [
                    f"Data: {self.n_samples_} observations x {self.n_features_in_} variables",
                    f"Components: {self.n_components_}",
                ]),
                ("Private variances (post-processed):", self._scree_lines()),
                (heading, table),
                (None, [budget_line(*self.privacy_spent_),
                        reference_line(self.nonprivate_ is not None)]),
            ],
        )


def _is_estimator(value):
    return hasattr(value, "fit") and hasattr(value, "get_params")


def _public_directions(directions, n_features):
    """Validate an array of public directions: shape (k, p), orthonormal rows."""
    try:
        directions = np.asarray(directions, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(
            "directions must be None, a fitted DPKendallDirections/DPPCA or an array "
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
