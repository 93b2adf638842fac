"""The package version and the address of its documentation, in one place
(``pyproject.toml`` reads the version from here)."""

__version__ = "0.1.0"

#: Base address of the HTML documentation built from ``doc/`` (Sphinx), ending
#: in "/". The documentation is not hosted yet: this is a placeholder to replace
#: once it is. The "?" link of each estimator's HTML repr (Jupyter) points to
#: the API page Sphinx writes for it, ``generated/sklearn_dppca.<Name>.html``
#: under this address.
DOCS_URL = "https://sklearn-dppca.readthedocs.io/en/latest/"
