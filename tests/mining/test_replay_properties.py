"""Property-based: no sequence of actions crashes replay or lets a path out of the root."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repo2rlenv.replay import replay
from repo2rlenv.shell import command_effects
from tests.mining.factory import ROOT, SessionBuilder

SEGMENTS = st.sampled_from(["a", "b.py", "..", ".", "sub", "/etc", ROOT, "~", "x y", "\x00", ""])
PATHS = st.lists(SEGMENTS, min_size=1, max_size=5).map("/".join)
TEXT = st.text(max_size=60)
SHELL_BITS = st.sampled_from(
    [
        "cat > {p} <<'EOF'\n{t}\nEOF",
        "cat <<EOF > {p}\n{t}",
        "printf '{t}' > {p}",
        "echo {t} >> {p}",
        "rm -rf {p}",
        "mv {p} {p}2",
        "cp {p} {p}",
        "cd {p} && pytest -q",
        "sed -i x {p}",
        "cat {p}",
        'bash -c "echo {t} > {p}"',
        "python -m pytest {p}",
        "touch {p}",
        "{t}",
        "'unterminated",
    ]
)
ACTIONS = st.one_of(
    st.tuples(st.just("write"), PATHS, TEXT),
    st.tuples(st.just("edit"), PATHS, TEXT, TEXT),
    st.tuples(st.just("read"), PATHS, TEXT),
    st.tuples(st.just("run"), SHELL_BITS, PATHS, TEXT, st.sampled_from([0, 1, None])),
    st.tuples(st.just("patch"), TEXT),
    st.tuples(st.just("user"), TEXT),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ACTIONS, max_size=25))
def test_replay_never_crashes_or_escapes(actions):
    builder = SessionBuilder()
    for action in actions:
        kind = action[0]
        if kind == "write":
            builder.write(action[1], action[2])
        elif kind == "edit":
            builder.edit(action[1], action[2], action[3])
        elif kind == "read":
            builder.read(action[1], action[2])
        elif kind == "run":
            template, path, text, code = action[1:]
            builder.run(template.format(p=path, t=text), text, code)
        elif kind == "patch":
            builder.patch("*** Begin Patch\n" + action[1])
        else:
            builder.user(action[1])
    result = replay(builder.build())
    for path in result.workspace.files:
        assert path and not path.startswith(("/", "../")) and path != ".."
        assert "\x00" not in path
    for index in (0, len(actions) // 2, len(actions) + 1):
        for state in result.workspace.snapshot(index).values():
            assert state.status in {"known", "partial", "unknown", "absent"}
            assert (state.content is not None) == (state.status == "known")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_shell_parser_never_crashes(text):
    effects = command_effects(text)
    assert all(
        e.op in {"write", "append", "delete", "unknown", "copy", "move", "touch", "cd"}
        for e in effects.effects
    )
