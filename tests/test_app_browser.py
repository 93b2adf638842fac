"""The explorer in a real browser: headless Chromium driven through Selenium.

One app process for the module (and one more after the restart), started as a
user starts it (``python -m sklearn_dppca app data.csv --budget EPS,DELTA --port
P``) on a free local port, and one browser shared by the module, its page 1366 x
768 CSS pixels. The scenarios follow a data custodian: upload a CSV and fit (the
meter moves), go through every picture's tab and the axes without spending, read a
value by pointing at it, download the release, open it again (free), ask for more
than is left and be refused, fit from a second browser tab and see both meters
agree, then kill the app, start it again and find the budget still spent and the
releases still listed.

The whole module is skipped, with the reason, on a machine without Shiny,
Selenium, Chromium or its driver (``pip install ".[test]"`` installs the Python
side; ``.ci/run`` installs Debian's ``chromium`` and ``chromium-driver``).

Set ``SKLEARN_DPPCA_APP_SCREENSHOTS`` to a directory to keep a 1366 x 768
screenshot of each tab and state (the one in ``doc/_static/app.png`` comes from
there).
"""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
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
    ElementClickInterceptedException, JavascriptException, StaleElementReferenceException,
    WebDriverException)
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from sklearn_dppca import load_release  # noqa: E402
from sklearn_dppca._requests import scree_panel  # noqa: E402
from sklearn_dppca.privacy import PrivacyAccountant  # noqa: E402
from ._hang_guard import HANG_GUARD  # noqa: E402

#: The data set's total budget, given to every start of the app.
BUDGET = (3.0, 1e-5)
#: The first fit: enough eps for a clear picture of 2000 rows (the third
#: component is noise by construction), less than the whole budget.
FIRST_FIT = {"eps": 2.0, "delta": 4e-6, "n_components": 3}
GROUP_COLUMN, GROUPS = "school", ("north", "south", "east")
N_ROWS, VARIABLES = 2000, ("algebra", "geometry", "reading", "writing")
#: Seconds for the app to answer, and for the page to react to one action.
START_TIMEOUT = ACTION_TIMEOUT = HANG_GUARD
#: The meter: the total eps at the total delta ("0.90 of eps 3 spent at delta 1e-5").
METER = re.compile(r"([0-9.]+) of eps ([0-9.eE+-]+) spent at delta ([0-9.eE+-]+)")
SCREENSHOTS = os.environ.get("SKLEARN_DPPCA_APP_SCREENSHOTS")
#: The page's size in the browser, in CSS pixels (the screenshots' size): a
#: common laptop screen, where every picture must be readable.
VIEWPORT = (1366, 768)
#: A second fit, from a second browser tab: small enough to fit what is left.
SECOND_FIT = {"eps": 0.3, "delta": 1e-6, "n_components": 3}
#: The pictures' tabs (their values), in the page's order.
PICTURES = ("scree", "loading", "variable", "score", "biplot", "overview")
#: How narrow the overview may be and stay readable (the page's own rule).
OVERVIEW_WIDTH = 1280


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

    def __init__(self, csv, budget, served=(), environment=None):
        """``served``: the custodian's options of a served explorer (``--host``,
        ``--data-name``, ``--custodian``), its token in ``environment``."""
        self.folder = Path(csv).parent
        port = _free_port()
        package_root = str(Path(sklearn_dppca.__file__).resolve().parents[1])
        env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1",
               "PYTHONPATH": os.pathsep.join(
                   [package_root] + [p for p in os.environ.get("PYTHONPATH", "")
                                     .split(os.pathsep) if p]),
               **(environment or {})}
        self.log = self.folder / f"app-{port}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "sklearn_dppca", "app", str(csv),
                 "--budget", ",".join(map(str, budget)), "--port", str(port),
                 "--group", GROUP_COLUMN, "--groups", ",".join(GROUPS), *served],
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
        # a served explorer prints every interface's address: this computer's
        url = match.group(1).replace("//0.0.0.0:", "//127.0.0.1:")
        try:
            with urllib.request.urlopen(url.split("?")[0], timeout=2) as answer:
                return url if answer.status == 200 else None
        except urllib.error.HTTPError as refused:      # no token: answered, refused
            return url if refused.code == 403 else None
        except OSError:
            return None

    def kill(self):
        """End the process at once (SIGKILL): nothing gets a chance to save."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=HANG_GUARD)


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
    # a 1366x768 page: the window is that much larger than its page
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


def _click(driver, element_id):
    """Click ``element_id`` as a user does once it can be clicked: a click that
    another element intercepts (text that the server is redrawing beside it
    shifts the layout for a moment, as on a loaded machine) is tried again, not
    failed. An intercepted click reaches nothing, so none is sent twice."""
    def clicked(d):
        d.find_element(By.ID, element_id).click()
        return True
    WebDriverWait(driver, ACTION_TIMEOUT, ignored_exceptions=(
        ElementClickInterceptedException, StaleElementReferenceException)).until(clicked)


def _click_and_settle(driver, element_id):
    """Click a button and wait until the server has gone busy and idle again, that
    is, has finished what the click started."""
    idle = driver.execute_script("return window.idleCount;")
    button = driver.find_element(By.ID, element_id)
    # (in sight first, at the bottom: the sidebar's top, the meter and Fit, stays)
    driver.execute_script("arguments[0].scrollIntoView({block: 'end'});", button)
    _click(driver, element_id)
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


def _picture_source(driver, display):
    """The ``src`` of a picture's <img> (a data URL), or None while there is none."""
    images = driver.find_elements(By.CSS_SELECTOR, f"#{display}_picture img")
    try:
        source = images[0].get_attribute("src") if images else None
    except StaleElementReferenceException:
        return None
    return source if source and source.startswith("data:image") else None


