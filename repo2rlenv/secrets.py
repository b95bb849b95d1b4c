"""Credential patterns: found by `validate`, redacted by the miners.

The patterns aim at things that are unambiguously secrets (provider key formats,
private key blocks, credentials in URLs and assignments); a false positive costs a
task, a false negative publishes a key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PATTERNS: dict[str, re.Pattern[str]] = {
    "private-key": re.compile(r"-----BEGIN (?:[A-Z ]+ )?PRIVATE KEY-----"),
    "aws-access-key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "openai-key": re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),
    "github-token": re.compile(
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}"
    ),
    "huggingface-token": re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "slack-token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "google-api-key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "url-credential": re.compile(
        r"(?i)[?&](?:api[-_]?key|access[-_]?token|token|secret|password)=([A-Za-z0-9._~+/-]{12,})"
    ),
    "url-userinfo": re.compile(
        r"\b[a-z][a-z0-9+.-]*://(?P<user>[^/\s:@]+):(?P<value>[^/\s@]{6,})"
        r"@(?P<host>[A-Za-z0-9.-]*)"
    ),
    "assigned-secret": re.compile(
        r"(?i)\b(?P<name>[A-Z0-9_]*(?:API_KEY|SECRET|TOKEN|PASSWORD)[A-Z0-9_]*)\s*[=:]\s*"
        r"(?P<quote>[\"']?)(?P<value>[A-Za-z0-9_\-./+]{16,})[\"']?"
    ),
}

REDACTED = "[REDACTED]"

_WORD = re.compile(r"_*(?:[a-z]+|[A-Z]+|[A-Z]+[a-z]+|(?:[A-Z][a-z]+)+)[0-9]{0,2}")
"""One segment of a name as people write them (`expand_macros`, `DEFAULT_TOKEN`,
`TokenStore`, `YYerror`, `v2`): lower, upper or title-case words joined by `_`, at most
two digits at the end of a word. Generated secrets mix cases and digits, so they fail it."""


def _is_code(match: re.Match[str], text: str) -> bool:
    """Whether an `assigned-secret` value is code rather than a literal.

    `tokens = self.expand_macros(tokens)` or `token: api_token_from_settings` assign
    what a call, an attribute or a name gives, never the secret itself: an unquoted
    value followed by a call or subscript, or made only of dotted names in `_WORD`
    spelling. A quoted value is a literal whatever it looks like, except the name it is
    assigned to: `FORCE_CHANGE_PASSWORD = "FORCE_CHANGE_PASSWORD"` (an enum member whose
    value is its label, as in moto's `cognitoidp`) holds no secret.
    """
    if match.group("value").lower() == match.group("name").lower():
        return True
    if match.group("quote"):
        return False
    value = match.group("value")
    after = text[match.end("value") : match.end("value") + 1]
    if after in ("(", "[") and re.fullmatch(r"[A-Za-z_][\w.]*", value):
        return True
    segments = value.split(".")
    return all(
        segment
        and all(_WORD.fullmatch(word) for word in segment.split("_") if word)
        and not segment[0].isdigit()
        for segment in segments
    )


@dataclass(frozen=True)
class SecretHit:
    kind: str
    start: int
    end: int


_CLUES: dict[str, tuple[bool, tuple[str, ...]]] = {
    "private-key": (False, ("PRIVATE KEY-----",)),
    "aws-access-key": (False, ("AKIA", "ASIA")),
    "openai-key": (False, ("sk-",)),
    "github-token": (False, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    "huggingface-token": (False, ("hf_",)),
    "slack-token": (False, ("xox",)),
    "google-api-key": (False, ("AIza",)),
    "url-credential": (True, ("key=", "token=", "secret=", "password=")),
    "url-userinfo": (False, ("://",)),
    "assigned-secret": (True, ("api_key", "secret", "token", "password")),
}
"""Text every match of a pattern contains ((ignore case, clues)): a text without any
clue cannot match, so its scan is skipped. Ignoring case is exact by lowering only for
ASCII text (the regex engine also folds some non-ASCII letters onto ASCII ones)."""


def _may_match(kind: str, text: str, lowered: str | None) -> bool:
    if kind not in _CLUES:
        return True
    fold, clues = _CLUES[kind]
    if fold:
        if lowered is None:
            return True
        text = lowered
    return any(clue in text for clue in clues)


RESERVED_HOSTS = re.compile(
    r"(?i)(?:.*\.)?(?:example(?:\.com|\.net|\.org)?|localhost|test|invalid)\.?"
)
"""Names reserved for documentation and tests (RFC 2606, RFC 6761): no credential for
them can be a real one, so `http://user:pass.word@example` in a URL validator's tests is
left alone."""


PLACEHOLDER_PASSWORDS = re.compile(
    r"(?i)(?:pass(?:word|wd)?|secret|pwd|changeme|x{6,}|\*{6,}|[<{$].*[>}])"
)
"""Passwords that only stand for one: `http://username:password@host` in docs."""


def _is_placeholder(match: re.Match[str], text: str) -> bool:
    """Whether a `url-userinfo` password is no credential: one for a reserved
    documentation host, a placeholder word, or anonymous FTP's e-mail address (the
    protocol's convention: `ftp://anonymous:user%40example.org@host`)."""
    return bool(
        RESERVED_HOSTS.fullmatch(match.group("host"))
        or PLACEHOLDER_PASSWORDS.fullmatch(match.group("value"))
        or match.group("user").lower() in ("anonymous", "ftp")
    )


_NOT_SECRET = {"assigned-secret": _is_code, "url-userinfo": _is_placeholder}
"""Per kind, matches that are known not to be secrets."""


def find_secrets(text: str) -> list[SecretHit]:
    hits = []
    lowered = text.lower() if text.isascii() else None
    for kind, pattern in PATTERNS.items():
        if not _may_match(kind, text, lowered):
            continue
        for match in pattern.finditer(text):
            if "value" in pattern.groupindex:
                if kind in _NOT_SECRET and _NOT_SECRET[kind](match, text):
                    continue
                group: int | str = "value"
            else:
                group = 1 if match.groups() and match.group(1) else 0
            hits.append(SecretHit(kind, match.start(group), match.end(group)))
    return sorted(hits, key=lambda h: (h.start, h.end))


def redact(text: str) -> tuple[str, int]:
    """Replace every secret span with REDACTED; returns the new text and the count."""
    hits = find_secrets(text)
    out, cursor, count = [], 0, 0
    for hit in hits:
        if hit.start < cursor:
            continue
        out.append(text[cursor : hit.start])
        out.append(REDACTED)
        cursor, count = hit.end, count + 1
    out.append(text[cursor:])
    return "".join(out), count
