"""The explorer in a real browser: headless Chromium driven through Selenium.

One app process for the module (and one more after the restart), started as a
user starts it (``python -m sklearn_dppca app data.csv --budget EPS,DELTA --port
P``) on a free local port, and one browser session shared by the module. The scenarios follow
a data custodian: upload a CSV and fit (the meter moves), redraw without
spending, download the release and read it back, ask for more than is left and
be refused, then kill the app, start it again and find the budget still spent.

The whole module is skipped, with the reason, on a machine without Shiny,
Selenium, Chromium or its driver (``pip install ".[test]"`` installs the Python
side; ``.ci/run`` installs Debian's ``chromium`` and ``chromium-driver``).

Set ``SKLEARN_DPPCA_APP_SCREENSHOTS`` to a directory to keep a 1400x1000
screenshot of each display and state (the one in ``doc/_static/app.png`` comes
from there).
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import sklearn_dppca

pytest.importorskip("shiny", reason="the explorer needs shiny (the app extra)")
pytest.importorskip("selenium", reason="the browser tests need selenium")

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
CHROMEDRIVER = shutil.which("chromedriver")
if CHROMIUM is None or CHROMEDRIVER is None:
    pytest.skip("the browser tests need Chromium and chromedriver "
                "(Debian: apt-get install chromium chromium-driver)",
                allow_module_level=True)

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    JavascriptException, StaleElementReferenceException, WebDriverException)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from sklearn_dppca import load_release  # noqa: E402
from sklearn_dppca.privacy import PrivacyAccountant  # noqa: E402

#: The data set's total budget, given to every start of the app.
BUDGET = (3.0, 1e-5)
#: The first fit: enough eps for a clear picture of 2000 rows (the third
#: component is noise by construction), less than the whole budget.
FIRST_FIT = {"eps": 2.0, "delta": 4e-6, "n_components": 3}
GROUP_COLUMN, GROUPS = "school", ("north", "south", "east")
N_ROWS, VARIABLES = 2000, ("algebra", "geometry", "reading", "writing")
#: Seconds for the app to answer, and for the page to react to one action.
START_TIMEOUT, ACTION_TIMEOUT = 30, 20
#: The meter: the total eps at the total delta ("0.90 of eps 3 spent at delta 1e-5").
METER = re.compile(r"([0-9.]+) of eps ([0-9.eE+-]+) spent at delta ([0-9.eE+-]+)")
SCREENSHOTS = os.environ.get("SKLEARN_DPPCA_APP_SCREENSHOTS")
#: The page's size in the browser, in CSS pixels (the screenshots' size).
VIEWPORT = (1400, 1000)


# --- the app process ---

def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(condition, timeout, what):
    """Call ``condition`` until it returns something true, at most ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class _App:
    """``python -m sklearn_dppca app`` in a subprocess, its output in log files."""

    def __init__(self, csv, budget):
        self.folder = Path(csv).parent
        port = _free_port()
        package_root = str(Path(sklearn_dppca.__file__).resolve().parents[1])
        env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1",
               "PYTHONPATH": os.pathsep.join(
                   [package_root] + [p for p in os.environ.get("PYTHONPATH", "")
                                     .split(os.pathsep) if p])}
        self.log = self.folder / f"app-{port}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "sklearn_dppca", "app", str(csv),
                 "--budget", ",".join(map(str, budget)), "--port", str(port),
                 "--group", GROUP_COLUMN, "--groups", ",".join(GROUPS)],
                cwd=self.folder, env=env, stdout=log, stderr=subprocess.STDOUT)
        self.url = _wait_for(self._address, START_TIMEOUT,
                             "the app to print its address and answer")

    def _output(self):
        return self.log.read_text(encoding="utf-8", errors="replace")

    def _address(self):
        if self.process.poll() is not None:
            raise AssertionError(f"the app exited with status "
                                 f"{self.process.returncode}:\n{self._output()}")
        match = re.search(r"sklearn-dppca explorer on (http://\S+)", self._output())
        if not match:
            return None
        try:
            with urllib.request.urlopen(match.group(1), timeout=2) as answer:
                return match.group(1) if answer.status == 200 else None
        except OSError:
            return None

    def kill(self):
        """End the process at once (SIGKILL): nothing gets a chance to save."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


# --- the browser ---

def _chromium(downloads):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size={},{}".format(*VIEWPORT), "--disable-gpu"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {
        "download.default_directory": str(downloads),
        "download.prompt_for_download": False,
        "download.directory_upgrade": True,
    })
    driver = webdriver.Chrome(service=webdriver.ChromeService(CHROMEDRIVER),
                              options=options)
    # a 1400x1000 page: the window is that much larger than its page
    width, height = driver.execute_script(
        "return [window.innerWidth, window.innerHeight];")
    driver.set_window_size(2 * VIEWPORT[0] - width, 2 * VIEWPORT[1] - height)
    # headless Chromium honours the download folder only when told again here
    driver.execute_cdp_cmd("Page.setDownloadBehavior",
                           {"behavior": "allow", "downloadPath": str(downloads)})
    return driver


def _until(driver, condition, what, timeout=ACTION_TIMEOUT):
    """WebDriverWait on ``condition(driver)``, failing with ``what`` and the message."""
    try:
        return WebDriverWait(driver, timeout, ignored_exceptions=(
            StaleElementReferenceException, JavascriptException)).until(condition)
    except WebDriverException as error:
        _screenshot(driver, "timed-out")
        raise AssertionError(f"timed out waiting for {what}; the page's message: "
                             f"{_text(driver, 'message')!r}") from error


def _text(driver, element_id):
    """The text in ``element_id``, shown or not ("" while there is no such element)."""
    return driver.execute_script(
        "const el = document.getElementById(arguments[0]);"
        "return el ? el.textContent : '';", element_id)


def _click_and_settle(driver, element_id):
    """Click a button and wait until the server has gone busy and idle again, that
    is, has finished what the click started."""
    idle = driver.execute_script("return window.idleCount;")
    driver.find_element(By.ID, element_id).click()
    _until(driver, lambda d: d.execute_script("return window.idleCount;") > idle,
           f"the server to finish the {element_id} click")


def _open(driver, url):
    """Load the page and wait until Shiny is connected and the meter is drawn."""
    driver.get(url)
    _until(driver, lambda d: d.execute_script(
        "return !!(window.Shiny && Shiny.shinyapp && Shiny.shinyapp.isConnected())"),
        "Shiny to connect")
    # counts the server's "idle" signals, one after each piece of work it does
    driver.execute_script(
        "window.idleCount = 0;"
        "$(document).on('shiny:idle', () => { window.idleCount += 1; });")
    _until(driver, lambda d: METER.search(_text(d, "budget_meter")),
           "the budget meter")


def _sent(driver, element_id):
    """The value the page last sent to the server for ``element_id``."""
    return driver.execute_script(
        "const values = Shiny.shinyapp.$inputValues;"
        "for (const key in values) {"
        "  if (key.split(':')[0] === arguments[0]) return values[key];"
        "}"
        "return null;", element_id)


def _type(driver, element_id, value):
    """Type ``value`` into a text or numeric input, as a user does, and wait until
    the page has sent it (numeric inputs send on change: the Tab key)."""
    field = driver.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(str(value), Keys.TAB)
    expected = str(value)
    _until(driver, lambda d: _same(_sent(d, element_id), expected),
           f"{element_id} = {value} to reach the server")


def _same(sent, typed):
    if sent is None:
        return False
    if isinstance(sent, (int, float)):
        return np.isclose(float(sent), float(typed))
    return str(sent) == typed


def _choose(driver, element_id, value):
    """Choose ``value`` in a select, plain or wrapped by selectize."""
    driver.execute_script(
        "const el = document.getElementById(arguments[0]);"
        "if (el.selectize) { el.selectize.setValue(arguments[1]); return; }"
        "el.value = arguments[1];"
        "el.dispatchEvent(new Event('change', {bubbles: true}));",
        element_id, value)
    _until(driver, lambda d: _sent(d, element_id) == value,
           f"{element_id} = {value} to reach the server")


def _options(driver, element_id):
    """The values a select offers (selectize keeps them out of the <select>)."""
    return driver.execute_script(
        "const el = document.getElementById(arguments[0]);"
        "if (el.selectize) return Object.keys(el.selectize.options);"
        "return Array.from(el.options).map(o => o.value);", element_id)


def _figure_source(driver):
    """The ``src`` of the figure's <img> (a data URL), or None while there is none."""
    images = driver.find_elements(By.CSS_SELECTOR, "#figure img")
    source = images[0].get_attribute("src") if images else None
    return source if source and source.startswith("data:image") else None


