"""The warning categories of the package.

:class:`PrivacyUtilityWarning`: a release whose noise may hide what it estimates.
:class:`PrivacyRiskWarning`: a setting that weakens the privacy guarantee.
"""

import numpy as np

from .._validation import above_noise, warn_user, printable


class PrivacyUtilityWarning(UserWarning):
    """A released number is probably dominated by its privacy noise.

    Raised (as a warning, never an error) when a released estimate does not
    stand two standard deviations of its noise above zero (it is then not
    estimable: NaN where the estimator releases it), or when a private
    quantile search probably stopped far from its level (the budget is too small
    for the number of rows). The release stays valid and private; only its
    accuracy is in doubt. Filter it like any warning, e.g.
    ``warnings.simplefilter("ignore", PrivacyUtilityWarning)``.

    See Also
    --------
    PrivacyRiskWarning : The warning about the guarantee rather than the accuracy.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_dppca import DPScree, PrivacyUtilityWarning
    >>> X = np.random.default_rng(0).normal(size=(3000, 3)) * [5.0, 0.1, 0.1]
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     scree = DPScree(eps=1.0, directions=np.eye(3), random_state=0).fit(X)
    >>> any(issubclass(w.category, PrivacyUtilityWarning) for w in caught)
    True
    """


def warn_noise_dominated(what, names, estimates, noise_scales):
    """One PrivacyUtilityWarning naming the items that are noise alone, by the
    rule that makes a release not estimable (:func:`above_noise`).

    Post-processing only: ``estimates`` are released values and ``names`` are
    public (component or column names), so the warning reveals nothing more.
    """
    _warn_named(what, names, ~above_noise(estimates, noise_scales),
                "is not two noise sds above zero: noise alone")


def warn_imprecise(what, names, estimates, noise_scales):
    """One PrivacyUtilityWarning naming the items that stand above their noise
    but less than four noise sds above zero (:func:`printable`): not
    estimable either (post-processing, public names)."""
    flagged = above_noise(estimates, noise_scales) & ~printable(estimates, noise_scales)
    _warn_named(what, names, flagged,
                "is only 2 to 4 noise sds above zero: too imprecise to print")


def _warn_named(what, names, flagged, why):
    """The warning of the ``flagged`` items among ``names``, if any."""
    if np.any(flagged):
        listed = ", ".join(str(name) for name, flag in zip(names, flagged) if flag)
        warn_user(
            f"The private {what} of {listed} {why}, not estimable. Increase eps (or "
            "this part of the budget), or use more rows.",
            PrivacyUtilityWarning,
        )


class PrivacyRiskWarning(UserWarning):
    """A setting that weakens the guarantee or spends the budget more than once.

    Raised (as a warning) when the privacy promised is weaker than it looks: a
    ``delta`` so large that a mechanism may publish a row outright, or a fit that
    spends its ``(eps, delta)`` again on the same data (refitting, cross-validation,
    grid search) with no :class:`~sklearn_dppca.privacy.PrivacyAccountant` keeping
    count. Turn it into an error where a weak setting must never pass:
    ``warnings.simplefilter("error", PrivacyRiskWarning)``.

    See Also
    --------
    PrivacyUtilityWarning : The warning about the accuracy of a release.
    PrivacyAccountant : Keeps count of the budget across fits.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn_dppca import DPKendallDirections, PrivacyRiskWarning
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     est = DPKendallDirections(delta=0.1, random_state=0).fit(X)
    >>> [w.category.__name__ for w in caught]
    ['PrivacyRiskWarning']
    """


def warn_risky_delta(delta, n_samples):
    """One PrivacyRiskWarning when ``delta >= 1 / n_samples``.

    With ``delta`` that large, a mechanism that publishes one of the ``n_samples``
    rows verbatim, picked at random, is ``(0, delta)``-DP: the guarantee no longer
    protects anyone in particular. ``delta`` and ``n_samples`` are public (under
    the fixed-size adjacency of these mechanisms the number of rows is), so the
    warning reveals nothing. Like every warning of the package, it points at
    the user's call (:func:`~sklearn_dppca._validation.warn_user`).

    Examples
    --------
    >>> import warnings
    >>> from sklearn_dppca.privacy import PrivacyRiskWarning
    >>> from sklearn_dppca.privacy._warnings import warn_risky_delta
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_risky_delta(1e-2, n_samples=500)
    >>> caught[0].category is PrivacyRiskWarning
    True
    """
    if delta >= 1 / n_samples:
        warn_user(
            f"delta={delta:g} is at least 1/n_samples = 1/{n_samples}: with delta this "
            "large, publishing one row picked at random would meet the guarantee. "
            "Choose delta much smaller than 1/n_samples.",
            PrivacyRiskWarning,
        )
