"""sklearn-dppca: differentially private PCA and its five standard pictures.

Public estimators follow scikit-learn's API; the mechanisms live in
:mod:`sklearn_dppca.privacy`, the pictures in :mod:`sklearn_dppca.display`.
"""

from ._directions import DPKendallDirections
from ._kendall import spherical_kendall
from ._pca import DPPCA
from ._release import ReleasedPCA, export_release, load_release
from ._scree import DPScree
from ._summary import FitSummary
from ._version import __version__
from .privacy import (
    BudgetExceededError,
    PrivacyAccountant,
    PrivacyRiskWarning,
    PrivacyUtilityWarning,
)

__all__ = [
    "BudgetExceededError",
    "DPKendallDirections",
    "DPPCA",
    "DPScree",
    "FitSummary",
    "PrivacyAccountant",
    "PrivacyRiskWarning",
    "PrivacyUtilityWarning",
    "ReleasedPCA",
    "export_release",
    "load_release",
    "spherical_kendall",
    "__version__",
]
