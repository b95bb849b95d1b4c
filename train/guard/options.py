"""The guard server's options (the CLI and the trainer build the same model)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from train.guard.context import GuardContext


class GuardOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    upstream: str = Field(description="Base URL of the OpenAI-compatible server (vLLM).")
    host: str = "127.0.0.1"
    port: int = Field(default=8100, ge=0, le=65535, description="0 picks a free port.")
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
    record: bool = Field(default=True, description="Write exchanges.jsonl per session.")
    request_tokens: bool = Field(
        default=False,
        description="Ask the upstream for token ids and logprobs (vLLM `return_token_ids`, "
        "`logprobs`) on chat completions, so the exchange log can build samples.",
    )
    settle_ms: float = Field(
        default=3.0,
        ge=0,
        description="Work off the response's path (reading the request's conversation, "
        "the exchange log, audits, log-file writes) starts this long after it is asked "
        "for: at that moment the upstream or the client needs the CPU.",
    )
    default_context: GuardContext = Field(default_factory=GuardContext)
    upstream_timeout_s: float = Field(default=900.0, gt=0)
    max_connections: int = Field(default=512, ge=1)
    max_body_mb: int = Field(default=64, ge=1)
