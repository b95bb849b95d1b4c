"""AdapterClient against a stand-in of vLLM's adapter API (the answers vLLM 0.32 gives,
status codes and bodies included); the real server is exercised in
tests/train/test_trainer_vllm.py."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from train.serving.adapters import AdapterClient, AdapterError


class _FakeVllm(BaseHTTPRequestHandler):
    adapters: ClassVar[dict[str, str]] = {}
    lora_api = True

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self, status: int, body: object) -> None:
        data = json.dumps(body).encode() if not isinstance(body, str) else body.encode()
        self.send_response(status)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._answer(status, {"error": {"message": message, "type": "x", "code": status}})

    def do_GET(self) -> None:
        if self.path != "/v1/models":
            return self._answer(404, {"detail": "Not Found"})
        cards = [{"id": "tiny", "root": "/m", "parent": None}]
        cards += [{"id": n, "root": p, "parent": "tiny"} for n, p in self.adapters.items()]
        return self._answer(200, {"object": "list", "data": cards})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if not self.lora_api:
            return self._answer(404, {"detail": "Not Found"})
        name = body.get("lora_name")
        if self.path == "/v1/load_lora_adapter":
            if name in self.adapters:
                return self._error(400, f"The lora adapter '{name}' has already been loaded.")
            if not Path(body["lora_path"]).is_absolute():
                return self._error(500, "relative path")
            self.adapters[name] = body["lora_path"]
            return self._answer(200, "Success")
        if self.path == "/v1/unload_lora_adapter":
            if name not in self.adapters:
                return self._error(404, f"The lora adapter '{name}' cannot be found.")
            del self.adapters[name]
            return self._answer(200, "Success")
        return self._answer(404, {"detail": "Not Found"})


@pytest.fixture
def fake_server() -> Iterator[str]:
    _FakeVllm.adapters = {}
    _FakeVllm.lora_api = True
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeVllm)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _adapter(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text("{}")
    return folder


def test_load_list_unload(fake_server: str, tmp_path: Path) -> None:
    client = AdapterClient(fake_server)
    client.load("pi-policy-v1", _adapter(tmp_path / "a"))
    client.load("pi-policy-v2", _adapter(tmp_path / "b"))
    assert client.loaded() == ["pi-policy-v1", "pi-policy-v2"]
    assert client.base_model() == "tiny"
    assert _FakeVllm.adapters["pi-policy-v1"] == str((tmp_path / "a").resolve())
    client.unload("pi-policy-v1")
    assert client.loaded() == ["pi-policy-v2"]


def test_errors_carry_reason_codes(fake_server: str, tmp_path: Path) -> None:
    client = AdapterClient(fake_server)
    folder = _adapter(tmp_path / "a")
    client.load("pi-policy-v1", folder)
    cases = [
        (lambda: client.load("pi-policy-v1", folder), "adapter.already-loaded"),
        (lambda: client.unload("pi-policy-v9"), "adapter.not-loaded"),
        (lambda: client.load("pi-policy-v2", tmp_path / "missing"), "adapter.bad-path"),
        (lambda: client.load("../etc", folder), "adapter.bad-name"),
        (lambda: client.unload(""), "adapter.bad-name"),
    ]
    for call, code in cases:
        with pytest.raises(AdapterError) as info:
            call()
        assert info.value.code == code


def test_server_without_runtime_lora_api_says_which_flag(fake_server: str, tmp_path: Path) -> None:
    _FakeVllm.lora_api = False
    with pytest.raises(AdapterError, match="VLLM_ALLOW_RUNTIME_LORA_UPDATING=1") as info:
        AdapterClient(fake_server).load("pi-policy-v1", _adapter(tmp_path / "a"))
    assert info.value.code == "adapter.api-off"


def test_unreachable_server() -> None:
    client = AdapterClient("http://127.0.0.1:9", timeout_s=5)
    with pytest.raises(AdapterError) as info:
        client.loaded()
    assert info.value.code == "adapter.unreachable"
