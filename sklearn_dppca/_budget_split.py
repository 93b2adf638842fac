"""DPPCA's top-level budget split: its parts, its defaults and its rules.

A module of its own, without scikit-learn, so that the command line can print
the defaults in its help without importing the estimators.
"""

from ._validation import check_param

#: DPPCA's default split.
DEFAULT_SPLIT = {"loading": 0.35, "scree": 0.3, "score": 0.35}
#: With ``scale=True`` the spreads take a part of their own.
DEFAULT_SCALED_SPLIT = {"loading": 0.3, "scree": 0.25, "scale": 0.2, "score": 0.25}
#: The parts a split may name.
BUDGET_PARTS = ("loading", "scree", "scale", "score")


def split_text(split):
    """A split as ``--budget-split`` spells it,
    ``"loading=0.29,scree=0.42,score=0.29"`` (a part without a share is left
    out: a missing part gets 0)."""
    return ",".join(f"{part}={share:g}" for part, share in split.items() if share)


def check_budget_split(budget_split, scale=False):
    """Fractions of ``loading``, ``scree``, ``scale`` and ``score``; missing parts get 0.

    ``scale`` is the part of the private spreads: required with ``scale=True``,
    an error without it (it would buy nothing). The range and the sum of the
    shares are :meth:`PrivacyBudget.split`'s to check.
    """
    budget_split = check_param(budget_split, [None, dict], "budget_split")
    if budget_split is None:
        return dict(DEFAULT_SCALED_SPLIT if scale else DEFAULT_SPLIT)
    unknown = sorted(map(str, set(budget_split) - set(BUDGET_PARTS)))
    if unknown:
        raise ValueError(
            f"budget_split has unknown parts {unknown}; parts are {list(BUDGET_PARTS)}."
        )
    split = {part: budget_split.get(part, 0.0) for part in BUDGET_PARTS}
    required = ("loading", "scree", "scale") if scale else ("loading", "scree")
    for part in required:
        if not split[part]:
            raise ValueError(f"budget_split[{part!r}] must be given and > 0"
                             f"{' with scale=True' if part == 'scale' else ''}.")
    if not scale:
        if split.pop("scale"):
            raise ValueError("budget_split['scale'] is spent only with scale=True; "
                             "drop it or set scale=True.")
    return split
