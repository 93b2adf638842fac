"""What the displays read from a fitted estimator or a loaded release, and how
they say what is missing."""

import numpy as np

from ._check import check_axes, check_feature_names


# what each display reads, and how to say what is missing
_NEEDS = {
    "ScreeDisplay": (
        ("explained_variance_", "explained_variance_ratio_"),
        "DPScree or DPPCA",
        "no private variances (explained_variance_)",
    ),
    "LoadingDisplay": (
        ("components_",),
        "DPKendallDirections, DPScree or DPPCA",
        "no private directions (components_)",
    ),
    "VariableDisplay": (
        ("components_", "explained_variance_", "feature_variance_"),
        "DPScree or DPPCA",
        "no private variances (explained_variance_, feature_variance_) to turn the "
        "directions into correlations",
    ),
    "ScoreDisplay": (
        ("frame_", "bin_edges_", "score_histogram_"),
        "DPPCA",
        "no score summary (frame_, bin_edges_, score_histogram_)",
    ),
    "BiplotDisplay": (
        ("components_", "explained_variance_", "synthetic_scores_", "frame_"),
        "DPPCA",
        "no synthetic scores and private frame (synthetic_scores_, frame_)",
    ),
}


#: The attributes of the score summary (None when it is not estimable).
_SCORE_SUMMARY = ("frame_", "bin_edges_", "score_histogram_", "synthetic_scores_")


def estimator_name(estimator):
    """The estimator's class name; for a loaded release, the class that made it."""
    origin = getattr(estimator, "estimator_class_", None)
    name = type(estimator).__name__
    if isinstance(origin, str) and origin and origin != name:
        return f"{origin} (loaded release)"
    return name


def is_seeded(estimator):
    """Whether a fit, or the fit a loaded release came from (``seeded_``), had a
    fixed ``random_state``: anyone who knows or guesses the seed can recompute
    its noise, so what is drawn is for tests and examples, not private. (The
    release writer reads the same from its estimator block.)"""
    if hasattr(estimator, "seeded_"):
        return bool(estimator.seeded_)
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    return params.get("random_state") is not None


#: The mark of a seeded fit on every picture drawn from it.
SEEDED_MARK = "SEEDED: NOT PRIVATE"


def _has(estimator, attribute):
    return getattr(estimator, attribute, None) is not None


#: What the score and biplot panels say when the fit could not find its frame.
SCORE_NOT_ESTIMABLE = "score summary not estimable"


def _score_not_estimable(estimator):
    """Whether the fit ran its score part but released no frame (the private
    search found none: nothing to draw the scores on).

    Read from the attributes: ``frame_`` is None while the ledger holds a
    ``score`` step (or ``plan_`` a score row).
    """
    if getattr(estimator, "frame_", None) is not None:
        return False
    steps = [str(item.get("step", "")) for item in
             (getattr(estimator, "privacy_ledger_", None) or ()) if hasattr(item, "get")]
    plan = getattr(estimator, "plan_", None)
    if plan is not None:
        try:
            steps += [str(step) for step in plan["step"]]
        except (KeyError, TypeError, IndexError):
            pass
    return any(step == "score" or step.startswith("score/") for step in steps)


def not_estimable_note(estimator):
    """``"score summary not estimable at eps = 1 with n = 150"``: what the score
    and biplot panels write in place of a picture."""
    spent = getattr(estimator, "privacy_spent_", None)
    where = ""
    try:
        where = f" at eps = {float(spent[0]):.3g} with n = {int(estimator.n_samples_)}"
    except (TypeError, ValueError, IndexError, AttributeError):
        pass
    # a plan that did not buy the score part, or a released frame that cannot hold
    # a histogram: either way, nothing of the scores is drawn
    budget = (getattr(estimator, "budget_", None) or {}).get("score")
    why = ("the plan could not buy it, and its budget went to the other parts"
           if budget == (0.0, 0.0) else "the private frame of the scores was not found")
    return (f"{SCORE_NOT_ESTIMABLE}{where}: {why}, so nothing is drawn (increase eps, "
            "or use more rows).")


