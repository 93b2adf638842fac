"""Tests of the helpers the displays share (argument checks, labels, estimator
access) and of the package-wide display contracts."""

import os
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import sklearn_dppca
from sklearn_dppca.display._check import (
    check_axes,
    check_component_indices,
    check_style,
    select_variables,
)
from sklearn_dppca.display._estimator_access import (
    check_estimator_for,
    unsupported_reason,
)
from sklearn_dppca.display._labels import (
    _label_height,
    _label_widths,
    component_label,
    _place_labels,
)
from sklearn_dppca.display._limits import data_per_point
from sklearn_dppca.display._score_layers import _hdr_levels


def test_component_label():
    assert component_label(0) == "DP PC1"
    assert component_label(1, [0.5, 0.42]) == "DP PC2 (42.0%)"


@pytest.mark.parametrize(
    "axes, k, error, message",
    [
        ((0, 0), 3, ValueError, "different"),
        ((0, 3), 3, ValueError, r"\[0, 2\]"),
        ((-1, 1), 3, ValueError, r"\[0, 2\]"),
        ((0,), 3, ValueError, "pair"),
        ((0, 1, 2), 3, ValueError, "pair"),
        ("ab", 3, TypeError, "pair"),
        (5, 3, TypeError, "pair"),
        ((0, 1.0), 3, TypeError, "pair"),
        ((True, 0), 3, TypeError, "pair"),
        ((0, 1), 1, ValueError, "at least 2"),
    ],
)
def test_check_axes_errors(axes, k, error, message):
    # a wrong type is a TypeError, a wrong value a ValueError; both name axes
    with pytest.raises(error, match=f"^axes.*{message}"):
        check_axes(axes, k)


def test_check_axes_accepts_numpy_ints():
    assert check_axes(np.array([2, 0]), 3) == (2, 0)


@pytest.mark.parametrize("components, error", [
    ([], ValueError), ([3], ValueError), ([-1], ValueError), ("0", TypeError),
    ([0.5], TypeError), ([True], TypeError), (3.0, TypeError),
])
def test_check_component_indices_errors(components, error):
    with pytest.raises(error, match="^components"):
        check_component_indices(components, 3)


def test_check_component_indices():
    assert check_component_indices(None, 12) == list(range(10))
    assert check_component_indices(np.int64(2), 3) == [2]
    assert check_component_indices([2, 0], 3) == [2, 0]


@pytest.mark.parametrize("kw, error", [({"color": "red"}, None), (None, None),
                                       ("red", TypeError), ([("c", 1)], TypeError)])
def test_check_style(kw, error):
    if error is None:
        style = check_style(kw, "bar_kw")
        assert style == (kw or {}) and style is not kw
    else:
        with pytest.raises(error, match="^bar_kw must be None or a dict"):
            check_style(kw, "bar_kw")


def test_select_variables():
    names = [f"v{j}" for j in range(40)]
    weights = np.arange(40.0)
    assert list(select_variables(None, names[:5], weights[:5])) == list(range(5))
    top = select_variables(None, names, weights)
    assert list(top) == list(range(10, 40))
    assert len(select_variables("all", names, weights)) == 40
    assert list(select_variables(["v3", 1, "v3"], names, weights)) == [3, 1]
    for bad, error in ((["nope"], ValueError), ([99], ValueError), ([], ValueError),
                       ([0.5], TypeError), ([True], TypeError), (3, TypeError)):
        with pytest.raises(error, match="^variables"):
            select_variables(bad, names, weights)


def test_hdr_levels():
    H = np.array([[0.5, 0.3], [0.2, 0.0]])
    levels = _hdr_levels(H, (0.5, 0.9))
    assert np.allclose(levels, [0.2, 0.5])
    assert _hdr_levels(np.zeros((2, 2))).size == 0


