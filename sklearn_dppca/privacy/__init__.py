"""Differential-privacy building blocks: calibration, mechanisms, quantiles,
histograms, mean estimators, budgets, the ledger and the accountant.

Every mechanism here states its sensitivity under fixed-size replacement adjacency
(two data sets of the same size that differ in one row), draws only from the
``numpy.random.Generator`` it is given, and records its spend in a
:class:`PrivacyLedger` when handed one. Of the rest of :mod:`sklearn_dppca` this
package imports only the leaf module of argument checks, ``sklearn_dppca._validation``.
"""

from ._accountant import BudgetExceededError, PrivacyAccountant
from ._accounting import BudgetTree, Spend, gdp_delta, gdp_mu
from ._audit import clopper_pearson, empirical_eps_lower_bound
from ._audit import noise_log_likelihood_ratio, tail_audit
from ._audit import gdp_tradeoff_audit
from ._budget import PrivacyBudget, PrivacyLedger
from ._calibration import (
    check_delta,
    check_eps,
    gaussian_delta,
    gaussian_noise_scale,
    laplace_noise_scale,
)
from ._histograms import (
    additive_histogram,
    additive_histogram_noise_scale,
    dyadic_argmax,
    grid_cell_index,
    histogram_counts,
    normalise_histogram,
    sparse_histogram,
)
from ._means import clipped_pair_mean, huber_mean, monotone_scree, pmwm_mean
from ._mechanisms import (
    gaussian_mechanism,
    laplace_mechanism,
    symmetric_gaussian_noise,
    symmetric_matrix_gaussian,
)
from ._risk import membership_risk
from ._seal import SealError
from ._quantiles import interval_quantile, positive_quantile, quantile, upper_quantile
from ._warnings import PrivacyRiskWarning, PrivacyUtilityWarning

__all__ = [
    "BudgetExceededError",
    "BudgetTree",
    "PrivacyAccountant",
    "PrivacyBudget",
    "PrivacyLedger",
    "PrivacyRiskWarning",
    "PrivacyUtilityWarning",
    "SealError",
    "Spend",
    "additive_histogram",
    "check_delta",
    "check_eps",
    "clipped_pair_mean",
    "clopper_pearson",
    "dyadic_argmax",
    "empirical_eps_lower_bound",
    "gaussian_delta",
    "gaussian_mechanism",
    "gaussian_noise_scale",
    "gdp_delta",
    "gdp_mu",
    "grid_cell_index",
    "histogram_counts",
    "huber_mean",
    "interval_quantile",
    "laplace_mechanism",
    "laplace_noise_scale",
    "membership_risk",
    "monotone_scree",
    "normalise_histogram",
    "pmwm_mean",
    "positive_quantile",
    "quantile",
    "sparse_histogram",
    "symmetric_gaussian_noise",
    "symmetric_matrix_gaussian",
    "upper_quantile",
    "noise_log_likelihood_ratio",
    "tail_audit",
    "additive_histogram_noise_scale",
    "gdp_tradeoff_audit",
]
