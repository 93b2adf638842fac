"""EpsPreviewDisplay: the plan across eps drawn from public inputs only."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from sklearn_dppca import DPPCA, DPScree  # noqa: E402
from sklearn_dppca._plan_preview import preview_across_eps  # noqa: E402
from sklearn_dppca._requests import eps_preview  # noqa: E402
from sklearn_dppca.display import EpsPreviewDisplay  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_the_figure_draws_what_the_plan_says_at_each_eps():
    estimator = DPPCA(eps=1.0)
    display = EpsPreviewDisplay.from_estimator(estimator, 150, 4)
    assert estimator.eps == 1.0                       # put back
    np.testing.assert_allclose(display.eps, np.geomspace(0.25, 4, 7))
    for column, eps in enumerate(display.eps):
        plan = DPPCA(eps=float(eps)).plan(150, 4)
        for row, part in enumerate(display.parts):
            steps = plan[plan.step.str.split("/").str[0] == part]
            bought = bool(len(steps)) and bool(steps.released.all())
            assert display.bought[row, column] == bought
            line = display.lines_.get(part)
            if line is not None:
                drawn = line.get_ydata()[column]
                if bought:
                    assert drawn == pytest.approx(steps.noise_sd.max())
                else:                                  # no point where not bought
                    assert np.isnan(drawn)
    # on iris's shape at eps 1 the scree is not bought, at eps 4 it is; the
    # legend says from where
    scree = display.parts.index("scree")
    assert not display.bought[scree, 3] and display.bought[scree, -1]
    labels = [text.get_text() for text in display.ax_.get_legend().get_texts()]
    first = display.eps[np.argmax(display.bought[scree])]
    assert f"scree: bought from eps {first:.3g}" in labels
    assert any(label.startswith("score: not bought up to eps 4") for label in labels)
    assert display.fit_line_.get_xdata()[0] == 1.0
    assert np.all(np.diff(display.risk_line_.get_ydata()) > 0)


def test_the_figure_and_the_text_are_one_computation():
    estimator = DPScree(eps=2.0)
    preview = preview_across_eps(estimator, 800, 6, (0.5, 8), 1e-5)
    text = eps_preview(estimator, 800, 6, (0.5, 8), 1e-5).splitlines()[3:]
    for column, row in enumerate(text):
        cells = row.split()
        assert float(cells[0]) == pytest.approx(preview.eps[column], rel=1e-2)
        assert cells[-1] == f"{preview.advantage[column]:.2f}"
        for index, cell in enumerate(cells[1:1 + len(preview.parts)]):
            sd = preview.noise_sd[index, column]
            assert cell == ("-" if not preview.bought[index, column]
                            else "bought" if np.isnan(sd) else f"{sd:.3g}")


def test_style_keywords_take_matplotlib_aliases():
    display = EpsPreviewDisplay.from_estimator(DPPCA(eps=1.0), 5000, 5, c="k", lw=3,
                                               risk_kw={"ls": ":", "color": "r"})
    for line in display.lines_.values():
        assert line.get_color() == "k" and line.get_linewidth() == 3
    assert display.risk_line_.get_linestyle() == ":"
    assert display.risk_line_.get_color() == "r"


def test_it_draws_on_given_axes():
    figure, ax = plt.subplots()
    display = EpsPreviewDisplay.from_estimator(DPPCA(eps=0.5), 2000, 4, ax=ax,
                                               eps_range=(0.1, 10))
    assert display.ax_ is ax and display.figure_ is figure
    assert display.eps[0] == pytest.approx(0.1) and display.eps[-1] == pytest.approx(10)


@pytest.mark.parametrize("eps_range, error, match", [
    ((2.0, 1.0), ValueError, "low < high"),
    ((0.0, 1.0), ValueError, "eps_range"),
    ((1.0,), ValueError, "eps_range"),
    ([0.5, 2.0], TypeError, "eps_range"),
])
def test_bad_eps_range_is_named(eps_range, error, match):
    with pytest.raises(error, match=match):
        EpsPreviewDisplay.from_estimator(DPPCA(), 500, 4, eps_range=eps_range)


def test_the_constructor_checks_its_table():
    with pytest.raises(ValueError, match="noise_sd must have shape"):
        EpsPreviewDisplay([0.5, 1.0], ["loading"], [[0.1]], [[True, True]], [0.1, 0.2])
