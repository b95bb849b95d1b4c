"""Offline equivalents of spec steps that download from hosts an image build cannot reach.

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
        instead = table.get(step)
        if instead is None:
            out.append(step)
            continue
        out.extend(instead)
        replaced.append(f"offline: {step} -> {' && '.join(instead)}")
    return OfflineSteps(steps=tuple(out), replaced=tuple(replaced))
