"""The front ends' defaults are DPPCA's: the command line and the explorer app read
them off the estimator, so that a default changed in DPPCA changes in both.

Each check runs twice: with DPPCA as it is, and with its defaults changed
(``other_defaults``), which a front end that repeats the values would miss.
"""

import pytest

from sklearn_dppca import DPPCA
from sklearn_dppca._budget_split import check_budget_split
from sklearn_dppca._cli_options import Options, dppca_for
from sklearn_dppca._cli_parser import build_parser

pytest.importorskip("matplotlib")    # the app's session draws
from sklearn_dppca.app._inputs import dppca_params, fit_defaults  # noqa: E402

#: Defaults DPPCA does not have, for the run with its defaults changed.
_CHANGED = {"eps": 2.5, "delta": 3e-6, "accounting": "basic", "histogram": "sparse",
            "scree_method": "huber", "bins": 12, "axes": (1, 2), "monotone": False,
            "radial": "clipped", "synthetic_sampling": "center", "noise": "classical"}


@pytest.fixture(params=["as they are", "changed"])
def other_defaults(request, monkeypatch):
    """DPPCA with its defaults as they are, or changed (``n_components`` 3 too)."""
    if request.param == "changed":
        for name, value in _CHANGED.items():
            monkeypatch.setitem(DPPCA.__init__.__kwdefaults__, name, value)
        monkeypatch.setattr(DPPCA.__init__, "__defaults__", (3,))
        assert DPPCA().get_params()["eps"] == 2.5      # (the patch reaches DPPCA)
    return request.param


def test_unset_options_are_dppcas_defaults(other_defaults, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options = Options(build_parser().parse_args([]))
    assert options.settings == {}
    assert dppca_for(options, None).get_params() == DPPCA().get_params()


def test_help_states_dppcas_defaults(other_defaults):
    text = " ".join(build_parser().format_help().split())
    defaults = DPPCA().get_params()
    for option, shown in [("--eps EPS", defaults["eps"]), ("--delta DELTA", defaults["delta"]),
                          ("--components K", defaults["n_components"])]:
        assert f"{option} " in text and f"(default {shown}" in text, (option, shown)
    axes = ",".join(str(axis + 1) for axis in defaults["axes"])
    assert f"(default {axes})" in text
    assert f"mechanism (default {defaults['histogram']})" in text
    assert f"method (default {defaults['scree_method']})" in text
    assert f"default {defaults['accounting']}" in text


def test_the_classical_noise_rule_is_the_command_lines_own(tmp_path, monkeypatch):
    # the one named difference: --noise classical alone implies basic accounting
    monkeypatch.chdir(tmp_path)
    options = Options(build_parser().parse_args(["--noise", "classical"]))
    assert dppca_for(options, None).accounting == "basic"
    options = Options(build_parser().parse_args(["--noise", "classical",
                                                  "--accounting", "gdp"]))
    assert dppca_for(options, None).accounting == "gdp"     # (as given: DPPCA decides)


@pytest.mark.parametrize("scale", [False, True])
def test_the_pages_defaults_are_dppcas(other_defaults, scale):
    # a fit with no input given
    page = dppca_params({"scale": scale}, n_samples=100)
    dppca = DPPCA(scale=scale).get_params()
    for name in ("n_components", "eps", "delta", "radial", "accounting", "scree_method",
                 "histogram", "axes", "compute_nonprivate", "random_state"):
        assert page[name] == dppca[name], name
    # the pair design is DPPCA's own rule (pairs="auto"), never the page's
    assert "pairs" not in page
    assert page["bins"] == dppca["bins"] or (page["bins"], dppca["bins"]) == ("auto", 0)
    # the budget split DPPCA would use, share for share
    assert check_budget_split(page["budget_split"], scale) \
        == check_budget_split(dppca["budget_split"], scale)


def test_the_pages_inputs_start_at_dppcas_defaults(other_defaults):
    shown = fit_defaults()
    dppca = DPPCA().get_params()
    assert (shown["eps"], shown["delta"], shown["n_components"]) \
        == (dppca["eps"], dppca["delta"], dppca["n_components"])
    assert shown["scale"] == dppca["scale"]
    assert {shown[f"split_{part}"] for part in ("loading", "scree", "score")} \
        <= set(check_budget_split(None, dppca["scale"]).values())


def test_the_pages_first_eps_is_a_share_of_the_data_sets_budget():
    # one click with the defaults must not spend the whole budget: the eps
    # starts at most a quarter of the total (two digits, rounded down), and at
    # DPPCA's own where the budget is large
    from sklearn_dppca.app._inputs import _DEFAULT_BUDGET_SHARE
    from sklearn_dppca.app._ui import _page

    dppca_eps = DPPCA().get_params()["eps"]
    assert _DEFAULT_BUDGET_SHARE < 1
    for total, shown in ((1.0, 0.25), (1.2, 0.3), (0.1, 0.025), (0.37, 0.092),
                         (100.0, dppca_eps)):
        assert fit_defaults(budget=(total, 1e-5))["eps"] == shown
    page = str(_page(None, (1.0, 1e-5)))
    start = page.index('id="eps"')
    assert 'value="0.25"' in page[start:start + 200]
