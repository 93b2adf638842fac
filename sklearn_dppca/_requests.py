"""The request layer of the front ends: the command line and the explorer turn a
user's input into DPPCA's parameters with these functions, and ask the estimator
only through its public API (``get_params``, ``set_params``, ``plan``, ``fit``).

One reading of each input for both front ends:

* **budget shares** are fractions of the fit's ``eps`` and ``delta``, as
  ``DPPCA(budget_split=...)`` reads them: a part given 0 is left out, and shares
  summing below 1 spend that much of the grant, no more (the explorer used to
  scale them up to 1; see the changelog);
* **pairs on large tables**: no rule of their own: DPPCA's ``pairs="auto"``
  (:func:`~sklearn_dppca._pair_design.design_pairs`) decides, unless the user chose
  ``pairs``;
* **the spend of a fit** is read off its public plan (:func:`planned_spend`, from
  :mod:`sklearn_dppca._plan_preview`), the very spend the fit charges, and how the
  plan changes with eps by :func:`eps_preview` (the same preview as the
  explorer's figure, :class:`~sklearn_dppca.display.EpsPreviewDisplay`);
* **the scree panel** shows the PVE, the variances or both (:data:`_SCREE_PANELS`),
  by default the PVE where the fit released one, else its variances
  (:func:`scree_panel`);
* **public bounds** are written ``0:10,-5:5`` (one range per variable, in their
  order) or ``age=17:90,hours=1:99`` (by name): :func:`parse_bounds`.
"""

import math

from ._plan_preview import planned_spend, preview_across_eps

__all__ = ["SCREE_KINDS", "budget_split", "eps_preview", "parse_bounds",
           "planned_spend", "scree_panel", "shares_note"]

#: What the scree panel shows (``--scree-kind``, the explorer's "Scree shows") ->
#: the scree's keywords (``plot_overview``'s ``scree_kw``). Its cumulative PVE line
#: needs the PVE axis, so it is dropped with the variances alone: the view of a fit
#: whose total was not bought (no PVE) but whose variances were.
_SCREE_PANELS = {"pve": {"kind": "pve"}, "both": {"kind": "both"},
                 "variance": {"kind": "variance", "cumulative": False}}
#: What a front end may ask the scree panel to show: ``"auto"`` (the default,
#: :func:`scree_panel`) or a key of :data:`_SCREE_PANELS`.
SCREE_KINDS = ("auto", *_SCREE_PANELS)


def scree_panel(kind, released):
    """The scree's keywords (``plot_overview``'s ``scree_kw``) for ``kind``, a
    key of :data:`SCREE_KINDS`.

    ``"auto"`` reads the released values only (post-processing): the PVE where
    any is estimable, else the variances where any is (a fit whose total is not
    estimable has no PVE, and its PVE panel would hold only "not estimable"),
    else the PVE with its "not estimable" marks. ``released``: a fitted
    estimator or a release read back from its file.
    """
    if kind != "auto":
        return _SCREE_PANELS[kind]
    if not _any_finite(getattr(released, "explained_variance_ratio_", ())) \
            and _any_finite(getattr(released, "explained_variance_", ())):
        return _SCREE_PANELS["variance"]
    return _SCREE_PANELS["pve"]


def _any_finite(values):
    return any(math.isfinite(float(value)) for value in values)


def budget_split(shares):
    """DPPCA's ``budget_split`` from a front end's shares by part.

    Parameters
    ----------
    shares : dict
        Part name -> a number >= 0 (a fraction of the fit's eps and delta).

    Returns
    -------
    budget_split : dict
        The parts given more than 0, with their shares unchanged (DPPCA checks the
        parts and that the shares sum to at most 1).

    Raises
    ------
    ValueError
        If a share is negative or every share is 0.
    """
    if any(not share >= 0 for share in shares.values()):
        raise ValueError("the budget shares must be numbers >= 0 (fractions of eps).")
    if not any(share > 0 for share in shares.values()):
        raise ValueError("the budget shares must not all be 0.")
    return {part: float(share) for part, share in shares.items() if share > 0}


def _bound(text, name, where, end):
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name} ({where}) {end} must be a number, got "
                         f"{text!r}.") from None


def _range(text, name, where):
    low, sep, high = str(text).partition(":")
    if not sep or not low.strip() or not high.strip():
        raise ValueError(f"{name} must look like 0:10,-5:5 or age=17:90,hours=1:99; "
                         f"{where} has no low:high range.")
    return (_bound(low.strip(), name, where, "low"),
            _bound(high.strip(), name, where, "high"))


def parse_bounds(text, name):
    """DPPCA's ``bounds`` from a front end's text (``name``: the input, as the
    user knows it, for messages).

    ``low:high,...`` (one range per variable, in their order) gives a list of
    pairs; ``name=low:high,...`` (by variable name) a dict. The ranges are public
    (a codebook); DPPCA checks them against the variables. Raises ValueError
    naming ``name`` and the item.
    """
    form = f"{name} must look like 0:10,-5:5 or age=17:90,hours=1:99"
    items = [item.strip() for item in str(text).split(",")]
    if not all(items):
        raise ValueError(f"{form}; got an empty item.")
    named = ["=" in item for item in items]
    if any(named) and not all(named):
        raise ValueError(f"{form}: give every range by name or none.")
    if not any(named):
        return [_range(item, name, f"item {index + 1}") for index, item in enumerate(items)]
    bounds = {}
    for item in items:
        variable, _, spec = item.rpartition("=")
        variable = variable.strip()
        if not variable:
            raise ValueError(f"{form}; a range has no variable name.")
        if variable in bounds:
            raise ValueError(f"{name}: variable {variable!r} is given twice.")
        bounds[variable] = _range(spec, name, repr(variable))
    return bounds


def shares_note(split):
    """A note when ``split``'s shares sum below 1 (that much of eps is spent), or
    an empty string."""
    total = math.fsum(split.values())
    if total >= 1 - 1e-12:
        return ""
    return (f"note: the budget shares sum to {total:.3g}: the fit spends that "
            "fraction of its eps and delta (shares are fractions of eps).")


def eps_preview(estimator, n_samples, n_features, eps_range, delta):
    """The plan across eps (:func:`~sklearn_dppca._plan_preview.preview_across_eps`)
    as text for both front ends: per eps and part of the fit, the largest
    predicted noise sd of its steps (relative to each step's public scale;
    "bought" where its steps have no such sd, "-" where the part is not bought),
    and the membership bounds of the fit's spend (public: n, p and the
    settings). A setting the plan refuses is its ValueError."""
    preview = preview_across_eps(estimator, n_samples, n_features, eps_range, delta)
    lines = ["", "Preview across eps: each part's largest noise sd (relative to each "
             "step's public scale; '-': not bought) and the best membership test "
             "(true positives at 1% false positives, advantage):",
             f"{'eps':>7s} " + " ".join(f"{part:>9s}" for part in preview.parts)
             + f" {'TPR@1%':>7s} {'advantage':>9s}"]
    for column, eps in enumerate(preview.eps):
        cells = [_preview_cell(preview.bought[row, column], preview.noise_sd[row, column])
                 for row in range(len(preview.parts))]
        lines.append(f"{eps:7.3g} " + " ".join(f"{cell:>9s}" for cell in cells)
                     + f" {100 * preview.tpr[column]:6.1f}% "
                     f"{preview.advantage[column]:9.2f}")
    return "\n".join(lines)


def _preview_cell(bought, noise_sd):
    if not bought:
        return "-"
    return "bought" if noise_sd != noise_sd else f"{noise_sd:.3g}"
