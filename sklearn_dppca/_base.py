"""What the three private estimators share: projection, tags, ledger bookkeeping,
the releases of the spreads and the directions, the summary."""

import collections
import functools
import threading

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._algorithms._directions import release_directions
from ._algorithms._plan import OPTIONAL_PARTS, bought_parts, first_pass_requests, \
    directions_informative, in_release_order, plan_frame, plan_table, share_needed, \
    with_splits
from ._algorithms._loading_noise import loading_noise_scale
from ._algorithms._projection import back_project, project, scale_origins, \
    whitening_scale
from ._algorithms._scree import (
    feature_variances,
    release_scree,
    release_total_bound,
    total_bound_first,
    reordered_scree,
    scree_in_scale,
    scree_values,
    variance_order,
)
from ._algorithms._spread import scale_columns
from ._algorithms._scree_settings import check_method_params, scree_gaussian_calls
from ._bunch import Bunch
from ._data._input import (
    ROW_BLOCKS,
    back_transformed,
    check_blockwise_fit,
    fit_input,
    transformed,
)
from ._names import default_feature_names, feature_names
from ._data._rows import block_sizes
from ._pair_design import design_pairs
from ._summary import summarize
from ._validation import (
    BOUNDS,
    N_JOBS,
    POSITIVE,
    RANDOM_STATE,
    UNIT_OPEN,
    Boolean,
    Instance,
    Interval,
    Options,
    check_bounds,
    check_generator,
    check_param,
    validate_params,
    warn_user,
)
from ._version import DOCS_URL
from .privacy._accountant import PrivacyAccountant
from .privacy._budget import PrivacyLedger
from .privacy._accounting import ACCOUNTING_METHODS, BudgetPlan, BudgetTree
from .privacy._calibration import NOISE_METHODS, _classical_noise_scale
from .privacy._warnings import PrivacyRiskWarning, warn_risky_delta

#: Frobenius sensitivity rules of the Kendall matrix (see
#: :func:`~sklearn_dppca._algorithms._directions._kendall_sensitivity`).
_SENSITIVITY_RULES = ("standard", "tight")
#: The pair terms of the directions' matrix (see DPKendallDirections).
RADIAL_FUNCTIONS = ("spherical", "clipped", "covariance")


def _buys(trial, part, split):
    """Whether the plan of the top-level ``split`` (``trial`` of its items:
    the plan, or None where its settings are refused) buys ``part``."""
    spec = trial(tuple(split.items()))
    return spec is not None and part in spec.kept


def _keeps(trial, now, split):
    """Whether the plan of the top-level ``split`` still buys what the fit
    buys now (``now``: its optional parts, and whether its directions are
    informative): a split named to buy one part must not take another, nor
    leave the directions to noise (wine's shape at eps 4 bought its score
    summary with 0.95 of the grant, its scree lost and its directions at
    0.02)."""
    spec = trial(tuple(split.items()))
    parts, informative = now
    return spec is not None and all(part in spec.kept for part in parts) and (
        not informative or directions_informative(spec.plan, spec.settings))


