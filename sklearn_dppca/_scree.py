"""Private variances along given or private directions (the DP scree)."""

import math
import numbers
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._base import _PrivateProjection
from ._directions import private_kendall_directions
from ._nonprivate import nonprivate_reference
from ._summary import FitSummary, budget_line, directions_table, reference_line
from ._kendall import pair_scatter
from ._validation import (
    check_budget_params,
    check_choice,
    check_n_components,
    check_n_jobs,
    check_max_abs,
    check_pairs,
    validate_features,
)
from .privacy import PrivacyLedger, check_generator, gaussian_mechanism
from .privacy._calibration import NOISE_METHODS
from .privacy._means import clipped_pair_mean, huber_mean, monotone_scree, pmwm_mean
from .privacy._quantiles import upper_quantile

SCREE_METHODS = ("clipped", "huber", "pmwm")

# The documented tuning values of each method; ``method_params`` may override them.
SCREE_DEFAULTS = {
    "clipped": {
        "clip": "auto",          # "norm", "component", or "auto" (chosen from n, k, eps)
        "C": "auto",             # "auto" or a public bound (per component with "component")
        "quantile_share": 0.25,  # share of the scree eps spent on the clip bound(s)
        "quantile_level": 0.97,  # level of the private upper quantile (see DPScree notes)
        "beta": 1.05,            # coarse grid: the search stops less early at small eps
        "max_steps": 5000,
        "pairs": "all",          # pairs of the U-statistic ("norm" only): "all" or m
    },
    "huber": {"m2_frac": 0.25, "k_min": -40, "k_max": 40, "block_size": 16},
    "pmwm": {"beta": 1.01, "trim_const": 10.0, "eta": 0.01, "a": 0.0, "b": math.inf,
             "split": True},
}


def check_method_params(method, method_params, name="method_params"):
    """Merge ``method_params`` into the defaults of ``method``; reject unknown names."""
    params = dict(SCREE_DEFAULTS[method])
    if method_params is None:
        return params
    if not isinstance(method_params, dict):
        raise TypeError(f"{name} must be a dict or None, got {type(method_params).__name__}.")
    unknown = sorted(set(method_params) - set(params))
    if unknown:
        raise ValueError(
            f"{name} has unknown names {unknown} for method={method!r}; "
            f"valid names: {sorted(params)}."
        )
    params.update(method_params)
    if method == "clipped":
        check_choice(params["clip"], ("auto", "norm", "component"), f"{name}['clip']")
    share = params.get("quantile_share")
    if share is not None and not (isinstance(share, numbers.Real) and 0 < share < 1):
        raise ValueError(f"{name}['quantile_share'] must lie in (0, 1), got {share!r}.")
    return params


def random_pairs(n_samples, rng):
    """A data-independent matching: rows ``first[i]`` and ``second[i]`` form pair i.

    Each row is in at most one pair, so one changed row changes one paired value.
    """
    order = rng.permutation(n_samples)
    n_pairs = n_samples // 2
    return order[:n_pairs], order[n_pairs:2 * n_pairs]


def paired_values(X, components, rng):
    """``w_il = (v_l . (x_a - x_b))^2 / 2`` over a random matching; shape (n//2, k).

    Its mean estimates the variance along ``v_l`` without any centre.
    """
    first, second = random_pairs(X.shape[0], rng)
    differences = (X[first].astype(np.float64) - X[second]) @ components.T
    return differences**2 / 2


def _check_public_clip(C, n_components):
    bounds = np.broadcast_to(np.asarray(C, dtype=float), (n_components,)).copy()
    if not np.all(np.isfinite(bounds) & (bounds > 0)):
        raise ValueError(f"method_params['C'] must be 'auto' or finite positive, got {C!r}.")
    return bounds


def clipped_u_statistics(X, components, bounds):
    """The exact (pre-noise) clipped U-statistics, one per component.

    ``U_l = (1 / C(n, 2)) sum_{i<j} min((v_l.(x_i - x_j))^2 / 2, C_l)``, in
    O(n log n) per component. Replacing one row moves ``U_l`` by at most
    ``2 C_l / n`` (it touches ``n - 1`` terms, each in ``[0, C_l]``).
    """
    projections = X.astype(np.float64) @ components.T
    return np.array([clipped_pair_mean(projections[:, l], bounds[l])
                     for l in range(components.shape[0])])


def _private_upper_quantile(values, params, eps, rng, ledger, step):
    return upper_quantile(values, params["quantile_level"], eps, rng, lower=0.0,
                          beta=params["beta"], max_steps=params["max_steps"],
                          ledger=ledger, step=step)


