"""`python -m train.harnesses install [NAME...]`: preinstall harness bundles (all by
default) into the cache, so rollouts never wait on a registry. Exit 2 on failure."""

from __future__ import annotations

import argparse
from pathlib import Path

from repo2rlenv import ui
from train.harnesses.install import HarnessInstallError, default_cache_dir, ensure_bundle
from train.harnesses.profile import UnknownHarnessError
from train.harnesses.registry import get_profile, profiles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.harnesses")
    sub = parser.add_subparsers(dest="command", required=True)
    install = sub.add_parser("install", help="install harness bundles into the cache")
    install.add_argument("names", nargs="*", help="harnesses (default: all)")
    install.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    names = args.names or sorted(profiles())
    cache = args.cache_dir or default_cache_dir()
    for name in names:
        try:
            profile = get_profile(name)
            path = ensure_bundle(profile, cache)
        except UnknownHarnessError as exc:
            ui.error(f"harness.unknown: {exc.args[0]}")
            return 2
        except HarnessInstallError as exc:
            ui.error(f"{exc.reason}: {exc}")
            return 2
        ui.info(f"{name}: {' '.join(profile.packages)} -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
