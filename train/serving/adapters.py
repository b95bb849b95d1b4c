"""The vLLM server's LoRA slots over HTTP: load, unload and list adapters by name.

Implements `train.rollout.contract.AdapterSlots` with vLLM's runtime adapter API, which exists
only when the server runs with `VLLM_ALLOW_RUNTIME_LORA_UPDATING=1` and `--enable-lora`.
Each failure becomes an `AdapterError` with a reason code, so a trainer can tell "that
version is already gone" (harmless while unloading) from "the server cannot take
adapters at all" (fatal, with the flag to add).
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ADAPTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class AdapterError(RuntimeError):
    """`code`: adapter.bad-name, adapter.bad-path, adapter.unreachable, adapter.api-off,
    adapter.already-loaded, adapter.not-loaded, adapter.load-failed, adapter.bad-answer."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class AdapterClient:
    """`AdapterSlots` for one vLLM server; thread-safe (one HTTP request per call)."""

    def __init__(self, base_url: str, timeout_s: float = 300.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def load(self, name: str, path: Path) -> None:
        _check_name(name)
        folder = Path(path).resolve()
        if not (folder / "adapter_config.json").is_file():
            raise AdapterError(
                "adapter.bad-path", f"{folder} holds no adapter_config.json (not a peft adapter)"
            )
        # The server resolves the path itself: absolute, and never loaded in place (a new
        # name per version keeps vLLM's prefix cache from serving the old weights' blocks).
        body = {"lora_name": name, "lora_path": str(folder), "load_inplace": False}
        status, text = self._post("/v1/load_lora_adapter", body)
        if status == 200:
            return
        if status == 400 and "already been loaded" in text:
            raise AdapterError("adapter.already-loaded", f"{name} is already loaded")
        raise AdapterError("adapter.load-failed", f"loading {name} from {folder}: {_brief(text)}")

    def unload(self, name: str) -> None:
        _check_name(name)
        status, text = self._post("/v1/unload_lora_adapter", {"lora_name": name})
        if status == 200:
            return
        if status == 404 and "cannot be found" in text:
            raise AdapterError("adapter.not-loaded", f"{name} is not loaded")
        raise AdapterError("adapter.load-failed", f"unloading {name}: {_brief(text)}")

    def loaded(self) -> list[str]:
        """Adapter names the server serves now (the base model is not one of them)."""
        data = self._get_json("/v1/models")
        try:
            cards = data["data"]
            return [card["id"] for card in cards if card.get("parent")]
        except (KeyError, TypeError) as exc:
            raise AdapterError("adapter.bad-answer", f"/v1/models answered {data!r:.200}") from exc

    def base_model(self) -> str:
        data = self._get_json("/v1/models")
        try:
            return next(card["id"] for card in data["data"] if not card.get("parent"))
        except (KeyError, TypeError, StopIteration) as exc:
            raise AdapterError("adapter.bad-answer", f"/v1/models answered {data!r:.200}") from exc

    # -- HTTP ------------------------------------------------------------------------
    def _request(self, path: str, body: dict[str, Any] | None) -> tuple[int, str]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method="GET" if body is None else "POST",
            headers={"content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return response.status, response.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise AdapterError(
                "adapter.unreachable", f"no vLLM server answers at {self.base_url}: {reason}"
            ) from exc

    def _post(self, path: str, body: dict[str, Any]) -> tuple[int, str]:
        status, text = self._request(path, body)
        if status in (404, 405) and "detail" in text and "Not Found" in text:
            raise AdapterError(
                "adapter.api-off",
                f"{self.base_url} has no {path}: start vLLM with --enable-lora and "
                "VLLM_ALLOW_RUNTIME_LORA_UPDATING=1 in its environment",
            )
        return status, text

    def _get_json(self, path: str) -> Any:
        status, text = self._request(path, None)
        if status != 200:
            raise AdapterError(
                "adapter.bad-answer", f"GET {path} answered {status}: {_brief(text)}"
            )
        try:
            return json.loads(text)
        except ValueError as exc:
            raise AdapterError("adapter.bad-answer", f"GET {path}: not JSON: {text:.200}") from exc


def _check_name(name: str) -> None:
    if not ADAPTER_NAME.fullmatch(name):
        raise AdapterError("adapter.bad-name", f"{name!r} is not a usable adapter name")


def _brief(text: str) -> str:
    """vLLM wraps its reason in {"error": {"message": ...}}; show just that."""
    try:
        data = json.loads(text)
        message = data.get("error", {}).get("message") if isinstance(data, dict) else None
    except ValueError:
        message = None
    return (message or text).strip()[:500]