def _new_picture(driver, display, previous, what):
    return _until(driver, lambda d: (_picture_source(d, display) or previous) != previous
                  and _picture_source(d, display), what)


def _show_tab(driver, tab):
    """Open a tab of the main area (a picture, the ledger, ...).

    The link is clicked again on every poll until the page has sent the tab: on
    a loaded machine a click that lands while the page redraws can be lost (a
    click on the open tab's link changes nothing)."""
    def opened(d):
        if _sent(d, "tab") == tab:
            return True
        try:
            d.find_element(By.CSS_SELECTOR, f"a[data-value='{tab}']").click()
        except ElementClickInterceptedException:
            pass                      # covered for now (a busy overlay): next poll
        return False
    _until(driver, opened, f"the {tab} tab")


def _picture_box(driver, display):
    """The picture's image: its size as drawn and as shown, and where it is."""
    return driver.execute_script(
        "const img = document.querySelector(`#${arguments[0]}_picture img`);"
        "const box = img.getBoundingClientRect();"
        "const place = img.closest('.tab-pane').getBoundingClientRect();"
        "return {natural: img.naturalWidth, shown: box.width, top: box.top,"
        "        bottom: box.bottom, place: place.width,"
        "        window: window.innerHeight};", display)


def _in_sight(driver, selector):
    """Whether the whole of the element ``selector`` picks is inside the window."""
    return driver.execute_script(
        "const box = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return box.top >= 0 && box.left >= 0 && box.bottom <= window.innerHeight"
        "       && box.right <= window.innerWidth && box.height > 0;", selector)


def _fit_values(driver):
    """The values of the releases listed under 'Release shown' (opened files apart)."""
    return [v for v in _options(driver, "fit_choice") if not v.startswith("opened-")]


def _meter(driver):
    """``(spent eps at the total delta, total eps, total delta)`` read off the meter."""
    text = _text(driver, "budget_meter")
    found = METER.search(text)
    assert found, f"the meter does not say what is spent: {text!r}"
    return tuple(float(v) for v in found.groups())


def _budget_path(csv):
    """The budget file of the uploaded ``csv`` (unnamed: keyed by its contents)."""
    from sklearn_dppca.app._sources import budget_file_for, data_key, load_source

    data = load_source("upload", path=str(csv), file_name=csv.name,
                       group_column=GROUP_COLUMN, group_labels=",".join(GROUPS))
    return Path(budget_file_for(data_key(data, csv.parent), csv.parent))


def _saved(csv):
    """The data set's account as saved beside it, in the file of its key
    (read-only: a copy in memory)."""
    return PrivacyAccountant.load(_budget_path(csv))


