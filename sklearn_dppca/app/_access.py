"""Who may reach the explorer, and what it offers them.

An explorer on this computer's loopback address is a local, single-user tool:
uploads are open and the custodian may turn the non-private reference on. An
explorer listening beyond the loopback is a custodian's deployment: every request
must carry its access token (a credential only the custodian hands out), uploads
are off (it serves the data sets its custodian started it with) and the
non-private reference does not exist. The token reaches the app once, in the
address printed at the start (``?token=...``); the app then keeps it in a
cookie of that browser (HttpOnly; SameSite=Lax, so that a link to it works and no other site can open its WebSocket) and drops it from the address.
Scripts may send ``Authorization: Bearer <token>`` instead.
"""

import hmac
import http.cookies
import ipaddress
import os
import secrets
import urllib.parse

from .._bunch import Bunch
from .._data_sources import UserError

#: The environment variable a custodian may set to keep one token across
#: restarts (else each start draws a new one).
TOKEN_VARIABLE = "SKLEARN_DPPCA_APP_TOKEN"
#: The cookie that carries the token after the first visit.
_COOKIE = "dppca_token"
#: The fewest characters of a token the custodian sets.
_TOKEN_MIN_LENGTH = 16
#: What a request without the token is told (it names no data set).
_REFUSED = (b"This explorer needs its access token: open the address its custodian "
            b"gave you (it ends in ?token=...).\n")


def _is_loopback(host):
    """Whether ``host`` names this computer only (``localhost`` or a loopback
    address); any other name or address may be reached from elsewhere."""
    text = str(host).strip().strip("[]")
    if text.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(text).is_loopback
    except ValueError:
        return False


def _checked_token(token):
    if not isinstance(token, str) or len(token) < _TOKEN_MIN_LENGTH \
            or token != urllib.parse.quote(token, safe="-_.~"):
        raise UserError(f"the access token must be at least {_TOKEN_MIN_LENGTH} "
                        "characters among letters, digits and - _ . ~ (the token "
                        "itself is not repeated here).")
    return token


def local_access(allow_reference=False):
    """The explorer on the loopback: no token, uploads open, the reference only
    when its custodian turns it on."""
    return Bunch(served=False, token=None, uploads=True, reference=bool(allow_reference))


def served_access(token=None, allow_reference=False):
    """The explorer beyond the loopback: a token (``token``, else the
    :data:`TOKEN_VARIABLE`, else a new random one), no uploads, no reference.

    Raises :class:`UserError` when the reference is asked for: it is local only.
    """
    if allow_reference:
        raise UserError("the non-private reference is local only: an explorer that "
                        "listens beyond this computer cannot offer it (drop "
                        "--allow-reference, or listen on 127.0.0.1).")
    token = token if token is not None else os.environ.get(TOKEN_VARIABLE) or \
        secrets.token_urlsafe(24)
    return Bunch(served=True, token=_checked_token(token), uploads=False, reference=False)


def access_for(host, token=None, allow_reference=False):
    """The access of an explorer listening on ``host`` (see the module)."""
    if _is_loopback(host):
        if token is not None:
            raise UserError("an access token is for an explorer that listens beyond "
                            "this computer; on the loopback there is none.")
        return local_access(allow_reference)
    return served_access(token, allow_reference)


def _matches(given, token):
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def _headers(scope):
    return {name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope.get("headers", [])}


def _cookie_token(headers):
    jar = http.cookies.SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except http.cookies.CookieError:
        return None
    return jar[_COOKIE].value if _COOKIE in jar else None


def _bearer_token(headers):
    kind, _, value = headers.get("authorization", "").partition(" ")
    return value.strip() if kind.lower() == "bearer" else None


class TokenGate:
    """An ASGI app that passes to ``app`` only the requests carrying ``token``
    (in the query string, the cookie or a bearer header), and answers the others
    403 (a WebSocket is closed before it opens). A page request with the right
    token in its query string is sent to the same address without it, with the
    cookie set, so that the token leaves the address bar and the history."""

    def __init__(self, app, token):
        self.app = app
        self.token = _checked_token(token)

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):     # lifespan
            await self.app(scope, receive, send)
            return
        query = urllib.parse.parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                                       keep_blank_values=True)
        from_query = dict(query).get("token")
        headers = _headers(scope)
        if scope["type"] == "http" and _matches(from_query, self.token):
            await self._to_address_without_token(scope, query, send)
        elif any(_matches(given, self.token) for given in
                 (from_query, _cookie_token(headers), _bearer_token(headers))):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await receive()                                # websocket.connect
            await send({"type": "websocket.close", "code": 1008})
        else:
            await send({"type": "http.response.start", "status": 403,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
            await send({"type": "http.response.body", "body": _REFUSED})

    async def _to_address_without_token(self, scope, query, send):
        rest = urllib.parse.urlencode([(k, v) for k, v in query if k != "token"])
        where = urllib.parse.quote(scope.get("root_path", "") + scope.get("path", "/")) \
            + (f"?{rest}" if rest else "")
        cookie = f"{_COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Lax"
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", where.encode("latin-1")),
                                (b"set-cookie", cookie.encode("latin-1")),
                                (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": b""})
