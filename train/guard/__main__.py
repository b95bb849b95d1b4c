"""`python -m train.guard --upstream URL --port P [options]`: run the guard proxy."""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import secrets
import signal
from pathlib import Path

from pydantic import ValidationError

from repo2rlenv.cli_args import options_from
from repo2rlenv.ui import error
from train.guard import wire
from train.guard.context import ContextError, GuardContext, context_from_task_dir
from train.guard.options import GuardOptions
from train.guard.proxy import GuardServer
from train.rollout import ui

GC_THRESHOLD = (20_000, 10, 10)
"""The collector's young-generation threshold, raised from Python's 700: 48 streams
allocate a few dicts per event, nearly all freed by reference counting, and at 700 the
collector ran 200+ young and 20 middle passes per bench run (each middle pass 1-2 ms
with the loop stopped); at 20,000 fewer than 10 in all (docs/guard.md, "Where the time
goes"). Cycles are still collected, only in larger batches. The CLI's process only: a
trainer running the guard in its own process keeps its own settings."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m train.guard", description="Check every tool call a model makes."
    )
    parser.add_argument("--upstream", required=True, help="OpenAI-compatible base URL")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--admin-port", type=int, default=0, help="control plane port (loopback)")
    parser.add_argument(
        "--admin-token-file",
        type=Path,
        help="the control plane's secret: read from this file, or written there (mode 600) "
        "when the file does not exist",
    )
    parser.add_argument(
        "--require-registered",
        action="store_true",
        help="refuse model requests for sessions the control plane has not registered",
    )
    for name, kind, text in (
        ("session_idle_s", float, "close sessions idle this long"),
        (
            "client_timeout_s",
            float,
            "close a client connection that has not sent a whole request this long",
        ),
        ("max_connections", int, "client connections beyond this are closed at once"),
    ):
        default = GuardOptions.model_fields[name].default  # the model's, never a copy
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=default, help=text)
    parser.add_argument("--log-dir", type=Path, help="per-session JSONL logs")
    parser.add_argument(
        "--model-map",
        action="append",
        default=[],
        metavar="HARNESS=UPSTREAM",
        help="serve the harness's model name with an upstream (adapter) name",
    )
    parser.add_argument("--task-dir", type=Path, help="default context from this task folder")
    parser.add_argument("--context", type=Path, help="default context from a JSON file")
    parser.add_argument(
        "--atif-scan",
        choices=("audit", "inline", "off"),
        default="audit",
        help="atif-scan after the response (audit), before it, or never",
    )
    parser.add_argument("--no-record", action="store_true", help="do not write exchanges.jsonl")
    parser.add_argument(
        "--request-tokens", action="store_true", help="ask the upstream for token ids and logprobs"
    )
    return parser


def options_from_args(args: argparse.Namespace) -> GuardOptions:
    context = GuardContext()
    if args.task_dir:
        context = context_from_task_dir(args.task_dir)
    if args.context:
        context = GuardContext.model_validate(json.loads(args.context.read_text()))
    mapping = {}
    for item in args.model_map:
        name, sep, target = item.partition("=")
        if not sep or not name or not target:
            raise ValueError(f"--model-map wants HARNESS=UPSTREAM, got {item!r}")
        mapping[name] = target
    token = {"admin_token": admin_token(args.admin_token_file)} if args.admin_token_file else {}
    return options_from(
        args,
        GuardOptions,
        **token,
        model_map=mapping,
        record=not args.no_record,
        default_context=context,
    )


def admin_token(path: Path) -> str:
    """The run's control-plane secret: the trainer's (the file exists), or a new one
    written where only this user can read it."""
    if path.exists():
        token = path.read_text().strip()
        if len(token) < 16:
            raise ValueError(f"{path}: the admin token must be at least 16 characters")
        return token
    token = secrets.token_urlsafe(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(token + "\n")
    return token


async def _serve(server: GuardServer) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    base_url = await server.start()
    gc.collect()
    gc.freeze()  # the start-up objects (rules, atif-scan) leave the collector's scans
    ui.guard_listening(base_url, server.upstream, server.options.log_dir, server.admin_url)
    gc.set_threshold(*GC_THRESHOLD)
    await stop.wait()
    await server.stop()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        options = options_from_args(args)
    except (ContextError, ValidationError, ValueError, OSError) as exc:
        error(str(exc))
        return 2
    try:
        wire.run(_serve(GuardServer(options)))
    except OSError as exc:
        error(f"cannot listen on {options.host}:{options.port}: {exc}")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