def test_place_labels_do_not_overlap():
    fig, ax = plt.subplots(figsize=(4, 4))
    ax.set_xlim(-1, 1)
    ax.set_ylim(-1, 1)
    ax.set_aspect("equal")
    ends = np.tile([[0.5, 0.5]], (6, 1)) + np.linspace(0, 1e-3, 6)[:, None]
    labels = [f"variable{j}" for j in range(6)]
    pos = _place_labels(ax, ends, labels, fontsize=9)
    dx, dy = data_per_point(ax)
    height = _label_height(9) * dy
    width = _label_widths(labels[:1], 9)[0] * dx
    for i in range(6):
        for j in range(i + 1, 6):
            assert (abs(pos[i, 0] - pos[j, 0]) >= width * 0.99
                    or abs(pos[i, 1] - pos[j, 1]) >= height * 0.99)
    # a single label sits outward along its arrow, beyond the end
    one = _place_labels(ax, [[0.5, 0.0]], ["x"], fontsize=9)
    assert one[0, 0] > 0.5 and one[0, 1] == pytest.approx(0.0)


def test_unsupported_reason_messages(make_fake):
    directions = make_fake("directions")
    scree = make_fake("scree")
    dppca = make_fake("dppca")
    assert unsupported_reason(dppca, "ScoreDisplay") is None
    assert "DPScree or DPPCA" in unsupported_reason(directions, "ScreeDisplay")
    msg = unsupported_reason(scree, "ScoreDisplay")
    assert msg.startswith("ScoreDisplay needs a fitted DPPCA; FakeDPScree has no score")

    class PCA:
        components_ = np.eye(2)

    assert "not a private estimator" in unsupported_reason(PCA(), "LoadingDisplay")


def test_check_estimator_for_not_fitted(not_fitted):
    with pytest.raises(NotFittedError):
        check_estimator_for(not_fitted, "LoadingDisplay")


def test_importing_package_does_not_import_pyplot(tmp_path):
    code = (
        "import sys; import sklearn_dppca.display, sklearn_dppca.datasets; "
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'"
    )
    # run outside the source tree, on the package as this process imports it
    package_root = Path(sklearn_dppca.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path, env=env)


class _Unrelated:
    """Has ``fit`` but is no scikit-learn estimator (no ``__sklearn_tags__``)."""

    components_ = np.eye(2)

    def fit(self, X=None, y=None):
        return self


@pytest.mark.parametrize("entry", ["ScreeDisplay", "LoadingDisplay", "ScoreDisplay",
                                   "VariableDisplay", "BiplotDisplay", "plot_overview"])
@pytest.mark.parametrize("thing", [_Unrelated(), sklearn_dppca.DPPCA, None, "DPPCA"],
                         ids=["unrelated object", "class", "None", "string"])
def test_a_non_estimator_is_a_type_error_on_every_scikit_learn(entry, thing):
    # scikit-learn 1.6's check_is_fitted says NotFittedError for such objects and
    # later releases AttributeError: the displays decide themselves
    from sklearn_dppca import display

    function = getattr(display, entry)
    function = getattr(function, "from_estimator", function)
    with pytest.raises(TypeError, match="not a scikit-learn estimator instance"):
        function(thing)


def test_labels_are_placed_again_when_their_figure_shrinks_and_after_a_pickle(make_fake):
    import pickle

    from sklearn_dppca.display import LoadingDisplay

    disp = LoadingDisplay.from_estimator(make_fake("dppca", p=12))
    fig = pickle.loads(pickle.dumps(disp.figure_))      # a figure still pickles
    (ax,) = [a for a in fig.axes if a.texts]
    fig.set_size_inches(2.2, 2.2)      # far smaller than the labels were placed for
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    panel = ax.get_window_extent(renderer).expanded(1.01, 1.01)
    boxes = [text.get_window_extent(renderer) for text in ax.texts if text.get_text()]
    assert boxes and all(panel.contains(b.x0, b.y0) and panel.contains(b.x1, b.y1)
                         for b in boxes)