def _kept(csv):
    """The release files kept beside the data set's budget file, oldest first."""
    releases = _budget_path(csv).name.replace(".dppca-budget.json", ".dppca-releases")
    return sorted((csv.parent / releases).glob("*.json"))


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
        assert _in_sight(browser, "#fit")
        _click(browser, "fit")
        _until(browser, lambda d: _meter(d) != before, "the fit to spend")
        _until(browser, lambda d: _picture_source(d, "scree"), "the fit's scree picture")
        _screenshot(browser, "fit-scree")
        yield {"app": app, "before": before, "after": _meter(browser),
               "fits_before": fits_before, "charges": 1}
    finally:
        app.kill()


# --- the scenarios ---

def test_a_fit_spends_and_shows_its_figure(explorer, browser, csv):
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
    # the meter's bar is as long as its words say
    drawn = float(browser.find_element(
        By.CSS_SELECTOR, "#budget_meter [role=progressbar]").get_attribute("aria-valuenow"))
    assert drawn == pytest.approx(after[0] / after[1], abs=0.01 / after[1])
    # the release is kept beside the budget file, as published: no reference
    (kept,) = _kept(csv)
    assert "NOT_PRIVATE" not in kept.read_text(encoding="utf-8")


def test_the_picker_lists_the_columns_and_the_preview_shows_no_value(explorer, browser,
                                                                     csv):
    # the variables are picked from the file's header (uploaded: every column);
    # the loaded data are described by names and types, never by a value
    offered = browser.execute_script(
        "return Object.keys(document.querySelector('#columns').selectize.options);")
    assert sorted(offered) == sorted(VARIABLES + (GROUP_COLUMN,))
    preview = _text(browser, "data_preview")
    assert preview.startswith(f"{N_ROWS} rows x {len(VARIABLES)} variables, each a number: "
                              + ", ".join(VARIABLES))
    assert f"Groups (column {GROUP_COLUMN!r}): the declared labels" in preview
    cells = csv.read_text(encoding="utf-8").splitlines()[1].split(",")[:-1]
    assert not any(cell in preview for cell in cells)
    # two picked in the list and loaded: the data are those two (the same
    # budget: the file's), then all again
    meter = _text(browser, "budget_meter")
    browser.execute_script("document.querySelector('#columns').selectize"
                           ".setValue(['reading', 'algebra']);")
    _click_and_settle(browser, "load_data")
    _until(browser, lambda d: _text(d, "data_preview").startswith(
        f"{N_ROWS} rows x 2 variables, each a number: reading, algebra."), "two columns")
    assert _text(browser, "budget_meter") == meter
    browser.execute_script("document.querySelector('#columns').selectize.clear();")
    _click_and_settle(browser, "load_data")
    _until(browser, lambda d: _text(d, "data_preview").startswith(
        f"{N_ROWS} rows x {len(VARIABLES)} variables"), "all columns again")


def test_fit_stays_in_sight(explorer, browser):
    """The sidebar and the page scrolled to their ends: Fit is still in the window."""
    browser.execute_script(
        "document.querySelectorAll('.sidebar-content, .sidebar')"
        "  .forEach(el => { el.scrollTop = el.scrollHeight; });"
        "window.scrollTo(0, document.body.scrollHeight);")
    _screenshot(browser, "scrolled-to-the-ends")
    assert _in_sight(browser, "#fit")
    assert _in_sight(browser, "#budget_meter [role=progressbar]")
    browser.execute_script(
        "document.querySelectorAll('.sidebar-content, .sidebar')"
        "  .forEach(el => { el.scrollTop = 0; }); window.scrollTo(0, 0);")


