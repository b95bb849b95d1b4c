"""Secret-shaped text in a public checkout: published already, so reported, not refused.

A task anchored on a public commit starts from that commit's files. Some repositories
ship credential-shaped test data on purpose (moto, a mock of AWS, holds AWS's
documentation key `AKIAIOSFODNN7EXAMPLE`, test RSA private keys and quoted test
passwords): redacting them would change the code the tests run, and refusing loses the
task, though the task publishes nothing the repository does not publish at that commit.
So a start-state file whose content is *exactly* the commit's blob is exempt from the
refusal and listed in the task (`public_checkout_secrets`: path, blob id, rules), and
`validate` reports it as a warning while the file still hashes to that blob. Anything
else, above all what comes from the agent's machine (a file differing from the blob,
files the run created, the reference's changes, the instruction), is scanned and
redacted or refused as before. `strict_secrets` (setting, `--strict-secrets`) turns the
exemption off.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from repo2rlenv.secrets import find_secrets
from schemas import BundleFile
from schemas.provenance import PublicCheckoutSecret

WORKSPACE = "environment/workspace/"
"""Where a task's start state lies (`bundle.standard.environment_files`)."""
PROTECTED = "tests/protected/"
"""Where the verifier keeps pristine copies of start-state files it restores."""
HIDDEN = "tests/hidden/"
"""Where the verifier keeps the hidden tests it adds (an instance's test patch)."""


def blob_id(data: bytes) -> str:
    """Git's object id of a blob with these bytes (`git hash-object`): how a file is
    matched to the commit's blob without the repository at hand."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def is_published(path: str, content: str, published: Mapping[str, str] | None) -> bool:
    """Whether `content` is exactly the anchored commit's file at `path`."""
    return published is not None and published.get(path) == content


def rules_in(text: str) -> list[str]:
    """The secret rules that match `text`, sorted (empty: nothing secret-shaped)."""
    return sorted({hit.kind for hit in find_secrets(text)})


def public_checkout_secrets(
    start: Mapping[str, str],
    published: Mapping[str, str] | None,
    copied: Mapping[str, bytes] | None = None,
) -> list[PublicCheckoutSecret]:
    """The start-state files exempt from the refusal: text files exactly equal to the
    anchored commit's, and `copied` files (binary or over-large ones the task takes byte
    for byte from the commit: exact by construction), that are secret-shaped. None when
    not anchored or strict. Sorted by path, so reruns give the same bytes."""
    if published is None:
        return []
    exact = {
        path: content.encode()
        for path, content in start.items()
        if is_published(path, content, published)
    }
    exact.update({p: d for p, d in (copied or {}).items() if p not in start})
    found = []
    for path, data in sorted(exact.items()):
        rules = rules_in(data.decode("utf-8", "replace"))
        if rules:
            found.append(PublicCheckoutSecret(path=path, blob=blob_id(data), rules=rules))
    return found


def published_test_secrets(
    files: Iterable[BundleFile], start: Mapping[str, str], published: Mapping[str, str] | None
) -> list[PublicCheckoutSecret]:
    """An instance task's hidden test files that are the benchmark's own text and hold
    secret-shaped text: the anchored commit's file (exactly its blob) with the instance
    table's test patch laid over it, or a file the test patch adds. Nothing of the run
    reaches them (the run's test-file edits are dropped, `swe_reference`), so they publish
    only what the repository and the table publish: requests' `http://user:pass@host`
    test URLs refused 1 of its 5 resolved Gemini runs, Django's assigned test passwords 5.
    None when not anchored or strict. Sorted by path."""
    if published is None:
        return []
    found = []
    for file in sorted(files, key=lambda f: f.path):
        rel = file.path.removeprefix(HIDDEN)
        if rel == file.path or (rel in start and not is_published(rel, start[rel], published)):
            continue
        rules = rules_in(file.content.decode("utf-8", "replace"))
        if rules:
            found.append(PublicCheckoutSecret(path=rel, blob=blob_id(file.content), rules=rules))
    return found
