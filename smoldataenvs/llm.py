"""Optional rephrasing of the question section by an OpenAI-compatible endpoint.

Only the prose between `## Question` and `## Answer` is sent and replaced; the data
listing and the answer format stay deterministic. A reply is used only when it passes
the same leak checks as the template (no answer, no reference code, no hidden paths)
and is of sane length; otherwise the template stands. Standard library HTTP only.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

from smoldataenvs.question import leaks

SYSTEM = (
    "You rewrite data-analysis questions so they read naturally to an analyst. Keep every "
    "column name, file name, label and number exactly as given, keep the meaning exact, "
    "do not answer the question, do not add code. Reply with the rewritten question only."
)
HIDDEN = re.compile(r"/tests\b|/solution\b|/logs/verifier\b|reward\.(?:txt|json)")
SECTION = re.compile(r"(## Question\n\n)(.*?)(\n## Answer\n)", re.S)


class Rephraser:
    def __init__(self, base_url: str, model: str | None = None, timeout_s: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s

    def _post(self, path: str, payload: dict) -> dict:
        request = urllib.request.Request(
            f"{self.base_url}{path}",
            data=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json", "Authorization": "Bearer local"},
        )
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            return json.loads(response.read().decode("utf-8", "replace"))

    def _model(self) -> str:
        if self.model is None:
            request = urllib.request.Request(f"{self.base_url}/models")
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                self.model = json.loads(response.read())["data"][0]["id"]
        return self.model

    def rephrase(self, instruction: str, answer: dict, reference: str) -> tuple[str, str]:
        """(instruction, outcome) where outcome is 'rephrased' or why it was kept."""
        match = SECTION.search(instruction)
        if match is None:
            return instruction, "no-question-section"
        original = match.group(2).strip()
        try:
            reply = self._post(
                "/chat/completions",
                {
                    "model": self._model(),
                    "temperature": 0,
                    "messages": [
                        {"role": "system", "content": SYSTEM},
                        {"role": "user", "content": original},
                    ],
                },
            )
            text = str(reply["choices"][0]["message"]["content"]).strip()
        except (OSError, urllib.error.URLError, KeyError, IndexError, ValueError, TypeError) as exc:
            return instruction, f"llm-error: {type(exc).__name__}"
        if not text or len(text) > 3 * len(original) + 200:
            return instruction, "llm-rejected: empty or too long"
        if HIDDEN.search(text) or leaks(text, answer, reference):
            return instruction, "llm-rejected: leaks"
        rewritten = instruction[: match.start(2)] + text + "\n" + instruction[match.end(2) :]
        return rewritten, "rephrased"
