"""task.toml to and from the typed config, with one canonical byte layout."""

from __future__ import annotations

import json
import tomllib
from typing import Any

import tomli_w

from schemas import VOLATILE_KEYS, TaskConfig


def prune(value: Any) -> Any:
    """Sort keys and drop None and empty containers: TOML has no null, and
    Harbor's defaults for empty tables and lists are the same as absent."""
    if isinstance(value, dict):
        out = {}
        for key in sorted(value):
            item = prune(value[key])
            if item is None or (isinstance(item, dict | list) and not item):
                continue
            out[key] = item
        return out
    if isinstance(value, list):
        return [prune(v) for v in value]
    return value


def config_to_dict(config: TaskConfig) -> dict[str, Any]:
    return prune(config.model_dump(mode="json"))


def dump_config(config: TaskConfig) -> str:
    return tomli_w.dumps(config_to_dict(config))


def parse_config(text: str) -> TaskConfig:
    """Raises tomllib.TOMLDecodeError or pydantic.ValidationError on bad input."""
    return TaskConfig.model_validate(tomllib.loads(text))


def canonical_config_bytes(config: TaskConfig) -> bytes:
    """The config as the content hash sees it: without the volatile label fields."""
    return canonical_dict_bytes(config_to_dict(config))


def canonical_dict_bytes(data: dict[str, Any]) -> bytes:
    """`canonical_config_bytes` of a config already turned into its dict, which is left
    as it is (the writer goes on to dump the same dict as task.toml)."""
    metadata = data.get("metadata", {})
    block = metadata.get("repo2rlenv")
    if block is not None:
        stable = {k: v for k, v in block.items() if k not in VOLATILE_KEYS}
        data = {**data, "metadata": {**metadata, "repo2rlenv": stable}}
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
