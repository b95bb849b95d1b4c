"""Optional rephrasing of the question section by an OpenAI-compatible endpoint.

Only the prose between `## Question` and `## Answer` is sent and replaced; the data
listing and the answer format stay deterministic. A reply is used only when it passes
the same leak checks as the template (no answer, no reference code, no hidden paths),
is of sane length and was not cut at `max_tokens`; otherwise the template stands.

It is the sessions' endpoint client (`repo2rlenv.llm`), as the question proposer is:
replies are cached on disk by a hash of the request, so a rerun of `mine` gives the same
bytes without asking again, and the reply is capped. It had its own uncached client
with no cap: on a model that never stops (the project's random tiny model) one rephrase
ran to the server's context length, 46 s and 16,310 tokens, and every rerun asked again.
"""

from __future__ import annotations

import re

from repo2rlenv.llm import _Endpoint
from smoldataenvs.question import leaks

SYSTEM = (
    "You rewrite data-analysis questions so they read naturally to an analyst. Keep every "
    "column name, file name, label and number exactly as given, keep the meaning exact, "
    "do not answer the question, do not add code. Reply with the rewritten question only."
)
HIDDEN = re.compile(r"/tests\b|/solution\b|/logs/verifier\b|reward\.(?:txt|json)")
SECTION = re.compile(r"(## Question\n\n)(.*?)(\n## Answer\n)", re.S)


class Rephraser(_Endpoint):
    system = SYSTEM
    max_tokens = 800
    """A reply longer than three times the question plus 200 characters is refused
    anyway; 800 tokens is over that for a question of up to about 1,000 characters, and a
    longer one's rewrite cut here is refused as cut, never used."""

    def rephrase(self, instruction: str, answer: dict, reference: str) -> tuple[str, str]:
        """(instruction, outcome) where outcome is 'rephrased' or why it was kept."""
        match = SECTION.search(instruction)
        if match is None:
            return instruction, "no-question-section"
        original = match.group(2).strip()
        reply = self._ask(original)
        if reply is None:
            return instruction, f"llm-error: {self.last_error}"
        text = reply.strip()
        if self.last_cut:
            self.rejected += 1
            return instruction, "llm-rejected: cut at max_tokens"
        if not text or len(text) > 3 * len(original) + 200:
            self.rejected += 1
            return instruction, "llm-rejected: empty or too long"
        if HIDDEN.search(text) or leaks(text, answer, reference):
            self.rejected += 1
            return instruction, "llm-rejected: leaks"
        rewritten = instruction[: match.start(2)] + text + "\n" + instruction[match.end(2) :]
        return rewritten, "rephrased"
