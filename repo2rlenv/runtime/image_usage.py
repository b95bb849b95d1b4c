"""What task images cost on the local engine: each image's build time and size, the
layers the tasks of one repository version share, and the disk all of them take.

Why: an instance-backed task builds its own image (a SWE-bench spec's steps, a compiled
checkout), 1 to 14 minutes and up to 4 GB each on a small machine, so a user planning a
corpus needs what one more task costs once the tasks of its repository version are built.
The recipe puts what a version shares (the spec's packages, dated per version) before
the checkout's own layers, so those layers are built and stored once per version; this
module measures whether they were.

Layers are told apart by the engine's image history, oldest first, each step keyed by
its own intermediate image id where the engine has one (a local build) and otherwise by
its instruction and size, chained to the key of the step below it: two images share a
step exactly when they share everything under it, as layers do. Sizes are the history's
per-step sizes (metadata steps are 0), so a group's shared bytes and the disk total add
up to the engine's own image sizes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repo2rlenv.runtime.images import BUILD_STARTED_LABEL, IMAGE_REPO, ImageCache

NO_GROUP = "-"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LayerStep(_Model):
    key: str = Field(description="The step's chained identity (see the module docstring).")
    size: int = Field(ge=0)


class ImageUsage(_Model):
    """One task's image on this engine."""

    task: str
    group: str = Field(description="`owner/name version` of its recipe, or repository@commit.")
    image: str = Field(description="The reference the Docker runtime builds it under.")
    present: bool
    size_bytes: int | None = None
    build_s: float | None = Field(
        default=None, description="Seconds its last build took; None: not recorded."
    )
    steps: list[LayerStep] = Field(default_factory=list, exclude=True)


class GroupUsage(_Model):
    group: str
    tasks: int
    images: int = Field(description="Distinct images of the group present on the engine.")
    shared_bytes: int = Field(description="Bytes of the layers every one of them has.")
    disk_bytes: int = Field(description="Bytes of the group's distinct layers.")


class UsageReport(_Model):
    tasks: list[ImageUsage]
    groups: list[GroupUsage]
    images_bytes: int = Field(description="The present images' sizes added up.")
    disk_bytes: int = Field(description="Their distinct layers: what they take on disk.")
    missing: int = Field(description="Tasks whose image is not on this engine.")
    build_s: float = Field(description="Recorded build times added up.")


def history_steps(history: Iterable[Mapping[str, Any]]) -> list[LayerStep]:
    """The image's steps, oldest first, each keyed by its chain (`docker history` lists
    the newest first)."""
    steps: list[LayerStep] = []
    below = ""
    for entry in reversed(list(history)):
        own = str(entry.get("Id") or "")
        if not own or own == "<missing>":
            own = f"{entry.get('CreatedBy', '')}\0{entry.get('Size', 0)}"
        below = hashlib.sha256(f"{below}\0{own}".encode()).hexdigest()
        steps.append(LayerStep(key=below, size=max(int(entry.get("Size") or 0), 0)))
    return steps


def _instant(text: str) -> datetime | None:
    """An engine or label time (`2026-12-05T10:01:02.123456789Z`) as an aware datetime."""
    if not text:
        return None
    head, _, zone = text.partition("Z")
    if "." in head:  # nanoseconds: fromisoformat reads at most six digits
        whole, frac = head.split(".", 1)
        head = f"{whole}.{frac[:6]}"
    try:
        moment = datetime.fromisoformat(head + ("+00:00" if not zone and "+" not in head else ""))
    except ValueError:
        return None
    return moment if moment.tzinfo else None


def build_seconds(attrs: Mapping[str, Any]) -> float | None:
    """Seconds between the build's start (our label) and the image's creation; None when
    the image has no label or the times do not read (a clock that went back)."""
    labels = (attrs.get("Config") or {}).get("Labels") or {}
    started = _instant(str(labels.get(BUILD_STARTED_LABEL, "")))
    ended = _instant(str(attrs.get("Created", "")))
    if started is None or ended is None or ended < started:
        return None
    return round((ended - started).total_seconds(), 1)


def group_of(metadata: Any) -> str:
    """The repository version a task's image belongs to: its SWE recipe's `repo
    version`, else its anchored repository@commit, else `NO_GROUP`."""
    if metadata is None:
        return NO_GROUP
    recipe = metadata.swe.recipe if metadata.swe is not None else None
    if recipe is not None:
        return f"{recipe.repo} {recipe.version}"
    source = metadata.source
    if source is not None and source.repository:
        return f"{source.repository}@{(source.commit or '')[:12]}"
    return NO_GROUP


def summarize(usages: list[ImageUsage]) -> UsageReport:
    """Per-group shared and distinct bytes, and the totals; an image used by several
    tasks is counted once."""
    present = {u.image: u for u in usages if u.present}
    groups: dict[str, list[ImageUsage]] = {}
    for usage in usages:
        groups.setdefault(usage.group, []).append(usage)
    rows = []
    for name in sorted(groups):
        images = {u.image: u for u in groups[name] if u.present}
        rows.append(
            GroupUsage(
                group=name,
                tasks=len(groups[name]),
                images=len(images),
                shared_bytes=_shared(list(images.values())),
                disk_bytes=_distinct(images.values()),
            )
        )
    return UsageReport(
        tasks=usages,
        groups=rows,
        images_bytes=sum(u.size_bytes or 0 for u in present.values()),
        disk_bytes=_distinct(present.values()),
        missing=sum(1 for u in usages if not u.present),
        build_s=round(sum(u.build_s or 0.0 for u in present.values()), 1),
    )


def _shared(images: list[ImageUsage]) -> int:
    if not images:
        return 0
    common = set.intersection(*({s.key for s in u.steps} for u in images))
    return sum(s.size for s in images[0].steps if s.key in common)


def _distinct(images: Iterable[ImageUsage]) -> int:
    sizes: dict[str, int] = {}
    for usage in images:
        sizes.update((s.key, s.size) for s in usage.steps)
    return sum(sizes.values())


def measure(client: Any, task_dirs: Iterable[Any]) -> list[ImageUsage]:
    """Each task's image as the Docker runtime would name it, read from `client`'s
    engine: nothing is built or pulled."""
    from docker.errors import ImageNotFound

    from repo2rlenv.bundle import read_task_dir

    cache = ImageCache(client)
    usages = []
    for folder in task_dirs:
        tree = read_task_dir(folder)
        if tree.config is None:
            continue
        ref = cache.key_for(tree)
        group = group_of(tree.config.metadata.repo2rlenv)
        usage = ImageUsage(task=tree.name, group=group, image=ref, present=False)
        # a published image's key is `name@<its local id>`: the engine knows the name
        name = ref if ref.startswith(f"{IMAGE_REPO}:") else ref.rsplit("@", 1)[0]
        try:
            image = client.images.get(name)
        except ImageNotFound:
            usages.append(usage)
            continue
        usage.present = True
        usage.size_bytes = int(image.attrs.get("Size") or 0)
        usage.build_s = build_seconds(image.attrs)
        usage.steps = history_steps(image.history())
        usages.append(usage)
    return usages
