"""What the three private estimators share: projection, tags, ledger bookkeeping."""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._validation import (
    check_accountant,
    check_accounting,
    check_radial,
    validate_features,
)
from .privacy._accounting import BudgetPlan, BudgetTree
from .privacy._warnings import PrivacyRiskWarning, warn_risky_delta


class _PrivateProjection(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base class: ``transform`` projects on ``components_``.

    The projection is not mean-centred: no location of the data is released to
    centre it with. It is also not a differentially private release about the
    rows it is applied to; only the fitted attributes are.
    """

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
        X = validate_features(self, X, reset=False)
        # Divisors stay float64: a spread or a whitening sd below float32's range
        # must not round to 0 (an overflow is reported below instead).
        with np.errstate(over="ignore", invalid="ignore"):
            spreads = getattr(self, "scale_", None)
            if spreads is not None:
                X = (X / spreads).astype(X.dtype, copy=False)
            projection = X @ self.components_.T.astype(X.dtype, copy=False)
            scale = self._projection_scale()
            if scale is not None:
                projection = (projection / scale).astype(X.dtype, copy=False)
        if not np.all(np.isfinite(projection)):
            raise ValueError(
                f"The projection of X overflows {X.dtype}: X is too large to project "
                "(or to whiten by a tiny variance). Divide X by a constant, or pass "
                "float64 data."
            )
        return projection

    def __sklearn_clone__(self):
        # GridSearchCV, cross_val_score and friends fit clones of an estimator on
        # the same rows: each clone spends (eps, delta) again.
        if getattr(self, "accountant", None) is None:
            warnings.warn(
                f"Cloning {type(self).__name__} (cross-validation, grid search): every "
                "clone fitted on the same data spends its (eps, delta) again. Pass "
                "accountant=PrivacyAccountant(eps, delta) to cap the total.",
                PrivacyRiskWarning,
                stacklevel=2,
            )
        return super().__sklearn_clone__()

    def _radial_params(self):
        """``radial``, ``radius`` (a float when public) and ``radius_level``, checked."""
        radial, radius, level = check_radial(self.radial, self.radius, self.radius_level)
        return {"radial": radial, "radius": radius, "radius_level": level}

    def _plan_budget(self, parts, eps, delta, n_samples):
        """Allocate the budget tree ``parts`` to the grant, before any computation.

        Checks ``accounting``; warns when ``delta >= 1 / n`` and when the estimator
        is fitted again without an accountant; charges the accountant the planned
        spend (an upper bound: a skipped part only lowers it), which raises
        :class:`~sklearn_dppca.BudgetExceededError` if the rest of its budget is
        too small. Returns the :class:`~sklearn_dppca.privacy.BudgetPlan`.
        """
        accounting = check_accounting(self.accounting, self.noise)
        accountant = check_accountant(self.accountant)
        # (no parts: the fit releases nothing new, e.g. a scree read off reused
        # directions' matrix)
        plan = (BudgetTree(parts).allocate(eps, delta, accounting) if parts
                else BudgetPlan({}, accounting, None))
        warn_risky_delta(delta, n_samples, stacklevel=3)
        if accountant is not None:
            accountant.charge(plan.planned_spend(), label=type(self).__name__)
        elif hasattr(self, "privacy_spent_"):
            warnings.warn(
                f"{type(self).__name__} is fitted again: if it is the same data, the "
                "budget is spent twice. Pass accountant=PrivacyAccountant(eps, delta) "
                "to keep count.",
                PrivacyRiskWarning,
                stacklevel=3,
            )
        return plan

    def _set_privacy(self, ledger, eps, delta, plan=None):
        """Close the Gaussian block, store the ledger and the spend (within the grant)."""
        if plan is not None and plan.block is not None:
            ledger.close_gaussian_block(plan.block[0])
        try:
            self.privacy_spent_ = ledger.check_within(eps, delta)
        except RuntimeError:
            # A bug spent more than the grant: release nothing of this fit.
            for name in [n for n in vars(self) if n.endswith("_") and not n.startswith("_")]:
                delattr(self, name)
            raise
        self.privacy_ledger_ = ledger.to_list()

    def _feature_names(self):
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(name) for name in names]
        return [f"x{j}" for j in range(self.n_features_in_)]


def orient_components(eigenvectors):
    """Deterministic signs: each column's largest absolute entry is made positive."""
    rows = np.argmax(np.abs(eigenvectors), axis=0)
    signs = np.sign(eigenvectors[rows, np.arange(eigenvectors.shape[1])])
    signs[signs == 0] = 1.0
    return eigenvectors * signs
