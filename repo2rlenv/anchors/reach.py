"""Whether git could reach a repository at all, decided without starting git.

Fetching an anchored repository starts git, which starts its https helper, which loads
the TLS stack before it learns that the host's name does not resolve (an offline machine,
a sandbox): about 20 ms per repository and commit, more than mining a whole session
costs. When the host does not resolve here and nothing in git's environment or
configuration could send the request another way (a proxy, a URL rewrite, an included
file), git's answer is already known: "Could not resolve host". Every other case, and
every doubt, is left to git itself.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path
from urllib.parse import urlsplit

_PROXY_VARIABLES = frozenset({"http_proxy", "https_proxy", "all_proxy"})
_GIT_VARIABLES = ("GIT_CONFIG", "GIT_EXEC_PATH", "GIT_PYTHON_GIT_EXECUTABLE")
"""Prefixes of variables that add configuration or swap git's helpers: leave it to git."""
_ROUTING_WORDS = ("proxy", "insteadof", "include", "[http", "[url")
"""Configuration that could route a URL elsewhere (lower case): leave it to git."""
_DEFAULT_PORTS = {"http": 80, "https": 443}


def unresolvable_host(source: str, mirror: Path) -> str | None:
    """git's reason ("Could not resolve host: H") when fetching `source` into `mirror`
    cannot reach any host, else None (including whenever it cannot be sure)."""
    try:
        parts = urlsplit(source)
        host, port = parts.hostname, parts.port or _DEFAULT_PORTS.get(parts.scheme)
    except ValueError:
        return None
    if host is None or port is None or not _plain_routing(mirror):
        return None
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return f"Could not resolve host: {host}"
    except (OSError, UnicodeError):
        return None
    return None


def _plain_routing(mirror: Path) -> bool:
    """True when no proxy variable, git override or routing configuration is in sight."""
    for name in os.environ:
        if name.lower() in _PROXY_VARIABLES or name.startswith(_GIT_VARIABLES):
            return False
    try:
        files = _config_files(mirror)
    except RuntimeError:  # no home directory to find the user's configuration in
        return False
    return not any(_routes(path) for path in files)


def _config_files(mirror: Path) -> list[Path]:
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    files = [Path("/etc/gitconfig"), xdg / "git" / "config", home / ".gitconfig", mirror / "config"]
    executable = shutil.which("git")
    if executable is not None:  # a git built with another prefix reads <prefix>/etc/gitconfig
        prefix = Path(os.path.realpath(executable)).parent.parent
        files.append(prefix / "etc" / "gitconfig")
    return files


def _routes(path: Path) -> bool:
    try:
        text = path.read_text(errors="replace").lower()
    except FileNotFoundError:
        return False
    except OSError:
        return True  # unreadable to us: git may still see it
    return any(word in text for word in _ROUTING_WORDS)
