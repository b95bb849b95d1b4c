"""Tar streams in and out of containers: what the Docker API speaks for file copies."""

from __future__ import annotations

import io
import json
import math
import posixpath
import tarfile
from collections.abc import Iterable, Mapping

FILE_MTIME = 946684800
"""The modification time (2000-01-01T00:00:00Z) of every file and folder packed for the
engine: build contexts and the files put into containers. A tar entry's default is 0
(1970), and Python's `zipfile` refuses entries before 1980: sphinx-8721's epub builder
zips what it built from the checkout, so its reference failed under our runtime and passed
under Harbor, whose copies carry the files' times on disk; and Sphinx's xml builder writes
a page only when its source is newer than the page (0 when absent), so a 1970 checkout
built no page at all (sphinx-8120's `test_xml_*`: FileNotFoundError). Fixed rather than read from
disk, so reruns pack the same bytes. The classic builder leaves times out of its `COPY`
cache key: an image built before this constant keeps its 1970 times until it is rebuilt
without cache (`repo2rlenv clean`, then the next run)."""


def entry(path: str, *, size: int = 0, mode: int = 0o644, folder: bool = False) -> tarfile.TarInfo:
    """One tar header as this project packs it: owned by root, dated `FILE_MTIME`."""
    info = tarfile.TarInfo(path)
    info.size, info.mode, info.mtime = size, mode, FILE_MTIME
    if folder:
        info.type = tarfile.DIRTYPE
    return info


def pack(files: Mapping[str, tuple[bytes, bool]], prefix: str = "") -> bytes:
    """A tar of `files` (relative path -> (bytes, executable)) under `prefix`, owned by root."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        dirs: set[str] = set()
        for rel in sorted(files):
            path = posixpath.join(prefix, rel) if prefix else rel
            parent = posixpath.dirname(path)
            chain = []
            while parent and parent not in dirs:
                chain.append(parent)
                dirs.add(parent)
                parent = posixpath.dirname(parent)
            for folder in reversed(chain):
                tar.addfile(entry(folder, mode=0o755, folder=True))
            content, executable = files[rel]
            info = entry(path, size=len(content), mode=0o755 if executable else 0o644)
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def pack_at_root(files: Mapping[str, bytes]) -> bytes:
    """A tar of `files` (absolute container path -> bytes) to put at `/` in one request,
    owned by root: file entries only, so the engine makes a missing parent folder (root,
    0755, as `mkdir -p` would) and leaves an existing one, its owner and its mode, as they
    are (a folder entry would be chowned and chmodded). One request instead of two per
    file: a probe that plants over every visible test file of a Django checkout (1,800
    files) spent minutes in `docker-untar` starts."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            rel = posixpath.normpath(path).lstrip("/")
            if not path.startswith("/") or rel in ("", ".") or ".." in path.split("/"):
                raise ValueError(f"not an absolute file path: {path!r}")
            content = files[path]
            tar.addfile(entry(rel, size=len(content)), io.BytesIO(content))
    return buffer.getvalue()


def dropped_by_sanitize(member: tarfile.TarInfo) -> bool:
    """The hand-over's rule for one archive entry: True for what never reaches a verifier
    (a name leaving the archive, a device, fifo or hard link, a symlink whose target
    leaves the archive's top folder). Mirrors Harbor's artifact hand-over."""
    name = posixpath.normpath(member.name)
    if name.startswith(("/", "../")) or name == "..":
        return True
    if member.issym():
        target = posixpath.normpath(posixpath.join(posixpath.dirname(name), member.linkname))
        root = name.split("/", 1)[0]
        return member.linkname.startswith("/") or not (
            target == root or target.startswith(root + "/")
        )
    return not (member.isfile() or member.isdir())


def sanitize(chunks: Iterable[bytes]) -> tuple[bytes, list[str]]:
    """Copy a container archive, keeping only what is safe to hand to a verifier.

    Kept: regular files, folders, and symlinks whose target stays inside the archive.
    Dropped (and named): devices, fifos, hard links, and links that leave it
    (`dropped_by_sanitize`). setuid/setgid/sticky bits are cleared.
    """
    source = io.BytesIO(b"".join(chunks))
    out = io.BytesIO()
    dropped: list[str] = []
    with (
        tarfile.open(fileobj=source, mode="r|*") as tar_in,
        tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar_out,
    ):
        for member in tar_in:
            if dropped_by_sanitize(member):
                dropped.append(member.name)
                continue
            member.mode &= 0o777
            data = tar_in.extractfile(member) if member.isfile() else None
            tar_out.addfile(member, data)
    return out.getvalue(), dropped


def read_files(chunks: Iterable[bytes]) -> dict[str, bytes]:
    """Regular files of a container archive, by path relative to the archived folder."""
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks)), mode="r|*") as tar:
        for member in tar:
            if member.isfile():
                handle = tar.extractfile(member)
                rel = member.name.split("/", 1)[1] if "/" in member.name else member.name
                files[rel] = handle.read() if handle else b""
    return files


class RewardError(ValueError):
    def __init__(self, status: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status


def parse_reward(files: Mapping[str, bytes]) -> tuple[float, dict[str, float]]:
    """Harbor's reading of /logs/verifier: reward.json (flat map) wins over reward.txt.

    The headline reward is the `reward` key when present, else the mean of the map.
    Raises RewardError("reward-missing" | "reward-invalid", why).
    """
    if "reward.json" in files:
        try:
            data = json.loads(files["reward.json"] or b"null")
        except ValueError as exc:
            raise RewardError("reward-invalid", f"reward.json is not JSON: {exc}") from exc
        if not isinstance(data, dict) or not data:
            raise RewardError("reward-invalid", "reward.json must be a non-empty flat map")
        rewards = {}
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise RewardError("reward-invalid", f"reward.json[{key!r}] is not a number")
            rewards[str(key)] = float(value)
        headline = rewards.get("reward", sum(rewards.values()) / len(rewards))
    elif "reward.txt" in files:
        text = files["reward.txt"].decode("utf-8", errors="replace").strip()
        try:
            headline = float(text)
        except ValueError as exc:
            raise RewardError("reward-invalid", f"reward.txt holds {text[:40]!r}") from exc
        rewards = {"reward": headline}
    else:
        raise RewardError("reward-missing", "the verifier wrote neither reward.txt nor reward.json")
    for key, value in rewards.items():
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise RewardError("reward-invalid", f"reward {key}={value} is outside [0, 1]")
    return headline, rewards
