"""The verifier's copy of the agent's artifacts: the delta hand-over (only what the engine
records as changed) must leave exactly the folder the whole hand-over leaves, for every
shape of change an agent can make, and fall back to the whole one where it could not."""

from __future__ import annotations

import io
import tarfile
import uuid
from types import SimpleNamespace

import pytest

from repo2rlenv.runtime.handover import (
    _topmost,
    collect_artifacts,
    hand_over,
    plan_delta,
)


def tar_of(*members: tuple[str, str, int, str]) -> bytes:
    """(name, type 'f'|'d'|'l', mode, content or link target) -> a tar as the engine sends."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, mode, text in members:
            info = tarfile.TarInfo(name)
            info.mode, info.mtime = mode, 1_000_000
            if kind == "d":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif kind == "l":
                info.type, info.linkname = tarfile.SYMTYPE, text
                tar.addfile(info)
            else:
                info.size = len(text.encode())
                tar.addfile(info, io.BytesIO(text.encode()))
    return buffer.getvalue()


def names(data: bytes) -> dict[str, int]:
    if not data:
        return {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: m.mode for m in tar.getmembers()}


IMAGE = (
    ("workspace", "d", 0o755, ""),
    ("workspace/a.py", "f", 0o644, "as in the image"),
    ("workspace/b.py", "f", 0o644, "untouched"),
    ("workspace/pkg", "d", 0o755, ""),
    ("workspace/pkg/c.py", "f", 0o644, "untouched"),
    ("workspace/old", "d", 0o755, ""),
    ("workspace/old/d.py", "f", 0o644, "deleted with its folder"),
)


@pytest.mark.timeout(30)
def test_only_what_differs_moves_and_what_is_gone_is_deleted():
    gone_or_changed = ("workspace/a.py", "workspace/old", "workspace/old/d.py")
    agent = tar_of(
        *[m for m in IMAGE if m[0] not in gone_or_changed],
        ("workspace/a.py", "f", 0o644, "changed"),
        ("workspace/pkg/new.py", "f", 0o4755, "added, setuid"),
    )
    plan = plan_delta(agent, tar_of(*IMAGE), "/workspace")
    assert names(plan.data) == {
        "workspace": 0o755,  # above a change: its time is set back to the agent's
        "workspace/a.py": 0o644,
        "workspace/pkg": 0o755,
        "workspace/pkg/new.py": 0o755,  # the setuid bit cleared, as the whole hand-over does
    }
    assert plan.removed == ("/workspace/old",)  # the folder, not each file in it


@pytest.mark.timeout(30)
def test_nothing_changed_moves_nothing():
    plan = plan_delta(tar_of(*IMAGE), tar_of(*IMAGE), "/workspace")
    assert (plan.data, plan.removed) == (b"", ())


@pytest.mark.timeout(30)
def test_what_the_cleaning_drops_is_deleted_whether_the_agent_or_the_image_put_it_there():
    image = tar_of(
        *IMAGE,
        ("workspace/lib", "l", 0o777, "/usr/lib"),  # the image's own escaping link
        ("workspace/tool", "f", 0o4755, "setuid in the image"),
    )
    agent = tar_of(
        *[m for m in IMAGE if m[0] != "workspace/a.py"],
        ("workspace/a.py", "l", 0o777, "/etc/passwd"),  # a file replaced by an escape
        ("workspace/lib", "l", 0o777, "/usr/lib"),
        ("workspace/tool", "f", 0o4755, "setuid in the image"),
    )
    plan = plan_delta(agent, image, "/workspace")
    # whole: neither link reaches the verifier, and the tool loses its setuid bit
    assert set(plan.removed) == {"/workspace/a.py", "/workspace/lib"}
    assert names(plan.data) == {"workspace": 0o755, "workspace/tool": 0o755}


@pytest.mark.timeout(30)
def test_a_missing_destination_gets_everything():
    plan = plan_delta(tar_of(*IMAGE), b"", "/workspace")
    assert len(names(plan.data)) == len(IMAGE) and plan.removed == ()


@pytest.mark.timeout(30)
def test_deletions_are_the_topmost_paths_whatever_sorts_between():
    # '-' sorts before '/': "a-c" lies between "a" and "a/b" without being under "a"
    assert _topmost(["/w/a/b", "/w/a-c", "/w/a", "/w/a/b/c"]) == ["/w/a", "/w/a-c"]


# The same agent work handed over both ways, into fresh containers of the same image.
START = r"""
set -e
mkdir -p /workspace/pkg/sub /workspace/gone/deeper /workspace/dir_to_file /workspace/opaque/old
cd /workspace
echo a > pkg/a.py; echo b > pkg/sub/b.py; echo c > gone/deeper/c.txt; echo z > dir_to_file/z
echo f > file_to_dir; echo o > opaque/old/o.txt; echo keep > keep.txt; echo s > conf.txt
ln -s pkg/a.py rel_link; ln -s /usr/lib image_escape; echo t > image_setuid; chmod 4755 image_setuid
echo u > owned.txt; chown 1234:2345 owned.txt; echo v > chowned.txt
"""
AGENT = r"""
set -e
cd /workspace
echo changed >> pkg/a.py
echo new > pkg/new.py
mkdir -p newdir/deep && echo n > newdir/deep/n.txt
rm -rf gone
rm file_to_dir && mkdir file_to_dir && echo x > file_to_dir/x
rm -rf dir_to_file && echo file > dir_to_file
rm -rf opaque && mkdir -p opaque/new && echo n > opaque/new/n.txt
rm conf.txt && ln -s /etc/passwd conf.txt
ln -s ../keep.txt pkg/keep_link
echo su > setuid.sh && chmod 4755 setuid.sh
mkfifo fifo
ln keep.txt hard.txt
chmod 700 pkg/sub
touch -d '2001-01-01 00:00:00' pkg/sub/b.py
chown 4321:5432 chowned.txt
mkdir -p /tmp/outside && echo o > /tmp/outside/o
"""
LISTING = r"""cd /workspace && find . -printf '%p %y %m %s %U %l %Ts\n' | sort
find . -type f -exec md5sum {} + | sort"""


def _listing(container) -> str:
    code, output = container.exec_run(["bash", "-c", LISTING])
    assert code == 0, output
    return output.decode()


@pytest.mark.docker
@pytest.mark.timeout(300)
def test_delta_and_whole_hand_over_leave_the_same_folder(docker_ready):
    import docker

    client = docker.from_env(timeout=120)
    tag = f"rlenv-harvest-test-handover:{uuid.uuid4().hex[:12]}"
    run = {"command": ["sleep", "infinity"], "detach": True, "network_mode": "none"}
    started = []
    try:
        seed = client.containers.run(docker_ready, **run)
        started.append(seed)
        assert seed.exec_run(["bash", "-c", START]).exit_code == 0
        seed.commit(*tag.split(":"))
        agent = client.containers.run(tag, **run)
        started.append(agent)
        done = agent.exec_run(["bash", "-c", AGENT])
        assert done.exit_code == 0, done.output
        agent.kill()
        agent.reload()
        task = SimpleNamespace(config=SimpleNamespace(artifacts=["/workspace"]))
        found = {}
        collected = collect_artifacts(agent, task)
        fresh = client.containers.run(tag, **run)
        started.append(fresh)
        (_, raw), image_copy = collected[0], b"".join(fresh.get_archive("/workspace")[0])
        plan = plan_delta(raw, image_copy, "/workspace")
        moved = names(plan.data)
        assert "workspace/pkg/sub/b.py" in moved and "workspace/pkg/new.py" in moved
        assert "workspace/rel_link" not in moved and "workspace/owned.txt" not in moved
        # gone with the agent, and dropped by the cleaning (keep.txt became a hard link)
        assert {"/workspace/gone", "/workspace/keep.txt"} <= set(plan.removed)
        assert "workspace/fifo" not in moved  # dropped, and not in the image to delete
        for delta in (True, False):
            verifier = client.containers.run(tag, **run)
            started.append(verifier)
            hand_over(verifier, collected, delta=delta)
            found[delta] = _listing(verifier)
        assert found[True] == found[False]
        listing = found[True]
        assert "./gone " not in listing and "./fifo " not in listing
        assert "./conf.txt " not in listing  # the escaping link is dropped, not the old file
        assert "./setuid.sh f 755 " in listing and "./file_to_dir/x f " in listing
        assert "./opaque/old" not in listing and "./opaque/new/n.txt f " in listing
        assert "./image_escape " not in listing and "./image_setuid f 755 " in listing
        assert "./owned.txt f 644 2 1234 " in listing and "./chowned.txt f 644 2 4321 " in listing
    finally:
        for container in started:
            container.remove(force=True)
        client.images.remove(tag, force=True)
