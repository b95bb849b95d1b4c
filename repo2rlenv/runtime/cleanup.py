"""Removing the images this toolkit built (`repo2rlenv clean`).

Every task environment image carries the label `rlenv-harvest=env`, every harness layer
`rlenv-harvest=harness` (train.harnesses): images are never removed by a run, because
the next run of the same task reuses them, so they pile up (hundreds of MB each) until
someone asks. Only images with that label are touched; one a container still uses is
kept and named. What was freed is measured as the engine's own disk usage before and
after (`docker system df`), not summed from image sizes, which count shared layers
again for each image.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from docker.errors import APIError, NotFound

from repo2rlenv.runtime.owner import LABEL


@dataclass
class CleanReport:
    removed: list[str] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)
    """(image, why it was kept): in use by a container, or the engine refused."""
    freed_bytes: int = 0
    build_cache_bytes: int = 0

    def summary(self, *, dry_run: bool) -> str:
        """One line: how many images went (or would go), the space the engine reports
        freed, and how many were kept."""
        verb = "would remove" if dry_run else "removed"
        line = f"{verb} {len(self.removed)} image(s)"
        if not dry_run:
            line += f", {self.freed_bytes / 1e6:.1f} MB freed"
            if self.build_cache_bytes:
                line += f"; build cache: {self.build_cache_bytes / 1e6:.1f} MB freed"
        return line + (f"; {len(self.kept)} kept" if self.kept else "")


def _layers_size(client: Any) -> int:
    return int(client.df().get("LayersSize") or 0)


def _name(image: Any) -> str:
    return image.tags[0] if image.tags else image.short_id


def toolkit_images(client: Any) -> list[Any]:
    """Images labelled `rlenv-harvest` (any value), whatever their tag."""
    return client.images.list(filters={"label": LABEL})


def clean(client: Any, *, dry_run: bool = False, build_cache: bool = False) -> CleanReport:
    """Remove the toolkit's images (never forced: one in use stays, and is reported);
    with `build_cache`, also the engine's unused build cache (all of it: the engine
    does not record which builder made a cache entry)."""
    report = CleanReport()
    images = toolkit_images(client)
    if dry_run:
        report.removed = [_name(image) for image in images]
        return report
    before = _layers_size(client)
    for image in images:
        try:
            client.images.remove(image.id, noprune=False)
        except NotFound:
            continue  # removed meanwhile, with a tag of an image removed before
        except APIError as exc:
            text = str(exc.explanation or exc)
            why = "in use by a container" if "container" in text else text
            report.kept.append((_name(image), why))
            continue
        report.removed.append(_name(image))
    report.freed_bytes = max(0, before - _layers_size(client))
    if build_cache:
        pruned = client.api.prune_builds()
        report.build_cache_bytes = int((pruned or {}).get("SpaceReclaimed") or 0)
    return report
