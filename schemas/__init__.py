"""Every model that crosses a package boundary: Harbor's task config, our provenance and
evaluation label, the in-memory task bundle and the manifest row.

repo2rlenv, smoldataenvs and train talk to each other only through task folders
described by these models. `python -m schemas` rewrites the JSON Schema files beside
this module; a test fails when they drift from the models.
"""

from schemas.bundle import BUNDLE_ROOTS, BundleFile, TaskBundle
from schemas.harbor import (
    HARBOR_SCHEMA_VERSION,
    AgentConfig,
    EnvironmentConfig,
    PackageInfo,
    SolutionConfig,
    TaskConfig,
    TaskMetadata,
    VerifierConfig,
)
from schemas.manifest import ManifestRow
from schemas.provenance import (
    VOLATILE_KEYS,
    CheckOutcome,
    DependencyDateUnmet,
    DifficultyBand,
    DifficultyLabel,
    EvaluationLabel,
    LabelStatus,
    Repo2RLEnvMetadata,
    SourceRef,
    TaskKind,
)

__all__ = [
    "BUNDLE_ROOTS",
    "HARBOR_SCHEMA_VERSION",
    "VOLATILE_KEYS",
    "AgentConfig",
    "BundleFile",
    "CheckOutcome",
    "DependencyDateUnmet",
    "DifficultyBand",
    "DifficultyLabel",
    "EnvironmentConfig",
    "EvaluationLabel",
    "LabelStatus",
    "ManifestRow",
    "PackageInfo",
    "Repo2RLEnvMetadata",
    "SolutionConfig",
    "SourceRef",
    "TaskBundle",
    "TaskConfig",
    "TaskKind",
    "TaskMetadata",
    "VerifierConfig",
]
