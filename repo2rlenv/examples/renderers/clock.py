"""What every renderer shares: stable ids and timestamps derived from the story's name
(so the committed example dataset is byte-for-byte reproducible), the project root the
stories pretend to run in, and the small text shapes several harnesses use."""

from __future__ import annotations

import hashlib
import json

ROOT = "/home/dev/projects/{name}"
T0 = 1767225600  # 2026-01-01T00:00:00Z


class Clock:
    """Each call moves one tick on: ids and times differ per call but never per run."""

    def __init__(self, name: str) -> None:
        self.name, self.tick = name, 0

    def iso(self) -> str:
        self.tick += 1
        minutes, seconds = divmod(self.tick, 60)
        return f"2026-01-01T10:{minutes:02d}:{seconds:02d}.000Z"

    def ms(self) -> int:
        self.tick += 1
        return (T0 + self.tick) * 1000

    def uid(self, kind: str = "") -> str:
        self.tick += 1
        return hashlib.sha256(f"{self.name}{kind}{self.tick}".encode()).hexdigest()


def abs_path(root: str, path: str) -> str:
    """A story's relative path as the harness logs it: absolute under the project root."""
    return path if path.startswith("/") or path.startswith("..") else f"{root}/{path}"


def gutter(text: str) -> str:
    """File text with `cat -n` line numbers, as Claude Code's Read tool returns it."""
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.splitlines(), 1))


def jsonl(lines: list[dict]) -> str:
    """One JSON object a line, the log shape of most harnesses."""
    return "".join(json.dumps(line) + "\n" for line in lines)
