"""Who may reach the explorer (sklearn_dppca.app._access): a local explorer has
no token and may offer the reference; a served one lets through only requests
carrying its token, has no uploads and no reference, on the page and on the
server."""

import asyncio
import os
import re
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
from sklearn_dppca._data_sources import TabularData, UserError
from sklearn_dppca.app import _launch
from sklearn_dppca.app._access import (
    TOKEN_VARIABLE,
    TokenGate,
    access_for,
    _is_loopback,
    local_access,
    served_access,
)
from sklearn_dppca.app._session import Explorer
from sklearn_dppca.app._sources import BUDGET_SUFFIX

from ._hang_guard import HANG_GUARD

TOKEN = "k3y-of-the_custodian.0123456789"


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("LOCALHOST", True), ("0.0.0.0", False), ("::", False),
    ("192.168.1.20", False), ("example.org", False), ("", False)])
def test_only_this_computers_addresses_are_loopback(host, loopback):
    assert _is_loopback(host) is loopback


def test_a_local_explorer_has_no_token_and_the_reference_only_when_asked():
    assert access_for("127.0.0.1") == local_access()
    assert local_access().reference is False and local_access().uploads is True
    assert access_for("localhost", allow_reference=True).reference is True
    with pytest.raises(UserError, match="on the loopback there is none"):
        access_for("127.0.0.1", token=TOKEN)


def test_a_served_explorer_has_a_token_no_uploads_and_no_reference(monkeypatch):
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    first, second = access_for("0.0.0.0"), access_for("0.0.0.0")
    assert first.served and not first.uploads and not first.reference
    assert len(first.token) >= 16 and first.token != second.token   # drawn anew
    monkeypatch.setenv(TOKEN_VARIABLE, TOKEN)
    assert access_for("::").token == TOKEN
    assert served_access("given-token-0123456789").token == "given-token-0123456789"
    with pytest.raises(UserError, match="reference is local only"):
        access_for("0.0.0.0", allow_reference=True)


@pytest.mark.parametrize("token", ["short", "has space in it 0123", "semi;colon0123456",
                                   "slash/0123456789abc", 12345678901234567])
def test_a_bad_token_is_refused_without_repeating_it(token):
    with pytest.raises(UserError, match="at least 16 characters") as error:
        served_access(token)
    assert str(token) not in str(error.value)


# -- the gate -----------------------------------------------------------------------------
class _Inner:
    """An ASGI app that records the scopes it was given and answers 200."""

    def __init__(self):
        self.scopes = []

    async def __call__(self, scope, receive, send):
        self.scopes.append(scope)
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"page"})


