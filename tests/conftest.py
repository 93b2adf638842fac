"""Test-session setup shared by every test module.

Tests marked ``slow`` (long statistical checks) are left
out of a plain ``pytest`` run. ``pytest -m slow`` runs only them; ``pytest
--run-slow`` (or the environment variable ``SKLEARN_DPPCA_RUN_SLOW=1``) runs them
with everything else. Any ``-m`` expression of your own replaces the default.
"""

import os
import sys

import pytest

# scikit-learn's array-API check (``check_array_api_input``) runs only when SciPy
# was imported with array-API support switched on; set it before anything imports
# SciPy so that check runs instead of being skipped.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# Plots never need a screen.
os.environ.setdefault("MPLBACKEND", "Agg")

RUN_SLOW_ENV = "SKLEARN_DPPCA_RUN_SLOW"


def pytest_addoption(parser):
    parser.addoption(
        "--audit-full",
        action="store_true",
        default=False,
        help="Multiply the run counts of the end-to-end privacy audits "
        "(tests/test_audit_estimators.py) by 20: sharper bounds, about 8 minutes.",
    )
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="Also run the tests marked 'slow' (left out by default; "
        f"-m slow runs only them; {RUN_SLOW_ENV}=1 has the same effect).",
    )


def _run_slow(config):
    if config.getoption("--run-slow"):
        return True
    return os.environ.get(RUN_SLOW_ENV, "").strip().lower() not in ("", "0", "false", "no")


def pytest_collection_modifyitems(config, items):
    """Deselect the ``slow`` tests unless asked for (see the module docstring)."""
    if config.getoption("markexpr", default="") or _run_slow(config):
        return
    kept, slow = [], []
    for item in items:
        (slow if item.get_closest_marker("slow") is not None else kept).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = kept


def pytest_report_header(config):
    if config.getoption("markexpr", default="") or _run_slow(config):
        return None
    return (f"tests marked 'slow' are deselected (run them with -m slow, --run-slow "
            f"or {RUN_SLOW_ENV}=1)")


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure a test left open (when pyplot is in use)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
