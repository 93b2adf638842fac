"""Writing a release: :func:`export_release` and one writer per kind of entry.

A *release* is what a data custodian may publish after a private fit: the noisy
directions, variances, score frame, histograms and synthetic points, the public
facts (``n``, ``p``, column names, declared group labels, parameters) and the
privacy ledger. :func:`export_release` writes exactly those, never the data or
anything computed from it without noise, by walking the one declaration of the
layout, :data:`~sklearn_dppca._release_layout.LAYOUT`: each key is written by the
writer of its kind (and read back by the reader of the same kind, in
:mod:`~sklearn_dppca._release_read`).
"""

import json
import os
from pathlib import Path

from ._names import feature_names
from ._release_layout import (
    FORMAT,
    FRAME_LAYOUT,
    LAYOUT,
    NONPRIVATE_KEY,
    NONPRIVATE_LAYOUT,
    RESERVED,
    WITHHELD_PARAMS,
)
from ._release_values import (
    encode_not_estimable,
    entry_ndims,
    finite_array,
    json_label,
    json_metadata,
)
from ._released_pca import SEEDED_KEY, ReleasedPCA
from ._validation import check_bool, check_param

__all__ = ["export_release"]


# --------------------------------------------------------------------------------------
# one writer per kind of entry (see _release_layout.Entry)
# --------------------------------------------------------------------------------------
def _finite_float(value, name):
    return float(finite_array(value, name, (0,)))


def _value(container, key):
    """``container[key]`` or ``container.key`` (a Bunch, a dict or an object); None
    when it has neither."""
    try:
        return container[key]
    except (KeyError, TypeError, IndexError):
        return getattr(container, key, None)


def _write_array(value, entry, name=None):
    name = entry.key if name is None else name
    array = finite_array(value, name, entry_ndims(entry), allow_nan=entry.not_estimable)
    return encode_not_estimable(array) if entry.not_estimable else array.tolist()


def _write_number(value, entry, name=None):
    name = entry.key if name is None else name
    if entry.not_estimable:
        return encode_not_estimable(finite_array(value, name, (0,), allow_nan=True))
    return _finite_float(value, name)


def _write_labels(labels, entry):
    return [json_label(label) for label in labels]


def _write_spent(spent, entry):
    eps, delta = spent
    return {"eps": _finite_float(eps, entry.key), "delta": _finite_float(delta, entry.key)}


def _write_budget(budget, entry):
    return {str(part): [_finite_float(value, f"budget[{part!r}]") for value in pair]
            for part, pair in budget.items()}


def _write_frame(frame, entry):
    return {part.key: _WRITERS[part.kind](_value(frame, part.key), part,
                                          f"frame.{part.key}")
            for part in FRAME_LAYOUT}


def _write_edges(edges, entry):
    return [finite_array(edge, f"bin_edges[{axis}]", (1,)).tolist()
            for axis, edge in enumerate(edges)]


def _write_histograms(histograms, entry, groups):
    """The group histograms as a list in the order of ``groups``."""
    order = list(histograms) if groups is None else groups
    return [_write_array(histograms[label], entry, f"score_histograms[{label!r}]")
            for label in order]


def _write_nonprivate(reference, entry):
    block = {
        "WARNING": (
            "NOT PRIVATE: these values are computed from the raw data without noise. "
            "They are for judging the private release only; never publish them."
        )
    }
    for part in NONPRIVATE_LAYOUT:
        value = _value(reference, part.key)
        block[part.key] = None if value is None else _write_array(
            value, part, f"{NONPRIVATE_KEY}.{part.key}")
    return block


_WRITERS = {
    "array": _write_array,
    "number": _write_number,
    "count": lambda value, entry: int(value),
    "labels": _write_labels,
    "origins": lambda origins, entry: [str(origin) for origin in origins],
    "point_labels": _write_labels,
    "axes": lambda axes, entry: [int(a) for a in axes],
    "spent": _write_spent,
    "ledger": lambda ledger, entry: json_metadata(list(ledger)),
    "plan": lambda plan, entry: json_metadata(plan.to_dict("records")),   # (a DataFrame)
    "budget": _write_budget,
    "frame": _write_frame,
    "edges": _write_edges,
    "nonprivate": _write_nonprivate,
}