class _PrivateProjection(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base class: ``transform`` projects on ``components_``.

    The projection is not mean-centred: no location of the data is released to
    centre it with. It is also not a differentially private release about the
    rows it is applied to; only the fitted attributes are.
    """

    #: Constraints of the hyperparameters every private estimator has.
    _common_constraints = {
        "eps": [POSITIVE],
        "delta": [UNIT_OPEN],
        "noise": [Options(*NOISE_METHODS)],
        "sensitivity": [Options(*_SENSITIVITY_RULES)],
        "accounting": [Options(*ACCOUNTING_METHODS)],
        "accountant": [None, Instance(PrivacyAccountant, "a PrivacyAccountant")],
        "radial": [Options(*RADIAL_FUNCTIONS)],
        "radius": ["auto", POSITIVE],
        "radius_level": ["auto", UNIT_OPEN],
        "scale": [Boolean()],
        "compute_nonprivate": [Boolean()],
        "random_state": RANDOM_STATE,
        "n_jobs": N_JOBS,
        "row_blocks": ROW_BLOCKS,
        "bounds": BOUNDS,
    }

    # scikit-learn's hook for the "?" link of the HTML repr (its developers'
    # guide, "Developing scikit-learn estimators"): our module and our API pages
    _doc_link_module = "sklearn_dppca"
    _doc_link_template = DOCS_URL + "generated/sklearn_dppca.{estimator_name}.html"

    @property
    def _n_features_out(self):
        return self.n_components_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _projection_scale(self):
        """Per-component divisor of the projection (1 unless whitening)."""
        return None

    def transform(self, X):
        """Project ``X`` on the private directions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to project, with the columns of the fit. Their projection is
            not a private release.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            ``X @ components_.T`` (``(X / scale_) @ components_.T`` when the
            estimator was fitted with ``scale=True``), in the dtype of ``X``
            (float32 stays float32).
            Not centred: subtract a private centre (for example
            ``DPPCA.frame_.center``) if you need one.
        """
        check_is_fitted(self)
        return transformed(self, X, project, self.components_,
                           getattr(self, "scale_", None), self._projection_scale())

    def inverse_transform(self, X):
        """Map projections back to the feature space, on the private directions.

        The back-projection onto the span of ``components_``: the rows of
        ``transform(X)`` come back as the orthogonal projection of ``X`` on that
        span. Like ``transform``, nothing is centred: no mean is released, so no
        mean is added back.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Projections, as ``transform`` returns them (whitened if the
            estimator whitens).

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``X @ components_`` (``X`` first multiplied by the square
            root of each private variance when whitening, the result multiplied
            by ``scale_`` when fitted with ``scale=True``), in the dtype of
            ``X`` (float32 stays float32).
        """
        check_is_fitted(self)
        return back_transformed(self, X, back_project, self.components_,
                                getattr(self, "scale_", None), self._projection_scale())

    def __sklearn_clone__(self):
        # GridSearchCV, cross_val_score and friends fit clones of an estimator on
        # the same rows: each clone spends (eps, delta) again.
        if getattr(self, "accountant", None) is None:
            warn_user(
                f"Cloning {type(self).__name__} (cross-validation, grid search): every "
                "clone fitted on the same data spends its (eps, delta) again. Pass "
                "accountant=PrivacyAccountant(eps, delta) to cap the total.",
                PrivacyRiskWarning,
            )
        return super().__sklearn_clone__()

    # -- the fit sequence, written once for every estimator ------------------------
    #
    # validate the hyperparameters; read the rows (the data contract); every
    # refusal the public inputs decide and the plan (:meth:`_public_plan`, which
    # :meth:`plan` runs alone); the first pass; the charge; the estimator's own
    # releases (:meth:`_release`); the ledger closed. An estimator supplies its
    # spec (:meth:`_spec`), its releases and, if it reads ``y``, its targets.

    def _fit_sequence(self, X, y=None):
        """Fit on ``X`` (and ``y``): the one sequence of every estimator."""
        params = self._validated_params()
        rng = check_generator(self.random_state)
        progress = self._pass_progress(params)
        rows = fit_input(self, X, params["row_blocks"], rng, n_jobs=params["n_jobs"],
                         progress=progress.blocks)
        # the data contract, one for every estimator: finite values within the
        # data domain (spreads, radii and variances are squares of the data's scale)
        rows = self._bounded_rows(rows, params).check_max_abs(
            f"{type(self).__name__}'s statistics")
        ledger = PrivacyLedger()
        spec = self._public_plan(params, rows.shape[0], rows.shape[1],
                                 self._feature_names(), rows.sizes, ledger)
        # (the plan with the split that would buy each part it does not, which
        # the summary names beside the eps: public, as the plan is, and made
        # before the charge, after which nothing may fail)
        plan_rows = self._with_splits(params, spec, *rows.shape, self._feature_names(),
                                      rows.sizes)
        targets = self._targets(params, y, rows)
        rows.plan_passes(first_pass_requests(spec.plan, params["radial"],
                                             self._total_first(spec, params),
                                             divided=params.get("scale", False)),
                         pairs=spec.pairs, progress=progress.pairs)
        self._charge(spec.plan, params, rows.shape[0])
        self._plan_rows, self._kept_parts = plan_rows, spec.kept
        self._release(rows, spec, params, rng, ledger, targets)
        self.pairs_ = spec.pairs
        self._set_privacy(ledger, params, spec.plan)
        return self

    def _total_first(self, spec, params):
        """Whether the fit releases its scree's total clip bound before the
        directions' pass (:func:`~._algorithms._scree.total_bound_first`): no
        scree here."""
        return False

    def _pass_progress(self, params):
        """Progress reporters of the passes: ``blocks`` (per block of a pass) and
        ``pairs`` (the pair kernel's); None each, unless an estimator reports."""
        return Bunch(blocks=None, pairs=None)

    def _targets(self, params, y, rows):
        """What the fit reads of ``y`` (its documented contract), checked before
        the charge; None for an estimator that ignores ``y``."""
        return None

    def _public_plan(self, params, n_samples, n_features, names, sizes, ledger,
                     table=True):
        """Every refusal the public inputs decide, then the plan: a fit on
        ``n_samples`` x ``n_features`` (column ``names``, row blocks ``sizes``)
        raises here exactly when :meth:`plan` raises, and nothing it refuses is
        charged. ``ledger`` takes the ledger of reused directions. What the
        blocks decide is settled here (:func:`_settle_blocks`): the estimator's
        spec sees no block sizes.

        Returns the estimator's spec (:meth:`_spec`) with ``plan`` (the
        :class:`~sklearn_dppca.privacy.BudgetPlan` of the parts bought), ``rows``
        (the plan's rows; None without ``table``, for a caller that reads only
        what is bought) and ``kept`` (the budget tree run).
        """
        _settle_blocks(params, sizes)
        _check_covariance_radial(params)
        check_bounds(params["bounds"], n_features, names)
        if params["accounting"] == "gdp" and params["noise"] == "classical":
            # Under "gdp" each Gaussian part's sd is sensitivity / mu_i from the
            # composed block: a per-part calibration has nothing to calibrate.
            raise ValueError("noise='classical' calibrates each Gaussian part alone; "
                             "it needs accounting='basic' (accounting='gdp' composes "
                             "them exactly).")
        spec = self._spec(params, n_samples, n_features, names, ledger)
        spec.plan, spec.rows, spec.kept = self._bought(spec.parts, spec.grant,
                                                       spec.settings, table=table)
        if table:
            spec.rows = in_release_order(spec.rows, self._total_first(spec, params))
        _check_leaves(spec.plan)
        if params["noise"] == "classical":
            _check_classical(
                (leaf.eps, leaf.delta) for leaf in spec.plan.allocations.values()
                if leaf.kind == "gaussian" and leaf.mu is None)
        if spec.get("check") is not None:
            spec.check(spec.plan)
        return spec

    def _charge(self, plan, params, n_samples):
        """Warn when ``delta >= 1 / n`` and when the estimator is fitted again
        without an accountant; charge the accountant the planned spend (an upper
        bound: a skipped part only lowers it), which raises
        :class:`~sklearn_dppca.BudgetExceededError` if the rest of its budget is
        too small. Nothing after the charge may raise on public settings."""
        warn_risky_delta(params["delta"], n_samples)
        if params["accountant"] is not None:
            params["accountant"].charge(plan.planned_spend(), label=type(self).__name__)
        elif hasattr(self, "privacy_spent_"):
            warn_user(
                f"{type(self).__name__} is fitted again: if it is the same data, the "
                "budget is spent twice. Pass accountant=PrivacyAccountant(eps, delta) "
                "to keep count.",
                PrivacyRiskWarning,
            )

    def plan(self, n_samples, n_features, *, splits=False):
        """What a fit on ``n_samples`` rows and ``n_features`` columns would buy.

        Decided from public inputs only (``n``, ``p``, the budget and the
        settings), before any data are read: one row per mechanism step of the
        fit's budget. A step whose release would not be informative at its
        budget (a quantile search that would stop below the data, a statistic
        whose noise would exceed its public scale) makes its part (the spreads,
        the scree or the score summary) unbought: that part is not run, and its
        budget goes to the parts that are. ``fit`` follows the plan exactly: its
        ledger holds the released steps, in this order (the score histogram is
        skipped, unspent, when the released frame cannot hold it).

        The plan runs the fit's own checks: it raises exactly when a fit on data
        of this shape would refuse the settings before spending anything (the
        data's own contract aside: its values, its column names against a dict
        of ``bounds``, the labels ``y``).

        Parameters
        ----------
        n_samples : int
            The number of rows of the data the fit would read (public).
        n_features : int
            The number of columns (public).
        splits : bool, default=False
            Also say, for each optional part the plan does not buy (the
            spreads, the scree, the score summary; not a part held back for
            declared bounds), the top-level split that would buy it at this
            eps, the other parts scaled down in proportion: what a custodian
            who cannot raise eps can do instead, at the other parts' cost.
            A split is named only where it keeps what the fit buys: its other
            parts, and directions the plan's rule finds informative. Each try
            is a plan of its own, so this takes longer.

        Returns
        -------
        pandas.DataFrame
            One row per step: ``step`` (the ledger's name), ``mechanism``,
            ``eps``, ``delta``, ``mu`` (GDP parts; NaN otherwise), ``noise_sd``
            (the predicted noise sd relative to the quantity's public scale,
            NaN where there is none), ``data_noise_sd`` (with declared
            ``bounds``: a box moment's noise sd in the data's own units,
            squared for a variance, from the box at its largest; NaN
            elsewhere), ``released`` (run by the fit) and
            ``eps_needed`` (the total ``eps`` at which the step would become
            informative, the split kept; NaN when it is, inf beyond ``1e6``).
            With ``splits``, also ``share_needed`` (the part's share of
            ``budget_split`` at which the same fit would buy it at this eps,
            on a grid of 0.01; NaN for a step that is run or held back, inf
            where not even 0.95 of the split's total would, or where that
            split would lose another part or leave the directions to noise) and
            ``split_needed`` (that split as ``--budget-split`` spells it,
            ``"loading=0.29,scree=0.42,score=0.29"``, the other parts rounded
            down; empty where there is none).

        Raises
        ------
        ValueError, TypeError
            Where ``fit`` on ``n_samples`` x ``n_features`` would refuse these
            settings before its charge.

        Examples
        --------
        >>> from sklearn_dppca import DPPCA
        >>> plan = DPPCA(eps=1.0).plan(150, 4)
        >>> bool(plan.loc[plan.step == "loading", "released"].item())
        True
        >>> bool(plan.loc[plan.step.str.startswith("scree"), "released"].any())
        False

        Where eps cannot grow, the split can: the share that buys the scree
        of 300 rows x 6 columns at this eps, the others scaled down.

        >>> plan = DPPCA(eps=1.0).plan(300, 6, splits=True)
        >>> plan.loc[plan.step == "scree/variances/statistic", "split_needed"].item()
        'loading=0.29,scree=0.42,score=0.29'
        """
        params = self._validated_params()
        n_samples = check_param(n_samples, [Interval("int", 2, None)], "n_samples")
        n_features = check_param(n_features, [Interval("int", 1, None)], "n_features")
        bounds = params["bounds"]
        # a dict of bounds names the columns: its names stand in for the data's
        # (they are matched against X's own at fit)
        names = [str(name) for name in bounds] if isinstance(bounds, dict) \
            and len(bounds) == n_features else default_feature_names(n_features)
        sizes = block_sizes(n_samples, params["row_blocks"])
        spec = self._public_plan(params, n_samples, n_features, names, sizes,
                                 PrivacyLedger())
        return plan_frame(self._with_splits(params, spec, n_samples, n_features,
                                            names, sizes) if splits else spec.rows)

    def _with_splits(self, params, spec, n_samples, n_features, names, sizes):
        """The rows of the plan ``spec`` with the split that would buy each part
        it does not (:func:`~sklearn_dppca._algorithms._plan.with_splits`)."""
        return with_splits(spec.rows, params.get("split"), self._shares_needed(
            params, spec, n_samples, n_features, names, sizes))

    def _shares_needed(self, params, spec, n_samples, n_features, names, sizes):
        """Per optional part of the top-level split that the plan ``spec`` does
        not buy (nor holds back for declared bounds), the share of the grant at
        which it would be bought at the same eps
        (:func:`~sklearn_dppca._algorithms._plan.share_needed`; public: the
        plan of the same fit with that split). Empty for estimators without a
        split."""
        split = params.get("split")
        if not split:
            return {}
        held = spec.get("settings", {}).get("held back", {})
        # (each split tried is planned once: the least share's is asked again
        # whether it keeps what the fit buys now)
        trial = functools.lru_cache(maxsize=None)(functools.partial(
            self._trial_plan, (n_samples, n_features, names, sizes)))
        now = (frozenset(part for part in OPTIONAL_PARTS if part in spec.kept),
               directions_informative(spec.plan, spec.settings))
        needed = {}
        for part in OPTIONAL_PARTS:
            if split.get(part, 0.0) > 0 and part in spec.parts \
                    and part not in spec.kept and part not in held:
                needed[part] = share_needed(
                    split, part, functools.partial(_buys, trial, part),
                    functools.partial(_keeps, trial, now))
        return needed

    def _trial_plan(self, shape, split_items):
        """The plan of this fit with the top-level split ``split_items`` (its
        ``(part, share)`` pairs) on ``shape`` (rows, columns, names, blocks),
        without its rows; None where those settings would be refused."""
        trial = self._validated_params()
        trial["split"] = dict(split_items)
        try:
            return self._public_plan(trial, *shape, PrivacyLedger(), table=False)
        except (ValueError, TypeError):
            return None

    def _validated_params(self):
        return validate_params(self)

    def _bought(self, parts, params, settings, table=True, part=None):
        """The plan of the parts a fit can buy (the others' budget goes to them),
        the plan's rows (:func:`~sklearn_dppca._algorithms._plan.plan_table`,
        of ``part``'s steps only where given; None without ``table``: each
        step it does not buy searches its eps) and the budget tree of the parts
        kept."""
        allocate = _allocator(params)
        _check_leaves(allocate(parts))     # before any calibration divides by them
        kept, _ = bought_parts(parts, allocate, settings)
        plan = allocate(kept)
        rows = plan_table(allocate(parts), plan, lambda eps: allocate(parts, eps),
                          settings, params["eps"], part) if table else None
        return plan, rows, kept

    def _scree_choice(self, variants, planned, grant):
        """``planned(v)`` (``(resolved params, plan settings, budget tree)``) of the
        first scree settings of ``variants`` whose plan at ``grant`` runs the
        scree, or of the last (the fewest searches) when none does, so that the
        plan's ``eps_needed`` reads the cheapest (public: no data;
        :func:`~sklearn_dppca._algorithms._scree_settings.scree_variants`)."""
        allocate = _allocator(grant)
        for variant in variants:
            chosen = planned(variant)
            _, settings, parts = chosen
            _check_leaves(allocate(parts))
            if "scree" in bought_parts(parts, allocate, settings)[0]:
                return chosen
        return chosen

    def _bounded_rows(self, X, params):
        """The rows clipped to the declared ``bounds`` (a view; the rows as they
        are without bounds), checked against the columns before any charge.

        ``bounds`` are public: a dict needs the column names of a DataFrame
        (:func:`~sklearn_dppca._validation.check_bounds`). Values outside a
        range are clipped to it, without error or warning (nothing here depends
        on the data).
        """
        box = check_bounds(params["bounds"], X.shape[1],
                           getattr(self, "feature_names_in_", None))
        return X if box is None else X.clipped(*box)

    def _set_privacy(self, ledger, params, plan=None):
        """Close the Gaussian block, store the ledger and the spend (within the grant)."""
        if plan is not None and plan.block is not None:
            ledger.close_gaussian_block(plan.block[0], plan.block[1])
        try:
            self.privacy_spent_ = ledger.check_within(params["eps"], params["delta"])
        except RuntimeError:
            # A bug spent more than the grant: release nothing of this fit.
            for name in [n for n in vars(self) if n.endswith("_") and not n.startswith("_")]:
                delattr(self, name)
            raise
        self.privacy_ledger_ = ledger.to_list()
        self.plan_ = plan_frame(self._plan_rows)
        # the noise sd of each loading: post-processing of the released matrix
        self.components_noise_scale_ = loading_noise_scale(
            getattr(self, "kendall_matrix_", None),
            getattr(self, "kendall_noise_scale_", None), self.components_)

    def _feature_names(self):
        return feature_names(self)

    def _scale_columns(self, X, plan, params, rng, ledger):
        """The spread step of ``scale=True``, after the charge: sets ``scale_`` and
        ``scale_origin_`` (None each without ``scale``) and returns the rows the
        fit reads. Each column is divided by its private spread, released with
        the plan's ``"scale"`` part where the plan bought it, else by its box's
        public unit (declared bounds), else by nothing (a covariance PCA for that
        column; every summary and picture says so; see
        :func:`~sklearn_dppca._algorithms._spread.scale_columns`)."""
        self.scale_ = self.scale_origin_ = None
        if not params["scale"]:
            return X
        budget = plan.part("scale") if "scale" in plan else None
        scaled = scale_columns(X, budget, noise=params["noise"], rng=rng, ledger=ledger,
                               feature_names=self._feature_names())
        self.scale_, self.scale_origin_ = scaled.scale, scaled.origin
        return scaled.X

    def _release_directions(self, X, budget, params, rng, ledger, *, pairs,
                            progress=None):
        """Release the private directions of ``X`` with ``budget``, under the
        hyperparameters ``params`` (see
        :func:`~sklearn_dppca._algorithms._directions.release_directions`)."""
        return release_directions(
            X, radial=params["radial"], radius=params["radius"],
            radius_level=params["radius_level"], budget=budget, noise=params["noise"],
            sensitivity=params["sensitivity"], pairs=pairs, rng=rng, ledger=ledger,
            progress=progress,
        )

    def summary(self):
        """Summarise the fit: data size, budget by part and what was released.

        What was released depends on the estimator: the directions, the private
        variances and PVE, the score frame and histogram.

        Returns
        -------
        FitSummary
            ``str()`` of it is the plain-text summary; it renders as HTML in Jupyter.
        """
        check_is_fitted(self)
        return summarize(self)


def _settle_blocks(params, sizes):
    """Settle in ``params`` what the public row blocks ``sizes`` decide, before an
    estimator's spec (which sees no block sizes): a scree's params merged with
    their defaults, the pair design (``pairs="auto"`` resolved: DPPCA's scree
    pairs rows as its directions do unless its own params say otherwise, and
    DPScree's directions as its scree does) and the scree's params resolved for
    blocks; refuses what a fit in blocks cannot compute
    (:func:`~sklearn_dppca._data._input.check_blockwise_fit`)."""
    method = params.get("scree_method")
    scree_params = None
    if method is not None:
        scree_params = check_method_params(method, params["scree_params"])
        given = params["scree_params"] or {}
        if "pairs" in params and method == "clipped" and "pairs" not in given:
            scree_params["pairs"] = params["pairs"]
        if "pairs" in scree_params:
            scree_params["pairs"] = design_pairs(scree_params["pairs"], sizes,
                                                 params["eps"])
    pairs = design_pairs(params["pairs"] if "pairs" in params else
                         (scree_params or {}).get("pairs", "auto"), sizes, params["eps"])
    scree_params = check_blockwise_fit(
        sizes, pairs=pairs, compute_nonprivate=params["compute_nonprivate"],
        scree_method=method, scree_params=scree_params)
    params["pairs"] = pairs
    # (the release order follows the default's design, whatever pairs says:
    # total_bound_first)
    params["partner_design"] = design_pairs("auto", sizes, params["eps"]) != "all"
    if method is not None:
        params["scree_params"] = scree_params


def _check_covariance_radial(params):
    """``radial="covariance"`` needs declared ``bounds`` (the box bounds every
    row's distance from its private mean): a ValueError naming ``radial``
    otherwise, before any charge."""
    if params["radial"] == "covariance" and params["bounds"] is None:
        raise ValueError("radial='covariance' reads the covariance about the declared "
                         "box's private mean: it needs bounds (one public (low, high) "
                         "range per column).")


class _VarianceMixin:
    """Stores the scree of a fit and whitens with it (DPScree and DPPCA)."""

    def _total_first(self, spec, params):
        """Whether the scree's total clip bound is released before the
        directions' pass, so that the total rides on it
        (:func:`~sklearn_dppca._algorithms._scree.total_bound_first`; the
        spec's ``scree_params``, and whether the default design at the fit's
        blocks is one of partners)."""
        return total_bound_first(params["scree_method"], spec.scree_params, spec.plan,
                                 params["partner_design"])

    def _total_bound_first(self, X, spec, params, rng, ledger):
        """The scree's total clip bound released now, before the directions'
        pass, where :meth:`_total_first` says so
        (:func:`~sklearn_dppca._algorithms._scree.release_total_bound`); else None."""
        if not self._total_first(spec, params):
            return None
        return release_total_bound(X, method=params["scree_method"],
                                   params=spec.scree_params,
                                   budget=spec.plan.part("scree"), pairs=spec.pairs,
                                   rng=rng, ledger=ledger)

    def _fit_scree(self, X, *, method, params, budget, noise, pairs, monotone, rng,
                   ledger, kendall=None, total_bound=None):
        """Release the scree along ``components_`` and store it (see
        :func:`~sklearn_dppca._algorithms._scree.release_scree`)."""
        released = None
        if budget is not None or method == "matrix":    # (else the plan did not buy it)
            released = release_scree(X, self.components_, method=method, params=params,
                                     budget=budget, noise=noise, pairs=pairs, rng=rng,
                                     ledger=ledger, kendall=kendall,
                                     total_bound=total_bound)
        released = scree_in_scale(released, self.components_.shape[0],
                                  self._columns_in_own_units(), self._feature_names())
        order = variance_order(released, monotone, bounded=X.widths() is not None)
        if order is not None:     # (post-processing: the directions' order is not theirs)
            released = reordered_scree(released, order)
            self.components_ = self.components_[order]
        values = scree_values(released, monotone)
        self.explained_variance_raw_ = released.raw
        self.explained_variance_ = values.explained_variance
        self.explained_variance_ratio_ = values.explained_variance_ratio
        self.explained_variance_ratio_noise_scale_ = \
            values.explained_variance_ratio_noise_scale
        self.total_variance_ = values.total_variance
        self.total_variance_noise_scale_ = released.total_noise
        self.noise_scale_ = released.noise_scale
        self.clip_bounds_ = released.bounds
        self._set_feature_variances()

    def _columns_in_own_units(self):
        """Per column, whether a ``scale=True`` fit left it in its own units (None
        without ``scale``)."""
        origin = scale_origins(getattr(self, "scale_", None),
                               getattr(self, "scale_origin_", None))
        return None if origin is None else origin == "none"

    def _set_feature_variances(self):
        """The column variances the stored scree and total imply (post-processing)."""
        self.feature_variance_, self.feature_variance_noise_scale_ = feature_variances(
            self.components_, self.explained_variance_, self.noise_scale_,
            self.total_variance_, self.total_variance_noise_scale_, self._feature_names())

    def _keep_for_ratio(self, threshold, minimum=1):
        """Keep the fewest leading components whose cumulative private PVE
        (``explained_variance_ratio_`` of the released scree) reaches
        ``threshold``, and at least ``minimum``; returns their number.

        Post-processing of released values only: the scree of every available
        component is released (and paid for) first, then truncated here.
        """
        k = max(_components_for_ratio(self.explained_variance_ratio_, threshold), minimum)
        k = min(k, self.n_components_)
        per_component = self.n_components_
        for name in ("components_", "explained_variance_", "explained_variance_raw_",
                     "explained_variance_ratio_", "explained_variance_ratio_noise_scale_",
                     "noise_scale_"):
            setattr(self, name, getattr(self, name)[:k].copy())
        bounds = self.clip_bounds_
        if bounds is not None and np.ndim(bounds) == 1 and len(bounds) == per_component:
            self.clip_bounds_ = bounds[:k].copy()   # one bound per component
        self.n_components_ = k
        self._set_feature_variances()
        return k

    def _projection_scale(self):
        if not self.whiten:
            return None
        return whitening_scale(self.explained_variance_)


#: The smallest budget a leaf may get (eps, delta, or mu): the smallest normal
#: float times 2**20 (about 2.3e-302). The mechanisms divide by it and split it
#: further (a column's search, a gradient step); at subnormal floats the
#: calibrations divide by zero, after the charge.
_SMALLEST_LEAF = float(np.finfo(float).tiny) * 2.0**20


def _allocator(params):
    """``allocate(tree, eps=params["eps"])``: the BudgetPlan of a budget tree at a
    grant, with ``params``' delta and accounting (:func:`_allocated`)."""
    accounting, delta = params["accounting"], params["delta"]

    def allocate(tree, eps=params["eps"]):
        if not tree:
            return BudgetPlan({}, accounting, None)
        return _allocated(tree, eps, delta, accounting)

    return allocate


#: BudgetPlans already made, by tree (its repr), grant and accounting; the
#: oldest dropped past :data:`_KEPT_PLANS`.
_PLANS = collections.OrderedDict()
_PLANS_LOCK = threading.Lock()
_KEPT_PLANS = 256


def _allocated(tree, eps, delta, accounting):
    """The BudgetPlan of the budget ``tree`` at a grant, each made once.

    The exact accounting costs about a quarter of a millisecond, and a fit asks
    for the same tree at the same grant half a dozen times (the plan, the
    scree's choice, the spend), as do the fits of a search over other settings.
    A BudgetPlan is never changed once made (its allocations are frozen), so
    one serves them all. The key is the tree's repr (its shares, which round
    trip, and kinds: public) with the grant as given."""
    key = (repr(tree), repr(eps), repr(delta), accounting)
    with _PLANS_LOCK:         # (fits in threads share the cache)
        plan = _PLANS.get(key)
        if plan is not None:
            _PLANS.move_to_end(key)
            return plan
    plan = BudgetTree(tree).allocate(eps, delta, accounting)
    with _PLANS_LOCK:
        _PLANS[key] = plan
        while len(_PLANS) > _KEPT_PLANS:
            _PLANS.popitem(last=False)
    return plan


def _check_leaves(plan):
    """Refuse a grant whose leaves underflow (public: the grant and the shares),
    before the charge: each leaf's eps (and its delta, where it spends one, or
    its mu) must be at least :data:`_SMALLEST_LEAF`."""
    for leaf in plan.allocations.values():
        amounts = [leaf.mu] if leaf.mu is not None else [leaf.eps] + (
            [leaf.delta] if leaf.kind != "pure" else [])
        if min(amounts) < _SMALLEST_LEAF:
            raise ValueError(
                f"eps or delta is too small: the part {leaf.path!r} of the budget "
                f"gets less than {_SMALLEST_LEAF:.2g}, which its mechanism cannot "
                "calibrate. Raise eps and delta.")


def _check_classical(budgets):
    """Refuse ``noise="classical"`` where its formula does not give the claimed
    ``(eps, delta)`` (past eps of about 7 to 10), for each Gaussian calibration's
    budget: public numbers, so before the charge, not in the mechanism after it."""
    # (its refusal only: the sd it returns scales with the sensitivity, the
    # refusal does not; the mechanisms calibrate, through _gaussian_scale)
    for eps, delta in budgets:
        _classical_noise_scale(1.0, eps, delta)


def scree_classical_check(method, params, n_samples):
    """A :meth:`_PrivateProjection._plan_budget` check of the huber and pmwm
    scree's own Gaussian calibrations (they split their leaves themselves,
    :func:`~sklearn_dppca._algorithms._scree_settings.scree_gaussian_calls`) under
    ``noise="classical"``."""
    def check(plan):
        _check_classical(
            budget for path, leaf in plan.allocations.items()
            if path.startswith("scree/variances/")
            for budget in scree_gaussian_calls(method, params, leaf, n_samples))
    return check


def ratio_threshold(n_components):
    """The PVE to reach when a validated ``n_components`` is a float in (0, 1),
    else None (an int or None is a number of components)."""
    return n_components if isinstance(n_components, float) else None


def _components_for_ratio(ratio, threshold):
    """The smallest k whose cumulative ``ratio[:k]`` reaches ``threshold`` (all of
    them when it never does: the private ratios may sum below 1)."""
    reached = np.flatnonzero(np.cumsum(ratio) >= threshold)
    return int(reached[0]) + 1 if reached.size else len(ratio)
