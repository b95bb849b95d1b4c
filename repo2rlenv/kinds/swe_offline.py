"""Equivalents of spec steps that an image build here cannot run as written.

Two kinds: downloads from hosts the build cannot reach (below), and editable installs
the image's pip 26 no longer runs as pip did: scikit-learn's `pip install
--no-use-pep517 -e .`, an option pip 26 no longer has (`legacy_develop`), and `pip
install -e .` of a compiled checkout without `pyproject.toml` (`editable_develop`,
matplotlib 3.0-3.4); both run as what pip ran for them, `setup.py develop --no-deps`.

SWE-bench's matplotlib specs (3.0 to 3.9) fetch qhull's source from www.qhull.org with
`wget` into `/testbed/build`, where matplotlib's own build (3.3 and later) looks for it
before downloading it itself. An image build here reaches the package index and
Debian's archive only (measured: `Could not resolve host: www.qhull.org`; the offline
base has no `wget` either), so the step stops the whole recipe. Matplotlib's build
offers the same libraries from the system: a `[libs]` section with `system_qhull` and
`system_freetype` in the file `MPLSETUPCFG` names (3.3 on), and Debian packages them
(`libqhull-dev`, `libfreetype6-dev`, which the spec's own `apt-get` step already
installs). Matplotlib 3.0 to 3.2 bundle qhull in `extern/` and use the system
freetype by default, so for them the download was never used.

Only exact steps of a named repository are replaced, each by project text (never by
anything a run wrote), and every replacement is recorded in the task's provenance.
The freetype that renders the test images is then Debian's, not the 2.6.1 matplotlib's
tests pin: image comparisons that contain text may differ, and the oracle decides.
"""

from __future__ import annotations

import shlex

from pydantic import BaseModel, ConfigDict

MPLSETUP = (
    "printf '[libs]\\nsystem_freetype = True\\nsystem_qhull = True\\n' > /tmp/rlenv-mplsetup.cfg"
    " && export MPLSETUPCFG=/tmp/rlenv-mplsetup.cfg"
)
"""Matplotlib's build told to use the system's qhull and freetype, through the file
`MPLSETUPCFG` names: 3.3 and 3.4 read `setup.cfg`, later ones `mplsetup.cfg`, both give
way to that variable (3.4's `setupext.py`: `os.environ.get('MPLSETUPCFG') or
'setup.cfg'`). The file stays outside the checkout, so the agent's start state is the
spec's. A first version wrote `mplsetup.cfg`, which 3.4 ignored: its build went on to
download freetype 2.6.1 (measured on matplotlib-20488). Later steps see the variable
(one shell)."""
QHULL_FROM_DEBIAN = (
    "apt-get install -y --no-install-recommends libqhull-dev libfreetype6-dev pkg-config"
)
OFFLINE_STEPS: dict[str, dict[str, tuple[str, ...]]] = {
    "matplotlib/matplotlib": {
        'wget -O "$QHULL_TAR" "$QHULL_URL"': ("apt-get -y update", QHULL_FROM_DEBIAN),
        'tar -xvzf "$QHULL_TAR" -C "$QHULL_BUILD_DIR"': (MPLSETUP,),
    }
}
"""Per repository: a spec step (exact text) and the steps that replace it."""
DEVELOP_REQUIRES = (
    'python3 -c "import glob, pathlib, importlib.metadata as m; '
    "print(*[r for d in ('', 'lib/', 'src/') for p in sorted(glob.glob(d + '*.egg-info')) "
    "for r in m.PathDistribution(pathlib.Path(p)).requires or [] if 'extra ==' not in r], "
    'sep=chr(10))" > /tmp/rlenv-develop-requires.txt',
    "if [ -s /tmp/rlenv-develop-requires.txt ]; then "
    "python3 -m pip install -r /tmp/rlenv-develop-requires.txt; fi",
)
"""After `setup.py develop --no-deps`: the project's own requirements (its egg-info's,
without extras) installed by the image's pip at the step's date, as pip installed them
before it ran `develop` (scikit-learn 0.22 needs joblib: without this step its
`conftest.py` stopped at `import joblib`, measured on scikit-learn-14141). The egg-info
is where `develop` writes it, in the package root: the checkout's top, or `lib/`
(matplotlib: `package_dir={"": "lib"}`; read only at the top, matplotlib 3.0's tests
stopped at `No module named 'kiwisolver'`) or `src/`."""
LEGACY_FLAGS = frozenset({"-v", "--no-use-pep517", "--no-build-isolation"})
"""The words scikit-learn's specs (0.20-1.3) put around `-e .` with `--no-use-pep517`."""


EDITABLE_FLAGS = frozenset({"-v", "--verbose"})
"""The words allowed around `-e .` in a plain editable install (`editable_develop`)."""
EXTENSION_SUFFIXES = (".pyx", ".pxd", ".c", ".cc", ".cpp", ".cxx")
TEST_ROOTS = frozenset({"tests", "test", "testing"})
JQUERY_UI = "jquery-ui-1.12.1"
JQUERY_UI_DIR = f"lib/matplotlib/backends/web_backend/{JQUERY_UI}"
"""Matplotlib 3.0-3.2's `setup.py develop` downloads jquery-ui from jqueryui.com after
building, unless this folder exists (its `develop_with_jquery`); no build here
reaches that host, and pip's PEP 660 path, which the image had before, never ran it."""


