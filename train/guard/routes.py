"""Which requests the model port lets through: an allowlist, on the normalised path.

The path is normalised before anything looks at it (`//v1//chat/completions`,
`/v1/./chat/completions`, `/v1/x/../chat/completions`, a trailing slash all name
`/v1/chat/completions`), and the normalised path is what goes upstream, so the route
the guard checks is the route the upstream serves. Percent escapes and backslashes are
refused outright: the upstream's framework decodes them, the allowlist would not.

Allowed: the routes that carry tool calls, each checked (`GUARDED`), and the read-only
model list harnesses ask for (`PASSED`). Everything else, vLLM's admin and dev routes
included (`/v1/load_lora_adapter`, `/pause`, `/reset_prefix_cache`, `/server_info`,
...), is refused with 404. (`/v1/responses` is checked since issue 27.)
"""

from __future__ import annotations

import posixpath
import re
from typing import Literal

Api = Literal["openai", "anthropic", "responses"]

GUARDED: dict[str, Api] = {
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
    "/v1/messages": "anthropic",
    "/v1/responses": "responses",
    "/responses": "responses",
}
PASSED: frozenset[str] = frozenset({"/v1/models", "/models", "/health"})
UNSAFE = re.compile(r"[%\\\x00-\x20\x7f]")


class RouteRefused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def normalize(path: str) -> str:
    """`/a//b/./c/../d/` -> `/a/b/d`; raises RouteRefused on escapes the upstream decodes."""
    if not path.startswith("/") or UNSAFE.search(path):
        raise RouteRefused(400, "guard.bad-path", f"path {path[:200]!r} is not a plain path")
    clean = posixpath.normpath(re.sub("/+", "/", path))
    return "/" if clean in ("", ".", "//") else re.sub("^/+", "/", clean)


def route(method: str, path: str) -> Api | None:
    """The API whose tool calls the request's response carries (None: passed as is).
    Raises RouteRefused for anything not on the allowlist."""
    api = GUARDED.get(path)
    if api is not None:
        if method != "POST":
            raise RouteRefused(405, "guard.method-not-allowed", f"{method} {path}: POST only")
        return api
    if path in PASSED:
        if method not in ("GET", "HEAD"):
            raise RouteRefused(405, "guard.method-not-allowed", f"{method} {path}: GET only")
        return None
    raise RouteRefused(404, "guard.route-not-allowed", f"{method} {path} is not served here")
