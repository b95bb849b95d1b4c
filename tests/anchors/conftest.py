"""The real git repository most anchor tests work in (defined with its helpers in
test_anchors), shared with the other modules of this folder."""

from tests.anchors.test_anchors import repo  # noqa: F401