def _new_figure(driver, previous, what):
    return _until(driver, lambda d: (_figure_source(d) or previous) != previous
                  and _figure_source(d), what)


def _meter(driver):
    """``(spent eps at the total delta, total eps, total delta)`` read off the meter."""
    text = _text(driver, "budget_meter")
    found = METER.search(text)
    assert found, f"the meter does not say what is spent: {text!r}"
    return tuple(float(v) for v in found.groups())


def _saved(csv):
    """The data set's account as saved beside it, in the file of its key
    (read-only: a copy in memory)."""
    (path,) = csv.parent.glob("data-*.dppca-budget.json")
    return PrivacyAccountant.load(path)


def _screenshot(driver, name):
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(SCREENSHOTS) / f"{name}.png"))


# --- fixtures ---

def _write_csv(path):
    """A table with a header, four numeric columns (marks out of 100 in four
    subjects, driven by two abilities) and a group column whose groups differ in
    their mean abilities, so that the score picture separates them."""
    rng = np.random.default_rng(17)
    group = rng.choice(GROUPS, size=N_ROWS)
    means = np.array([[0.0, 0.0], [2.0, 0.5], [0.5, 2.0]])
    ability = means[[GROUPS.index(g) for g in group]] + rng.normal(size=(N_ROWS, 2))
    loadings = np.array([[1.0, 0.2], [0.9, 0.3], [0.2, 1.0], [0.3, 0.8]])
    marks = 50 + 8 * ability @ loadings.T + 3 * rng.normal(size=(N_ROWS, len(VARIABLES)))
    lines = [",".join(VARIABLES + (GROUP_COLUMN,))]
    lines += [",".join([f"{v:.1f}" for v in row] + [g]) for row, g in zip(marks, group)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("explorer")


@pytest.fixture(scope="module")
def csv(folder):
    path = folder / "marks.csv"
    _write_csv(path)
    return path


@pytest.fixture(scope="module")
def downloads(folder):
    path = folder / "downloads"
    path.mkdir()
    return path


@pytest.fixture(scope="module")
def browser(downloads):
    driver = _chromium(downloads)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def explorer(csv, browser):
    """The app on ``csv``, with the CSV uploaded through the page and fitted once.

    Yields a dict: the app, the meter before and after the fit, the fit's options.
    """
    app = _App(csv, BUDGET)
    try:
        _open(browser, app.url)
        _choose(browser, "data_source", "upload")
        browser.find_element(By.ID, "upload").send_keys(str(csv))
        _until(browser, lambda d: "complete" in _text(d, "upload_progress").lower(),
               "the upload to complete")
        _type(browser, "group_column", GROUP_COLUMN)
        _type(browser, "group_labels", ",".join(GROUPS))
        _click_and_settle(browser, "load_data")
        before = _meter(browser)
        fits_before = _options(browser, "fit_choice")
        for name, value in FIRST_FIT.items():
            _type(browser, name, value)
        browser.find_element(By.ID, "fit").click()
        _until(browser, lambda d: _meter(d) != before, "the fit to spend")
        _until(browser, _figure_source, "the fit's figure")
        _screenshot(browser, "fit-overview")
        yield {"app": app, "before": before, "after": _meter(browser),
               "fits_before": fits_before}
    finally:
        app.kill()


# --- the scenarios ---

def test_a_fit_spends_and_shows_its_figure(explorer, browser):
    before, after = explorer["before"], explorer["after"]
    # the totals are the budget the app was started with
    assert (before[1], before[2]) == pytest.approx(BUDGET)
    assert (after[1], after[2]) == (before[1], before[2])
    # spent moved up, never down, and stays within the total (the fits composed
    # exactly, read at the total delta)
    assert after[0] > before[0]
    assert after[0] <= after[1]
    assert len(_options(browser, "fit_choice")) == len(explorer["fits_before"]) + 1
    assert "refused" not in _text(browser, "message").lower()


def test_redrawing_is_free(explorer, browser, csv):
    """Other display kinds and other axes among the released components: new
    pictures, the same meter, no new fit, nothing charged."""
    meter, fits = _text(browser, "budget_meter"), _options(browser, "fit_choice")
    charges = _saved(csv).charges
    figure = _figure_source(browser)
    for display in ("scree", "loading", "score", "biplot", "variable"):
        _choose(browser, "display", display)
        figure = _new_figure(browser, figure, f"the {display} display")
        _screenshot(browser, f"display-{display}")
        assert _text(browser, "budget_meter") == meter, display
    # the third released direction against the first: drawn from the release
    _type(browser, "axis_y", 3)
    figure = _new_figure(browser, figure, "the variable display on axes 1 and 3")
    _screenshot(browser, "display-variable-axes-1-3")
    assert _text(browser, "budget_meter") == meter
    assert _options(browser, "fit_choice") == fits
    _choose(browser, "display", "overview")
    _new_figure(browser, figure, "the overview again")
    assert _saved(csv).charges == charges


def test_the_downloaded_release_loads(explorer, browser, downloads):
    browser.find_element(By.ID, "download_release").click()
    path = _until(browser, lambda d: next(
        (p for p in downloads.glob("*.json")), None), "the release's download")
    released = load_release(path)
    assert released.n_samples_ == N_ROWS
    assert released.n_features_in_ == len(VARIABLES)
    assert released.n_components_ == FIRST_FIT["n_components"]
    eps, delta = released.privacy_spent_
    assert eps == pytest.approx(FIRST_FIT["eps"], rel=1e-6)
    assert 0 < delta <= FIRST_FIT["delta"] * (1 + 1e-9)
    assert list(released.feature_names_in_) == list(VARIABLES)
    assert list(released.groups_) == list(GROUPS)
    assert released.nonprivate_ is None   # the reference was never asked for


def test_a_fit_beyond_what_is_left_is_refused(explorer, browser, csv):
    meter, fits = _text(browser, "budget_meter"), _options(browser, "fit_choice")
    charges = _saved(csv).charges
    figure = _figure_source(browser)
    # the whole budget again: more than is left however the fits compose
    _type(browser, "eps", BUDGET[0])
    _type(browser, "delta", BUDGET[1])
    browser.find_element(By.ID, "fit").click()
    _until(browser, lambda d: "refused" in _text(d, "message").lower(),
           "the refusal")
    _screenshot(browser, "refused")
    assert _text(browser, "budget_meter") == meter
    assert _options(browser, "fit_choice") == fits
    assert _figure_source(browser) == figure      # nothing released is lost
    assert _saved(csv).charges == charges


def test_a_restart_keeps_the_spent_budget(explorer, browser, csv):
    spent = _meter(browser)
    explorer["app"].kill()
    # the ledger beside the data: the one fit charged, the refused one not
    saved = _saved(csv)
    assert (saved.eps, saved.delta) == pytest.approx(BUDGET)
    assert len(saved.charges) == 1
    again = _App(csv, BUDGET)
    try:
        _open(browser, again.url)
        _until(browser, lambda d: _meter(d) == pytest.approx(spent, rel=1e-3),
               "the meter to show the budget spent before the restart")
        _screenshot(browser, "restarted")
    finally:
        again.kill()
