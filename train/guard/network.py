"""Which hosts a command reaches, and the hosts a conversation has shown.

A host counts as reached when a network tool is pointed at it (`curl`, `wget`, `git
clone`, `ssh`, `nc`, `/dev/tcp/...`), when an installer fetches from its default
registry (`pip install x` reaches pypi.org) or from an index it is given, and when
an unknown command gets a URL argument. Commands that only print or search text
(`echo`, `grep`) reach nothing, whatever URLs they carry.
"""

from __future__ import annotations

import ipaddress
import re

URL = re.compile(
    r"(?i)\b([a-z][a-z0-9+.-]{1,15})://(?:[^/\s:@'\"<>]+(?::[^/\s@'\"<>]*)?@)?"
    r"(\[[0-9a-f:.]+\]|[^/\s:?#'\"<>\\\]\[)(,;]+)"
)
BARE_HOST = re.compile(
    r"(?i)(?<![\w@.-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{1,23})(?![\w-])"
)
IPV4 = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?![\w.])")
DEV_TCP = re.compile(r"/dev/(?:tcp|udp)/([^/\s]+)/")
SCP_HOST = re.compile(r"^(?:[\w.-]+@)?([\w.-]+\.[\w-]+|\d{1,3}(?:\.\d{1,3}){3}):")
USER_AT_HOST = re.compile(r"^[\w.-]+@([\w.-]+)$")

LOOPBACK = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "0.0.0.0"})

DOWNLOADERS = frozenset(
    {"curl", "wget", "http", "https", "aria2c", "lynx", "links", "w3m", "xh", "httpie", "fetch"}
)
REMOTE_SHELLS = frozenset({"ssh", "scp", "sftp", "rsync", "mosh", "sshpass", "autossh"})
SOCKETS = frozenset({"nc", "ncat", "netcat", "telnet", "socat", "openssl"})
TEXT_ONLY = frozenset(
    {
        "echo",
        "printf",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "sed",
        "awk",
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "wc",
        "sort",
        "uniq",
        "cut",
        "tr",
        "jq",
        "yq",
        "tee",
        "touch",
        "mkdir",
        "ls",
        "test",
        "[",
        "true",
        "false",
        "sleep",
        "export",
        "cd",
        "pwd",
        "which",
        "type",
        "read",
    }
)
GIT_REMOTE_VERBS = frozenset({"clone", "fetch", "pull", "push", "ls-remote", "submodule", "remote"})
REGISTRIES = {
    "pip": "pypi.org",
    "pip3": "pypi.org",
    "uv": "pypi.org",
    "pipx": "pypi.org",
    "poetry": "pypi.org",
    "conda": "conda.anaconda.org",
    "mamba": "conda.anaconda.org",
    "npm": "registry.npmjs.org",
    "pnpm": "registry.npmjs.org",
    "yarn": "registry.yarnpkg.com",
    "npx": "registry.npmjs.org",  # only with -y/--package: otherwise a local binary
    "bun": "registry.npmjs.org",
    "cargo": "crates.io",
    "go": "proxy.golang.org",
    "gem": "rubygems.org",
    "apt": "deb.debian.org",
    "apt-get": "deb.debian.org",
    "apk": "dl-cdn.alpinelinux.org",
    "huggingface-cli": "huggingface.co",
    "hf": "huggingface.co",
    "gh": "github.com",
    "gsutil": "storage.googleapis.com",
}
INSTALL_VERBS = {
    "pip": {"install", "download", "wheel"},
    "pip3": {"install", "download", "wheel"},
    "uv": {"add", "install", "sync", "pip"},
    "pipx": {"install", "run"},
    "poetry": {"add", "install"},
    "conda": {"install", "create"},
    "mamba": {"install", "create"},
    "npm": {"install", "i", "add", "ci", "exec"},
    "pnpm": {"install", "i", "add", "dlx"},
    "yarn": {"add", "install", "dlx"},
    "bun": {"add", "install", "x"},
    "cargo": {"install", "add", "fetch"},
    "go": {"get", "install", "mod"},
    "gem": {"install"},
    "apt": {"install", "update"},
    "apt-get": {"install", "update", "download"},
    "apk": {"add", "update"},
    "huggingface-cli": {"download", "upload"},
    "hf": {"download", "upload"},
    "gh": {"repo", "api", "release", "gist", "search", "pr", "issue"},
    "gsutil": {"cp", "ls", "cat", "rsync"},
}
INDEX_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--registry", "--index"}
)


def normalize_host(host: str) -> str:
    host = host.strip().strip("[]").rstrip(".").lower()
    return host.split("%", 1)[0]


def is_loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    if ":" not in host and not host.replace(".", "").isdigit():
        return False  # a name, not an address (and no exception raised to say so)
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


