"""In-container check: no file of the verifier's hidden tests is in the agent's image.

The static rule `leak.hidden-file-in-environment` compares the task's files; it cannot
see what the image build adds (a wheel, an unpacked archive, a `RUN` that writes files,
a base image that already holds the tests). This check runs in a container of the built
image, in the agent phase, before the verifier puts anything in: it walks the container's
file system and reports every file whose bytes are those of a hidden test
(`tests/hidden/...`). A file the agent may legitimately see at an older version (the test
file a test patch changes) differs in bytes and is no leak.
"""

from __future__ import annotations

import hashlib
import json

from repo2rlenv.bundle import TaskTree
from repo2rlenv.runtime import TrialRequest

LABEL = "leak.hidden-test-in-image"
HIDDEN = "tests/hidden/"
MIN_BYTES = 16
"""Smaller hidden files (an empty `__init__.py`) match anything and are not checked."""
DIGESTS = "/tmp/rlenv-hidden-digests.json"
SKIPPED_ROOTS = ("/proc", "/sys", "/dev", "/tests", "/logs", "/solution")
"""Kernel file systems, and where the runtime itself puts the verifier and solution."""
SCAN = f"""import hashlib, json, os, sys
root = sys.argv[1] if len(sys.argv) > 1 else "/"
want = json.load(open(sys.argv[2] if len(sys.argv) > 2 else {DIGESTS!r}))
sizes = {{int(v["size"]) for v in want.values()}}
skip = {SKIPPED_ROOTS!r}
for top, dirs, names in os.walk(root):
    if top == root:
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in skip]
    for name in names:
        path = os.path.join(top, name)
        try:
            if os.path.islink(path) or os.path.getsize(path) not in sizes:
                continue
            digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
        except OSError:
            continue
        if digest in want and path != {DIGESTS!r}:
            print("LEAK", path, "=", want[digest]["path"])
print("SCANNED", root)
"""


def hidden_digests(tree: TaskTree) -> dict[str, dict[str, str | int]]:
    """sha256 -> {path, size} of each hidden test file worth checking."""
    found: dict[str, dict[str, str | int]] = {}
    for rel, (content, _) in sorted(tree.files.items()):
        if rel.startswith(HIDDEN) and len(content.strip()) >= MIN_BYTES:
            digest = hashlib.sha256(content).hexdigest()
            found.setdefault(digest, {"path": rel, "size": len(content)})
    return found


def image_leak_request(tree: TaskTree) -> TrialRequest | None:
    """The trial that scans the agent's container, or None when there is nothing to
    look for (no hidden tests)."""
    digests = hidden_digests(tree)
    if not digests:
        return None
    return TrialRequest(
        label=LABEL,
        plant_files={DIGESTS: json.dumps(digests, sort_keys=True).encode()},
        agent_commands=[f"python3 - / <<'RLENV_SCAN'\n{SCAN}RLENV_SCAN"],
    )


DONE = "SCANNED "
"""The scan's last line: without it the scan did not finish (no `python3` in a foreign
image, a timeout), and no LEAK line proves nothing."""


def scan_finished(agent_output: str) -> bool:
    return any(line.startswith(DONE) for line in agent_output.splitlines())


def leaks(agent_output: str) -> list[str]:
    """The `LEAK <path> = <hidden test>` lines the scan printed."""
    return [line for line in agent_output.splitlines() if line.startswith("LEAK ")]
