"""Host tools a mine depends on, checked before any work rather than found missing halfway.

Dependency wheels of instance tasks are fetched with the host's `python -m pip download
--uploaded-prior-to DATE` (`kinds.instance_deps`), so that tests of 2021 meet the
libraries of 2021. pip gained that option in 26.0. An older pip (a fresh virtualenv
comes with 23.x) answers `no such option: --uploaded-prior-to`; that answer was taken
for an index without upload times, the newest versions were taken (Werkzeug 3.1 for a
Flask 2.3 checkout) and every reference then failed the oracle, with nothing telling
the user why (issue 28). The package declares `pip>=26.0`, and `require_pip` stops a
mine that would need it with one line naming the fix, for an environment installed
some other way (`--no-deps`, a pip downgraded later).
"""

from __future__ import annotations

from importlib import metadata

from packaging.version import InvalidVersion, Version

PIP_UPLOADED_PRIOR_TO = Version("26.0")
"""The first pip with `--uploaded-prior-to` (its `cli/cmdoptions.py` defines it from 26.0;
25.3 has no such option)."""
PIP_FIX = f"python -m pip install --upgrade 'pip>={PIP_UPLOADED_PRIOR_TO}'"
NO_SUCH_OPTION = "no such option: --uploaded-prior-to"
"""What a pip without the option answers (optparse's words), on its last stderr line."""


class HostToolError(RuntimeError):
    """A tool on the host is missing or too old; the message is one line with the fix.
    Not a `DependencyError`: nothing may fall back from it."""


def pip_version() -> Version | None:
    """The version of the pip `python -m pip` runs in this interpreter, None without one."""
    try:
        return Version(metadata.version("pip"))
    except (metadata.PackageNotFoundError, InvalidVersion):
        return None


def require_pip(version: Version | None = None) -> None:
    """Raise `HostToolError` unless this interpreter's pip has `--uploaded-prior-to`.
    `version`: the pip found (default: this interpreter's)."""
    found = pip_version() if version is None else version
    why = "dates the dependency wheels of instance tasks (--instances)"
    if found is None:
        raise HostToolError(f"host.pip-missing: this Python has no pip, which {why}; run {PIP_FIX}")
    if found < PIP_UPLOADED_PRIOR_TO:
        raise HostToolError(
            f"host.pip-too-old: pip {found} has no --uploaded-prior-to (pip "
            f"{PIP_UPLOADED_PRIOR_TO} added it), which {why}; run {PIP_FIX}"
        )


def pip_lacks_option(stderr: str) -> bool:
    """True when pip's output says it has no `--uploaded-prior-to` (checked apart from an
    index without upload times, which pip 26 reports in its own words)."""
    return NO_SUCH_OPTION in stderr
