"""Upload a staged task set as a Hub dataset repository, through `huggingface_hub`
(so HF_ENDPOINT, HF_TOKEN and `hf auth login` mean what they mean there), and say
every failure a user can meet in one line (`repo2rlenv.hub.SourceUnavailable`).

`upload_folder` (huggingface_hub 1.x/2.x with `hf_xet`, the default install) is itself
the resumable upload: it commits a folder in batches (about 250 files, 100 MiB of small
files each, fewer after a failed commit) and a rerun skips every file the Hub already
holds with the same content. There is no `upload_large_folder` to switch to; what the
client does not give is one atomic commit for a large set: the deletions ride the first
batch and the rest follows commit by commit. So `manifest.jsonl`, the file that makes
the dataset a task set for `pull`, is the commit point:

- a set of at most SINGLE_COMMIT_FILES files goes in one call, which is one commit
  whatever the client's batching;
- a larger set goes in two calls: every file but the manifest, with the deletion of
  everything the staged folder does not hold (the old manifest too), then the manifest
  alone. While such a push runs, or after it was interrupted, the dataset has no
  manifest and `pull` refuses it (`publish.not-a-task-set`) rather than giving a mix of
  two pushes; running the same push again skips what was committed and ends with the
  same files as an uninterrupted push.

The Hub skips files whose content it already holds, so pushing the same set again
commits nothing new."""

from __future__ import annotations

from pathlib import Path

from repo2rlenv.hub import TOKEN_HINT, SourceUnavailable, endpoint, hub_error
from repo2rlenv.manifest import MANIFEST

NO_TOKEN = "hub.no-token"
NO_RIGHTS = "hub.no-rights"
OFFLINE = "hub.offline"
SINGLE_COMMIT_FILES = 20
"""The smallest batch huggingface_hub's upload pipeline ever commits (the first step of
its adaptive scale): a set this small is one commit even after the client scales down."""


def require_token() -> str:
    """The token the client would send; a push without one is refused before any
    request (the Hub would answer 401 after the card and tasks were staged)."""
    from huggingface_hub import get_token

    token = get_token()
    if not token:
        raise SourceUnavailable(NO_TOKEN, f"pushing needs a Hub token; {TOKEN_HINT}")
    return token


def push_error(exc: BaseException, repo_id: str) -> SourceUnavailable:
    """The one line for a failed push: 403 (the token cannot write there) is said as
    such; the rest as `repo2rlenv.hub` says it for a read."""
    from huggingface_hub import errors

    if isinstance(exc, errors.OfflineModeIsEnabled):
        return SourceUnavailable(
            OFFLINE, "HF_HUB_OFFLINE is set and a push needs the Hub; unset it to push"
        )
    if isinstance(exc, errors.HfHubHTTPError):
        status = getattr(exc.response, "status_code", None)
        if status == 403:
            return SourceUnavailable(
                NO_RIGHTS,
                f"the token may not write to dataset {repo_id} on the Hub ({endpoint()}); "
                "use a write token of an account that owns it or belongs to its organisation",
            )
    return hub_error(exc, repo_id, None)


def staged_files(staged: Path) -> int:
    return sum(1 for path in staged.rglob("*") if path.is_file())


def upload(staged: Path, repo_id: str, *, private: bool, message: str) -> str:
    """Create `repo_id` (a dataset; kept if it exists) and commit `staged` as its whole
    content, the manifest last (module docstring); returns the final commit id."""
    from huggingface_hub import HfApi

    token = require_token()
    api = HfApi(token=token)
    common = {"folder_path": staged, "repo_id": repo_id, "repo_type": "dataset"}
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if staged_files(staged) <= SINGLE_COMMIT_FILES:
            commit = api.upload_folder(**common, commit_message=message, delete_patterns="*")
        else:
            api.upload_folder(
                **common,
                commit_message=f"{message} (tasks; {MANIFEST} follows)",
                ignore_patterns=[MANIFEST],
                delete_patterns="*",
            )
            commit = api.upload_folder(
                **common, commit_message=f"{message} ({MANIFEST})", allow_patterns=[MANIFEST]
            )
    except Exception as exc:
        raise push_error(exc, repo_id) from exc
    return commit.oid
