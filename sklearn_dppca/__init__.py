"""sklearn-dppca: differentially private PCA and its five standard pictures.

Public estimators follow scikit-learn's API; the mechanisms live in
:mod:`sklearn_dppca.privacy`, the pictures in :mod:`sklearn_dppca.display`.

The names below are loaded on first use (PEP 562): ``import sklearn_dppca`` alone
does not import scikit-learn, so that reading and drawing a saved release
(``python -m sklearn_dppca --from-json``) does not pay for it.
"""

import importlib

from ._version import __version__

# public name -> the private module that defines it
_HOMES = {
    "BudgetExceededError": ".privacy",
    "DPKendallDirections": "._directions",
    "DPPCA": "._pca",
    "DPScree": "._scree",
    "FitSummary": "._summary",
    "InvalidParameterError": "._validation",
    "PrivacyAccountant": ".privacy",
    "PrivacyRiskWarning": ".privacy",
    "PrivacyUtilityWarning": ".privacy",
    "ReleasedPCA": "._released_pca",
    "export_release": "._release_write",
    "load_release": "._released_pca",
    "show_versions": "._show_versions",
    "spherical_kendall": "._kendall",
}

__all__ = [*sorted(_HOMES), "__version__"]


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    globals()[name] = value          # later lookups skip this function
    return value


def __dir__():
    return sorted({*globals(), *_HOMES})
