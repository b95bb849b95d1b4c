"""Equivalents of spec steps that an image build here cannot run as written.

Two kinds: downloads from hosts the build cannot reach (below), and scikit-learn's
`pip install --no-use-pep517 -e .`, an option the image's pip 26 no longer has
(`legacy_develop`: run as what pip ran for it, `setup.py develop --no-deps`).

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
    "print(*[r for p in sorted(glob.glob('*.egg-info')) "
    "for r in m.PathDistribution(pathlib.Path(p)).requires or [] if 'extra ==' not in r], "
    'sep=chr(10))" > /tmp/rlenv-develop-requires.txt',
    "if [ -s /tmp/rlenv-develop-requires.txt ]; then "
    "python3 -m pip install -r /tmp/rlenv-develop-requires.txt; fi",
)
"""After `setup.py develop --no-deps`: the project's own requirements (its egg-info's,
without extras) installed by the image's pip at the step's date, as pip installed them
before it ran `develop` (scikit-learn 0.22 needs joblib: without this step its
`conftest.py` stopped at `import joblib`, measured on scikit-learn-14141)."""
LEGACY_FLAGS = frozenset({"-v", "--no-use-pep517", "--no-build-isolation"})
"""The words scikit-learn's specs (0.20-1.3) put around `-e .` with `--no-use-pep517`."""


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
    try:
        words = shlex.split(step)
    except ValueError:
        return None
    if len(words) < 6 or words[0] not in ("python", "python3"):
        return None
    if words[1:4] != ["-m", "pip", "install"] or words[-2:] != ["-e", "."]:
        return None
    flags = set(words[4:-2])
    if "--no-use-pep517" not in flags or not flags <= LEGACY_FLAGS:
        return None
    return (f"{words[0]} setup.py develop --no-deps", *DEVELOP_REQUIRES)


class OfflineSteps(BaseModel):
    """The steps to run, and one provenance line per step replaced."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: tuple[str, ...]
    replaced: tuple[str, ...]


def offline_steps(repo: str, steps: list[str]) -> OfflineSteps:
    """`steps` with the downloads of `repo`'s spec that no build here can reach replaced
    by their offline equivalents (module docstring); other steps are kept verbatim."""
    table = OFFLINE_STEPS.get(repo, {})
    out: list[str] = []
    replaced: list[str] = []
    for step in steps:
        develop = legacy_develop(step)
        instead = develop or table.get(step)
        if instead is None:
            out.append(step)
            continue
        out.extend(instead)
        why = "pip 26 has no --no-use-pep517" if develop else "offline"
        replaced.append(f"{why}: {step} -> {' && '.join(instead)}")
    return OfflineSteps(steps=tuple(out), replaced=tuple(replaced))