HOST_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)+")


def hosts_in_text(text: str) -> set[str]:
    """Every host a text names: URL hosts, bare domain names and IPv4 addresses.

    Tool outputs run to 100 kB, so this is a split on whitespace and one simple
    pattern per dotted word (about 15 us per kB), not a scan of every position. File
    names (`main.py`) come out as hosts too: harmless, they only widen what counts as
    shown."""
    found: set[str] = set()
    if "." not in text:
        return found
    for word in text.split():
        if "." not in word:
            continue
        for token in HOST_TOKEN.findall(word):
            parts = token.lower().strip(".-").split(".")
            last = parts[-1]
            if (len(parts) >= 2 and last[:1].isalpha() and len(last) >= 2) or (
                len(parts) == 4 and all(p.isdigit() and len(p) <= 3 for p in parts)
            ):
                found.add(".".join(parts))
    return found


def url_hosts(word: str) -> list[str]:
    return [normalize_host(m.group(2)) for m in URL.finditer(word)]


def _bare_target(word: str) -> str | None:
    """`example.com/x`, `user@host`, `host:path`, `10.0.0.1` as a network target."""
    if word.startswith("-"):
        return None
    for pattern in (SCP_HOST, USER_AT_HOST):
        match = pattern.match(word)
        if match:
            return normalize_host(match.group(1))
    head = word.split("/", 1)[0].split(":", 1)[0]
    if BARE_HOST.fullmatch(head) or IPV4.fullmatch(head):
        return normalize_host(head)
    return None


def command_hosts(name: str, argv: list[str]) -> tuple[list[str], bool]:
    """(hosts reached, reaches the network) for one simple command."""
    words = argv[1:]
    hosts: list[str] = []
    for word in words:
        hosts.extend(DEV_TCP.findall(word))
    if name in DOWNLOADERS or name in REMOTE_SHELLS or name in SOCKETS:
        for word in words:
            found = url_hosts(word) or ([t] if (t := _bare_target(word)) else [])
            hosts.extend(found)
        if name in SOCKETS and not hosts:
            operands = [w for w in words if not w.startswith("-")]
            hosts.extend(normalize_host(w) for w in operands[:1] if not w.isdigit())
        return hosts, True
    if name == "git":
        verb = next((w for w in words if not w.startswith("-")), "")
        if verb in GIT_REMOTE_VERBS:
            for word in words:
                hosts.extend(url_hosts(word) or ([t] if (t := _scp_like(word)) else []))
            return hosts, True
        return hosts, bool(hosts)
    if name in REGISTRIES:
        verbs = INSTALL_VERBS.get(name, set())
        verb = next((w for w in words if not w.startswith("-")), "")
        leading = words[
            : next((i for i, w in enumerate(words) if not w.startswith("-")), len(words))
        ]
        fetches = name == "npx" and bool({"-y", "--yes", "-p", "--package"} & set(leading))
        if verb in verbs or fetches:
            indexed = _index_hosts(words)
            explicit = [h for w in words for h in url_hosts(w)]
            packages = _package_operands(name, words)
            from_lockfile = verb in {"ci", "sync"} or (
                name in {"npm", "pnpm", "yarn", "bun"} and verb in {"install", "i"}
            )
            requirements = any(w in {"-r", "--requirement"} for w in words)
            hosts.extend(dict.fromkeys(indexed + explicit))
            if (packages or from_lockfile or requirements) and not indexed:
                hosts.append(REGISTRIES[name])
            return hosts, True
    if name not in TEXT_ONLY:
        for word in words:
            hosts.extend(url_hosts(word))
    return hosts, bool(hosts)


def _scp_like(word: str) -> str | None:
    match = SCP_HOST.match(word)
    return normalize_host(match.group(1)) if match and "@" in word else None


def _index_hosts(words: list[str]) -> list[str]:
    hosts = []
    for i, word in enumerate(words):
        key, _, value = word.partition("=")
        if key in INDEX_OPTIONS:
            target = value or (words[i + 1] if i + 1 < len(words) else "")
            hosts.extend(url_hosts(target))
    return hosts


def _package_operands(name: str, words: list[str]) -> list[str]:
    """Operands that name registry packages (not local paths, files or requirements)."""
    out = []
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = word in INDEX_OPTIONS or word in {
                "-r",
                "--requirement",
                "-c",
                "-e",
                "--constraint",
                "--editable",
                "-t",
                "--target",
                "--prefix",
                "-C",
            }
            continue
        if i == 0 or word in INSTALL_VERBS.get(name, ()):
            continue
        if word.startswith((".", "/", "~")) or word.endswith((".whl", ".tar.gz", ".zip")):
            continue
        out.append(word)
    return out
