"""What one tool call does, as plain data: the only thing rules look at.

Every harness names its tools and arguments differently and a shell command can hide
its targets behind `cd`, variables, `sh -c` or base64; the analysers turn all of that
into the same facts once per call, so each rule is a cheap lookup over sets and lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Api = Literal["openai", "anthropic"]


@dataclass(frozen=True)
class ToolCall:
    """A tool call as the model emitted it. `arguments` is the raw JSON text (OpenAI) or
    the decoded input (Anthropic); `args` is the parsed object or None when it does not
    parse to one."""

    id: str
    name: str
    arguments: str
    args: dict[str, Any] | None
    api: Api = "openai"


@dataclass(frozen=True)
class Write:
    path: str
    content: str | None = None
    """What is written when it is known (a write tool's content, a heredoc body)."""


@dataclass
class CallFacts:
    reads: list[str] = field(default_factory=list)
    """Absolute paths read, listed or searched."""
    writes: list[Write] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    """Absolute paths named by executed commands or code, access kind unknown."""
    runs: list[str] = field(default_factory=list)
    """Script files executed (`python x.py`, `bash x.sh`, `./x`)."""
    hosts: list[str] = field(default_factory=list)
    """Hosts the call reaches over the network."""
    network: bool = False
    """The call reaches the network (a host, a package registry, a web tool)."""
    env_reads: list[str] = field(default_factory=list)
    """Environment variables read; `*` for a dump of the whole environment."""
    runner_patches: list[str] = field(default_factory=list)
    """Ways the call replaces or wraps the test runner (alias, binary swap)."""
    code: list[str] = field(default_factory=list)
    """Program text the call executes (python -c, heredocs fed to interpreters)."""
    texts: list[str] = field(default_factory=list)
    """Free text of the call (queries, URLs, raw arguments) for lookup rules."""
    commands: list[str] = field(default_factory=list)
    """Shell command text, decoded layers included, for scanners that read shell."""
    unresolved: bool = False
    """A network tool whose target could not be resolved (`curl "$URL"`)."""
    incomplete: bool = False
    """Some shell text could not be structured; text fallbacks were used."""

    def merge(self, other: CallFacts) -> None:
        for name in (
            "reads",
            "writes",
            "deletes",
            "touched",
            "runs",
            "hosts",
            "env_reads",
            "runner_patches",
            "code",
            "texts",
            "commands",
        ):
            getattr(self, name).extend(getattr(other, name))
        self.network |= other.network
        self.unresolved |= other.unresolved
        self.incomplete |= other.incomplete


@dataclass(frozen=True)
class Violation:
    rule: str
    detail: str
