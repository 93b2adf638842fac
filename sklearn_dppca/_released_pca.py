"""A loaded release: :func:`load_release` reads a file into a :class:`ReleasedPCA`,
the read-only fitted attributes of a private PCA that every display accepts in
place of a fitted estimator."""

import json
import os

import numpy as np

from ._algorithms._loading_noise import ledger_kendall_noise_scale, loading_noise_scale
from ._algorithms._projection import back_project, project, whitening_scale
from ._release_layout import FORMAT, FORMAT_PREFIX, RESERVED
from ._release_read import read_attributes
from ._validation import as_real_numbers, check_projections

__all__ = ["ReleasedPCA", "load_release"]

#: The top-level key that marks the file of a seeded fit (``export_release``'s
#: ``allow_seeded=True``); written from ``seeded_``, never kept as metadata.
SEEDED_KEY = "seeded_release_NOT_FOR_PUBLICATION"


def load_release(path_or_dict):
    """Read a release written by :func:`export_release`.

    Nothing is recomputed: the object returned holds the released values as the
    file has them, checked for type, shape and finiteness, and cannot be refitted.

    Parameters
    ----------
    path_or_dict : str, path-like or dict
        A JSON file, or the dict :func:`export_release` returned.

    Returns
    -------
    release : ReleasedPCA
        A read-only object with the fitted attributes of the estimator that made
        the release; pass it to any display's ``from_estimator`` or to
        :func:`~sklearn_dppca.display.plot_overview`.

    Raises
    ------
    ValueError
        If the content is not a release of a known format, has an entry of the
        wrong type, is inconsistent (shapes) or holds a NaN or infinite value.

    See Also
    --------
    export_release : Write the release of a fitted estimator.
    ReleasedPCA : The object returned.

    Examples
    --------
    >>> from sklearn_dppca import DPPCA, export_release, load_release
    >>> from sklearn_dppca.datasets import make_gaussian_clusters
    >>> X = make_gaussian_clusters(random_state=0)
    >>> pca = DPPCA(bins=(20, 20)).fit(X)            # no seed: a release to publish
    >>> released = load_release(export_release(pca))
    >>> released.score_histogram_.shape
    (20, 20)
    >>> released.components_.shape == pca.components_.shape
    True
    """
    if isinstance(path_or_dict, dict):
        content = path_or_dict
    else:
        with open(os.fspath(path_or_dict), encoding="utf-8") as handle:
            try:
                content = json.load(handle, parse_constant=_reject_constant)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path_or_dict}: not valid JSON ({error}).") from None
    return ReleasedPCA(content)


def _reject_constant(name):
    raise ValueError(f"A release must not contain {name}.")


