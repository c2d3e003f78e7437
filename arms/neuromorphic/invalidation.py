"""Override and temporal invalidation (methodology §4 step 4).

A new fact supersedes every live archived fact of the same entity and of the entity it
names in `overrides_entity`; hot records among them get invalid_at = t (history kept,
weight frozen, excluded from hot and cold search).
"""

from __future__ import annotations

from arms.neuromorphic.archive_index import ArchiveIndex
from arms.neuromorphic.records import FactDraft, entity_key


def supersede_targets(index: ArchiveIndex, draft: FactDraft) -> list[int]:
    """Ids of the live facts that `draft` replaces, in id order."""
    keys = {entity_key(draft.entity_name)}
    if draft.overrides_entity:
        keys.add(entity_key(draft.overrides_entity))
    return sorted({fid for key in keys for fid in index.live_ids_of(key)})
