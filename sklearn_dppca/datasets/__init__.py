"""Data sets: the synthetic Gaussian clusters of the R package (``gau``) and thin
pandas wrappers around scikit-learn's bundled real data sets, and the numeric
columns of the UCI Adult data (shipped with the package; no network access)."""

from ._generators import make_gaussian_clusters
from ._loaders import load_adult, load_breast_cancer_frame, load_wine_frame

__all__ = ["load_adult", "load_breast_cancer_frame", "load_wine_frame", "make_gaussian_clusters"]
