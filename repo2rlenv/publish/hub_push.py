"""Upload a staged task set as a Hub dataset repository, through `huggingface_hub`
(so HF_ENDPOINT, HF_TOKEN and `hf auth login` mean what they mean there), and say
every failure a user can meet in one line (`repo2rlenv.hub.SourceUnavailable`).

One commit per push: `upload_folder` sends the small files inline and the large ones
through the Hub's own large-file path, and `delete_patterns="*"` drops what an earlier
push left that this one does not have, so the dataset at the new commit is exactly the
staged folder. The Hub skips files whose content it already holds, so pushing the same
set again uploads nothing new."""

from __future__ import annotations

from pathlib import Path

from repo2rlenv.hub import TOKEN_HINT, SourceUnavailable, endpoint, hub_error

NO_TOKEN = "hub.no-token"
NO_RIGHTS = "hub.no-rights"
OFFLINE = "hub.offline"


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


def upload(staged: Path, repo_id: str, *, private: bool, message: str) -> str:
    """Create `repo_id` (a dataset; kept if it exists) and commit `staged` as its whole
    content; returns the commit id."""
    from huggingface_hub import HfApi

    token = require_token()
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=staged,
            repo_id=repo_id,
            repo_type="dataset",
            commit_message=message,
            delete_patterns="*",
        )
    except Exception as exc:
        raise push_error(exc, repo_id) from exc
    return commit.oid