def norm_clipped_scatter(X, bound, pairs, rng):
    """``M = mean over pairs of (d d^T / 2) min(1, 2 bound / ||d||^2)``, ``d = x_i - x_j``.

    Each pair difference is shrunk to norm at most ``sqrt(2 bound)``, so
    ``v.M v`` is the mean of ``(v.d_clipped)^2 / 2``: the clipped variance along
    ``v``. Pairs: all of them, or an ``m``-partner design from ``rng``.
    """
    # (d d^T / 2) min(1, 2 bound / ||d||^2) = bound d d^T / max(||d||^2, 2 bound): the
    # kernel's floored pair scatter, exact to about 1e-15 (sklearn_dppca._kendall).
    rng = check_generator(rng)
    n_samples = X.shape[0]
    if pairs == "all" or pairs >= n_samples - 1:
        # All pairs need no design; the permutation a complete design would draw is
        # still drawn, so the random stream (and every later draw) stays as before.
        rng.permutation(n_samples)
        return bound * pair_scatter(X, floor=2 * bound, pairs="all")
    return bound * pair_scatter(X, floor=2 * bound, pairs=pairs, random_state=rng)


def _norm_clipped_variances(X, components, params, eps, delta, noise, rng, ledger, step):
    """Variances from pair differences clipped in norm to ``sqrt(2 C)``.

    The k-vector of terms ``t_l = (v_l.d_clipped)^2 / 2`` is non-negative with
    ``sum_l t_l <= ||d_clipped||^2 / 2 <= C`` (orthonormal ``v_l``), so replacing it
    moves it by at most ``sqrt(2) C`` in L2. One row touches ``n - 1`` of the
    ``C(n, 2)`` terms (``m`` of the ``n m / 2`` with a design), so the released
    vector has L2 sensitivity ``2 sqrt(2) C / n``, whatever ``k``: a single clip
    bound (one private quantile) serves every component.
    """
    n_samples, n_components = X.shape
    if isinstance(params["C"], str):
        _check_auto(params["C"])
        first, second = random_pairs(n_samples, rng)
        differences = X[first].astype(np.float64) - X[second]
        half_squared_norms = np.einsum("ij,ij->i", differences, differences) / 2
        bound = _private_upper_quantile(half_squared_norms, params,
                                        eps * params["quantile_share"], rng, ledger,
                                        f"{step}/clip bound")
        eps = eps * (1 - params["quantile_share"])
    else:
        bound = float(_check_public_clip(params["C"], 1)[0])
    scatter = norm_clipped_scatter(X, bound, check_pairs(params["pairs"]), rng)
    statistic = np.einsum("lj,jk,lk->l", components, scatter, components)
    noisy, noise_scale = gaussian_mechanism(
        statistic, 2 * math.sqrt(2) * bound / n_samples, eps, delta, rng, noise=noise,
        ledger=ledger, step=f"{step}/norm-clipped U-statistics")
    return noisy, np.full(components.shape[0], noise_scale), np.array([bound])


def _check_auto(C):
    if C != "auto":
        raise ValueError(f"method_params['C'] must be 'auto' or a float, got {C!r}.")


def _clipped_variances(X, components, params, eps, delta, noise, rng, ledger, step):
    """The clipped U-statistic ``U_l = mean_{i<j} min((v_l.(x_i-x_j))^2/2, C_l)``.

    One row touches ``n - 1`` of the ``C(n, 2)`` terms, each in ``[0, C_l]``, so
    ``U_l`` moves by at most ``2 C_l / n`` and the vector by ``(2/n) ||C||_2`` in L2.
    """
    if choose_clip(params, X.shape[0], components.shape[0], eps) == "norm":
        return _norm_clipped_variances(X, components, params, eps, delta, noise, rng,
                                       ledger, step)
    n_samples, n_components = X.shape[0], components.shape[0]
    if isinstance(params["C"], str):
        _check_auto(params["C"])
        quantile_eps = eps * params["quantile_share"] / n_components
        values = paired_values(X, components, rng)
        bounds = np.array([
            _private_upper_quantile(values[:, l], params, quantile_eps, rng, ledger,
                                    f"{step}/clip bound PC{l + 1}")
            for l in range(n_components)
        ])
        eps = eps * (1 - params["quantile_share"])
    else:
        bounds = _check_public_clip(params["C"], n_components)
    # Release U_l / C_l: each coordinate moves by at most 2/n, the vector by
    # 2 sqrt(k)/n in L2. The noise on U_l is then proportional to C_l, so a
    # component on a small scale is not drowned by the noise of a large one.
    statistic = clipped_u_statistics(X, components, bounds) / bounds
    noisy, noise_scale = gaussian_mechanism(
        statistic, 2.0 * math.sqrt(n_components) / n_samples, eps, delta, rng,
        noise=noise, ledger=ledger, step=f"{step}/clipped U-statistics (per C_l)")
    return noisy * bounds, noise_scale * bounds, bounds