def _pip_words(step: str) -> list[str] | None:
    """`python[3] -m pip install ... -e .` as words, or None for any other step."""
    try:
        words = shlex.split(step)
    except ValueError:
        return None
    if len(words) < 6 or words[0] not in ("python", "python3"):
        return None
    if words[1:4] != ["-m", "pip", "install"] or words[-2:] != ["-e", "."]:
        return None
    return words


def _develop(python: str) -> tuple[str, ...]:
    return (f"{python} setup.py develop --no-deps", *DEVELOP_REQUIRES)


def compiled_checkout(start: dict[str, str]) -> bool:
    """Whether the checkout has extension sources its install compiles: Cython, C or C++
    files outside the top-level test folders, or extension-helpers' `setup_package.py`.
    Wider than `instance_repair.compiled_sources` (which refuses what no recipe builds,
    and so ignores plain C): matplotlib's extensions are C++ under `src/` and `extern/`.
    Django, SymPy, requests and the other pure-Python repositories have none."""
    return any(
        (path.endswith(EXTENSION_SUFFIXES) and path.split("/", 1)[0] not in TEST_ROOTS)
        or (path.endswith("setup_package.py") and "def get_extensions" in text)
        for path, text in start.items()
    )


def develops_editable(start: dict[str, str]) -> bool:
    """Whether a plain `pip install -e .` of this checkout runs as `setup.py develop`:
    it has a `setup.py`, no `pyproject.toml` (pip before 25.3 then ran `develop` in the
    environment, as SWE-bench's environments were made; pip 26 builds a PEP 660 wheel in
    an isolated environment instead) and compiled extensions. Only compiled checkouts:
    there the isolated build compiles against another numpy than the tests import
    (matplotlib 3.0: `numpy.core.multiarray failed to import`) or the project's own
    `build_py` breaks (3.4); a pure-Python checkout (Django before 4.0, verified as it
    is) keeps pip 26's install unchanged."""
    return "setup.py" in start and "pyproject.toml" not in start and compiled_checkout(start)


def editable_develop(step: str, start: dict[str, str]) -> tuple[str, ...] | None:
    """`python -m pip install [-v] -e .` of a checkout `develops_editable` accepts, as
    `setup.py develop --no-deps` and the egg-info's requirements by pip (as
    `legacy_develop`), with matplotlib's jquery-ui download made unnecessary; None for
    any other step or checkout (extras, other options: left to pip as written)."""
    words = _pip_words(step)
    if words is None or not set(words[4:-2]) <= EDITABLE_FLAGS or not develops_editable(start):
        return None
    before = (f"mkdir -p {JQUERY_UI_DIR}",) if JQUERY_UI in start.get("setup.py", "") else ()
    return (*before, *_develop(words[0]))


def legacy_develop(step: str) -> tuple[str, ...] | None:
    """`python -m pip install [-v] --no-use-pep517 [--no-build-isolation] -e .` as what
    pip ran for it, `python setup.py develop --no-deps`, or None for any other step.
    pip 25.3 removed the option and the legacy path (the image's pip 26.0.1 stops: "no
    such option: --no-use-pep517", measured on scikit-learn-14141); pip 26 builds a PEP
    660 editable wheel instead, which needs setuptools 64 and a build that knows
    editable wheels (numpy.distutils, scikit-learn's, does not). The spec asked for the
    legacy path by name, so it is run as pip ran it: setuptools' `develop` with the
    setuptools installed and `--no-deps` (pip passed it), and the project's requirements
    installed by pip (`DEVELOP_REQUIRES`), not by setuptools' undated easy_install."""
    words = _pip_words(step)
    if words is None:
        return None
    flags = set(words[4:-2])
    if "--no-use-pep517" not in flags or not flags <= LEGACY_FLAGS:
        return None
    return _develop(words[0])


class OfflineSteps(BaseModel):
    """The steps to run, and one provenance line per step replaced."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: tuple[str, ...]
    replaced: tuple[str, ...]


NO_PEP517 = "pip 26 has no --no-use-pep517"
SETUP_PY_ONLY = "pip 26 installs a setup.py-only checkout as a PEP 660 wheel"


def offline_steps(repo: str, steps: list[str], start: dict[str, str] | None = None) -> OfflineSteps:
    """`steps` with the downloads of `repo`'s spec that no build here can reach replaced
    by their offline equivalents, and the editable installs pip 26 runs otherwise than
    pip did by `develop` (module docstring; `start`: the checkout); other steps are
    kept verbatim."""
    table = OFFLINE_STEPS.get(repo, {})
    out: list[str] = []
    replaced: list[str] = []
    for step in steps:
        legacy = legacy_develop(step)
        develop = legacy or editable_develop(step, start or {})
        instead = develop or table.get(step)
        if instead is None:
            out.append(step)
            continue
        out.extend(instead)
        why = (NO_PEP517 if legacy else SETUP_PY_ONLY) if develop else "offline"
        replaced.append(f"{why}: {step} -> {' && '.join(instead)}")
    return OfflineSteps(steps=tuple(out), replaced=tuple(replaced))
