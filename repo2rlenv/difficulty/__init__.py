"""Task difficulty: by solve rate over k real attempts, or a marked heuristic guess.

Labels live in `[metadata.repo2rlenv.difficulty]` (schemas.DifficultyLabel), outside
the content hash. Bands and cut-offs: `bands`; heuristic signals: `heuristic`.
"""

from repo2rlenv.difficulty.bands import BANDS, ORDER, band
from repo2rlenv.difficulty.heuristic import heuristic_label, signals
from repo2rlenv.difficulty.labels import LabelError, read_difficulty, write_difficulty

__all__ = [
    "BANDS",
    "ORDER",
    "LabelError",
    "band",
    "heuristic_label",
    "read_difficulty",
    "signals",
    "write_difficulty",
]
