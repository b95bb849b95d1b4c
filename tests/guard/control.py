"""Test helper: a request to a guard's control plane (its loopback port, its token)."""

from __future__ import annotations

from typing import Any

import requests

from train.guard import GuardServer


def admin(server: GuardServer, method: str, path: str, **kwargs: Any) -> requests.Response:
    headers = {"authorization": f"Bearer {server.options.admin_token}"}
    return requests.request(
        method, f"{server.admin_url}{path}", headers=headers, timeout=10, **kwargs
    )
