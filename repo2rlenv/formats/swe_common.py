"""What SWE-bench-style runs share, whichever harness wrote them.

A run belongs to a task *instance* (`owner__name-NNNN`): the record may name it, and
SWE-bench experiment folders name each file after it. A run ends with an exit status
and usually a submission patch. Harnesses cut long outputs, keeping head and tail; a cut
output must never be taken as a whole file, so each reader flags it (`output_cut`).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from repo2rlenv.formats.text import as_dict, as_str

_PART = r"[A-Za-z0-9.-]+(?:_[A-Za-z0-9.-]+)*"
INSTANCE_ID = re.compile(rf"{_PART}__{_PART}-\d+")
"""SWE-bench spelling: `owner__name-NUMBER` (django__django-11039)."""
_SUFFIXES = (".traj.json", ".traj", ".json", ".jsonl")
_CUT = re.compile(
    r"<elided_chars>|<output_head>|\[\.\.\. ?\d+ characters? elided|characters? (?:were )?elided"
    r"|<response clipped>|Observations should not exceed|[Oo]utput (?:was|has been) truncated"
    r"|\[\.\.\. Observation truncated due to length \.\.\.\]"
)
_IMAGE_NAMESPACE = re.compile(r"mswebench/([A-Za-z0-9.-]+)_m_([A-Za-z0-9._-]+)")
"""Multi-SWE-bench's OpenHands writes its Docker image's name as `repo`:
`mswebench/alibaba_m_fastjson2` is `alibaba/fastjson2`."""
INSTANCE_KEYS = ("instance_id", "repo", "base_commit", "version")
"""Instance fields a run may carry itself (SWE-Gym / nebius / OpenHands rows)."""


_CUT_WORDS = ("elided", "<output_head>", "clipped>", "Observations should", "truncated")
"""Plain substrings one of which every cut notice holds: checked first, at C speed, so
the regex only runs on the few outputs that may be cut (a tenth of mining time before)."""


def is_cut(text: str | None) -> bool:
    """True when a harness says it removed part of this output."""
    if not text:
        return False
    for word in _CUT_WORDS:  # a loop, not any(<generator>): this runs once per output
        if word in text:
            return _CUT.search(text) is not None
    return False
    return _CUT.search(text) is not None


def instance_from_name(record_id: str) -> str | None:
    """The instance id a file name spells (`.../django__django-11039.traj.json`), else None.
    Row suffixes (`#3`) mean the file holds several runs: the name then says nothing."""
    if "#" in record_id:
        return None
    name = PurePosixPath(record_id.split(":", 1)[-1]).name
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name if INSTANCE_ID.fullmatch(name) else None


def instance_id(record: Any, record_id: str) -> str | None:
    """The record's own `instance_id` first, then the file name."""
    own = canonical_instance(as_str(as_dict(record).get("instance_id")))
    if own and INSTANCE_ID.fullmatch(own):
        return own
    return instance_from_name(record_id)


def canonical_instance(value: str | None) -> str | None:
    """An instance id as tables spell it: the sample number SWE-Gym's sampled OpenHands
    trajectories put after a SWE-bench id (`getmoto__moto-6387_0`) is dropped; anything
    else is kept as it is."""
    if value and not INSTANCE_ID.fullmatch(value):
        stem, _, number = value.rpartition("_")
        if number.isascii() and number.isdigit() and INSTANCE_ID.fullmatch(stem):
            return stem
    return value


def canonical_repo(value: str | None) -> str | None:
    """`owner/name`, also where a harness wrote its image's name instead."""
    found = _IMAGE_NAMESPACE.fullmatch(value or "")
    return f"{found.group(1)}/{found.group(2)}" if found else value


def repo_of(instance: str) -> str:
    """`owner/name` from a SWE-bench id: the id is built as owner__name-NUMBER, which is
    how a run whose checkout is called `testbed` still names its repository."""
    owner, _, rest = instance.partition("__")
    return f"{owner}/{rest.rsplit('-', 1)[0]}"


def swe_extra(
    record_id: str,
    record: Any,
    *,
    exit_status: Any = None,
    submission: Any = None,
    instance: Any = None,
    base_commit: Any = None,
) -> dict[str, Any]:
    """The `trajectory.extra["swe"]` block: instance id, exit status, submission, and
    repo/base_commit when the run carries them (which is how `anchors.find` anchors it)."""
    block: dict[str, Any] = {}
    row = as_dict(record)
    for source in (as_dict(instance), row):
        for key in INSTANCE_KEYS:
            value = as_str(source.get(key))
            if key == "instance_id":
                value = canonical_instance(value)
            elif key == "repo":
                value = canonical_repo(value)
            if value and key not in block:
                block[key] = value
    found = instance_id(record, record_id)
    if found and "instance_id" not in block:
        block["instance_id"] = found
    if isinstance(base_commit, str) and "base_commit" not in block:
        block["base_commit"] = base_commit
    if "base_commit" in block and "repo" not in block and "instance_id" in block:
        block["repo"] = repo_of(block["instance_id"])
    if as_str(exit_status):
        block["exit_status"] = exit_status
    if as_str(submission):
        block["submission"] = submission
    return {"swe": block} if block else {}
