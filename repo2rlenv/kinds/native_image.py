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


DEBIAN_GO = (1, 19)
"""Debian bookworm's `golang-go`. Go before 1.21 cannot read a `go 1.N.P` line or a
`toolchain` line (golang/go#63279: a module made by go1.21.1 does not build with 1.20)."""
DEBIAN_RUST = (1, 63)
"""Debian bookworm's rustc (its cargo is 1.65): no edition 2024, no `rust-version` above
it, no Cargo.lock version 4 (written by default since cargo 1.83). All four refusals were
checked against the Debian toolchains in Docker (docs/real-sessions.md)."""
GO_LINE = re.compile(r"^go\s+(\d+)\.(\d+)\.(\d+)\s*(?://.*)?$", re.M)
TOOLCHAIN_LINE = re.compile(r"^toolchain\s+\S+", re.M)
LOCK_VERSION = re.compile(r"^version\s*=\s*(\d+)\s*$", re.M)


def check_toolchain(language: str, root: str, files: dict[str, str]) -> None:
    """Refuse a project the image's Debian toolchain cannot even load, as the session
    wrote it: the verifier would fail on every run, reference included. Only what
    certainly fails is refused (a two-part `go 1.22` is advisory to Go 1.19)."""

    def at(name: str) -> str:
        return posixpath.join(root, name) if root else name

    manifest = files.get(at(MANIFEST[language]), "")
    found = _go_too_new(manifest) if language == "go" else _rust_too_new(manifest)
    lock = LOCK_VERSION.search(files.get(at("Cargo.lock"), "")) if language == "rust" else None
    if lock and int(lock.group(1)) >= 4:
        found = found or f"Cargo.lock version {lock.group(1)}"
    if found:
        have = ".".join(map(str, DEBIAN_GO if language == "go" else DEBIAN_RUST))
        raise Reject(
            f"build.{language}-toolchain-too-old",
            f"{found} needs a newer toolchain than the image's Debian "
            f"{'Go' if language == 'go' else 'rustc'} {have}",
        )


def _go_too_new(go_mod: str) -> str | None:
    line = GO_LINE.search(go_mod)
    # Before Go 1.21 any three-part line is a parse error, whatever its version.
    if line and (DEBIAN_GO < (1, 21) or (int(line.group(1)), int(line.group(2))) > DEBIAN_GO):
        return f"go.mod's `go {'.'.join(line.groups())}`"
    toolchain = TOOLCHAIN_LINE.search(go_mod)
    return f"go.mod's `{toolchain.group(0)}`" if toolchain else None


def _rust_too_new(cargo_toml: str) -> str | None:
    try:
        package = tomllib.loads(cargo_toml).get("package") or {}
    except tomllib.TOMLDecodeError:
        return None  # crate_dependencies refused it already
    edition = str(package.get("edition", "")) if isinstance(package, dict) else ""
    if edition.isdigit() and int(edition) > 2021:
        return f"Cargo.toml's edition {edition}"
    wanted = str(package.get("rust-version", "")) if isinstance(package, dict) else ""
    parts = wanted.split(".")
    readable = len(parts) >= 2 and all(p.isdigit() for p in parts[:2])
    if readable and (int(parts[0]), int(parts[1])) > DEBIAN_RUST:
        return f"Cargo.toml's rust-version {wanted}"
    return None
