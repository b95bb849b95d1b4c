"""An instance task's image holds every file of the commit its tests may import, also
those no replay reads (moto's services import the 1.6 MB `aws_managed_policies.py`;
every moto test failed with ModuleNotFoundError while it was left out)."""

from __future__ import annotations

import git

from repo2rlenv.anchors.repos import MAX_FILE_BYTES
from repo2rlenv.emit import Draft
from tests.anchors.test_anchors import CALC_BUGGY, TESTS
from tests.mining.test_checkout_secrets import PEM, _events


def test_over_large_and_binary_files_of_the_commit_are_in_the_image(tmp_path):
    path = tmp_path / "calc"
    repository = git.Repo.init(path)
    big = "POLICIES = {\n" + '    "p": "x",\n' * (MAX_FILE_BYTES // 14 + 10) + "}\n"
    assert len(big.encode()) > MAX_FILE_BYTES
    keystore = b"\0\x01binary keystore\n" + PEM.encode()
    files: dict[str, str | bytes] = {
        "calc.py": CALC_BUGGY,
        "test_calc.py": TESTS,
        "policies.py": big,
        "resources/store.p12": keystore,
    }
    for rel, content in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (path / rel).write_bytes(content)
        else:
            (path / rel).write_text(content)
    repository.index.add(list(files))
    actor = git.Actor("t", "t@example.com")
    commit = repository.index.commit("start", author=actor, committer=actor).hexsha
    [draft] = _events(tmp_path, path, commit)
    assert isinstance(draft, Draft)
    carried = {f.path: f.content for f in draft.bundle.files}
    assert carried["environment/workspace/policies.py"] == big.encode()
    assert carried["environment/workspace/resources/store.p12"] == keystore
    # the binary keystore is the commit's blob: listed and exempt, not refused
    listed = draft.bundle.config.metadata.repo2rlenv.public_checkout_secrets
    assert [(e.path, e.rules) for e in listed] == [("resources/store.p12", ["private-key"])]
