"""The hypothesis profile, cached draws and the outcome contract shared by the
property-test modules.

Each property test names its nominal number of cases (for example 2000); the
environment variable ``HYPOTHESIS_PROFILE`` scales it:

* ``ci`` (the default): one case in eight, at least 10 (250 of 2000): derandomized,
  no example database, no shrinking, so every run draws the same cases;
* ``quick``: one case in twenty (100 of 2000), for a fast check while editing;
* ``full``: the nominal count (2000), derandomized like ``ci``;
* ``thorough``: ten times the nominal count, random seeds, and shrinking of a
  failing case to a minimal one (prints a ``@reproduce_failure`` blob).
"""

import os
import re
import warnings

from hypothesis import HealthCheck, Phase, event, note, settings
from hypothesis import strategies as st

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
#: Share of each test's nominal case count run under each profile.
PROFILE_SCALE = {"ci": 0.125, "default": 0.125, "quick": 0.05, "full": 1.0,
                 "thorough": 10.0}
_SCALE = PROFILE_SCALE
if PROFILE not in _SCALE:
    raise ValueError(f"HYPOTHESIS_PROFILE must be one of {sorted(_SCALE)}, got {PROFILE!r}.")


def profile_settings(examples):
    """Settings for a property test of ``examples`` cases under the active profile."""
    return settings(
        max_examples=max(10, int(examples * _SCALE[PROFILE])),
        deadline=None,
        derandomize=PROFILE != "thorough",
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.filter_too_much],
        # derandomized profiles reproduce a failure by rerunning; random ones print
        # the @reproduce_failure blob
        print_blob=PROFILE == "thorough",
        # CI reports the first failing example as found: shrinking these inputs can
        # take many minutes. The thorough profile shrinks.
        phases=tuple(Phase) if PROFILE == "thorough" else (
            Phase.explicit, Phase.reuse, Phase.generate),
        report_multiple_bugs=PROFILE == "thorough",
    )


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
