"""The self-generated condition: a creator session writes the skill packs the solver then uses."""

from skillworks.provision.selfgen.packs import GeneratedPack, review_packs
from skillworks.provision.selfgen.source import (
    CONDITION,
    CREATOR_CONDITION,
    CreatorSession,
    SelfGeneratedSource,
    SelfGenOptions,
    creator_instruction,
)

__all__ = [
    "CONDITION",
    "CREATOR_CONDITION",
    "CreatorSession",
    "GeneratedPack",
    "SelfGenOptions",
    "SelfGeneratedSource",
    "creator_instruction",
    "review_packs",
]
