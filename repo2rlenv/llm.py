"""Optional help from an OpenAI-compatible endpoint (`--llm URL`): rephrasing
instructions and writing hidden tests for build tasks whose session had none.

The deterministic result is always the baseline: a rewrite is kept only when it still
names every identifier the original put in backticks (file, function and command names
the verifier depends on); synthesised tests are kept only when they parse and define
tests, and the oracle check (reference 1.0, empty start 0.0) still decides. Answers are
cached on disk by a hash of the request, so rerunning `mine` gives the same bytes
without calling the endpoint again.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import urllib.error
import urllib.request
import uuid
from pathlib import Path

SYSTEM = (
    "You rewrite task requests for a coding agent. Make the request read like a clear "
    "message from a user. Keep every file name, function name, command, number and "
    "requirement exactly; keep text in backticks unchanged. Do not add hints, solutions, "
    "or anything about how the work will be checked. Reply with the rewritten request only."
)
_BACKTICKED = re.compile(r"`([^`\n]+)`")


class _Endpoint:
    system = ""
    max_tokens: int | None = None
    """A cap on the reply's length, sent only when set (so the other endpoints' requests,
    and their cache keys, stay as they were)."""

    def __init__(
        self, base_url: str, cache_dir: Path, model: str = "default", timeout_s: float = 60.0
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.timeout_s = timeout_s
        self.cache = Path(cache_dir) / "llm"
        self.calls = 0
        self.rejected = 0
        self.errors = 0
        """Requests the endpoint did not answer usably (unreachable, malformed reply)."""
        self.last_error = ""
        self.last_cut = False
        """Whether the last reply stopped at `max_tokens` (`finish_reason` "length"): a
        cut question or rewrite can still pass a length check and read as whole."""

    def _ask(self, text: str) -> str | None:
        payload = {
            "model": self.model,
            "temperature": 0,
            "seed": 0,
            "messages": [
                {"role": "system", "content": self.system or SYSTEM},
                {"role": "user", "content": text},
            ],
        }
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        key = hashlib.sha256(json.dumps([self.url, payload], sort_keys=True).encode()).hexdigest()
        cached = self.cache / f"{key}.json"
        self.last_cut = False
        if cached.exists():
            kept = json.loads(cached.read_text())
            self.last_cut = kept.get("finish_reason") == "length"
            return kept["content"]
        request = urllib.request.Request(
            self.url,
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                body = json.loads(response.read())
            content = body["choices"][0]["message"]["content"]
            finish = body["choices"][0].get("finish_reason")
        except (OSError, ValueError, KeyError, IndexError, TypeError, urllib.error.URLError) as exc:
            self.errors += 1
            self.last_error = f"{type(exc).__name__}: {exc}"[:200]
            return None
        self.calls += 1
        if not isinstance(content, str):
            self.errors += 1
            self.last_error = f"the reply's content is {type(content).__name__}, not text"
            return None
        self.cache.mkdir(parents=True, exist_ok=True)
        staging = self.cache / f".{key}.{uuid.uuid4().hex}.tmp"
        kept = {"content": content}
        if finish == "length":  # recorded only then: other cache files keep their bytes
            kept["finish_reason"] = finish
        staging.write_text(json.dumps(kept))
        self.last_cut = finish == "length"
        os.replace(staging, cached)
        return content


class InstructionRewriter(_Endpoint):
    system = SYSTEM

    def rewrite(self, instruction: str) -> str:
        """The rewrite when it keeps every backticked identifier, else the original."""
        answer = self._ask(instruction)
        if not answer or not answer.strip():
            return instruction
        if self.last_cut:  # a request cut short still keeps its identifiers
            self.rejected += 1
            return instruction
        required = set(_BACKTICKED.findall(instruction))
        if any(token not in answer for token in required):
            self.rejected += 1
            return instruction
        return answer.strip() + "\n"


TESTS_SYSTEM = (
    "You write hidden pytest tests for a coding task. Reply with one Python file only, in a "
    "```python block: pytest tests that pass on the given solution, fail when the work is "
    "missing, check behaviour the request asks for (not implementation details), and use "
    "no network, clock or randomness."
)
_CODE_BLOCK = re.compile(r"```(?:python)?\n(.*?)```", re.DOTALL)


class TestWriter(_Endpoint):
    system = TESTS_SYSTEM

    def write(self, request: str, solution: dict[str, str]) -> str | None:
        """A pytest file for `request`, or None when the answer is not usable tests."""
        shown = "\n\n".join(f"# file: {path}\n{text}" for path, text in sorted(solution.items()))
        answer = self._ask(f"Request:\n{request}\n\nSolution files:\n{shown}")
        if not answer:
            return None
        if self.last_cut:  # a file cut short may still parse, less its last tests
            self.rejected += 1
            return None
        match = _CODE_BLOCK.search(answer)
        code = (match.group(1) if match else answer).strip() + "\n"
        try:
            tree = ast.parse(code)
        except SyntaxError:
            self.rejected += 1
            return None
        tests = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test")
        ]
        if not tests:
            self.rejected += 1
            return None
        return code
