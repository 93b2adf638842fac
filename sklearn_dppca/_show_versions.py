"""``show_versions``: what a bug report needs to say about the installation."""

import os
import platform
import sys
from importlib import metadata

# Distributions whose versions are printed (import name -> distribution name): the
# run-time dependencies of pyproject.toml, then the optional ones that change what
# runs (Dask inputs, the explorer).
_DEPENDENCIES = {
    "numpy": "numpy",
    "scipy": "scipy",
    "sklearn": "scikit-learn",
    "matplotlib": "matplotlib",
    "joblib": "joblib",
    "pandas": "pandas",
    "threadpoolctl": "threadpoolctl",
    "dask": "dask",
    "distributed": "distributed",
    "shiny": "shiny",
}


# the variable that forces a kernel route (read by _kendall_kernel at import; named
# here too so that the report names it when the kernel fails to import)
_ROUTE_VARIABLE = "SKLEARN_DPPCA_KERNEL"


def _distribution_version(name):
    # read from the installed metadata: nothing is imported, so a broken dependency
    # still shows up in the report instead of stopping it
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _kernel_info():
    """(name, value) rows about the compiled kernel, or the error importing it."""
    forced = os.environ.get(_ROUTE_VARIABLE)
    try:
        from ._kendall_kernel import KERNEL_LANES, available_routes, current_route
    except Exception as error:      # a forced route this CPU lacks, a broken build
        return [("route", f"unavailable ({type(error).__name__}: {error})")]
    return [
        ("route", current_route()),
        ("lanes", str(KERNEL_LANES)),
        ("available", ", ".join(available_routes())),
        (_ROUTE_VARIABLE, "(unset: auto)" if forced is None else forced),
        ("file", sys.modules[f"{__package__}._kendall_kernel"].__file__),
    ]


def _rows_text(title, rows):
    width = max(len(name) for name, _ in rows)
    lines = [f"\n{title}:"]
    lines += [f"{name:>{width + 4}}: {value}" for name, value in rows]
    return "\n".join(lines)


def show_versions():
    """Print the versions of Python and the dependencies, and the kernel route.

    The same report as scikit-learn's :func:`sklearn.show_versions`, for a bug
    report: the system (Python, its executable, the machine), the installed
    versions of sklearn-dppca and of each dependency (read from the installed
    package metadata, so nothing is imported but the kernel), and the compiled pair
    kernel: the route in use (``avx512``, ``avx2``, ``portable`` or ``plain``),
    the routes this CPU runs, and the value of ``SKLEARN_DPPCA_KERNEL``, which
    forces a route (see the installation page).

    See Also
    --------
    spherical_kendall : The statistic the kernel computes.

    Examples
    --------
    >>> import sklearn_dppca
    >>> sklearn_dppca.show_versions()  # doctest: +ELLIPSIS
    <BLANKLINE>
    System:
    ...
    Kernel:
    ...route: ...
    """
    from ._version import __version__

    system = [
        ("python", sys.version.replace("\n", " ")),
        ("executable", sys.executable),
        ("machine", platform.platform()),
    ]
    dependencies = [("sklearn-dppca", __version__)]
    dependencies += [(name, _distribution_version(distribution) or "not installed")
                     for name, distribution in _DEPENDENCIES.items()]
    print(_rows_text("System", system))
    print(_rows_text("Python dependencies", dependencies))
    print(_rows_text("Kernel", _kernel_info()))
