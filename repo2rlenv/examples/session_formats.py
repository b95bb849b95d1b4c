"""Render the example stories in the on-disk formats real harnesses write.

`python -m repo2rlenv.examples.session_formats DIR` writes the bundled example session
dataset; the committed copy in `repo2rlenv/examples/sessions/` is this output (a test
keeps them equal). Ids and timestamps are derived from the story, so output is stable.
This module only says which story goes in which format; each harness's format is a
module of `repo2rlenv.examples.renderers`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from repo2rlenv.examples.renderers.atif import atif
from repo2rlenv.examples.renderers.claude_code import claude_code
from repo2rlenv.examples.renderers.codex import codex
from repo2rlenv.examples.renderers.hermes import hermes
from repo2rlenv.examples.renderers.opencode import opencode
from repo2rlenv.examples.renderers.pi import pi
from repo2rlenv.examples.session_stories import STORIES


def render_all() -> dict[str, str]:
    files = {
        "claude_code/textstats.jsonl": claude_code("textstats", STORIES["textstats"]),
        "pi/stock.jsonl": pi("stock", STORIES["stock"]),
        "opencode/roman.json": opencode("roman", STORIES["roman"]),
        "hermes/slug.jsonl": hermes("slug", STORIES["slug"]),
        "codex/orders.jsonl": codex("orders", STORIES["orders"]),
        "atif/chat-only.json": atif("chat-only", STORIES["chat-only"]),
        "claude_code/outside-root.jsonl": claude_code("outside-root", STORIES["outside-root"]),
        "pi/stock-compacted.jsonl": pi("stock-compacted", STORIES["stock"], compact_after=2),
    }
    truncated = claude_code("textstats-cut", STORIES["textstats"])
    files["claude_code/textstats-truncated.jsonl"] = truncated[: len(truncated) * 2 // 3]
    return files


def write_all(out: Path) -> list[Path]:
    written = []
    for rel, text in sorted(render_all().items()):
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(target)
    return written


SESSIONS_DIR = Path(__file__).resolve().parent / "sessions"

if __name__ == "__main__":
    for path in write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else SESSIONS_DIR):
        print(path)
