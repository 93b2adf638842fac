"""The layout of a release, declared once.

:data:`LAYOUT` describes every top-level key of the JSON that
:func:`~sklearn_dppca.export_release` writes, in the order it writes them: the
fitted attribute the key holds, how the value is written (its kind and shape),
whether it may be null, and which estimators release it. The writer
(:mod:`sklearn_dppca._release_write`) and the reader
(:mod:`sklearn_dppca._release_read`) both walk this list, so they cannot disagree
about a key.

Shapes name their dimensions: ``"k"`` is the number of components and ``"p"``
the number of variables (both set by ``components``), ``"bx"`` and ``"by"`` the
cells of the score grid along each axis (set by ``bin_edges``), None any length,
an int that length. An entry may allow several shapes (``noise_scale``: one
number for the directions, one per component for a scree).
"""

from dataclasses import dataclass

__all__ = ["Entry", "FORMAT", "FRAME_LAYOUT", "LAYOUT", "NONPRIVATE_KEY",
           "NONPRIVATE_LAYOUT", "WITHHELD_PARAMS"]

#: Name and version of the layout.
FORMAT = "sklearn-dppca-release/1"
FORMAT_PREFIX = "sklearn-dppca-release/"

#: The only key under which non-private values may ever appear.
NONPRIVATE_KEY = "nonprivate_reference_NOT_PRIVATE"

#: Estimator parameters that are never written: a seed lets anyone who knows it
#: regenerate the noise and subtract it from the release; an accountant is a live
#: budget of the data set, not a setting of this release.
WITHHELD_PARAMS = ("random_state", "accountant")

_DIRECTIONS, _SCREE, _PCA = "DPKendallDirections", "DPScree", "DPPCA"
_EVERY = (_DIRECTIONS, _SCREE, _PCA)
_WITH_VARIANCES = (_SCREE, _PCA)


@dataclass(frozen=True)
class Entry:
    """One key of a release.

    Parameters
    ----------
    key : str
        The JSON key.
    attribute : str or tuple of str or None
        The fitted attribute(s) the key holds (None: metadata that a
        :class:`~sklearn_dppca.ReleasedPCA` does not keep).
    kind : str
        How the value is written: ``"array"`` (finite numbers of one of
        ``shapes``, read back as a read-only float array), ``"number"`` (one
        finite number, read back as a float), ``"count"`` (an int at least
        ``minimum``), ``"names"`` (``p`` strings), ``"origins"`` (``p`` of
        ``"private"``, ``"box"`` and ``"none"``), ``"labels"`` (a list of
        str, int, float or bool), ``"point_labels"`` (one label per synthetic
        point, each one of ``groups``), or the name of a structured entry
        (``"format"``, ``"software"``, ``"estimator"``, ``"spent"``,
        ``"ledger"``, ``"plan"``, ``"budget"``, ``"axes"``, ``"frame"``, ``"edges"``,
        ``"histograms"``, ``"nonprivate"``).
    written_by : tuple of str
        The estimators whose release holds it (null in the others').
    optional : bool
        Whether it may be null (or absent) in a release of an estimator that
        writes it.
    shapes : tuple of tuple
        The shapes an ``"array"``, ``"names"`` or ``"histograms"`` value may have
        (a ``"number"`` has shape ``()``).
    bound : {None, "non_negative", "positive"}
        A bound on every number of an ``"array"`` or ``"number"``.
    minimum : int
        The least value of a ``"count"``.
    equals : str or None
        The dimension a ``"count"`` must equal (``"k"`` or ``"p"``).
    together : str or None
        Entries with the same tag are released together (or are all null).
    needs : tuple of str
        Keys that must not be null when this one is not.
    omit_null : bool
        Left out of the JSON instead of written as null.
    not_estimable : bool
        Whether an ``"array"`` or ``"number"`` may hold NaN (a quantity the fit
        could not estimate), written as the string ``"not estimable"`` in place
        of the number or of one element (infinity stays refused).
    """

    key: str
    attribute: object
    kind: str
    written_by: tuple = _EVERY
    optional: bool = True
    shapes: tuple = ()
    bound: object = None
    minimum: int = 0
    equals: object = None
    together: object = None
    needs: tuple = ()
    omit_null: bool = False
    not_estimable: bool = False

    def __post_init__(self):
        if self.kind == "number" and not self.shapes:    # one number: shape ()
            object.__setattr__(self, "shapes", ((),))


def _array(key, shapes, written_by=_EVERY, **options):
    """An ``"array"`` entry held in the attribute ``key + "_"``."""
    return Entry(key, key + "_", "array", written_by, shapes=shapes, **options)


def _scree_number(key):
    return Entry(key, key + "_", "number", _WITH_VARIANCES, bound="non_negative",
                 together="scree", not_estimable=True)


