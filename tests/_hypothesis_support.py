"""The hypothesis profiles, cached draws and the outcome contract shared by the
property-test modules.

Each property test names its nominal number of cases (2000 for the estimators, each
display and the command line; 300 for ``plot_overview``). The environment variable
``HYPOTHESIS_PROFILE`` chooses the share that runs:

* ``ci`` (the default, what a plain ``pytest`` and CI run): one case in twenty, at
  least 10 (100 of 2000 per display); derandomized, so every run draws the same
  cases; no example database; a failing case is reported as found, not shrunk;
* ``quick``: one case in forty (50 of 2000), otherwise as ``ci``, for a fast check
  while editing;
* ``thorough``: the full nominal counts, on request (about twenty times as long
  as ``ci``); fresh random seeds on every run, and a failing case shrunk to a
  minimal one with the ``@reproduce_failure`` blob that replays it.

For example ``HYPOTHESIS_PROFILE=thorough pytest tests/test_hypothesis_displays.py``.
"""

import os
import re
import warnings

from hypothesis import HealthCheck, Phase, event, note, settings
from hypothesis import strategies as st

#: Share of each test's nominal case count run under each profile.
PROFILE_SCALE = {"ci": 0.05, "quick": 0.025, "thorough": 1.0}
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in PROFILE_SCALE:
    raise ValueError(f"HYPOTHESIS_PROFILE must be one of {sorted(PROFILE_SCALE)}, "
                     f"got {PROFILE!r}.")
#: Fewest cases a property test runs under any profile.
MIN_EXAMPLES = 10
_THOROUGH = PROFILE == "thorough"
_PROFILE_SETTINGS = settings(
    deadline=None,
    derandomize=not _THOROUGH,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
    # a derandomized profile reproduces a failure by rerunning; a random one prints
    # the @reproduce_failure blob
    print_blob=_THOROUGH,
    # shrinking these inputs can take many minutes: only on request
    phases=tuple(Phase) if _THOROUGH else (Phase.explicit, Phase.reuse, Phase.generate),
    report_multiple_bugs=_THOROUGH,
)


def profile_examples(examples):
    """The number of cases a test of ``examples`` nominal cases runs now."""
    return max(MIN_EXAMPLES, round(examples * PROFILE_SCALE[PROFILE]))


def profile_settings(examples):
    """Settings for a property test of ``examples`` nominal cases under the active
    profile (see the module docstring)."""
    return settings(_PROFILE_SETTINGS, max_examples=profile_examples(examples))


# Strategies are built once: building st.sampled_from(...) anew in every draw costs
# more than the draw.
_STRATEGY_CACHE = {}


def pick(draw, values):
    """``draw(st.sampled_from(values))``; hypothesis favours the first value."""
    key = ("pick", repr(values))
    if key not in _STRATEGY_CACHE:
        _STRATEGY_CACHE[key] = st.sampled_from(list(values))
    return draw(_STRATEGY_CACHE[key])


def integer(draw, low, high):
    """``draw(st.integers(low, high))``."""
    key = ("int", low, high)
    if key not in _STRATEGY_CACHE:
        _STRATEGY_CACHE[key] = st.integers(low, high)
    return draw(_STRATEGY_CACHE[key])


def boolean(draw):
    return pick(draw, [False, True])


class strict_warnings(warnings.catch_warnings):
    """RuntimeWarnings are errors; UserWarnings (documented ones, missing glyphs)
    are ignored."""

    def __enter__(self):
        result = super().__enter__()
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)
        return result


def run_contract(call, expected, allowed=(), result_event="a result"):
    """``call()``: a result, or a ValueError/TypeError the input explains.

    ``expected`` lists (exception types, message regex) of which the call must
    raise one (empty: it must succeed); ``allowed`` lists further errors it may
    raise. A RuntimeWarning is an error. Returns the result, or None when the
    call (correctly) raised.
    """
    allowed = list(expected) + list(allowed)
    try:
        with strict_warnings():
            result = call()
    except (ValueError, TypeError) as error:
        message = str(error)
        note(f"raised {type(error).__name__}: {message}")
        for types, pattern in allowed:
            if isinstance(error, types) and re.search(pattern, message):
                event(f"outcome: {type(error).__name__} matching {pattern!r}")
                return None
        raise AssertionError(
            f"unexpected {type(error).__name__}: {message!r}; allowed: {allowed}"
        ) from error
    assert not expected, f"expected an error matching {expected}, got a result"
    event(f"outcome: {result_event}")
    return result
