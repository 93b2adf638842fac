"""The warning category of releases whose noise may hide what they estimate."""

import warnings

import numpy as np



class PrivacyUtilityWarning(UserWarning):
    """A released number is probably dominated by its privacy noise.

    Raised (as a warning, never an error) when the standard deviation of the
    noise on a released estimate exceeds the estimate itself, or when a private
    quantile search probably stopped far from its level (the budget is too small
    for the number of rows). The release stays valid and private; only its
    accuracy is in doubt. Filter it like any warning, e.g.
    ``warnings.simplefilter("ignore", PrivacyUtilityWarning)``.
    """


def warn_noise_dominated(what, names, estimates, noise_scales, stacklevel=3):
    """One PrivacyUtilityWarning naming the items whose noise sd exceeds them.

    Post-processing only: ``estimates`` are released values and ``names`` are
    public (component or column names), so the warning reveals nothing more.
    """
    flagged = np.asarray(noise_scales, dtype=float) > np.asarray(estimates, dtype=float)
    if np.any(flagged):
        listed = ", ".join(str(name) for name, flag in zip(names, flagged) if flag)
        warnings.warn(
            f"The noise sd exceeds the private {what} of {listed}: read these as "
            "noise. Increase eps (or this part of the budget), or use more rows.",
            PrivacyUtilityWarning,
            stacklevel=stacklevel + 1,
        )
