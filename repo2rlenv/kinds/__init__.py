"""The task kinds mined from sessions, registered in one place.

Each kind is a function `candidates(replay, ctx)` yielding task bundles or `Reject`s
(a quality check's reason code); adding a kind is one module and one entry here.
"""

from collections.abc import Callable, Iterator

from repo2rlenv.kinds import build, extend, instance_repair, qa, repair
from repo2rlenv.kinds.common import Reject, SessionContext
from repo2rlenv.replay.replay import Replay
from schemas import TaskBundle

KindFn = Callable[[Replay, SessionContext], Iterator[TaskBundle | Reject]]

KINDS: dict[str, KindFn] = {
    "repair": repair.candidates,
    "build": build.candidates,
    "extend": extend.candidates,
    "qa": qa.candidates,
    "instance-repair": instance_repair.candidates,
}

__all__ = ["KINDS", "KindFn", "Reject", "SessionContext"]
