"""What the LLM extractor takes as its reply in a dry run: the rule extractor's facts.

`dry_run=true` (`bench.run.dry_run`) counts every request and sends none, so an LLM
extractor gets no facts back, and the embeddings of those facts (and the answers over
them) would go uncounted. A recorder marks itself with `dry_run = True`; the LLM
extractor then reads the offline rule extractor's facts for the same exchange, written
as `update_memory` arguments, through its usual parsing: the facts a model that agrees
with the rules would return. Requests that depend on replies are counted for these.
"""

from __future__ import annotations

from typing import Any

from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.extract_rules import RuleExtractor


def rule_arguments(exchange: Exchange) -> dict[str, Any]:
    """`update_memory` arguments holding the rule extractor's facts for `exchange`."""
    facts = RuleExtractor().extract(exchange, []).facts
    items = [
        {
            "entity_name": f.entity_name,
            "fact_content": f.fact_content,
            "memory_type": f.memory_type.label,
            "overrides_entity": f.overrides_entity,
            "related_entities": list(f.related_entities),
            "valid_at": f.valid_date,
        }
        for f in facts
    ]
    return {"items": items}


def is_dry_run(provider: object) -> bool:
    """True for a dry run's recorder (`bench.run.dry_run`): it never sends a request."""
    return getattr(provider, "dry_run", False) is True
