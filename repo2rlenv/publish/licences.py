"""Whether a task may be redistributed, judged from the licence its source record
carries (`[metadata.repo2rlenv.source].license`).

A task holds text and code from its source (instruction, reference change, the
repository's files), so it may only be published when that source's licence allows
redistribution. The judgement is conservative: a licence this module does not know is
`unknown`, never assumed open; one that forbids derivatives or redistribution is
`forbidden`. The ids are the Hub's licence identifiers (lower-case SPDX-like)."""

from __future__ import annotations

from typing import Literal

Verdict = Literal["open", "unknown", "forbidden"]

OPEN: frozenset[str] = frozenset(
    {
        "apache-2.0", "mit", "bsd", "bsd-2-clause", "bsd-3-clause", "bsd-3-clause-clear",
        "isc", "zlib", "unlicense", "cc0-1.0", "pddl", "odc-by", "odbl", "wtfpl",
        "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0",
        "cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "cc-by-nc-sa-4.0",
        "gpl-2.0", "gpl-3.0", "lgpl-2.1", "lgpl-3.0", "agpl-3.0", "mpl-2.0",
        "epl-2.0", "artistic-2.0", "bsl-1.0", "ecl-2.0", "postgresql", "python-2.0",
        "cdla-permissive-2.0", "cdla-sharing-1.0", "openrail",
    }
)  # fmt: skip
"""Licences that allow redistributing the work (some with conditions the card states:
attribution, share-alike, non-commercial use)."""

FORBIDDEN: frozenset[str] = frozenset({"proprietary", "all-rights-reserved", "none"})
"""Named licences that reserve redistribution; any `-nd` (no derivatives) one too."""

UNKNOWN: frozenset[str] = frozenset({"", "unknown", "other", "noassertion"})


def normalise(licence: str | None) -> str | None:
    """The Hub's spelling: lower case, no surrounding space; None for no licence."""
    text = (licence or "").strip().lower()
    return None if text in UNKNOWN else text


def verdict(licence: str | None) -> Verdict:
    """`open` when the licence allows redistribution, `forbidden` when it reserves it,
    `unknown` for no licence or one not on either list."""
    name = normalise(licence)
    if name is None:
        return "unknown"
    if name in FORBIDDEN or "-nd" in name:
        return "forbidden"
    return "open" if name in OPEN else "unknown"
