"""File work of the session logs, moved off the proxy's event loop.

Creating a session's folder, opening its files, replacing `verdict.json` and even
appending a line can stall on a busy disk (5-10 ms for metadata, far longer for a
write waiting on dirty-page flushing), and on the event loop that stall lands on
every response in flight. `LogWriter` runs them, in
the order they were asked for, on one daemon thread; the file system calls release the
GIL, so the loop keeps serving. Lines are formatted by the caller (a snapshot, so a
later change of the session cannot leak into an earlier line).

Until `start()` (and after `stop()`) every job runs at once on the caller's thread:
a `Guard` used as a library without the proxy writes synchronously, as before.
`barrier()` is the sync point: its future resolves once every job asked for before it
is done, which is what a session's close and the status route wait for.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future

from train.guard import ui

Job = Callable[[], None]


class LogWriter:
    """Jobs come in bursts (the lines of a response, a session's start, its first
    block, its close); a burst wakes the thread once, and the thread runs every job
    queued by then."""

    POLL_S = 1.0

    def __init__(self) -> None:
        self._jobs: deque[Job | Future[None]] = deque()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._delay_s = 0.0
        self._wake_due = False

    def wake_later(self, loop: asyncio.AbstractEventLoop, delay_s: float) -> None:
        """Jobs asked for on `loop`'s thread wake the writer `delay_s` later, not at
        once: a job is asked for in the middle of a response (a decision line), and a
        thread woken then competes with the response for the GIL and the CPU."""
        self._loop, self._loop_thread, self._delay_s = loop, threading.get_ident(), delay_s

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._stopping = False
                self._thread = threading.Thread(
                    target=self._run, name="guard-log-writer", daemon=True
                )
                self._thread.start()

    def stop(self) -> None:
        """Runs what is queued, then ends the thread; later jobs run inline."""
        with self._lock:
            thread, self._thread = self._thread, None
        self._loop = None
        if thread is not None:
            self._stopping = True
            self._wake.set()
            thread.join(timeout=60)
        self._drain()  # anything queued by a caller that raced the stop

    def submit(self, job: Job) -> None:
        if self._thread is None:
            _run_job(job)
        else:
            self._jobs.append(job)
            if self._wake.is_set():  # one wake-up for a burst of jobs
                return
            if self._loop is not None and threading.get_ident() == self._loop_thread:
                if not self._wake_due:
                    self._wake_due = True
                    self._loop.call_later(self._delay_s, self._wake_now)
            else:
                self._wake.set()

    def _wake_now(self) -> None:
        self._wake_due = False
        self._wake.set()

    def barrier(self) -> Future[None]:
        future: Future[None] = Future()
        if self._thread is None:
            self._drain()
            future.set_result(None)
        else:
            self._jobs.append(future)
            self._wake.set()
        return future

    def flush(self, timeout_s: float = 60.0) -> None:
        """Blocks until every job queued so far is done (for synchronous callers)."""
        self.barrier().result(timeout=timeout_s)

    def _run(self) -> None:
        while not self._stopping:
            self._wake.wait(self.POLL_S)
            self._wake.clear()
            self._drain()
        self._drain()

    def _drain(self) -> None:
        while True:
            try:
                job = self._jobs.popleft()
            except IndexError:
                return
            if isinstance(job, Future):
                job.set_result(None)
            else:
                _run_job(job)


def _run_job(job: Job) -> None:
    try:
        job()
    except OSError as exc:  # a full or vanished log folder must not take the proxy down
        ui.error(f"guard log: {exc}")