# Rank slack of a Durfee search: the typical largest of about 1000 Exp(eps/2) noises
# on the count queries, in units of 2/eps.
_SEARCH_SLACK = math.log(1000)


def choose_clip(params, n_samples, n_components, eps):
    """``"norm"`` or ``"component"`` for ``clip="auto"``, from public n, k and eps.

    Per-component clipping needs k private quantiles, each with ``eps_q / k``. A
    search stops early by about ``(2 k / eps_q) ln(steps)`` counts; when that slack
    exceeds the ``(1 - level)`` tail of the ``n / 2`` paired values, the bounds land
    far below the intended level and bias every variance down, so one norm bound
    (one quantile) is used instead. With enough counts, per-component bounds adapt
    to components on very different scales, which a single norm bound cannot.
    """
    if params["clip"] != "auto":
        return params["clip"]
    if not isinstance(params["C"], str):
        return "component" if np.ndim(params["C"]) else "norm"
    quantile_eps = eps * params["quantile_share"] / n_components
    tail_count = (n_samples // 2) * (1 - params["quantile_level"])
    return "component" if tail_count >= 2 / quantile_eps * _SEARCH_SLACK else "norm"


def _per_component_variances(estimator, X, components, params, eps, delta, noise, rng,
                             ledger, step):
    """Split the budget evenly over components; one 1-D mean estimate each."""
    n_components = components.shape[0]
    if X.shape[0] < 4 and (estimator is huber_mean or params.get("split", False)):
        name = "huber" if estimator is huber_mean else "pmwm (split=True)"
        raise ValueError(f"The {name} scree pairs the rows and needs at least 4 rows "
                         f"(2 pairs); X has n_samples={X.shape[0]}.")
    values = paired_values(X, components, rng)
    estimates, noise_scales = [], []
    for l in range(n_components):
        first_entry = len(ledger.entries)
        estimates.append(estimator(values[:, l], eps / n_components, delta / n_components,
                                   rng, noise=noise, ledger=ledger, step=f"{step}/PC{l + 1}",
                                   **params))
        noise_scales.append(_last_gaussian_scale(ledger.entries[first_entry:]))
    return np.array(estimates), np.array(noise_scales), None


def _last_gaussian_scale(entries):
    """Standard deviation of the last Gaussian noise among ledger ``entries``."""
    scales = [entry["noise_scale"] for entry in entries if "gaussian" in entry["mechanism"]]
    for entry in entries:
        scales += [part["noise_scale"] for part in entry.get("parts", ())
                   if "gaussian" in part.get("mechanism", "")]
    return scales[-1] if scales else 0.0


def private_variances(X, components, *, method, params, eps, delta, noise, rng, ledger,
                      step="scree"):
    """Release the variances of ``X`` along the rows of ``components``.

    Returns ``(raw, noise_scale, clip_bounds)``: the noisy variances before
    post-processing, the standard deviation of the Gaussian noise on each, and the
    released clip bounds (``None`` unless ``method="clipped"``).
    """
    if method == "clipped":
        return _clipped_variances(X, components, params, eps, delta, noise, rng, ledger, step)
    estimator = huber_mean if method == "huber" else pmwm_mean
    return _per_component_variances(estimator, X, components, params, eps, delta, noise,
                                    rng, ledger, step)


def explained_variance_ratio(variances):
    """PVE over the retained components; zeros (with a warning) if all are 0."""
    total = float(np.sum(variances))
    if total <= 0:
        warnings.warn("All private variances are 0; the PVE is set to 0.", UserWarning,
                      stacklevel=3)
        return np.zeros_like(variances)
    return variances / total


def post_process_variances(raw, monotone):
    """Clamp at 0 and, with ``monotone``, the non-increasing isotonic projection."""
    return monotone_scree(raw) if monotone else np.clip(raw, 0, None)


class _VarianceMixin:
    """Whitening and summary lines shared by DPScree and DPPCA."""

    def _projection_scale(self):
        if not self.whiten:
            return None
        # A zero private variance whitens to 0 instead of dividing by zero.
        variance = self.explained_variance_
        return np.where(variance > 0, np.sqrt(np.where(variance > 0, variance, 1.0)), np.inf)

    def _scree_lines(self):
        lines = [f"Scree method: {self.method_label_}"]
        for l, (variance, ratio) in enumerate(
            zip(self.explained_variance_, self.explained_variance_ratio_)
        ):
            lines.append(f"  PC{l + 1}: variance {variance:.4g}  PVE {100 * ratio:.1f}%")
        return lines


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
      ``C``. With ``clip="component"`` (the seeds' form) each component is clipped
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

    ``huber`` and ``pmwm`` split the budget evenly over components.

    Parameters
    ----------
    n_components : int, default=None
        Number of components; None keeps all available directions.
    eps : float, default=1.0
        Total privacy budget this fit spends, directions included.
    delta : float, default=1e-5
        Total privacy budget, in (0, 1).
    method : {"clipped", "huber", "pmwm"}, default="clipped"
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
    directions_share : float, default=0.5
        Share of ``eps`` and ``delta`` spent on directions when ``directions=None``.
    monotone : bool, default=True
        Post-process the variances to a non-increasing, non-negative sequence
        (isotonic regression; free).
    whiten : bool, default=False
        ``transform`` divides each projection by the square root of its private
        variance.
    noise : {"analytic", "classical"}, default="analytic"
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
        PVE over the retained components.
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
                 method_params=None, directions=None, directions_share=0.5, monotone=True,
                 whiten=False, noise="analytic", compute_nonprivate=False,
                 random_state=None, n_jobs=None):
        self.n_components = n_components
        self.eps = eps
        self.delta = delta
        self.method = method
        self.method_params = method_params
        self.directions = directions
        self.directions_share = directions_share
        self.monotone = monotone
        self.whiten = whiten
        self.noise = noise
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
        check_n_jobs(self.n_jobs)
        X = check_max_abs(validate_features(self, X, reset=True), "DPScree's variances")
        rng = check_generator(self.random_state)
        ledger = PrivacyLedger()
        directions, (scree_eps, scree_delta) = self._directions(X, eps, delta, rng, ledger)
        n_components = check_n_components(self.n_components, directions.shape[0])
        components = directions[:n_components]
        raw, noise_scale, bounds = private_variances(
            X, components, method=method, params=params, eps=scree_eps, delta=scree_delta,
            noise=self.noise, rng=rng, ledger=ledger,
        )
        self.n_samples_ = X.shape[0]
        self.n_components_ = n_components
        self.components_ = components
        self.method_label_ = method
        self.explained_variance_raw_ = raw
        self.explained_variance_ = post_process_variances(raw, self.monotone)
        self.explained_variance_ratio_ = explained_variance_ratio(self.explained_variance_)
        self.noise_scale_ = noise_scale
        self.clip_bounds_ = bounds
        self.nonprivate_ = (
            nonprivate_reference(X, components) if self.compute_nonprivate else None
        )
        self._set_privacy(ledger, eps, delta)
        return self

    def _directions(self, X, eps, delta, rng, ledger):
        """The directions to measure along, and the budget left for the scree."""
        directions = self.directions
        if directions is None:
            share = self.directions_share
            if isinstance(share, bool) or not isinstance(share, numbers.Real) or not 0 < share < 1:
                raise ValueError(f"directions_share must lie in (0, 1), got {share!r}.")
            released = private_kendall_directions(
                X, eps=eps * share, delta=delta * share, noise=self.noise,
                sensitivity="standard", pairs="all", duplicates="ignore",
                n_jobs=self.n_jobs, rng=rng, ledger=ledger, step="directions",
            )
            return released.eigenvectors.T, (eps * (1 - share), delta * (1 - share))
        if hasattr(directions, "fit") and hasattr(directions, "get_params"):
            return self._reused_directions(directions, X, eps, delta, ledger)
        return _public_directions(directions, X.shape[1]), (eps, delta)

    def _reused_directions(self, estimator, X, eps, delta, ledger):
        check_is_fitted(estimator, "components_")
        if estimator.n_features_in_ != X.shape[1]:
            raise ValueError(
                f"directions was fitted on {estimator.n_features_in_} features, "
                f"X has {X.shape[1]}."
            )
        ledger.extend(estimator.privacy_ledger_, prefix="directions")
        spent_eps, spent_delta = ledger.spent()
        if spent_eps >= eps or spent_delta >= delta:
            raise ValueError(
                f"directions already spent eps={spent_eps:g}, delta={spent_delta:g}; "
                f"eps and delta of DPScree are the total budget including the reused "
                f"directions (got eps={eps:g}, delta={delta:g}): raise them."
            )
        return estimator.components_, (eps - spent_eps, delta - spent_delta)

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
