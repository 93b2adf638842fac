"""Test-session setup shared by every test module."""

import os

# scikit-learn's array-API check (``check_array_api_input``) runs only when SciPy
# was imported with array-API support switched on; set it before anything imports
# SciPy so that check runs instead of being skipped.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# Plots never need a screen.
os.environ.setdefault("MPLBACKEND", "Agg")