class ReleasedPCA:
    """A loaded release: the fitted attributes of a private PCA, read-only.

    Built by :func:`load_release` from the JSON of :func:`export_release`. It
    carries the attributes the displays read (``components_``,
    ``explained_variance_``, ``explained_variance_ratio_``, ``frame_``,
    ``bin_edges_``, ``score_histogram_``, ``score_histograms_``,
    ``synthetic_scores_``, ``synthetic_groups_``, ``groups_``, ``axes_``,
    ``privacy_spent_``, ``privacy_ledger_``, ...), counts as fitted for
    scikit-learn, and is frozen: it holds no data, ``fit`` is a no-op (it reads
    nothing and spends nothing) and a clone is the release itself, as with
    scikit-learn's :class:`~sklearn.frozen.FrozenEstimator`. So a release can be
    the first step of a :class:`~sklearn.pipeline.Pipeline` whose later steps
    learn from its projections (``make_pipeline(release, LogisticRegression())``),
    also under cross-validation or a grid search. An attribute the release does
    not contain (for example the score summary of a
    :class:`~sklearn_dppca.DPScree`) is None.

    Parameters
    ----------
    release : dict
        The content of a release (see :func:`export_release`).

    Attributes
    ----------
    n_samples_ : int
        Number of rows of the fit (public).
    n_features_in_ : int
        Number of variables (public).
    feature_names_in_ : ndarray of str
        Column names (public); ``x0, x1, ...`` for a fit on an array.
    n_components_ : int
        Number of components released.
    components_ : ndarray of shape (n_components, n_features)
        Private directions, one per row.
    explained_variance_ : ndarray of shape (n_components,) or None
        Private variances (post-processed).
    explained_variance_raw_ : ndarray of shape (n_components,) or None
        Private variances as released (a clipped one read at the middle of
        the losses its allowance gives).
    explained_variance_ratio_ : ndarray of shape (n_components,) or None
        Private PVE: ``explained_variance_ / total_variance_``, a share of the
        total variance (summing below 1 when fewer components than variables are
        kept).
    explained_variance_ratio_noise_scale_ : ndarray of shape (n_components,) or None
        Standard deviation of each share (noise and clipping; NaN where the
        share is not estimable); None in a release written without it.
    noise_scale_ : float, ndarray or None
        Standard deviation(s) of the release's Gaussian noise; for a scree,
        of each raw private variance, a clipped one's with its clipping
        allowance (as the fit stated it).
    scale_ : ndarray of shape (n_features,) or None
        What each column was divided by when the fit scaled the columns
        (``scale=True``): its private spread, or its declared box's public unit
        (``width / sqrt(12)``); NaN where a column kept its unit. ``transform``
        divides by it.
    scale_origin_ : ndarray of shape (n_features,) or None
        Per column, ``"private"``, ``"box"`` or ``"none"``: where ``scale_``
        came from.
    feature_variance_ : ndarray of shape (n_features,) or None
        Private variance of each column in the units the components act on (all
        ones for a scaled fit).
    feature_variance_noise_scale_ : ndarray of shape (n_features,) or None
        Noise standard deviation of each (for a scaled fit: the relative noise of
        the released spread).
    total_variance_ : float or None
        Private total variance (at least the sum of ``explained_variance_``).
    total_variance_noise_scale_ : float or None
        Its noise standard deviation.
    histogram_threshold_ : float or None
        Count threshold applied to the additive score histogram (None for the
        sparse histogram or without a score summary).
    expected_noise_cells_ : float or None
        Expected number of cells of the score grid (all groups together) that are
        pure noise yet pass the threshold (0 for the sparse histogram); None
        without a score summary.
    clip_bounds_ : ndarray or None
        Private clip bound(s) of the scree.
    kendall_matrix_ : ndarray of shape (n_features, n_features) or None
        The released noisy Kendall matrix.
    kendall_eigenvalues_ : ndarray or None
        Its eigenvalues (a DPKendallDirections release).
    kendall_noise_scale_ : float or None
        The sd of the diagonal noise of ``kendall_matrix_``, read off the
        ledger's symmetric Gaussian entry (None without one).
    components_noise_scale_ : ndarray of shape (n_components, n_features) or None
        Approximate noise sd of each entry of ``components_``, computed from the
        release's values (first-order perturbation theory on
        ``kendall_matrix_``, capped at 1; None without the matrix).
    radius_ : float or None
        The clip radius of directions fitted with ``radial="clipped"``, else None.
    axes_ : tuple of int or None
        The two components (0-based) of the score summary.
    frame_ : Bunch or None
        ``center``, ``radius``, ``half_width``, ``extent``.
    bin_edges_ : tuple of two ndarrays or None
        Cell edges of the score histogram along each axis.
    score_histogram_ : ndarray or None
        Normalised private score histogram, indexed ``[ix, iy]``.
    groups_ : list or None
        The declared public group labels.
    score_histograms_ : dict or None
        Label -> normalised private histogram of that group.
    synthetic_scores_ : ndarray of shape (n_synthetic, 2) or None
        Score points drawn from the private histograms (post-processing).
    synthetic_groups_ : ndarray of object or None
        The group of each synthetic point.
    budget_ : dict or None
        Each part's nominal share of the grant, ``(share * eps, share * delta)``.
    privacy_spent_ : tuple (eps, delta)
        Total privacy spent by the fit.
    privacy_ledger_ : list of dict
        One entry per mechanism call of the fit.
    plan_ : pandas.DataFrame or None
        The fit's budget plan (what it bought, and the eps and the split each
        part it could not buy needs); None in a file written before plans were
        released (a file written before the splits has no split columns).
    nonprivate_ : Bunch or None
        Only when the file holds the ``"nonprivate_reference_NOT_PRIVATE"`` key.
        NOT private.
    estimator_class_ : str
        Name of the estimator class that made the release.
    estimator_params_ : dict
        Public parameters of the estimator (``random_state`` is never written).
    seeded_ : bool
        Whether the fit used a fixed ``random_state``.
    method_label_ : str or None
        The scree method.
    release_ : dict
        The extra top-level metadata of the file (for example what the command
        line adds).

    See Also
    --------
    load_release : Build one from a file or dict.
    export_release : Write the release of a fitted estimator.

    Examples
    --------
    >>> from sklearn_dppca import DPKendallDirections, ReleasedPCA, export_release
    >>> from sklearn_dppca.datasets import make_gaussian_clusters
    >>> X = make_gaussian_clusters(50, random_state=0)
    >>> est = DPKendallDirections(n_components=2).fit(X)
    >>> released = ReleasedPCA(export_release(est))
    >>> released.estimator_class_, released.transform(X).shape
    ('DPKendallDirections', (250, 2))
    >>> released.score_histogram_ is None
    True

    A release as a pipeline step: fitting the pipeline fits only the classifier.

    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> X, y = make_gaussian_clusters(50, return_groups=True, random_state=0)
    >>> pipe = make_pipeline(released, LogisticRegression()).fit(X, y)
    >>> pipe.predict(X).shape
    (250,)
    """

    def __init__(self, release):
        if not isinstance(release, dict):
            raise TypeError(f"A release is a dict, got {type(release).__name__}.")
        fmt = release.get("format")
        if not isinstance(fmt, str) or not fmt.startswith(FORMAT_PREFIX):
            raise ValueError(
                f"Not a sklearn-dppca release (format {fmt!r}; expected {FORMAT!r})."
            )
        if fmt != FORMAT:
            raise ValueError(
                f"Release format {fmt!r} is not supported by this version (reads {FORMAT!r})."
            )
        values = {}
        try:
            self._read(release, values)
        except KeyError as error:
            raise ValueError(f"The release has no {error.args[0]!r} entry.") from None
        except (TypeError, AttributeError, IndexError) as error:
            # an entry of the wrong type (a number where a list belongs, ...)
            raise ValueError(f"The release has a malformed entry: {error}") from None
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @staticmethod
    def _read(release, values):
        values.update(read_attributes(release))
        values["_plan_rows"] = values.pop("plan_", None)   # (plan_ makes the DataFrame)
        scree = values["explained_variance_"] is not None
        params = values["estimator_params_"]
        values["method_label_"] = (params.get("scree_method", params.get("method"))
                                   if scree else None)
        values["kendall_noise_scale_"] = ledger_kendall_noise_scale(
            values["privacy_ledger_"])
        noise = loading_noise_scale(values["kendall_matrix_"],
                                    values["kendall_noise_scale_"], values["components_"])
        if noise is not None:
            noise.setflags(write=False)
        values["components_noise_scale_"] = noise
        values["release_"] = {key: value for key, value in release.items()
                              if key not in RESERVED and key != SEEDED_KEY}

    @property
    def plan_(self):
        """The fit's budget plan, as the estimator's ``plan_`` (a DataFrame).

        None for a release written before plans were released.
        """
        if self._plan_rows is None:
            return None
        from ._algorithms._plan import plan_frame

        return plan_frame(list(self._plan_rows))

    # The released values (public names) are read-only. A private name is
    # bookkeeping a meta-estimator attaches to its steps while it fits them
    # (scikit-learn's Pipeline links its callback context so), never a value of
    # the release: it may be set and deleted.
    def __setattr__(self, name, value):
        if not name.startswith("_"):
            raise AttributeError(f"ReleasedPCA is read-only: cannot set {name!r}.")
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if not name.startswith("_"):
            raise AttributeError(f"ReleasedPCA is read-only: cannot delete {name!r}.")
        object.__delattr__(self, name)

    def __sklearn_is_fitted__(self):
        return True

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags())

    def __repr__(self):
        eps, delta = self.privacy_spent_
        return (
            f"ReleasedPCA({self.estimator_class_}, n_samples={self.n_samples_}, "
            f"n_features={self.n_features_in_}, n_components={self.n_components_}, "
            f"eps={eps:g}, delta={delta:g})"
        )

    def __sklearn_clone__(self):
        # frozen: scikit-learn's clone (cross-validation, grid search, a cloned
        # Pipeline) reuses the release, as it does a FrozenEstimator
        return self

    def fit(self, X=None, y=None, **fit_params):
        """No-op: a release is frozen.

        Nothing is read from ``X`` or ``y`` and nothing is spent; the release is
        returned unchanged. This lets a release be a step of a
        :class:`~sklearn.pipeline.Pipeline` (whose ``fit`` fits every step), as
        scikit-learn's :class:`~sklearn.frozen.FrozenEstimator` does for a
        fitted estimator. To fit on new data, fit a :class:`~sklearn_dppca.DPPCA`.

        Parameters
        ----------
        X : object, default=None
            Ignored.
        y : object, default=None
            Ignored.
        **fit_params : dict
            Ignored.

        Returns
        -------
        self : ReleasedPCA
            The release itself.
        """
        return self

    def transform(self, X):
        """Project ``X`` on the released directions, as the estimator's ``transform``.

        ``X @ components_.T``; with a released ``scale_`` (a fit with
        ``scale=True``) each column is first divided by its private spread, and a
        release of a fit with ``whiten=True`` divides each projection by the
        square root of its private variance. Not centred, as the estimators'
        ``transform`` (subtract ``frame_.center`` for the score axes if you need a
        centre). The projection of rows you pass is not a private release.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to project; a DataFrame's columns are matched by name.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components)
            The projections on the released directions.
        """
        if hasattr(X, "columns"):
            missing = [name for name in self.feature_names_in_ if name not in X.columns]
            if missing:
                raise ValueError(f"X lacks the released columns {missing}.")
            X = X[list(self.feature_names_in_)]
        X = np.asarray(as_real_numbers(X), dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_features_in_}), got {X.shape}."
            )
        return project(X, self.components_, self.scale_, self._whitening())

    def inverse_transform(self, X):
        """Map projections back to the feature space, as the estimator does.

        The back-projection onto the span of the released directions: the rows
        of ``transform(X)`` come back as the orthogonal projection of ``X`` on
        that span. No mean is added: none is released.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Projections, as ``transform`` returns them.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``X @ components_``, with ``X`` first multiplied by the
            square root of each private variance for a release of a fit with
            ``whiten=True`` and the result multiplied by a released ``scale_``;
            in the dtype of ``X``.
        """
        X = check_projections(X, self.n_components_)
        return back_project(X, self.components_, self.scale_, self._whitening())

    def _whitening(self):
        """The divisors of a whitened projection (None: the fit did not whiten)."""
        if not self.estimator_params_.get("whiten", False):
            return None
        if self.explained_variance_ is None:
            raise ValueError("The release was fitted with whiten=True but holds no "
                             "private variances to whiten with.")
        return whitening_scale(self.explained_variance_)

    def summary(self):
        """Summarise the release (nothing is recomputed).

        Returns
        -------
        FitSummary
            ``str()`` of it is the plain-text summary; it renders as HTML in
            Jupyter.
        """
        from ._summary import summarize

        return summarize(self)
