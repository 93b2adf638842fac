"""A fit's plan across eps, before anything is spent: the one computation behind the
command line's ``--plan --eps-range``, the explorer's preview and
:class:`~sklearn_dppca.display.EpsPreviewDisplay`.

Everything here reads public inputs only: the estimator's settings, the number of
rows and of variables. No cell of the data is read and nothing is charged. (NumPy
and SciPy are imported when a preview is made: the command line starts without
them.)
"""

import math
from dataclasses import dataclass

#: How many eps a preview across eps shows, geometric from low to high.
_PREVIEW_POINTS = 7


def planned_spend(plan):
    """The spend a fit charges, read off its public plan.

    Parameters
    ----------
    plan : pandas.DataFrame
        An estimator's :meth:`~sklearn_dppca.DPPCA.plan`.

    Returns
    -------
    Spend
        The ``eps`` and ``delta`` of the released steps and their Gaussian
        block's ``mu``, composed as the accountant composes a fit's ledger: what
        the fit charges its accountant.
    """
    from .privacy._accounting import charged_spend

    released = plan[plan["released"]]
    return charged_spend(released["eps"], released["delta"],
                         [mu for mu in released["mu"] if mu == mu])


@dataclass(frozen=True)
class _EpsPreview:
    """A plan across eps.

    Attributes
    ----------
    eps : ndarray of shape (n_eps,)
        The eps previewed, increasing.
    parts : list of str
        The fit's parts (a step's name up to its first ``/``), in plan order.
    noise_sd : ndarray of shape (n_parts, n_eps)
        Each part's largest predicted noise sd, relative to each step's public
        scale; NaN where the part is not bought or its steps state no such sd.
    bought : ndarray of bool, shape (n_parts, n_eps)
        Whether every step of the part is run at that eps.
    tpr, advantage : ndarray of shape (n_eps,)
        The best membership test of the fit's spend at ``delta``: true positive
        rate at 1% false positives, and the largest advantage.
    delta : float
        The ``delta`` of the fits and of the risk.
    """

    eps: object
    parts: list
    noise_sd: object
    bought: object
    tpr: object
    advantage: object
    delta: float


def preview_across_eps(estimator, n_samples, n_features, eps_range, delta):
    """Plan a fit at :data:`_PREVIEW_POINTS` eps from ``eps_range`` (geometric).

    Parameters
    ----------
    estimator : DPPCA, DPScree or DPKendallDirections
        Its settings; its own eps is put back afterwards.
    n_samples, n_features : int
        The shape of the data (public).
    eps_range : tuple of float
        ``(low, high)``, ``0 < low < high``.
    delta : float
        The ``delta`` the risk is read at.

    Returns
    -------
    _EpsPreview

    Raises
    ------
    ValueError, TypeError
        A setting the plan refuses.
    """
    import numpy as np

    from .privacy import membership_risk

    low, high = eps_range
    grid = np.geomspace(low, high, _PREVIEW_POINTS)
    # (the estimator at each eps, then back: a clone would warn that it spends)
    asked = estimator.get_params()["eps"]
    try:
        plans = [estimator.set_params(eps=float(eps)).plan(n_samples, n_features)
                 for eps in grid]
    finally:
        estimator.set_params(eps=asked)
    parts = list(dict.fromkeys(step.split("/")[0] for plan in plans
                               for step in plan["step"]))
    cells = [[_part_cell(plan, part) for plan in plans] for part in parts]
    risks = [membership_risk(planned_spend(plan), delta) for plan in plans]
    return _EpsPreview(
        eps=grid, parts=parts,
        noise_sd=np.array([[sd for _, sd in row] for row in cells], dtype=float),
        bought=np.array([[bought for bought, _ in row] for row in cells], dtype=bool),
        tpr=np.array([risk["tpr"] for risk in risks]),
        advantage=np.array([risk["advantage"] for risk in risks]), delta=float(delta))


def _part_cell(plan, part):
    """Whether the part is run (all its steps) and its largest relative noise sd
    (NaN when not run or when its steps state none)."""
    rows = [row for row in plan.itertuples(index=False) if row.step.split("/")[0] == part]
    if not rows or not all(row.released for row in rows):
        return False, math.nan
    sds = [row.noise_sd for row in rows if row.noise_sd == row.noise_sd]
    return True, (max(sds) if sds else math.nan)
