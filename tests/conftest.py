"""Test-session setup shared by every test module."""

import os
import sys

import pytest

# scikit-learn's array-API check (``check_array_api_input``) runs only when SciPy
# was imported with array-API support switched on; set it before anything imports
# SciPy so that check runs instead of being skipped.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# Plots never need a screen.
os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_addoption(parser):
    parser.addoption(
        "--audit-full",
        action="store_true",
        default=False,
        help="Multiply the run counts of the end-to-end privacy audits "
        "(tests/test_audit_estimators.py) by 20: sharper bounds, about 8 minutes.",
    )


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every matplotlib figure a test left open (when pyplot is in use)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
