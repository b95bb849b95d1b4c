"""The guard server's options (the CLI and the trainer build the same model)."""

from __future__ import annotations

import ipaddress
import secrets
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from train.guard.context import GuardContext


class GuardOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    upstream: str = Field(description="Base URL of the OpenAI-compatible server (vLLM).")
    host: str = "127.0.0.1"
    port: int = Field(default=8100, ge=0, le=65535, description="0 picks a free port.")
    admin_host: str = Field(
        default="127.0.0.1",
        description="The control plane's address: loopback only, so no rollout container "
        "(which reaches the host through its network's gateway) can reach it.",
    )
    admin_port: int = Field(default=0, ge=0, le=65535, description="0 picks a free port.")
    admin_token: str = Field(
        default_factory=lambda: secrets.token_urlsafe(32),
        min_length=16,
        repr=False,
        description="The per-run secret every control-plane request carries "
        "(`Authorization: Bearer <token>`); only the trainer holds it.",
    )
    require_registered: bool = Field(
        default=False,
        description="Refuse model requests for a session the trainer has not registered "
        "(a run sets it: a rollout cannot move its calls to a session of its own making).",
    )
    session_idle_s: float = Field(
        default=3600.0,
        gt=0,
        description="A session without a request for this long is closed (verdict written, "
        "files closed), so sessions nobody closes do not pile up.",
    )
    log_dir: Path | None = Field(default=None, description="Per-session JSONL; None: no files.")
    model_map: dict[str, str] = Field(
        default_factory=dict, description="Harness model name -> upstream (adapter) name."
    )
    atif_scan: Literal["audit", "inline", "off"] = Field(
        default="audit",
        description="atif-scan's detectors: after the response (marks the session), "
        "before it (blocks the call), or not at all.",
    )
    audit_worker: bool = Field(
        default=True,
        description="Run atif-scan audits in a worker process instead of on the event "
        "loop (mode `audit` only).",
    )
    audit_wait_s: float = Field(
        default=5.0,
        gt=0,
        description="How long a session's close waits for its audits in the worker "
        "before it runs the ones not done on the event loop.",
    )
    record: bool = Field(default=True, description="Write exchanges.jsonl per session.")
    request_tokens: bool = Field(
        default=False,
        description="Ask the upstream for token ids and logprobs (vLLM `return_token_ids`, "
        "`logprobs`) on chat completions, so the exchange log can build samples.",
    )
    default_context: GuardContext = Field(default_factory=GuardContext)
    upstream_timeout_s: float = Field(default=900.0, gt=0)
    client_timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="A client connection must deliver a whole request (head and body) "
        "this long after it opens or after its last response, or it is closed.",
    )
    max_connections: int = Field(default=512, ge=1)
    max_body_mb: int = Field(default=64, ge=1)

    @field_validator("admin_host")
    @classmethod
    def _loopback(cls, value: str) -> str:
        if value == "localhost":
            return value
        try:
            loopback = ipaddress.ip_address(value).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise ValueError(f"the control plane listens on loopback only, not {value!r}")
        return value
