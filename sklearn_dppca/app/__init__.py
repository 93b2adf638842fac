"""The explorer: a local web app for differentially private PCA on a kept budget.

An optional extra (``pip install "sklearn-dppca[app]"``, Shiny for Python). Start it
with ``python -m sklearn_dppca app [data.csv] --budget EPS,DELTA`` or from Python
with :func:`run`. Every fit is charged to the data set's
:class:`~sklearn_dppca.PrivacyAccountant`, saved in a JSON file beside the data
before the fit computes and loaded on restart, and its release is kept beside that
file and listed again after a restart; a fit that would exceed what is left is
refused before any computation; redrawing released values is free. Importing this
module does not import Shiny: :func:`run` and :func:`create_app` do.
"""

from ._launch import create_app, run

__all__ = ["create_app", "run"]
