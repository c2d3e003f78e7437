"""Entity-type matching by word lists: people, places and feelings named by common words.

Many people and places in a conversation are named by common nouns, not by capitalised
names: "my aunt", "her mother", "the teammates", "a gorgeous forest", "the beach". When
the chosen sentence has no capitalised name (`spans.name_span`, `spans.place_span`), the
answer is the first noun of the asked type that the question does not already contain,
with the word before it when that word is a modifier rather than a function word
("gorgeous forest", "local organization").

"How did Joanna feel …?" is answered the same way, by the feeling words of the sentence
("touched", "grateful, thankful"; `feelings`).
"""

from __future__ import annotations

import re

from bench.text import STOPWORDS, stem

_PERSON_TEXT = """mother mom mum father dad dads parents parent aunt uncle sister brother
    sisters brothers sibling siblings cousin cousins grandma grandmother grandpa grandfather
    grandparents daughter son daughters sons kids kid children child baby wife husband
    partner boyfriend girlfriend fiance fiancee family friend friends buddy buddies bestie
    teammate teammates colleague colleagues coworker coworkers workmates mentor mentors
    coach boss neighbor neighbors neighbour neighbours teacher teachers students classmates
    roommate group organization organisation team therapist counselor doctor community
    veterans volunteers artist artists band musician singer author"""
PERSON_NOUNS = frozenset(_PERSON_TEXT.split())
_PLACE_TEXT = """beach beaches park parks mountain mountains forest forests lake lakes river
    city cities town village country countryside island islands museum museums library
    cafe café restaurant studio gym school college university church shelter home house
    garden farm camp campsite trail trails festival conference zoo aquarium theater theatre
    store shop mall market office hospital clinic street neighborhood neighbourhood coast
    desert canyon valley field fields meadow cabin hotel resort venue stadium arena center
    centre club bar pool backyard"""
PLACE_NOUNS = frozenset(_PLACE_TEXT.split())
_FEELING_TEXT = """happy happier glad joyful thrilled excited exciting stoked pumped eager proud
    grateful thankful blessed relieved relief calm peaceful serene content satisfied
    fulfilled fulfilling rewarding inspired inspiring motivated hopeful hope optimistic
    confident empowered free light loved cozy comfortable safe touched moved humbled
    awestruck awe amazed amazing surprised surreal magical heartwarming heartwarmed
    overwhelmed nervous anxious anxiety worried worry scared afraid frightened stressed
    sad upset heartbroken devastated lonely frustrated disappointed angry tired exhausted
    bittersweet nostalgic curious determined appreciative appreciated supported accepted
    connected alive energized refreshed accomplished"""
FEELING_WORDS = frozenset(_FEELING_TEXT.split())
FEELING_MAX = 4
_WORD = re.compile(r"[A-Za-z][\w'’-]*")


def person_noun(sentence: str, q_terms: frozenset[str]) -> str | None:
    """The first person noun of the sentence not in the question ("aunt", "teammates")."""
    return _typed_noun(sentence, q_terms, PERSON_NOUNS)


def place_noun(sentence: str, q_terms: frozenset[str]) -> str | None:
    """The first place noun of the sentence not in the question ("beach", "gorgeous forest")."""
    return _typed_noun(sentence, q_terms, PLACE_NOUNS)


def _typed_noun(sentence: str, q_terms: frozenset[str], lexicon: frozenset[str]) -> str | None:
    words = _WORD.findall(sentence)
    for i, word in enumerate(words):
        low = word.lower()
        if low not in lexicon or stem(low) in q_terms:
            continue
        before = words[i - 1] if i else ""
        low_before = before.lower()
        modifier = (
            before
            and before.islower()
            and low_before not in STOPWORDS
            and stem(low_before) not in q_terms
        )
        return f"{before} {word}" if modifier else word
    return None


def feelings(sentence: str, q_terms: frozenset[str]) -> str | None:
    """The feeling words of the sentence not in the question, comma-joined (at most FEELING_MAX)."""
    found: list[str] = []
    for word in _WORD.findall(sentence):
        low = word.lower()
        if low in FEELING_WORDS and stem(low) not in q_terms and low not in found:
            found.append(low)
    return ", ".join(found[:FEELING_MAX]) or None