def test_every_tab_is_drawn_at_full_width_for_free(explorer, browser, csv):
    """Each picture in its tab, drawn at the size it is shown (not shrunk), as wide
    as its tab and, but for the overview, whole in the window; the ledger; the
    same meter, nothing charged."""
    meter, fits = _text(browser, "budget_meter"), _options(browser, "fit_choice")
    charges = _saved(csv).charges
    for display in PICTURES:
        _show_tab(browser, display)
        _until(browser, lambda d: _picture_source(d, display), f"the {display} picture")
        box = _picture_box(browser, display)
        _screenshot(browser, f"tab-{display}")
        assert box["natural"] == pytest.approx(box["shown"], abs=1), display
        if display == "overview":
            # readable: never narrower than that, scrolled sideways if need be
            assert box["natural"] >= OVERVIEW_WIDTH
        else:
            assert box["shown"] >= 0.95 * box["place"], display
            assert box["bottom"] <= box["window"], display
        assert _text(browser, f"{display}_note") == ""
    _show_tab(browser, "ledger")
    _until(browser, lambda d: "Privacy ledger of fit 1" in _text(d, "ledger"), "the ledger")
    assert "Charges to the budget of this data set" in _text(browser, "ledger")
    _screenshot(browser, "tab-ledger")
    # the next fit's plan, and its preview across eps drawn (public, free)
    _show_tab(browser, "plan")
    _until(browser, lambda d: "Preview across eps" in _text(d, "plan"), "the plan")
    _until(browser, lambda d: d.execute_script(
        "const img = document.querySelector('#plan_preview_picture img');"
        "return img !== null && img.complete && img.naturalWidth > 0;"),
        "the preview across eps")
    _screenshot(browser, "tab-plan")
    assert _text(browser, "budget_meter") == meter
    assert _options(browser, "fit_choice") == fits
    assert _saved(csv).charges == charges


def test_the_summary_wraps_a_line_wider_than_its_tab(explorer, browser):
    """The summary's first line (what was released, the eps and the split that
    would buy the rest) can be wider than the tab: it wraps, so the tab never
    scrolls sideways. Lengthened here in the page, as a long plan makes it, and
    put back."""
    _show_tab(browser, "summary")
    _until(browser, lambda d: "Released:" in _text(d, "summary"), "the summary")
    _screenshot(browser, "tab-summary")
    widths = browser.execute_script(
        "const pre = document.getElementById('summary');"
        "const kept = pre.textContent;"
        "pre.textContent = 'Released: ' + 'directions '.repeat(60) + '\\n' + kept;"
        "const widths = [pre.scrollWidth, pre.clientWidth];"
        "pre.textContent = kept;"
        "return widths;")
    assert widths[1] > 0 and widths[0] <= widths[1]


def test_the_axes_are_honoured_and_stale_notes_cleared(explorer, browser, csv):
    charges = _saved(csv).charges
    _show_tab(browser, "variable")
    picture = _until(browser, lambda d: _picture_source(d, "variable"), "the variables")
    _type(browser, "axis_y", 3)
    _new_picture(browser, "variable", picture, "the variables on axes 1 and 3")
    _screenshot(browser, "variable-axes-1-3")
    # the score summary was released for PC1 x PC2: other axes, the same two swapped
    # too, say so instead of showing PC1 x PC2
    _show_tab(browser, "score")
    _until(browser, lambda d: "exists for PC1 x PC2 only" in _text(d, "score_note"),
           "the score picture's note on axes 1, 3")
    assert _picture_source(browser, "score") is None
    _type(browser, "axis_x", 2)
    _type(browser, "axis_y", 1)
    _until(browser, lambda d: "not for PC2 x PC1" in _text(d, "score_note"),
           "the score picture's note on axes 2, 1")
    _screenshot(browser, "score-axes-2-1")
    _type(browser, "axis_x", 1)
    _type(browser, "axis_y", 2)
    # (the two axes are sent one after the other: the page may show the picture of
    # PC1 x PC2 a moment before the note of PC1 x PC1 is replaced; wait for both)
    _until(browser, lambda d: _picture_source(d, "score") and _text(d, "score_note") == "",
           "the score picture again, its stale note cleared")
    assert _saved(csv).charges == charges


