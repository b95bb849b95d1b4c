"""A small in-process stand-in for an OpenAI-compatible server (the `--llm URL` tests):
`GET /models` names one model, `POST /chat/completions` answers `reply` (a text, or a
function of the request) with HTTP `status` and, when set, `finish_reason` ("length": the
reply was cut at `max_tokens`), and every request is kept."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeServer:
    def __init__(self) -> None:
        self.reply: str | Callable[[dict], str] = (
            "How many people live in the cities listed in `cities.csv`, in total?"
        )
        self.status = 200
        self.finish_reason: str | None = None
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _send(self, payload: dict, status: int = 200) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._send({"data": [{"id": "tiny-model"}]})

            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                request = json.loads(self.rfile.read(length))
                server.requests.append(request)
                if server.status != 200:
                    self._send({"error": {"message": "overloaded"}}, server.status)
                    return
                reply = server.reply(request) if callable(server.reply) else server.reply
                choice: dict = {"message": {"content": reply}}
                if server.finish_reason is not None:
                    choice["finish_reason"] = server.finish_reason
                self._send({"choices": [choice]})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@contextmanager
def running() -> Iterator[FakeServer]:
    fake = FakeServer()
    thread = threading.Thread(target=fake.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.httpd.shutdown()
        fake.httpd.server_close()