def _call(gate, kind="http", path="/", query=b"", headers=()):
    scope = {"type": kind, "path": path, "root_path": "", "query_string": query,
             "headers": [(name.encode(), value.encode()) for name, value in headers]}
    sent = []

    async def receive():
        return {"type": "websocket.connect"} if kind == "websocket" else \
            {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    asyncio.run(gate(scope, receive, send))
    return sent


def _status(sent):
    return sent[0]["status"]


def _header(sent, name):
    return dict(sent[0]["headers"]).get(name.encode(), b"").decode()


def test_a_request_without_the_token_never_reaches_the_app():
    inner = _Inner()
    gate = TokenGate(inner, TOKEN)
    for headers in ((), (("cookie", "dppca_token=" + TOKEN[:-1] + "x"),),
                    (("authorization", "Bearer wrong-token-0123456789"),),
                    (("cookie", "dppca_token"),)):
        sent = _call(gate, headers=headers)
        assert _status(sent) == 403 and TOKEN.encode() not in sent[1]["body"]
    assert _call(gate, query=b"token=nearly-" + TOKEN.encode())[0]["status"] == 403
    closed = _call(gate, kind="websocket", path="/websocket/")
    assert closed == [{"type": "websocket.close", "code": 1008}]
    assert inner.scopes == []


def test_the_token_in_the_address_becomes_a_cookie_and_leaves_the_address():
    inner = _Inner()
    gate = TokenGate(inner, TOKEN)
    sent = _call(gate, path="/a page", query=f"x=1&token={TOKEN}&y=2".encode())
    assert _status(sent) == 303 and inner.scopes == []
    assert _header(sent, "location") == "/a%20page?x=1&y=2"
    cookie = _header(sent, "set-cookie")
    assert cookie.startswith(f"dppca_token={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_the_cookie_or_a_bearer_header_lets_a_request_through():
    inner = _Inner()
    gate = TokenGate(inner, TOKEN)
    assert _status(_call(gate, headers=[("cookie", f"other=1; dppca_token={TOKEN}")])) == 200
    assert _status(_call(gate, headers=[("authorization", f"Bearer {TOKEN}")])) == 200
    assert _call(gate, kind="websocket", headers=[("cookie", f"dppca_token={TOKEN}")]) == []
    asyncio.run(gate({"type": "lifespan"}, None, None))
    assert [scope["type"] for scope in inner.scopes] == ["http", "http", "websocket",
                                                         "lifespan"]


# -- the page and the server --------------------------------------------------------------
@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    import pandas as pd

    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    return TabularData(X, None, None, "three columns")


def test_the_page_offers_uploads_and_the_reference_only_where_allowed():
    pytest.importorskip("shiny")
    from sklearn_dppca.app._ui import _page

    def page(access):
        return str(_page("data.csv", (1.0, 1e-5), None, access))

    local, with_reference = page(local_access()), page(local_access(True))
    served = page(served_access(TOKEN))
    assert 'id="upload"' in local and 'id="upload"' not in served
    assert "upload a CSV file" in local and "upload a CSV file" not in served
    for shown in ('id="nonprivate"', 'id="show_reference"'):
        assert shown in with_reference
        assert shown not in local and shown not in served


def test_the_server_hears_no_reference_it_does_not_offer():
    pytest.importorskip("shiny")
    from sklearn_dppca.app._ui import _fit_inputs

    class Inputs(dict):
        def __getattr__(self, name):
            return self[name]

    sent = Inputs({name: (lambda: 1) for name in (
        "n_components", "score_axes", "eps", "delta", "split_loading", "split_scree",
        "split_score", "split_scale", "scale", "radial", "accounting", "scree_method",
        "histogram", "bins", "bounds")}, nonprivate=lambda: True)   # a crafted client
    assert _fit_inputs(sent, reference=False)["nonprivate"] is False
    assert _fit_inputs(sent, reference=True)["nonprivate"] is True


def test_an_explorer_without_the_reference_refuses_it_before_any_charge(tmp_path, data):
    path = tmp_path / f"d{BUDGET_SUFFIX}"
    explorer = Explorer(data, (1.0, 1e-5), path)
    with pytest.raises(UserError, match="reference is off.*Nothing was spent"):
        explorer.fit({"eps": 0.5, "delta": 1e-6, "nonprivate": True})
    assert explorer.accountant.spent() == (0.0, 0.0) and explorer.fits == []


def test_the_command_line_refuses_the_reference_beyond_this_computer(capsys, tmp_path):
    code = _launch.main(["--host", "0.0.0.0", "--allow-reference", "--port", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ")
    assert "reference is local only" in err[0]
    with pytest.raises(ValueError, match="reference is local only"):
        _launch.run(host="0.0.0.0", allow_reference=True, launch=False)


def test_create_app_with_a_token_is_gated(tmp_path, data, monkeypatch):
    pytest.importorskip("shiny")
    monkeypatch.chdir(tmp_path)
    gated = _launch.create_app(data.X, token=TOKEN)
    assert isinstance(gated, TokenGate) and gated.token == TOKEN
    assert not isinstance(_launch.create_app(data.X), TokenGate)
    with pytest.raises(ValueError, match="reference is local only"):
        _launch.create_app(data.X, token=TOKEN, allow_reference=True)


# -- served for real ----------------------------------------------------------------------
class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _get(url, cookie=None):
    """(status, headers, body) of one GET, redirects not followed."""
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with opener.open(request, timeout=HANG_GUARD) as answer:
            return answer.status, answer.headers, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def _answered(url, deadline):
    """The first answer to a GET of ``url``, retried while nothing listens yet."""
    while True:
        try:
            return _get(url)
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _free_port():
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", 0))
        return probe.getsockname()[1]


def test_a_served_explorer_answers_only_its_token_holders(tmp_path):
    pytest.importorskip("shiny")
    port = _free_port()
    package_root = str(Path(sklearn_dppca.__file__).resolve().parents[1])
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1",
           TOKEN_VARIABLE: TOKEN, "PYTHONPATH": package_root}
    log = tmp_path / "app.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "sklearn_dppca", "app", "--host", "0.0.0.0",
             "--port", str(port)], cwd=tmp_path, env=env, stdout=out,
            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + HANG_GUARD
        while "explorer on" not in log.read_text() and time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            time.sleep(0.1)
        printed = log.read_text()
        assert f"http://0.0.0.0:{port}/?token={TOKEN}" in printed
        assert "uploads and the non-private reference are off" in printed
        base = f"http://127.0.0.1:{port}/"
        # (the address is printed just before the server starts accepting)
        status, _, body = _answered(base, deadline)
        assert status == 403 and "access token" in body
        status, headers, _ = _get(f"{base}?token={TOKEN}")
        assert status == 303 and headers["Location"] == "/"
        cookie = re.match(r"[^;]+", headers["Set-Cookie"]).group(0)
        status, _, page = _get(base, cookie=cookie)
        assert status == 200 and 'id="data_source"' in page
        assert 'id="upload"' not in page and 'id="nonprivate"' not in page
    finally:
        process.kill()
        process.wait(timeout=HANG_GUARD)


# -- a budget keyed by the custodian's name -----------------------------------------------
def _table(tmp_path, name, change=False, spelling="b"):
    rng = np.random.default_rng(1)
    values = rng.normal(size=(200, 2))
    if change:
        values[7, 0] += 1.0                              # one changed cell
    path = tmp_path / name
    path.write_text(f"a,{spelling}\n" + "\n".join(f"{x:.6f},{z:.6f}" for x, z in values)
                    + "\n", encoding="utf-8")
    return path


def test_a_named_data_set_keeps_its_budget_through_edits(tmp_path):
    from sklearn_dppca._data_sources import read_csv
    from sklearn_dppca.app._session import open_explorer
    from sklearn_dppca.app._sources import data_key, declare_name

    first = _table(tmp_path, "survey.csv")
    edited = _table(tmp_path, "survey-v2.csv", change=True, spelling="B")
    named = [declare_name(read_csv(path), "  county survey\t2026 ") for path in
             (first, edited)]
    assert data_key(named[0], tmp_path) == data_key(named[1], tmp_path)
    # undeclared, the edited table is another data set; another name is another
    assert data_key(read_csv(first), tmp_path) != data_key(read_csv(edited), tmp_path)
    assert data_key(declare_name(read_csv(first), "other survey"), tmp_path) \
        != data_key(named[0], tmp_path)
    explorer = open_explorer(named[0], (1.0, 1e-5), tmp_path)
    explorer.fit({"eps": 0.5, "delta": 1e-6})
    again = open_explorer(named[1], (1.0, 1e-5), tmp_path)
    assert again.budget_file == explorer.budget_file
    assert again.accountant.spent() == explorer.accountant.spent() != (0.0, 0.0)
    with pytest.raises(UserError, match="must not be empty"):
        declare_name(read_csv(first), " \t")


@pytest.mark.parametrize("argv, match", [
    (["{csv}", "--host", "0.0.0.0", "--port", "0"], "add --data-name NAME"),
    (["--data-name", "survey", "--port", "0"], "need a CSV file"),
])
def test_the_command_line_asks_for_the_name_where_it_keys_the_budget(capsys, tmp_path,
                                                                      argv, match):
    csv = _table(tmp_path, "survey.csv")
    code = _launch.main([arg.format(csv=csv) for arg in argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and match in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["survey.csv"]   # nothing written