#: Every top-level key, in the order :func:`~sklearn_dppca.export_release` writes them.
LAYOUT = (
    Entry("format", None, "format", optional=False),
    Entry("software", None, "software"),
    Entry("estimator", ("estimator_class_", "estimator_params_", "seeded_"), "estimator"),
    Entry("n_samples", "n_samples_", "count", optional=False, minimum=2),
    Entry("n_features", "n_features_in_", "count", optional=False, minimum=1,
          equals="p"),
    Entry("feature_names", "feature_names_in_", "names", optional=False,
          shapes=(("p",),)),
    Entry("n_components", "n_components_", "count", optional=False, minimum=1,
          equals="k"),
    Entry("privacy_spent", "privacy_spent_", "spent", optional=False),
    Entry("privacy_ledger", "privacy_ledger_", "ledger", optional=False),
    # the fit's budget plan (plan_): what it bought, and the eps each part it could
    # not buy needs (public: made from n, p and the settings before any data row)
    Entry("plan", "plan_", "plan", omit_null=True),
    Entry("budget", "budget_", "budget", (_PCA,), omit_null=True),
    _array("components", (("k", "p"),), optional=False),
    # (NaN, "not estimable", where the fit could not buy a value)
    _array("explained_variance", (("k",),), _WITH_VARIANCES, bound="non_negative",
           together="scree", not_estimable=True),
    _array("explained_variance_raw", (("k",),), _WITH_VARIANCES, together="scree",
           not_estimable=True),
    _array("explained_variance_ratio", (("k",),), _WITH_VARIANCES, together="scree",
           not_estimable=True),
    # releases written before it was kept have none (and write back without it)
    _array("explained_variance_ratio_noise_scale", (("k",),), _WITH_VARIANCES,
           bound="non_negative", not_estimable=True, needs=("explained_variance_ratio",),
           omit_null=True),
    # one number for the directions' matrix, one per component for a scree
    _array("noise_scale", ((), ("k",)), optional=False, bound="non_negative",
           not_estimable=True),
    # one bound for norm clipping, one per component for component clipping
    _array("clip_bounds", ((1,), ("k",)), _WITH_VARIANCES, bound="positive",
           not_estimable=True),
    _array("kendall_matrix", (("p", "p"),)),
    _array("kendall_eigenvalues", (("p",),), (_DIRECTIONS,)),
    # the clip radius of radial="clipped" directions (private or public)
    Entry("radius", "radius_", "number", (_DIRECTIONS, _PCA), bound="positive",
          omit_null=True),
    _array("score_histogram", (("bx", "by"),), (_PCA,), together="score"),
    _array("synthetic_scores", ((None, 2),), (_PCA,)),
    # the private spreads of a scaled fit (scale=True)
    _array("scale", (("p",),), bound="positive", not_estimable=True),
    # what divided each column: its private spread, its box's public unit, none
    Entry("scale_origin", "scale_origin_", "origins", needs=("scale",), omit_null=True),
    _array("feature_variance", (("p",),), _WITH_VARIANCES, bound="non_negative",
           together="scree", not_estimable=True),
    _array("feature_variance_noise_scale", (("p",),), _WITH_VARIANCES,
           bound="non_negative", together="scree", not_estimable=True),
    _scree_number("total_variance"),
    _scree_number("total_variance_noise_scale"),
    Entry("axes", "axes_", "axes", (_PCA,)),
    Entry("frame", "frame_", "frame", (_PCA,), together="score", needs=("axes",)),
    Entry("bin_edges", "bin_edges_", "edges", (_PCA,), together="score"),
    Entry("groups", "groups_", "labels", (_PCA,)),
    Entry("score_histograms", "score_histograms_", "histograms", (_PCA,),
          shapes=(("bx", "by"),), needs=("groups", "score_histogram")),
    Entry("synthetic_groups", "synthetic_groups_", "point_labels", (_PCA,),
          needs=("synthetic_scores",)),
    # null for the sparse histogram, which thresholds inside its mechanism
    Entry("histogram_threshold", "histogram_threshold_", "number", (_PCA,),
          bound="non_negative", needs=("score_histogram",)),
    # 0 for the sparse histogram (noise on non-empty cells only)
    Entry("expected_noise_cells", "expected_noise_cells_", "number", (_PCA,),
          bound="non_negative", together="score", needs=("score_histogram",)),
    Entry(NONPRIVATE_KEY, "nonprivate_", "nonprivate", omit_null=True),
)

#: The keys of ``frame``: the private centre of the score axes, the private radius
#: of the cloud, the half width of the plotted window and its extent
#: ``[x_min, x_max, y_min, y_max]``.
FRAME_LAYOUT = (
    Entry("center", "center", "array", optional=False, shapes=((2,),)),
    Entry("radius", "radius", "number", optional=False, bound="non_negative"),
    Entry("half_width", "half_width", "number", optional=False, bound="positive"),
    Entry("extent", "extent", "array", optional=False, shapes=((4,),)),
)

#: The keys of the non-private reference (NOT private; written on request only).
NONPRIVATE_LAYOUT = (
    Entry("components", "components", "array", shapes=((None, "p"),)),
    Entry("explained_variance", "explained_variance", "array", shapes=((None,),)),
    Entry("explained_variance_ratio", "explained_variance_ratio", "array",
          shapes=((None,),)),
    Entry("scores", "scores", "array", shapes=((None, None),)),
    Entry("score_histogram", "score_histogram", "array", shapes=((None, None),)),
    Entry("feature_variance", "feature_variance", "array", shapes=(("p",),)),
    Entry("total_variance", "total_variance", "array", shapes=((),)),
)

#: The keys read first: their shapes set the dimensions the others are checked
#: against (``components``: k and p; ``bin_edges``: bx and by).
DIMENSION_KEYS = ("components", "bin_edges")

#: The keys a release reserves (extra metadata may not reuse them).
RESERVED = frozenset(entry.key for entry in LAYOUT)


def together(tag):
    """The keys released together under ``tag``, in layout order."""
    return tuple(entry.key for entry in LAYOUT if entry.together == tag)
