"""The deterministic offline extractor: one fact per informative sentence.

For each turn: sentences are split; questions and sentences with fewer than three
content words are skipped (unless they state an attribute); relative dates are
resolved against the session date and written into the fact; first-person words are
replaced by the speaker's name. Attribute statements ("I live in …", "I work as …",
"my favorite X is …", "my X is …") get a canonical entity name (`Alice residence`),
so a later statement of the same attribute overrides the earlier one; other facts get
a person-prefixed keyword entity (`Alice: lgbtq support group yesterday powerful`),
so only a near-duplicate sentence replaces it. An image caption
becomes a fact of its own. Facts of one exchange are linked to each other.

Example: Caroline on 8 May 2023, "I went to a LGBTQ support group yesterday." →
FactDraft(entity_name="Caroline: lgbtq support group yesterday",
          fact_content="Caroline went to a LGBTQ support group yesterday (7 May 2023).",
          memory_type=ActiveContext, valid_date="7 May 2023", source_ids=("D1:3",))
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from arms.neuromorphic.exchange import Exchange
from arms.neuromorphic.extraction import Extraction
from arms.neuromorphic.records import Fact, FactDraft, Tier
from bench.dates import resolve_dates
from bench.text import STOPWORDS, session_date, words
from bench.types import Turn

VERSION = "rules-v1"
MAX_LINKS = 6
ENTITY_WORDS = 6
"""Content words in a generic entity name: same six words → same entity (near-duplicates)."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_ATTRIBUTES: tuple[tuple[re.Pattern[str], str, Tier], ...] = tuple(
    (re.compile(p), name, tier)
    for p, name, tier in (
        (r"\b(?:I|[Ww]e)(?:'ve| have)?\s+(?:now |currently |still |just |recently |finally )?"
         r"(?:live|am living|'m living|moved|relocated|am moving|'m moving)\s+"
         r"(?:back )?(?:to|in)\b",
         "residence", Tier.CORE),
        (r"\bI(?:'ve| have)?\s+(?:now |just |recently |finally )?(?:work|am working|'m working|"
         r"started working|been working|got a (?:new )?job|started a (?:new )?job|"
         r"took a (?:new )?job)\s+(?:as|at|for)\b", "job", Tier.CORE),
        (r"\b[Mm]y (?:new )?job is\b", "job", Tier.CORE),
        (r"\b[Mm]y (?:new )?fav(?:ou?rite)? ((?:\w+ )?\w+) (?:is|are)\b", "favorite {0}",
         Tier.CORE),
        (r"\b[Mm]y (dog|cat|pet|puppy|kitten|horse|bird)(?:'s name)? is (?:called |named )?[A-Z]",
         "{0} name", Tier.CORE),
        (r"\bI(?:'m| am) (?:now |currently )?(single|married|engaged|divorced|widowed)\b",
         "relationship status", Tier.CORE),
        (r"\bI(?:'m| am) \d{1,3} years old\b|\bI (?:just )?turned \d{1,3}\b", "age", Tier.CORE),
        (r"\b[Mm]y ((?:\w+ ){0,2}\w+) (?:is|are) (?!\w+ing\b)", "{0}", Tier.ACTIVE),
    )
)  # fmt: skip
_CORE = re.compile(
    r"\bI(?:'m| am) (?:a|an) \w+|\bI(?:'m| am) from\b|\bI (?:was born|grew up)\b|"
    r"\b[Mm]y (?:husband|wife|partner|boyfriend|girlfriend|son|daughter|kids|children|mom|"
    r"mother|dad|father|brother|sister)\b"
)
_EPHEMERAL = re.compile(
    r"\b(?:right now|at the moment)\b|\b(?:I(?:'m| am)|I feel|feeling) (?:so |really |very |"
    r"a bit |pretty )?(?:tired|exhausted|hungry|bored|sleepy|sick|busy|stressed|nervous|"
    r"excited|happy|glad|sad|good|great|fine|okay|ok)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"\bI(?:'m| am)\b", "{s} is"), (r"\bI(?:'ve| have)\b", "{s} has"),
        (r"\bI'd\b", "{s} would"), (r"\bI'll\b", "{s} will"), (r"\bI\b", "{s}"),
        (r"\b[Mm]y\b", "{s}'s"), (r"\bmine\b", "{s}'s"), (r"\bme\b", "{s}"),
        (r"\bmyself\b", "{s}"),
    )
)  # fmt: skip
_VERB_LIST = """live work love like think want need feel hope enjoy play make know try miss plan
paint read cook run take get see believe remember agree wish spend keep volunteer teach study
write own use prefer guess mean understand find visit drive walk bake sing dance draw collect
adore hate admire appreciate struggle worry care train practice"""
_VERBS = frozenset(_VERB_LIST.split())
_IRREGULAR = {"have": "has", "do": "does", "go": "goes"}
_I_VERB = re.compile(
    r"\bI((?: (?:really|also|just|still|always|usually|often|never|mostly|sometimes|"
    r"totally|definitely|actually|now))?) (\w+)\b"
)
_anchor = lru_cache(maxsize=4096)(session_date)
RULE_MEMO = 1024
"""Exchanges whose extraction `rule_facts` keeps. One unit fits, so the next arm of the
unit (tuned after neuromorphic) finds them all: LoCoMo's longest conversation is 360
exchanges, a LongMemEval-S haystack 42-306 (the 16-question subset), 1M tokens of the
synthetic BEAM tier ~870. Not more: a longer conversation evicts each entry before the
next arm asks for it (least recently used, over a scan longer than the memo), and at
~17 KB an exchange the 8,192 kept before held 137 MB at 10M tokens for no hit (issue 39)."""
_CAPTION = re.compile(r"^(?:a )?(?:photo|picture|image) of ", re.IGNORECASE)


