"""A data set's budget in the words of its user: the total ``eps`` at the total
``delta`` the user asked for, shared by the explorer's meter and the command line.

The accountant composes the fits exactly (their Gaussian parts as one ``mu``-GDP
block, the rest added); a user asked for ``(eps, delta)``. So what is spent is read
as the least ``eps`` at which all the fits together are ``(eps, delta)``-DP, at the
total ``delta``: "0.90 of eps 1 spent at delta 1e-5". A fit is refused exactly when
that ``eps`` would pass the total's.
"""

import math

from .privacy import Spend

#: One sentence on the composition, shown under the meter.
_COMPOSITION = (
    "The fits are composed exactly, not added: their Gaussian parts count as one "
    "mu-GDP block and their other parts add up, and the whole is read as the least "
    "eps at which all of them together are private at the total delta, so several "
    "fits cost less than their own (eps, delta) added up.")


def _number(value, digits=3):
    """``value`` in ``digits`` significant digits, exponents without a leading zero
    (``1e-5``, not ``1e-05``)."""
    if value != 0 and math.isfinite(value) and abs(value) < 1e-3:
        mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    text = f"{value:.{digits}g}"
    mantissa, sep, exponent = text.partition("e")
    if not sep:
        return text
    sign = "-" if exponent.startswith("-") else ""
    return f"{mantissa}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"


def _composed(charges):
    """The charges (dicts with ``eps``, ``delta``, ``mu``) composed as the
    accountant composes them (exactly, rounded once): a Spend."""
    from .privacy._accounting import compose

    return compose(Spend(c["eps"], c["delta"], c["mu"]) for c in charges)


def _room_words(accountant):
    """What the rest of the budget of ``accountant`` still buys, in words: "room
    for one more fit at eps 0.97, or two at 0.68, at delta 1e-5" (fits whose parts
    are all Gaussian; :meth:`~sklearn_dppca.privacy.PrivacyAccountant.fits_left`),
    or "no room for another fit"."""
    left = accountant.fits_left((1, 2))
    if left[1] <= 0:
        return "no room for another fit"
    return (f"room for one more fit at eps {_number(left[1], 2)}, or two at "
            f"{_number(left[2], 2)}, at delta {_number(accountant.delta)}")


def budget_words(accountant):
    """The budget of ``accountant`` in words.

    Returns a dict: ``eps_spent`` (at the total delta:
    :meth:`~sklearn_dppca.privacy.PrivacyAccountant.spent`), ``eps_total``,
    ``delta_total``, ``fraction`` (``eps_spent / eps_total``), ``charges`` (how
    many), ``text`` ("0.9 of eps 1 spent at delta 1e-5"), ``room`` (what is left
    buys: :func:`_room_words`), ``sentence`` (:data:`_COMPOSITION`) and ``details``
    (one line per charge: its own ``eps`` at the total delta, its pure ``eps`` and
    ``delta`` and its Gaussian ``mu``, and the ``mu`` of all the Gaussian blocks
    composed), and ``risk`` (what the charges so far and the whole budget mean
    for one person: :func:`_budget_risk_words`).
    """
    charges = accountant.charges
    eps, delta = accountant.eps, accountant.delta
    spent = accountant.spent()[0]
    total = _composed(charges)
    lines = []
    for index, charge in enumerate(charges, start=1):
        alone = _composed([charge]).eps_at(delta)
        lines.append(
            f"fit {index} ({charge['label']}, {charge['time']}): eps {_number(alone)} "
            f"at delta {_number(delta)} on its own; charged as pure eps "
            f"{_number(charge['eps'])}, delta {_number(charge['delta'])} and a Gaussian "
            f"block of mu {_number(charge['mu'])}")
    if charges:
        lines.append(f"all fits: pure eps {_number(total.eps)}, delta "
                     f"{_number(total.delta)}, Gaussian blocks composed to mu "
                     f"{_number(total.mu)}: eps {_number(spent)} at delta {_number(delta)}")
    return {
        "eps_spent": spent, "eps_total": eps, "delta_total": delta,
        "fraction": spent / eps, "charges": len(charges),
        "text": f"{spent:.2f} of eps {_number(eps)} spent at delta {_number(delta)}",
        "room": _room_words(accountant),
        "sentence": _COMPOSITION, "details": lines,
        "risk": _budget_risk_words(total, eps, delta),
        "risk_short": _budget_risk_words(total, eps, delta, short=True),
    }


def _budget_risk_words(spent, eps_total, delta_total, fpr=0.01, short=False):
    """What a budget means for one person, in one sentence: the best membership
    test's true positive rate at ``fpr`` false positives and its largest
    advantage, for the charges so far (``spent``, a Spend) and for the whole
    budget spent by fits whose parts are all Gaussian
    (:func:`~sklearn_dppca.privacy.membership_risk`); ``short`` for a meter."""
    from .privacy import membership_risk

    now = membership_risk(spent, delta_total, fpr)
    whole = membership_risk(eps_total, delta_total, fpr)
    if short:
        return (f"For one person: the best membership test flags at most "
                f"{100 * now['tpr']:.1f}% of members at {100 * fpr:g}% of non-members "
                f"(advantage {now['advantage']:.2f}); the whole budget, "
                f"{100 * whole['tpr']:.1f}% ({whole['advantage']:.2f}).")
    return (f"For one person (a membership test that wrongly flags {100 * fpr:g}% of "
            f"non-members): spent so far, it flags at most {100 * now['tpr']:.1f}% of "
            f"members (advantage at most {now['advantage']:.2f}); the whole budget, "
            f"at most {100 * whole['tpr']:.1f}% ({whole['advantage']:.2f}).")


def spent_after(accountant, spend):
    """The ``eps`` at the total delta that the charges of ``accountant`` and
    ``spend`` (a :class:`~sklearn_dppca.privacy.Spend`) would spend together."""
    total = _composed(accountant.charges) + spend
    if total.delta > accountant.delta:
        return math.inf
    return total.eps_at(accountant.delta)


def delta_note(eps, delta, charge, total_delta):
    """Why a fit that asked for ``(eps, delta)`` with ``delta`` above the total's
    was accepted (None when ``delta`` is within it); ``charge`` is its charge."""
    if delta <= total_delta:
        return None
    alone = _composed([charge]).eps_at(total_delta)
    if not math.isfinite(alone):
        return None
    return (f"This fit asked for delta {_number(delta)}, more than the total delta "
            f"{_number(total_delta)}; it was accepted because, composed exactly, its "
            f"parts are also private at eps {_number(alone)} and delta "
            f"{_number(total_delta)}, and that fit in what was left.")


def risk_words(spend, delta, fpr=0.01):
    """What ``spend`` (a :class:`~sklearn_dppca.privacy.Spend`, or an eps) read at
    ``delta`` means for one person, in one sentence: the most members the best
    membership test flags when it flags ``fpr`` of non-members, and its largest
    advantage (:func:`~sklearn_dppca.privacy.membership_risk`)."""
    from .privacy import membership_risk

    risk = membership_risk(spend, delta, fpr)
    return (f"For one person, at eps {_number(risk['eps'], 2)} and delta "
            f"{_number(delta)}: a membership test that wrongly flags {100 * fpr:g}% of "
            f"non-members flags at most {100 * risk['tpr']:.1f}% of members, and no "
            f"test's true minus false positive rate exceeds {risk['advantage']:.2f}.")
