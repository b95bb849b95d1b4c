"""The Hub, asked once with a timeout, and every failure said in one line.

`datasets.load_dataset` on a machine that cannot reach the Hub retries for about a
minute and ends in a 40-line traceback; a private or misspelt id, a wrong revision or a
wrong split end the same way. `hub_info` asks the Hub once, with a short timeout,
through `huggingface_hub` (the client `datasets` itself uses, so HF_ENDPOINT, HF_TOKEN,
`hf auth login` and HF_HUB_OFFLINE mean what they mean there), and `hub_error` turns
each failure a user can meet into a `SourceUnavailable` with a reason code and what to
do about it. `load_error` does the same for an error raised while the rows are loaded.

Every Hub id the toolkit reads goes through here first (`--dataset` through
`repo2rlenv.source.resolve_source`, and the `--instances` / `--exclude-instances`
tables), so an unreachable Hub is the same one line everywhere, never the client's own
retries (`datasets` retries a HEAD five times, 24 s, before it fails). The module sits
in the task core so that both sources, which never import each other, share it.
"""

from __future__ import annotations

import re

HUB_TIMEOUT_S = 8.0
"""One answer from the Hub's API; a reachable Hub answers in well under a second."""

OFFLINE_HINT = (
    "to work offline give a local path (a session file, a folder of them, or a "
    "`save_to_disk` folder), or set HF_HUB_OFFLINE=1 to use a dataset already in the cache"
)
TOKEN_HINT = "a token is read from HF_TOKEN or from `hf auth login`"
_SPLIT_ERROR = re.compile(r"^(Unknown split|Bad split)")


def is_split_error(exc: BaseException) -> bool:
    """`datasets`' error for a split the dataset does not have."""
    return isinstance(exc, ValueError) and _SPLIT_ERROR.match(str(exc)) is not None


class SourceUnavailable(RuntimeError):
    """A source that cannot be read; `code` is stable, the message is one line."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def about(self, what: str) -> SourceUnavailable:
        """The same failure, its message prefixed with what was being read (`instance
        table foo/bar`), for a source other than `--dataset`."""
        return SourceUnavailable(self.code, f"{what}: {self.message}")


def hub_offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT


def hub_info(
    dataset: str, revision: str | None = None, timeout: float = HUB_TIMEOUT_S
) -> tuple[str | None, tuple[str, ...]]:
    """The commit `revision` points at and the dataset's file names (its `siblings`),
    from one `dataset_info` call with a timeout: `list_repo_files` has none, and its
    client waits forever on a Hub that accepts the connection and never answers.
    Reachable, the id exists and is readable with the token at hand, the revision
    exists: any other answer is a `SourceUnavailable`."""
    from huggingface_hub import HfApi

    try:
        info = HfApi().dataset_info(dataset, revision=revision, timeout=timeout)
    except Exception as exc:
        raise hub_error(exc, dataset, revision) from exc
    return info.sha, tuple(sibling.rfilename for sibling in info.siblings or [])


def hub_error(exc: BaseException, dataset: str, revision: str | None) -> SourceUnavailable:
    """The one line for a Hub client error; anything unknown keeps its own message."""
    from huggingface_hub import errors

    if isinstance(exc, SourceUnavailable):
        return exc
    if isinstance(exc, errors.RevisionNotFoundError):
        return SourceUnavailable(
            "hub.revision-not-found", f"dataset {dataset} has no revision {revision!r}"
        )
    if isinstance(exc, errors.GatedRepoError):
        return SourceUnavailable(
            "hub.dataset-gated",
            f"dataset {dataset} is gated: accept its terms on the Hub; {TOKEN_HINT}",
        )
    if isinstance(exc, errors.RepositoryNotFoundError):
        return SourceUnavailable(
            "hub.dataset-not-found",
            f"no dataset {dataset} on the Hub ({endpoint()}) and no local path of that "
            f"name, or it is private and no token with access was given; {TOKEN_HINT}",
        )
    if isinstance(exc, errors.OfflineModeIsEnabled | errors.LocalEntryNotFoundError):
        return SourceUnavailable(
            "hub.not-cached",
            f"dataset {dataset} is not in the cache and HF_HUB_OFFLINE is set; unset it "
            "on a machine that reaches the Hub, or give a local path",
        )
    if isinstance(exc, errors.HfHubHTTPError):
        status = getattr(exc.response, "status_code", None)
        if status == 401:
            return SourceUnavailable(
                "hub.token-refused", f"the Hub refused the token; {TOKEN_HINT}"
            )
        if status == 404:
            return SourceUnavailable(
                "hub.dataset-not-found", f"no dataset {dataset} on the Hub ({endpoint()})"
            )
        return SourceUnavailable(
            "hub.error", f"the Hub ({endpoint()}) answered HTTP {status} for {dataset}"
        )
    if _is_connection_error(exc):
        return SourceUnavailable(
            "hub.unreachable",
            f"cannot reach the Hub at {endpoint()} ({_first_line(exc)}); {OFFLINE_HINT}",
        )
    return SourceUnavailable("hub.error", f"{dataset}: {type(exc).__name__}: {_first_line(exc)}")


def load_error(
    exc: BaseException, dataset: str, split: str, revision: str | None
) -> SourceUnavailable | None:
    """The one line for an error `datasets` raised while loading `dataset`, or None
    when it is not one a user can fix from here (a bug: keep the traceback)."""
    if is_split_error(exc):
        found = re.search(r"(\[.*\])", str(exc))
        return SourceUnavailable(
            "hub.split-not-found",
            f"dataset {dataset} has no split {split!r}"
            + (f" (it has {found.group(1)})" if found else ""),
        )
    from huggingface_hub import errors

    offline = hub_offline()
    if offline and isinstance(exc, ConnectionError | FileNotFoundError):
        # `datasets` says "Couldn't reach ... (OfflineModeIsEnabled)" for a cache miss
        return hub_error(errors.OfflineModeIsEnabled(str(exc)), dataset, revision)
    if isinstance(exc, errors.HfHubHTTPError | errors.OfflineModeIsEnabled) or (
        _is_connection_error(exc)
    ):
        return hub_error(exc, dataset, revision)
    return None


def _is_connection_error(exc: BaseException) -> bool:
    """The HTTP client's connect and timeout errors (httpx's or requests', whichever
    the installed huggingface_hub uses), and the builtin ones `datasets` raises."""
    for kind in type(exc).__mro__:
        if kind.__name__ in {"ConnectError", "ConnectTimeout", "TimeoutException",
                             "NetworkError", "ConnectionError", "Timeout", "ReadTimeout",
                             "TransportError"}:  # fmt: skip
            return True
    return isinstance(exc, ConnectionError | TimeoutError)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
