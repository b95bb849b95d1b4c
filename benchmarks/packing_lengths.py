"""The row lengths `packing_bench.py` packs: a log-normal fitted to the real sessions.

Every model call in the samples folder that records its token usage (Claude Code
`message.usage`, one per message id; Codex `token_count.last_token_usage`; pi `usage`;
opencode `info.tokens`) gives one context length (prompt + completion). A training row is
one rollout's whole chain of turns (train.grpo.samples), so its length is the context at the
call where the rollout ended; a rollout can end at any call, so rows follow the
distribution of per-call contexts. Its log is fitted with every session weighted equally
(one long session must not stand for all harnesses). `make_stream` then draws groups of
rows whose lengths share a task's part of that spread.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Iterator
from pathlib import Path

from train.grpo.samples import GroupSamples
from train.rollout.contract import TrainingRow


def _json_lines(path: Path) -> Iterator[dict]:
    for line in path.read_text(errors="replace").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def _claude(path: Path) -> list[int]:
    seen: dict[str, int] = {}
    for d in _json_lines(path):
        message = d.get("message")
        if d.get("type") == "assistant" and isinstance(message, dict):
            u = message.get("usage") or {}
            keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                    "output_tokens")  # fmt: skip
            seen[message.get("id") or str(len(seen))] = sum(int(u.get(k) or 0) for k in keys)
    return list(seen.values())


def _codex(path: Path) -> list[int]:
    out = []
    for d in _json_lines(path):
        payload = d.get("payload")
        if isinstance(payload, dict) and payload.get("type") == "token_count":
            last = (payload.get("info") or {}).get("last_token_usage") or {}
            out.append(int(last.get("input_tokens") or 0) + int(last.get("output_tokens") or 0))
    return out


def _pi(path: Path) -> list[int]:
    out = []
    for d in _json_lines(path):
        message = d.get("message")
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            u = message["usage"]
            out.append(sum(int(u.get(k) or 0) for k in ("input", "output", "cacheRead",
                                                         "cacheWrite")))  # fmt: skip
    return out


def _opencode(path: Path) -> list[int]:
    try:
        data = json.loads(path.read_text(errors="replace"))
    except ValueError:
        return []
    out = []
    for message in data.get("messages", []) if isinstance(data, dict) else []:
        tokens = (message.get("info") or {}).get("tokens")
        if isinstance(tokens, dict):
            cache = tokens.get("cache") or {}
            out.append(int(tokens.get("input") or 0) + int(tokens.get("output") or 0)
                       + int(cache.get("read") or 0) + int(cache.get("write") or 0))  # fmt: skip
    return out


READERS: dict[str, tuple[str, Callable[[Path], list[int]]]] = {
    "claude_code": ("*.jsonl", _claude),
    "codex": ("*.jsonl", _codex),
    "pi": ("*.jsonl", _pi),
    "opencode": ("*.json", _opencode),
}


def fit_lognormal(samples: Path) -> tuple[float, float, int, int]:
    """(mu, sigma) of log context length, sessions weighted equally; calls; sessions."""
    sessions = []
    for folder, (pattern, read) in READERS.items():
        for path in sorted((samples / folder).glob(pattern)):
            logs = [math.log(n) for n in read(path) if n > 0]
            if logs:
                sessions.append(logs)
    if not sessions:
        raise SystemExit(f"no session with token usage under {samples} (see --samples)")
    weights = [(x, 1 / len(s)) for s in sessions for x in s]
    total = sum(w for _, w in weights)
    mu = sum(x * w for x, w in weights) / total
    sigma = math.sqrt(sum(w * (x - mu) ** 2 for x, w in weights) / total)
    return mu, sigma, sum(map(len, sessions)), len(sessions)


def make_stream(
    count: int, group_size: int, mu: float, sigma: float, share: float, cap: int, seed: int
) -> list[GroupSamples]:
    rng = random.Random(seed)
    task_sd, own_sd = sigma * math.sqrt(share), sigma * math.sqrt(1 - share)
    groups = []
    for group_id in range(count):
        centre = rng.gauss(mu, task_sd)
        sizes = [max(2, min(cap, round(math.exp(rng.gauss(centre, own_sd)))))
                 for _ in range(group_size)]  # fmt: skip
        # Length-only stand-ins: packing reads nothing but len(input_ids).
        rows = [
            TrainingRow.model_construct(input_ids=range(n), completion_mask=range(n),
                                        old_logprobs=range(n), advantage=0.0, model_version=0,
                                        group_id=group_id, task_id="t")
            for n in sizes
        ]  # fmt: skip
        groups.append(GroupSamples.model_construct(group_id=group_id, task_id="t", rows=rows,
                                                   advantages={}, skipped={}))  # fmt: skip
    return groups
