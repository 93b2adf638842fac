"""What a spend means for one person: the best membership test it allows.

A membership attacker sees a release and guesses whether one given person's row
was in the data. Differential privacy bounds every such test through its
trade-off curve (Dong, Roth and Su 2022): at a false positive rate ``alpha`` (the
share of non-members it flags), the true positive rate (the share of members it
flags) is at most ``1 - f(alpha)``.

* A spend whose parts are all Gaussian is ``mu``-GDP: ``f = G_mu``, so the true
  positive rate is at most ``Phi(Phi^-1(alpha) + mu)`` and the advantage (true
  minus false positive rate, at its best ``alpha``) at most
  ``2 Phi(mu / 2) - 1``. At ``eps = 1``, ``delta = 1e-5`` (``mu = 0.268``): 1.98%
  of members at 1% of non-members, an advantage of 0.107.
* A spend with pure parts and a Gaussian block (a fit that buys quantile
  searches: pure ``eps_p``, no basic ``delta``) is dominated by randomized
  response at ``eps_p`` composed with a Gaussian shift of ``mu``: every
  ``eps_p``-DP mechanism's curve is at least randomized response's, and curves
  compose by their tensor product (Dong, Roth and Su 2022, Thm 3.2). Its best
  test is a likelihood-ratio test over the response and the Gaussian
  coordinate, solved for ``alpha`` by bisection; its advantage is the total
  variation distance of the two (the test at likelihood ratio 1).
* Any other ``(eps, delta)``-DP spend (with a basic ``delta``) has the curve
  ``max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))``: at most
  ``min(delta + e^eps alpha, 1 - e^-eps (1 - delta - alpha))`` of members, an
  advantage of at most ``(e^eps - 1 + 2 delta) / (e^eps + 1)``, for every
  mechanism with that ``(eps, delta)``.
"""

import math

from scipy.special import ndtr, ndtri

from .._validation import Interval, check_param
from ._accounting import Spend
from ._calibration import check_delta, check_eps


def membership_risk(spend, delta, fpr=0.01):
    """Bound the best membership test a spend allows.

    Parameters
    ----------
    spend : Spend or float
        A :class:`Spend` (a fit's planned spend, an accountant's charges
        composed), or an ``eps``: then a fit at ``(eps, delta)`` whose parts are
        all Gaussian.
    delta : float
        The ``delta`` the spend is read at, in (0, 1) (a budget's total
        ``delta``).
    fpr : float, default=0.01
        The attacker's false positive rate: the share of non-members it flags,
        in (0, 1).

    Returns
    -------
    dict
        ``tpr``: the most members it flags at ``fpr`` (a share); ``advantage``:
        the largest true minus false positive rate over every test; ``mu``: the
        GDP ``mu`` when the spend is all Gaussian (else NaN); ``eps`` and
        ``delta``: the spend read at ``delta``; ``fpr``; ``model``:
        ``"gaussian"`` (the GDP curve) or ``"eps-delta"`` (the curve of any
        ``(eps, delta)``-DP mechanism).

    Examples
    --------
    >>> from sklearn_dppca.privacy import membership_risk
    >>> risk = membership_risk(1.0, 1e-5)
    >>> round(risk["tpr"], 4), round(risk["advantage"], 3)
    (0.0198, 0.107)
    """
    delta = check_delta(delta)
    fpr = check_param(fpr, [Interval("real", 0, 1, closed="neither")], "fpr")
    if not isinstance(spend, Spend):
        from ._accounting import gdp_mu

        spend = Spend(mu=gdp_mu(check_eps(spend), delta))
    eps = spend.eps_at(delta)
    if spend.eps == 0 and spend.delta == 0:
        mu = spend.mu
        return dict(tpr=float(ndtr(ndtri(fpr) + mu)),
                    advantage=float(2 * ndtr(mu / 2) - 1), mu=mu, eps=eps,
                    delta=delta, fpr=fpr, model="gaussian")
    if spend.delta == 0 and spend.eps < 700.0:
        tpr, advantage = _response_and_shift(spend.eps, spend.mu, fpr)
        return dict(tpr=tpr, advantage=advantage, mu=math.nan, eps=eps, delta=delta,
                    fpr=fpr, model="pure and gaussian")
    if not math.isfinite(eps):
        return dict(tpr=1.0, advantage=1.0, mu=math.nan, eps=eps, delta=delta,
                    fpr=fpr, model="eps-delta")
    # the tightest (eps, delta) pair known: the spend's own when it has no
    # Gaussian block, else its reading at ``delta``
    curve_eps, curve_delta = (spend.eps, spend.delta) if spend.mu == 0 else (eps, delta)
    growth = math.exp(min(curve_eps, 700.0))
    # 1 - f(alpha) of the (eps, delta) curve: its two lines, capped at 1
    tpr = min(1.0, curve_delta + growth * fpr, 1.0 - (1.0 - curve_delta - fpr) / growth)
    return dict(tpr=tpr,
                advantage=min(1.0, (growth - 1 + 2 * curve_delta) / (growth + 1)),
                mu=math.nan, eps=eps, delta=delta, fpr=fpr, model="eps-delta")


def _response_and_shift(eps, mu, fpr):
    """The best test of randomized response at ``eps`` composed with a Gaussian
    shift ``mu``: its true positive rate at ``fpr`` and its advantage.

    Null (not a member): the response is 0 with chance ``e^eps / (1 + e^eps)``
    and the Gaussian coordinate is ``N(0, 1)``; alternative: 0 with chance
    ``1 / (1 + e^eps)``, ``N(mu, 1)``. The likelihood-ratio test at level ``c``
    flags a row with response ``b`` above ``x_b = (log c - log r_b) / mu + mu /
    2`` (``r_b`` the response's ratio), so both rates are sums over ``b``.
    """
    null = (1.0 / (1.0 + math.exp(-eps)), 1.0 / (1.0 + math.exp(eps)))
    ratios = (-eps, eps)                     # log q_b / p_b
    alternative = (null[1], null[0])
    if mu == 0:
        growth = math.exp(eps)
        tpr = min(1.0, growth * fpr, 1.0 - (1.0 - fpr) / growth)
        return tpr, (growth - 1.0) / (growth + 1.0)

    def rates(log_c):
        cuts = [(log_c - ratio) / mu + mu / 2 for ratio in ratios]
        false = sum(p * float(ndtr(-cut)) for p, cut in zip(null, cuts))
        true = sum(q * float(ndtr(mu - cut)) for q, cut in zip(alternative, cuts))
        return false, true

    low, high = -60.0, 60.0              # false positive rate falls as c grows
    for _ in range(200):
        middle = (low + high) / 2
        if rates(middle)[0] > fpr:
            low = middle
        else:
            high = middle
    false, true = rates(high)
    at_one = rates(0.0)
    return min(1.0, true), at_one[1] - at_one[0]