def test_pointing_at_a_component_reads_its_released_values(explorer, browser, csv):
    """The scree's middle column is PC2: the words under the pointer are its
    released PVE and noise sd, read back from the kept release."""
    _show_tab(browser, "scree")
    _until(browser, lambda d: _picture_source(d, "scree"), "the scree picture")

    def point_and_read(driver):
        # from a corner first (a pointer already there would send no move), and
        # again on every poll: on a loaded machine the first move can come before
        # Shiny listens to the picture's hover. The picture is found anew on every
        # poll: a redraw replaces it, and a stale one would be pointed at forever.
        image = driver.find_element(By.CSS_SELECTOR, "#scree_picture img")
        ActionChains(driver).move_to_element_with_offset(
            image, 5 - image.size["width"] // 2, 5 - image.size["height"] // 2) \
            .pause(0.3).move_to_element(image).perform()
        return _text(driver, "scree_hover")

    said = _until(browser, point_and_read, "the hover words")
    _screenshot(browser, "scree-hover")
    released = load_release(_kept(csv)[0])
    ratio = released.explained_variance_ratio_[1]
    if np.isfinite(ratio):
        found = re.match(r"PC2: PVE ([0-9.]+)% \(sd of noise and clipping ([0-9.e+-]+) "
                         r"points\)", said)
        assert found, said
        assert float(found.group(1)) == pytest.approx(100 * ratio, abs=0.05)
        # the share's own sd, as its error bar draws it
        sd = 100 * released.explained_variance_ratio_noise_scale_[1]
        assert float(found.group(2)) == pytest.approx(sd, rel=0.05)   # (2 digits)
    else:
        assert said.startswith("PC2: PVE not estimable"), said


def test_the_scree_shows_the_variances_for_free(explorer, browser, csv):
    """'Scree shows' draws the released variances (there even where the PVE is
    not estimable) and back, charging nothing; pointing reads the variance."""
    charges, meter = _saved(csv).charges, _text(browser, "budget_meter")
    _show_tab(browser, "scree")
    picture = _until(browser, lambda d: _picture_source(d, "scree"), "the scree picture")
    released = load_release(_kept(csv)[0])
    variance = released.explained_variance_[0]
    if scree_panel("auto", released) == scree_panel("variance", released):
        # (the page never seeds a fit: in about 7 of 100 on this table the
        # total is not estimable, and "auto" already shows the variances)
        _choose(browser, "scree_kind", "pve")
        picture = _new_picture(browser, "scree", picture, "the scree of the PVE")
    _choose(browser, "scree_kind", "variance")
    _new_picture(browser, "scree", picture, "the scree of the variances")
    _screenshot(browser, "scree-variances")

    def point_at_pc1(driver):
        # (as in the test above: from a corner, on every poll, found anew)
        image = driver.find_element(By.CSS_SELECTOR, "#scree_picture img")
        ActionChains(driver).move_to_element_with_offset(
            image, 5 - image.size["width"] // 2, 5 - image.size["height"] // 2) \
            .pause(0.3).move_to_element_with_offset(
                image, -image.size["width"] // 4, 0).perform()
        return _text(driver, "scree_hover").startswith("PC1") and \
            _text(driver, "scree_hover")

    said = _until(browser, point_at_pc1, "the hover words on PC1")
    if np.isfinite(variance):
        assert f"variance {variance:.3g}" in said, said
    _choose(browser, "scree_kind", "pve")
    _until(browser, lambda d: _picture_source(d, "scree"), "the scree of the PVE")
    assert _saved(csv).charges == charges and _text(browser, "budget_meter") == meter


def _server_idle(driver):
    """Whether the server has answered every input sent (Shiny's busy mark gone)."""
    return not driver.execute_script(
        "return document.documentElement.classList.contains('shiny-busy');")


def _download_ready(driver, element_id):
    """Whether a download link can be clicked: the server idle, the link's
    address set and the link not disabled (Shiny disables it while its output
    recalculates; a click then starts no download)."""
    return _server_idle(driver) and driver.execute_script(
        "const el = document.getElementById(arguments[0]);"
        "return !!el && !!el.getAttribute('href') && !el.classList.contains('disabled');",
        element_id)


def test_the_downloaded_release_loads(explorer, browser, downloads):
    # (the previous test's last choice may still be redrawing: a click on the link
    # while Shiny disables it starts nothing, and CI waited its whole timeout)
    _until(browser, lambda d: _download_ready(d, "download_release"),
           "the release's download link")
    _click(browser, "download_release")
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


def test_a_release_file_opens_for_free(explorer, browser, csv, downloads):
    meter, charges = _text(browser, "budget_meter"), _saved(csv).charges
    (path,) = downloads.glob("*.json")
    browser.find_element(By.ID, "open_release").send_keys(str(path))
    _until(browser, lambda d: _sent(d, "fit_choice") == "opened-0", "the opened release")
    _show_tab(browser, "loading")
    _until(browser, lambda d: _picture_source(d, "loading"), "the opened release's picture")
    assert "nothing spent" in _text(browser, "message")
    assert _text(browser, "budget_meter") == meter and _saved(csv).charges == charges
    _choose(browser, "fit_choice", "0")
    # the server's answer to the choice (its message, its pictures) before the
    # next test acts: on a loaded machine it could land after the next click
    _until(browser, _server_idle, "the server to finish the choice")


def test_a_fit_beyond_what_is_left_is_refused(explorer, browser, csv):
    meter, fits = _text(browser, "budget_meter"), _options(browser, "fit_choice")
    charges, kept = _saved(csv).charges, _kept(csv)
    _show_tab(browser, "scree")
    figure = _until(browser, lambda d: _picture_source(d, "scree"), "the scree")
    # the whole budget again: more than is left however the fits compose
    _type(browser, "eps", BUDGET[0])
    _type(browser, "delta", BUDGET[1])
    _click(browser, "fit")
    _until(browser, lambda d: "refused" in _text(d, "message").lower(),
           "the refusal")
    _screenshot(browser, "refused")
    assert _text(browser, "budget_meter") == meter
    assert _options(browser, "fit_choice") == fits
    assert _picture_source(browser, "scree") == figure      # nothing released is lost
    assert _saved(csv).charges == charges and _kept(csv) == kept
    assert _in_sight(browser, "#fit") and _in_sight(browser, "#message")


def test_two_sessions_meters_agree(explorer, browser, csv):
    """A fit from a second browser tab: the first tab's meter follows it (it
    watches the budget file) and lists the new release."""
    first = browser.current_window_handle
    spent = _meter(browser)
    browser.switch_to.new_window("tab")
    try:
        _open(browser, explorer["app"].url)
        # the same table as started: the same budget
        assert _meter(browser) == spent
        for name, value in SECOND_FIT.items():
            _type(browser, name, value)
        _click(browser, "fit")
        _until(browser, lambda d: _meter(d) != spent, "the second tab's fit to spend")
        second = _meter(browser)
        explorer["charges"] += 1
        # the new fit is shown, and stays shown once the page has looked at the
        # budget file again
        _until(browser, lambda d: _sent(d, "fit_choice") == "1", "the new fit shown")
        time.sleep(1.5)
        assert _sent(browser, "fit_choice") == "1"
        _screenshot(browser, "two-sessions-second")
    finally:
        browser.close()
        browser.switch_to.window(first)
    _until(browser, lambda d: _meter(d) == second, "the first tab's meter to follow")
    _until(browser, lambda d: len(_fit_values(d)) == 2, "the first tab to list the fit")
    _screenshot(browser, "two-sessions-first")
    assert len(_saved(csv).charges) == explorer["charges"]


def _load_upload(driver, path, data_name=""):
    """Upload ``path`` through the page under ``data_name`` and load it."""
    _choose(driver, "data_source", "upload")
    driver.find_element(By.ID, "upload").send_keys(str(path))
    _until(driver, lambda d: "complete" in _text(d, "upload_progress").lower(),
           "the upload to complete")
    _type(driver, "data_name", data_name)
    _click_and_settle(driver, "load_data")
    _until(driver, lambda d: f"{N_ROWS} rows x" in _text(d, "data_preview"),
           f"{path.name} to load")


def test_an_upload_named_by_its_custodian_keeps_its_budget(explorer, browser, csv,
                                                            folder):
    # the custodian's name for a data set keys its budget: an edited copy under
    # another file name finds the budget its first upload spent
    lines = csv.read_text(encoding="utf-8").splitlines()
    copies = []
    for name, row in (("marks-2026.csv", 1), ("marks (edited).csv", 2)):
        edited = list(lines)
        cells = edited[row].split(",")
        cells[0] = f"{float(cells[0]) + 1:.1f}"            # one cell changed
        edited[row] = ",".join(cells)
        (folder / name).write_text("\n".join(edited) + "\n", encoding="utf-8")
        copies.append(folder / name)
    original = _meter(browser)
    _load_upload(browser, copies[0], "school marks 2026")
    _until(browser, lambda d: _meter(d)[0] == 0, "a budget of its own for the name")
    assert _meter(browser)[1:] == original[1:]
    _type(browser, "eps", SECOND_FIT["eps"])
    _click(browser, "fit")
    _until(browser, lambda d: _meter(d)[0] > 0, "the named data set's fit to spend")
    spent = _meter(browser)
    _load_upload(browser, copies[1], "school marks 2026")
    _until(browser, lambda d: _meter(d) == spent, "the same budget for the edited copy")
    _load_upload(browser, copies[1])                          # unnamed: its own
    _until(browser, lambda d: _meter(d)[0] == 0, "a fresh budget for unnamed bytes")
    _load_upload(browser, csv)                                 # back to the module's
    _until(browser, lambda d: _meter(d) == original, "the module's budget again")
    _type(browser, "eps", FIRST_FIT["eps"])


def test_a_restart_keeps_the_spent_budget_and_the_releases(explorer, browser, csv):
    spent = _meter(browser)
    explorer["app"].kill()
    # the ledger beside the data: the fits charged, the refused one not
    saved = _saved(csv)
    assert (saved.eps, saved.delta) == pytest.approx(BUDGET)
    assert len(saved.charges) == explorer["charges"]
    assert len(_kept(csv)) == explorer["charges"]
    again = _App(csv, BUDGET)
    try:
        _open(browser, again.url)
        _until(browser, lambda d: _meter(d) == pytest.approx(spent, rel=1e-3),
               "the meter to show the budget spent before the restart")
        # the releases made before, listed again and drawn from their files
        _until(browser, lambda d: len(_fit_values(d)) == explorer["charges"],
               "the kept releases to be listed")
        labels = browser.execute_script(
            "const el = document.getElementById('fit_choice');"
            "return el.selectize ? Object.values(el.selectize.options).map(o => o.label)"
            "  : Array.from(el.options).map(o => o.text);")
        assert all(label.endswith("(kept)") for label in labels), labels
        assert any(f"eps={FIRST_FIT['eps']:g}" in label for label in labels)
        _choose(browser, "fit_choice", "0")        # the first fit, with its scores
        _show_tab(browser, "biplot")
        _until(browser, lambda d: _picture_source(d, "biplot"), "a kept release's picture")
        _screenshot(browser, "restarted")
        assert _meter(browser) == pytest.approx(spent, rel=1e-3)
    finally:
        again.kill()


def test_a_served_explorer_is_its_custodians(browser, tmp_path_factory):
    # Served beyond this computer: a visitor without the token gets nothing; with
    # it, no upload and no non-private reference on the page; and the named data
    # set keeps one budget across working folders, a restart and an edited copy,
    # because the budget files are kept in the custodian's folder.
    from sklearn_dppca.app._access import TOKEN_VARIABLE

    root = tmp_path_factory.mktemp("served")
    custodian, token = root / "custodian", "k3y-of-the_custodian.0123456789"
    served = ["--host", "0.0.0.0", "--data-name", "school marks",
              "--custodian", str(custodian)]
    copies = []
    for name in ("office", "laptop"):
        (root / name).mkdir()
        copies.append(root / name / "marks.csv")
        _write_csv(copies[-1])
    lines = copies[1].read_text(encoding="utf-8").splitlines()
    cells = lines[1].split(",")
    cells[0] = f"{float(cells[0]) + 1:.1f}"                  # one cell changed
    copies[1].write_text("\n".join([lines[0], ",".join(cells)] + lines[2:]) + "\n",
                         encoding="utf-8")
    app = _App(copies[0], BUDGET, served, {TOKEN_VARIABLE: token})
    try:
        base = app.url.split("?")[0]
        browser.get(base)
        assert "needs its access token" in browser.find_element(By.TAG_NAME, "body").text
        _open(browser, app.url)
        assert browser.current_url == base                    # the token left the address
        for absent in ("upload", "nonprivate"):
            assert not browser.find_elements(By.ID, absent)
        before = _meter(browser)
        assert before[0] == 0
        _type(browser, "eps", SECOND_FIT["eps"])
        _click(browser, "fit")
        _until(browser, lambda d: _meter(d)[0] > 0, "the served fit to spend")
        spent = _meter(browser)
    finally:
        app.kill()
    again = _App(copies[1], BUDGET, served, {TOKEN_VARIABLE: token})
    try:
        _open(browser, again.url)
        _until(browser, lambda d: _meter(d) == spent,
               "the same budget from another folder, restarted, on an edited copy")
    finally:
        again.kill()
    for copy in copies:                                          # none beside the copies
        assert not list(copy.parent.glob("*.dppca-budget.json"))
    assert len(list(custodian.glob("*.dppca-budget.json"))) == 1
