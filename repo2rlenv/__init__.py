"""repo2rlenv: mine published coding-agent sessions into verified Harbor tasks."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rlenv-harvest")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