class RuleExtractor:
    """Offline, deterministic fact extraction from sentences (no model)."""

    model = "offline-rules"
    version = VERSION

    def extract(self, exchange: Exchange, known: Sequence[Fact]) -> Extraction:
        """Facts of every turn of the exchange, linked to each other (`known` is unused).

        A function of the date and turns alone, so it is memoised (`rule_facts`):
        neuromorphic and tuned, and LongMemEval questions sharing a session, extract
        each exchange once per process.
        """
        return rule_facts(exchange.date_time, exchange.turns)


@lru_cache(maxsize=RULE_MEMO)
def rule_facts(date_time: str, turns: tuple[Turn, ...]) -> Extraction:
    """The extraction of the turns of one exchange dated `date_time` (immutable, shared)."""
    anchor = _anchor(date_time)
    drafts: list[FactDraft] = []
    for turn in turns:
        drafts.extend(_turn_facts(turn, anchor))
    return Extraction(facts=tuple(_linked(drafts)))


def _turn_facts(turn: Turn, anchor: object) -> list[FactDraft]:
    out = []
    for sentence in _SENTENCE.split(turn.text.strip()):
        draft = sentence_fact(turn.speaker, sentence.strip(), anchor, turn.dia_id)
        if draft is not None:
            out.append(draft)
    if turn.image_caption:
        caption = _CAPTION.sub("", turn.image_caption.strip())
        out.append(
            FactDraft(
                entity_name=_keyword_entity(turn.speaker, f"photo {caption}"),
                fact_content=f"{turn.speaker} shared a photo of {caption}.",
                memory_type=Tier.ACTIVE,
                source_ids=(turn.dia_id,),
            )
        )
    return out


def sentence_fact(speaker: str, sentence: str, anchor: object, dia_id: str) -> FactDraft | None:
    """The fact one sentence states, or None for questions and small talk."""
    if not sentence or sentence.endswith("?"):
        return None
    attribute = _attribute(sentence)
    if attribute is None and len(_content_words(sentence)) < 3:
        return None
    dated, resolved = resolve_dates(sentence, anchor)  # type: ignore[arg-type]
    content = _third_person(dated, speaker)
    if speaker.lower() not in content.lower():
        content = f"{speaker}: {content}"
    past = [r.text for r in resolved if r.past and r.exact]
    if attribute is not None:
        entity, tier = f"{speaker} {attribute[0]}", attribute[1]
    else:
        entity, tier = _keyword_entity(speaker, sentence), _tier(sentence)
    return FactDraft(
        entity_name=entity,
        fact_content=content,
        memory_type=tier,
        valid_date=past[0] if past else None,
        source_ids=(dia_id,),
    )


def _attribute(sentence: str) -> tuple[str, Tier] | None:
    for pattern, name, tier in _ATTRIBUTES:
        match = pattern.search(sentence)
        if match:
            groups = [g.lower() for g in match.groups() if g]
            if "{0}" in name and (not groups or all(w in STOPWORDS for w in groups[0].split())):
                continue
            return name.format(*groups), tier
    return None


def _tier(sentence: str) -> Tier:
    if _EPHEMERAL.search(sentence):
        return Tier.EPHEMERAL
    if _CORE.search(sentence):
        return Tier.CORE
    return Tier.ACTIVE


def _content_words(text: str) -> list[str]:
    out: list[str] = []
    for word in words(text):
        low = word.lower().split("'")[0]
        keep = len(low) > 2 or low.isdigit()
        if keep and low not in STOPWORDS and low not in out:
            out.append(low)
    return out


def _keyword_entity(speaker: str, text: str) -> str:
    keywords = [w for w in _content_words(text) if w != speaker.lower()][:ENTITY_WORDS]
    return f"{speaker}: {' '.join(keywords)}"


def _conjugate(verb: str) -> str | None:
    """Third-person singular of a common present-tense verb, or None when not one."""
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb not in _VERBS:
        return None
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _third_person(sentence: str, speaker: str) -> str:
    def agree(match: re.Match[str]) -> str:
        verb = _conjugate(match.group(2))
        return match.group(0) if verb is None else f"{speaker}{match.group(1)} {verb}"

    sentence = _I_VERB.sub(agree, sentence)
    for pattern, replacement in _FIRST_PERSON:
        sentence = pattern.sub(replacement.format(s=speaker), sentence)
    return sentence


def _linked(drafts: list[FactDraft]) -> list[FactDraft]:
    """Link each fact to the nearest other facts of the exchange (entity names)."""
    out = []
    for i, draft in enumerate(drafts):
        others = sorted(
            (
                j
                for j in range(len(drafts))
                if j != i and drafts[j].entity_name != draft.entity_name
            ),
            key=lambda j: (abs(j - i), j),
        )
        names = tuple(dict.fromkeys(drafts[j].entity_name for j in others))[:MAX_LINKS]
        out.append(
            FactDraft(
                draft.entity_name,
                draft.fact_content,
                draft.memory_type,
                draft.overrides_entity,
                names,
                draft.valid_date,
                draft.source_ids,
            )
        )
    return out
