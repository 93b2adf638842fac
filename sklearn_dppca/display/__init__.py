"""The five DP PCA pictures, scikit-learn style displays, and the preview of a
fit's plan across eps (:class:`EpsPreviewDisplay`, public inputs only).

Each display follows scikit-learn's ``RocCurveDisplay`` pattern: the constructor
takes computed values, ``plot(ax=None, ...)`` draws and returns the display, and the
class method ``from_estimator(estimator, ...)`` reads a fitted estimator's released
attributes. Displays draw only released (private) quantities and post-processing of
them; a stored non-private reference (``compute_nonprivate=True``) is overlaid in
grey, dashed or hollow, and labelled "non-private reference". Style keywords
(``bar_kw``, ``arrow_kw``, ``**kwargs``...) accept matplotlib's aliases (``c``,
``lw``, ``ls``, ``ec``, ``fc``...), which replace the display's default style.
matplotlib is imported only when something is drawn.
"""

from ._biplot import BiplotDisplay
from ._eps_preview import EpsPreviewDisplay
from ._loading import LoadingDisplay
from ._overview import plot_overview
from ._score import ScoreDisplay
from ._scree import ScreeDisplay
from ._variable import VariableDisplay

__all__ = [
    "BiplotDisplay",
    "EpsPreviewDisplay",
    "LoadingDisplay",
    "ScoreDisplay",
    "ScreeDisplay",
    "VariableDisplay",
    "plot_overview",
]