def _written_value(estimator, entry):
    """The JSON value of ``entry`` for ``estimator`` (None: null)."""
    if entry.kind == "format":
        return FORMAT
    if entry.kind == "software":
        return _software()
    if entry.kind == "estimator":
        return _estimator_block(estimator)
    if entry.kind == "names":
        return feature_names(estimator)
    value = getattr(estimator, entry.attribute, None)
    if value is None:
        return None
    if entry.kind == "histograms":
        return _write_histograms(value, entry, getattr(estimator, "groups_", None))
    return _WRITERS[entry.kind](value, entry)


def _write_layout(estimator, include_nonprivate):
    """The release of ``estimator``: every entry of the layout, in its order."""
    release = {}
    for entry in LAYOUT:
        if entry.kind == "nonprivate" and not include_nonprivate:
            continue
        value = _written_value(estimator, entry)
        if value is None and entry.omit_null:
            continue
        release[entry.key] = value
    # an entry is released only with the entries it needs (the threshold of the
    # score histogram with that histogram, ...)
    for entry in LAYOUT:
        if entry.key in release and any(release[need] is None for need in entry.needs):
            release[entry.key] = None
    return release


def _software():
    from ._version import __version__

    return {"name": "sklearn-dppca", "version": __version__}


def _estimator_block(estimator):
    if isinstance(estimator, ReleasedPCA):
        return {
            "class": estimator.estimator_class_,
            "params": json_metadata(estimator.estimator_params_),
            "seeded": bool(estimator.seeded_),
        }
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    seeded = params.get("random_state") is not None
    public = {key: value for key, value in params.items() if key not in WITHHELD_PARAMS}
    return {"class": type(estimator).__name__, "params": json_metadata(public),
            "seeded": bool(seeded)}


