"""The image of a Go or Rust task, and the refusal of a project whose dependencies the
image could not fetch.

The toolchains come from Debian's archive (`golang-go`; `rustc` and `cargo`), which
the offline base reaches when the image is built. Nothing else is reachable: no Go
module proxy, no crates.io. A go.mod that requires a module, or a Cargo.toml with a
dependency that is not a local path, builds only from a vendored copy (`vendor/`
with `vendor/modules.txt`; cargo's `vendor/` with `.cargo/config.toml` pointing at
it); without one the session is refused with a counted reason instead of yielding a
task whose tests can never compile.
"""

from __future__ import annotations

import posixpath
import re
import tomllib
from dataclasses import dataclass

from repo2rlenv.kinds.common import Reject
from repo2rlenv.kinds.installs import NEEDS_INDEX_LABEL

PACKAGES = {"go": "golang-go", "rust": "rustc cargo"}
TOOL = {"go": "go", "rust": "cargo"}
MANIFEST = {"go": "go.mod", "rust": "Cargo.toml"}
REQUIRE_BLOCK = re.compile(r"^require\s*\((.*?)^\)", re.M | re.S)
REQUIRE_LINE = re.compile(r"^require\s+(\S+)\s+\S+", re.M)
DEPENDENCY_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


@dataclass(frozen=True)
class NativeImage:
    language: str

    def head(self) -> list[str]:
        """Lines before the workspace is copied: the toolchain from Debian."""
        return [
            f"# The {self.language} toolchain from Debian's archive.",
            NEEDS_INDEX_LABEL,
            f"RUN command -v {TOOL[self.language]} >/dev/null || (apt-get update && "
            f"apt-get install -y --no-install-recommends {PACKAGES[self.language]} "
            "&& rm -rf /var/lib/apt/lists/*)",
        ]


def go_requirements(go_mod: str) -> list[str]:
    """The module paths a go.mod requires (single lines and `require ( ... )` blocks)."""
    found = REQUIRE_LINE.findall(go_mod)
    for block in REQUIRE_BLOCK.findall(go_mod):
        for line in block.splitlines():
            words = line.split("//", 1)[0].split()
            if len(words) >= 2:
                found.append(words[0])
    return found


def crate_dependencies(cargo_toml: str) -> list[str]:
    """The dependencies of a Cargo.toml that are not local paths (any table, targets'
    tables included); an unreadable Cargo.toml is refused."""
    try:
        manifest = tomllib.loads(cargo_toml)
    except tomllib.TOMLDecodeError as error:
        raise Reject("build.cargo-toml-unreadable", f"Cargo.toml: {error}") from error
    tables = [manifest.get(t, {}) for t in DEPENDENCY_TABLES]
    for target in (manifest.get("target") or {}).values():
        if isinstance(target, dict):
            tables += [target.get(t, {}) for t in DEPENDENCY_TABLES]
    workspace = manifest.get("workspace")
    if isinstance(workspace, dict):
        tables.append(workspace.get("dependencies", {}))
    return sorted(
        name
        for table in tables
        if isinstance(table, dict)
        for name, spec in table.items()
        if not (isinstance(spec, dict) and "path" in spec)
    )


def check_dependencies_available(language: str, root: str, files: dict[str, str]) -> None:
    """Refuse a project whose dependencies would have to be downloaded. `files` are the
    workspace's known files (path -> text) at the passing run; `root` the manifest's
    folder."""

    def at(name: str) -> str:
        return posixpath.join(root, name) if root else name

    manifest = files.get(at(MANIFEST[language]), "")
    if language == "go":
        needed = go_requirements(manifest)
        if needed and at("vendor/modules.txt") not in files:
            raise Reject(
                "build.go-modules-unavailable",
                f"go.mod requires {', '.join(needed[:3])} and nothing is vendored "
                "(no module proxy is reachable)",
            )
        return
    needed = crate_dependencies(manifest)
    vendored = any(p.startswith(at("vendor/")) for p in files) and (
        at(".cargo/config.toml") in files or at(".cargo/config") in files
    )
    if needed and not vendored:
        raise Reject(
            "build.crates-unavailable",
            f"Cargo.toml depends on {', '.join(needed[:3])} and nothing is vendored "
            "(crates.io is not reachable)",
        )