def unsupported_reason(estimator, display_name):
    """None when ``estimator`` can feed ``display_name``; else why it cannot.

    Assumes the estimator is fitted (see :func:`check_estimator_for`).
    """
    attributes, supported, missing = _NEEDS[display_name]
    name = estimator_name(estimator)
    if not _has(estimator, "privacy_ledger_"):
        return (
            f"{display_name} needs a fitted {supported} from sklearn_dppca; {name} "
            "is not a private estimator (no privacy_ledger_)."
        )
    if display_name in ("ScoreDisplay", "BiplotDisplay") and _score_not_estimable(
            estimator) and all(_has(estimator, a) for a in attributes
                               if a not in _SCORE_SUMMARY):
        return None      # drawn as a panel that says the summary is not estimable
    if not all(_has(estimator, a) for a in attributes):
        extra = ""
        if display_name in ("ScoreDisplay", "BiplotDisplay") and "DPPCA" in name:
            extra = " (its score part was skipped, e.g. with fewer than 2 components)"
        return f"{display_name} needs a fitted {supported}; {name} has {missing}{extra}."
    return None


def check_fitted(estimator, caller_name):
    """``check_is_fitted``, with a TypeError for objects that are no estimators.

    An estimator instance has ``__sklearn_tags__`` (scikit-learn >= 1.6). That is
    checked here first: what ``check_is_fitted`` makes of other objects changed
    between scikit-learn releases (NotFittedError in 1.6, AttributeError later).
    """
    what = (f"the class {estimator.__name__}" if isinstance(estimator, type)
            else type(estimator).__name__)
    message = (f"{caller_name} needs a fitted estimator of sklearn_dppca "
               "(DPKendallDirections, DPScree or DPPCA); got "
               f"{what}, which is not a scikit-learn estimator instance.")
    if isinstance(estimator, type) or not hasattr(estimator, "__sklearn_tags__"):
        raise TypeError(message)
    if _declares_fitted(estimator):
        return      # what check_is_fitted would conclude, without importing sklearn
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(estimator)
    except NotFittedError:
        raise
    except (AttributeError, TypeError) as exc:
        raise TypeError(message) from exc


def _declares_fitted(estimator):
    """Whether the estimator says it is fitted through ``__sklearn_is_fitted__``
    (scikit-learn's protocol, which ``check_is_fitted`` honours first)."""
    declared = getattr(estimator, "__sklearn_is_fitted__", None)
    return callable(declared) and declared() is True


def check_estimator_for(estimator, display_name):
    """Check ``estimator`` is fitted and can feed ``display_name``.

    Raises
    ------
    NotFittedError
        When it is not fitted.
    TypeError
        When it is not one of the estimators the display supports.
    """
    check_fitted(estimator, display_name)
    reason = unsupported_reason(estimator, display_name)
    if reason is not None:
        raise TypeError(reason)


def estimator_feature_names(estimator):
    """The fitted feature names (``x0, x1, ...`` without ``feature_names_in_``)."""
    return check_feature_names(getattr(estimator, "feature_names_in_", None),
                               int(estimator.n_features_in_))


def nonprivate_reference(estimator):
    """The estimator's ``nonprivate_`` Bunch, or None."""
    return getattr(estimator, "nonprivate_", None)


def nonprivate_get(reference, key):
    if reference is None:
        return None
    try:
        return reference[key]
    except (KeyError, TypeError):
        return getattr(reference, key, None)


def nonprivate_ratio(reference):
    """The reference PVE as a share of the reference's total variance, or None.

    ``explained_variance / total_variance`` when the reference stores its total
    variance. Without it, the stored ratio's base is unknown (a reference that
    divides by the retained components only would look larger than the private
    share of the total), so there is no PVE reference.
    """
    variance = nonprivate_get(reference, "explained_variance")
    total = nonprivate_get(reference, "total_variance")
    if variance is None or total is None:
        return None
    total = float(total)
    variance = np.asarray(variance, dtype=float)
    if not total > 0:
        return np.zeros_like(variance)
    with np.errstate(all="ignore"):
        return np.minimum(variance / total, 1.0)


def frame_get(frame, key):
    """Read ``key`` from a frame given as a Bunch, a dict or an object."""
    try:
        return frame[key]
    except (KeyError, TypeError, IndexError):
        return getattr(frame, key)


def estimator_axes(estimator, axes, display_name):
    """The estimator's score axes; a different requested pair is an error."""
    fitted = tuple(int(a) for a in estimator.axes_)
    if axes is None:
        return fitted
    requested = check_axes(axes, int(estimator.n_components_))
    if requested != fitted:
        raise ValueError(
            f"axes={tuple(axes)!r}: the private score summary of this "
            f"{estimator_name(estimator)} was released for axes={fitted!r} only; "
            f"{display_name} cannot draw other axes without a new fit (which "
            "spends budget)."
        )
    return fitted


def default_axes(estimator):
    """The estimator's score axes ``axes_`` when it has them, else ``(0, 1)``."""
    fitted = getattr(estimator, "axes_", None)
    return (0, 1) if fitted is None else tuple(int(a) for a in fitted)