# --------------------------------------------------------------------------------------
# export
# --------------------------------------------------------------------------------------
def export_release(estimator, path=None, *, include_nonprivate=False, extra=None,
                   allow_seeded=False):
    """Collect the released quantities of a fitted estimator as JSON.

    The result holds exactly what the fit released (noisy directions, private
    variances, score frame, histograms and synthetic points, clip bounds), the public
    facts (``n_samples``, ``n_features``, column names, the declared group labels,
    the estimator's class and parameters) and the privacy ledger with the total
    spend. The data, the exact statistics and the seed are never written:
    ``random_state`` is withheld (anyone who knows a seed can regenerate the noise;
    ``estimator.seeded`` only says whether one was set).

    Parameters
    ----------
    estimator : DPPCA, DPScree, DPKendallDirections or ReleasedPCA
        A fitted estimator of this package (or a loaded release).
    path : str or path-like, default=None
        Where to write the JSON (UTF-8, indented); the path is then returned, not
        the content (a release is hundreds of kilobytes: a notebook would print
        it). None writes nothing and returns the content.
    include_nonprivate : bool, default=False
        Also write the estimator's non-private reference (``nonprivate_``, stored
        with ``compute_nonprivate=True``) under the single key
        ``"nonprivate_reference_NOT_PRIVATE"``. Those values are computed from the
        raw data without noise: never publish such a file.
    extra : dict, default=None
        Additional public metadata written at the top level (JSON-able values; a
        key of the release itself is an error).
    allow_seeded : bool, default=False
        Write the release of a fit with a fixed ``random_state`` anyway. Its noise
        is a function of the seed, and seeds are few (trying 0 to 999 takes about
        a second and gives back the exact statistics): such a release is not
        private. Without this override it is refused; with it, the file says so at
        the top level, under ``"seeded_release_NOT_FOR_PUBLICATION"``, and every
        overview drawn from it says "SEEDED: NOT PRIVATE". For tests and
        examples.

    Returns
    -------
    release : pathlib.Path or dict
        With ``path``, the file written (as a :class:`pathlib.Path`); without it,
        the JSON content as a dict (what :func:`load_release` also accepts).

    Raises
    ------
    ValueError
        If the fit was seeded and ``allow_seeded`` is False, if a released value
        is NaN or infinite (nothing is written in either case), if
        ``include_nonprivate=True`` but no reference is stored, or if ``extra``
        reuses a key of the release.
    TypeError
        If ``estimator`` is not a fitted private estimator of this package.

    See Also
    --------
    load_release : Read the release back as a :class:`ReleasedPCA`.
    DPPCA : The estimator whose releases hold every picture.

    Notes
    -----
    Layout (format ``"sklearn-dppca-release/1"``): ``axes`` are 0-based component
    indices; ``scale`` is null or one private spread per column;
    ``explained_variance_ratio_noise_scale``, ``feature_variance``,
    ``feature_variance_noise_scale``, ``total_variance`` and
    ``total_variance_noise_scale`` come with the variances of a scree (null
    otherwise), ``histogram_threshold`` and ``expected_noise_cells`` with the
    score summary; ``frame`` has ``center``, ``radius``, ``half_width`` and
    ``extent`` ``[x_min, x_max, y_min, y_max]``; ``score_histogram`` is indexed
    ``[ix][iy]``;
    ``score_histograms`` is a list aligned with ``groups``; ``privacy_spent`` is
    ``{"eps": ..., "delta": ...}``; non-finite numbers in metadata (a parameter
    set to infinity) are written as the strings ``"inf"``, ``"-inf"``, ``"nan"``.

    Examples
    --------
    >>> from sklearn_dppca import DPPCA, export_release, load_release
    >>> from sklearn_dppca.datasets import make_gaussian_clusters
    >>> X = make_gaussian_clusters(100, random_state=0)
    >>> pca = DPPCA().fit(X)          # no random_state: a release to publish
    >>> release = export_release(pca)
    >>> release["privacy_spent"]["eps"] <= 1.0
    True
    >>> load_release(release).components_.shape
    (2, 20)

    With a path, the file is written and its path returned:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "released.json")
    >>> export_release(pca, path).name
    'released.json'
    >>> load_release(path).components_.shape
    (2, 20)

    A seeded fit (for tests and examples) is refused unless asked for, and then
    marked:

    >>> seeded = DPPCA(random_state=0).fit(X)
    >>> export_release(seeded, allow_seeded=True)[
    ...     "seeded_release_NOT_FOR_PUBLICATION"][:27]
    'made with a fixed random_st'
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    for attribute in ("components_", "privacy_ledger_", "privacy_spent_", "n_features_in_"):
        if getattr(estimator, attribute, None) is None:
            raise TypeError(
                f"export_release needs a fitted DPKendallDirections, DPScree or DPPCA "
                f"(or a ReleasedPCA); {type(estimator).__name__} has no {attribute}."
            )
    check_bool(include_nonprivate, "include_nonprivate")
    check_bool(allow_seeded, "allow_seeded")
    seeded = _estimator_block(estimator)["seeded"]
    if seeded and not allow_seeded:
        raise ValueError(
            "This fit was made with a fixed random_state: anyone who knows or guesses "
            "the seed can recompute its noise and remove it, so its release is not "
            "private (seeded fits are for tests and examples). Refit with "
            "random_state=None to publish, or pass allow_seeded=True to write it "
            f"marked {SEEDED_KEY!r}.")
    if include_nonprivate and getattr(estimator, "nonprivate_", None) is None:
        raise ValueError(
            "include_nonprivate=True but the estimator stores no non-private "
            "reference; fit it with compute_nonprivate=True."
        )
    release = _write_layout(estimator, include_nonprivate)
    if seeded:
        release[SEEDED_KEY] = (
            "made with a fixed random_state: its noise can be recomputed by anyone who "
            "knows or guesses the seed; not private, for tests and examples only")
    if isinstance(estimator, ReleasedPCA) and estimator.release_:
        # keep the metadata a loaded release came with (``extra`` may override it)
        extra = {**estimator.release_, **(extra or {})}
    if extra is not None:
        check_param(extra, [dict], "extra")
        clash = sorted(set(map(str, extra)) & RESERVED)
        if clash:
            raise ValueError(f"extra must not reuse keys of the release: {clash}.")
        release.update({str(key): json_metadata(value) for key, value in extra.items()})

    text = json.dumps(release, indent=1, allow_nan=False)   # a last guard against NaN
    if path is None:
        return release
    with open(os.fspath(path), "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.write("\n")
    return Path(path)
