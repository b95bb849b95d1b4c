"""Program text an agent executes (`python -c`, heredocs, `node -e`) -> CallFacts.

Code is read, not parsed: a regular-expression pass over string literals and a few
call shapes (`open(..., 'w')`, `os.remove`, `subprocess.run`, `os.environ`, network
clients) is cheap, never fails on partial or non-Python text, and is what the
latency budget allows. Literals are decoded (escapes, `"a" + "b"`, `b64decode("...")`)
before they are matched.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from repo2rlenv.shell import deobfuscate as deob
from train.guard.facts import CallFacts, Write
from train.guard.network import url_hosts
from train.guard.paths import paths_in_text, resolve

ShellHook = Callable[[str, str, int], CallFacts]

LITERAL = re.compile(
    r"""(?:\b[rRbBuUfF]{1,2})?("""
    r'''"""(?P<t1>.*?)"""|'{3}(?P<t2>.*?)'{3}|"(?P<d>(?:\\.|[^"\\\n])*)"|'(?P<s>(?:\\.|[^'\\\n])*)'|`(?P<b>(?:\\.|[^`\\])*)`'''
    r")",
    re.S,
)
CONCAT = re.compile(r"""(["'])((?:\\.|(?!\1)[^\\\n])*)\1\s*\+\s*(["'])((?:\\.|(?!\3)[^\\\n])*)\3""")
LIT = r"""[rRbBuUfF]{0,2}(["'])((?:\\.|(?!\1)[^\\\n])*)\1"""
OPEN_CALL = re.compile(
    r"\bopen\(\s*" + LIT + r"(?:\s*,\s*(?:mode\s*=\s*)?[rRbB]?([\"'])([^\"']*)\3)?"
)
PATH_WRITE = re.compile(
    r"\bPath\(\s*" + LIT + r"\s*\)\s*\.\s*(write_text|write_bytes|touch"
    r"|unlink|rmdir|read_text|read_bytes|open|chmod)\b"
)
DELETE_CALL = re.compile(r"\b(?:os\.(?:remove|unlink|rmdir|removedirs)|shutil\.rmtree)\(\s*" + LIT)
MOVE_CALL = re.compile(
    r"\b(?:os\.(?:rename|replace)|shutil\.(move|copy\w*))\(\s*" + LIT + r"\s*,\s*" + LIT
)
SHELL_CALL = re.compile(
    r"\b(?:os\.system|os\.popen|subprocess\.\w+|check_output|check_call|"
    r"Popen|execSync|exec|spawnSync|system)\(\s*(?:f|r)?" + LIT
)
B64_CALL = re.compile(r"b64decode\(\s*[bB]?" + LIT)
ENV_DUMP = re.compile(
    r"\bos\.environ\b(?!\s*(?:\[|\.get\b|\.setdefault\b|\.pop\b|\.update\b))"
    r"|\bprocess\.env\b(?!\s*[.\[])|\benviron\.copy\(|/proc/[\w*]+/environ"
)
ENV_NAME = re.compile(
    r"""(?:\bos\.environ\s*\[\s*|\bos\.(?:environ\.get|getenv)\(\s*|"""
    r"""process\.env\[\s*)["']([A-Za-z_]\w*)["']|process\.env\.([A-Za-z_]\w*)"""
)
NETWORK_USE = re.compile(
    r"\b(?:requests|urllib|urlopen|httpx|aiohttp|http\.client|socket|"
    r"fetch|axios|urlretrieve|HTTPConnection|HTTPSConnection|pip|git|curl|"
    r"wget|hf_hub_download|snapshot_download|load_dataset)\b"
)
SOCKET_CONNECT = re.compile(r"""(?:connect|create_connection)\(\s*\(\s*["']([\w.-]+)["']""")
HTTP_CONN = re.compile(r"""HTTPS?Connection\(\s*["']([\w.-]+)""")
WRITE_MODES = re.compile(r"[wax+]")


def literals(code: str) -> list[str]:
    code = CONCAT.sub(lambda m: m.group(1) + m.group(2) + m.group(4) + m.group(1), code)
    out = []
    for match in LITERAL.finditer(code):
        body = next((g for g in match.group("t1", "t2", "d", "s", "b") if g is not None), "")
        out.append(deob.decode_escapes(body) if "\\" in body else body)
    for match in B64_CALL.finditer(code):
        decoded = deob.base64_decode(match.group(2))
        if decoded:
            out.append(decoded)
    return out


def analyze_code(code: str, cwd: str, depth: int, shell: ShellHook | None = None) -> CallFacts:
    facts = CallFacts(code=[code])
    texts = literals(code)
    facts.texts.extend(texts)
    for text in texts:
        facts.touched.extend(paths_in_text(text))
    if NETWORK_USE.search(code):
        hosts = [h for text in texts for h in url_hosts(text)]
        hosts += SOCKET_CONNECT.findall(code) + HTTP_CONN.findall(code)
        facts.hosts.extend(h.lower() for h in hosts)
        facts.network = True
    for match in OPEN_CALL.finditer(code):
        path = resolve(deob.decode_escapes(match.group(2)), cwd)
        mode = match.group(4) or "r"
        if WRITE_MODES.search(mode):
            facts.writes.append(Write(path))
        else:
            facts.reads.append(path)
    for match in PATH_WRITE.finditer(code):
        path, method = resolve(match.group(2), cwd), match.group(3)
        if method in ("unlink", "rmdir"):
            facts.deletes.append(path)
        elif method in ("read_text", "read_bytes", "open"):
            facts.reads.append(path)
        else:
            facts.writes.append(Write(path))
    facts.deletes.extend(resolve(m.group(2), cwd) for m in DELETE_CALL.finditer(code))
    for match in MOVE_CALL.finditer(code):
        source, target = resolve(match.group(3), cwd), resolve(match.group(5), cwd)
        facts.writes.append(Write(target))
        if match.group(1) in (None, "move"):
            facts.deletes.append(source)
    if ENV_DUMP.search(code):
        facts.env_reads.append("*")
    facts.env_reads.extend(a or b for a, b in ENV_NAME.findall(code))
    if shell is not None:
        for match in SHELL_CALL.finditer(code):
            facts.merge(shell(deob.decode_escapes(match.group(2)), cwd, depth + 1))
    return facts
