"""The offline extractive answerer, from hand-made contexts."""

from __future__ import annotations

import pytest

from bench.answer.answer_prompt import load_answer_prompt
from bench.providers.answer_context import ABSTAIN
from bench.providers.offline_answer import OfflineAnswerer, answer

CONTEXT = """[Session 1 — 1:56 pm on 8 May, 2023]
Caroline: I went to a LGBTQ support group yesterday and it was so powerful.
Melanie: Wow, that's cool! I painted a sunrise last year.
[Session 2 — 1:14 pm on 25 May, 2023]
Caroline: I've been researching adoption agencies lately.
Melanie: I ran a charity race for mental health on 20 May 2023."""


def test_when_question_resolves_relative_date_against_its_session() -> None:
    assert answer("When did Caroline go to the LGBTQ support group?", CONTEXT) == "7 May 2023"
    assert answer("When did Melanie paint a sunrise?", CONTEXT) == "2022"


def test_explicit_date_in_the_line_wins_over_the_session_date() -> None:
    assert answer("When did Melanie run the charity race?", CONTEXT) == "20 May 2023"


def test_span_answer_drops_the_question_words() -> None:
    assert answer("What did Caroline research?", CONTEXT).startswith("adoption agencies")


def test_abstains_when_nothing_matches() -> None:
    assert answer("What is Caroline's favourite food?", CONTEXT) == ABSTAIN
    assert answer("Anything?", "") == ABSTAIN


def test_other_speakers_lines_are_down_weighted() -> None:
    # The race was Melanie's; asked about Caroline, the trap line must not be taken.
    assert answer("What did Caroline realize after her charity race?", CONTEXT) == ABSTAIN


def test_chat_interface_reads_the_context_block_of_the_messages() -> None:
    prompt = load_answer_prompt("conf/prompts/answer_v2.txt")
    result = OfflineAnswerer().complete(prompt.messages("What did Caroline research?", CONTEXT))
    assert result.text.startswith("adoption agencies")
    assert result.model == "offline-extractive"
    assert result.usage.prompt_tokens == 0  # offline: no model usage to report


FACTS = """<FACTS>
- Alice ran Alice's first 10k race in Lisbon. (valid 18 June 2023 – present)
  > (18 June 2023) Alice: I ran my first 10k race in Lisbon.
- Alice reads a novel by Ursula Le Guin on the train. (valid 9 July 2023 – present)
- Bob has 3 kids now, so Bob's evenings are busy. (valid 8 May 2023 – present)
</FACTS>"""


def test_fact_lines_are_dated_by_their_markup_and_answered_without_it() -> None:
    assert answer("When did Alice run a 10k race?", FACTS) == "18 June 2023"
    reply = answer("What did Alice read on the train?", FACTS)
    assert reply == "novel Ursula Le Guin" and "valid" not in reply


def test_how_many_takes_the_number_of_the_best_line() -> None:
    assert answer("How many kids does Bob have?", FACTS) == "3"


def test_exact_ties_go_to_the_first_line_whatever_the_hash_seed() -> None:
    # Both lines match the same question words; the sum must not depend on set order.
    context = (
        "[Session 1 — 1:00 pm on 8 May, 2023]\n"
        "Ann: violin garden lessons weekly first\n"
        "Bob: the weather was nice\n"
        "Ann: garden violin lessons second line here"
    )
    assert answer("What about Ann's garden violin lessons?", context) == "weekly first"


WEEK = """[Session 3 — 2:00 pm on 15 July, 2023]
Caroline: I went to an adoption meeting last Friday, it was so inspiring.
Melanie: Two weeks ago I adopted a puppy named Coco.
Melanie: I've been painting for 7 years now.
Caroline: My pets are a guinea pig and a cat."""


def test_last_weekday_is_written_in_the_gold_form() -> None:
    got = answer("When did Caroline go to the adoption meeting?", WEEK)
    assert got == "the Friday before 15 July 2023"
    assert answer("When did Melanie adopt Coco?", WEEK) == "two weeks before 15 July 2023"


def test_how_long_takes_the_duration() -> None:
    assert answer("How long has Melanie been painting?", WEEK) == "7 years"


def test_a_question_about_the_other_speakers_line_abstains() -> None:
    # The puppy is Melanie's: asked about Caroline, the reader declines (LoCoMo category 5).
    assert answer("When did Caroline adopt a puppy named Coco?", WEEK) == ABSTAIN


def test_question_kinds_come_from_the_wording() -> None:
    from bench.providers.offline_reader.question import Kind, kind_of

    assert kind_of("What books has Melanie read?") is Kind.LIST
    assert kind_of("What is Caroline's identity?") is Kind.SPAN
    assert kind_of("Which week did Tim visit the UK?") is Kind.WHEN
    assert kind_of("How long ago was Caroline's 18th birthday?") is Kind.DURATION


def test_an_answer_is_never_bare_punctuation() -> None:
    # The best line's only new tokens are punctuation: the reader abstains, never answers "".
    context = "[Session 1 — 1:00 pm on 8 May, 2023]\nAnn: Running shoes, running shoes!"
    assert answer("What are Ann's running shoes?", context) == ABSTAIN


def test_fact_lines_by_the_other_speaker_abstain_like_turns_do() -> None:
    # The same speaker-swap rule for a memory arm's facts, whose subject opens the line.
    facts = (
        "<FACTS>\n- Melanie ran a charity race for mental health. (valid 25 May 2023 – present)\n"
        "  > (25 May 2023) Melanie: I ran a charity race for mental health last Saturday.\n"
        "- Caroline went to a support group. (valid 8 May 2023 – present)\n"
        "  > (8 May 2023) Caroline: I went to a support group yesterday.\n</FACTS>"
    )
    assert answer("What did Caroline run a charity race for?", facts) == ABSTAIN
    assert answer("What did Melanie run a charity race for?", facts) != ABSTAIN


DATED = """[Session 1 — 1:00 pm on 3 July, 2023]
Maria: I started a new pottery class and I love it.
[Session 2 — 2:00 pm on 7 July, 2023]
John: Hey Maria! My old area was hit by a nasty flood last week.
Maria: Well, I'm off to have dinner with some friends from the gym. Talk later!"""


def test_a_date_in_the_question_picks_the_lines_said_that_day() -> None:
    # The date's words are in the session header, not in the lines; the anchor matches.
    assert "dinner" in answer("What did Maria plan to do later on 7 July, 2023?", DATED)


def test_a_name_used_as_address_does_not_make_the_line_about_that_person() -> None:
    # John's flood line greets Maria; asked about Maria's area, the reader abstains.
    assert answer("What natural disaster hit Maria's old area?", DATED) == ABSTAIN
    assert answer("What natural disaster hit John's old area?", DATED) != ABSTAIN


def test_typed_answers_feelings_titles_seasons_and_months() -> None:
    context = (
        "[Session 1 — 4:00 pm on 8 October, 2023]\n"
        'Joanna: I loved reading "Charlotte\'s Web" as a kid.\n'
        "Joanna: Someone wrote me a letter. Their words touched me and I felt grateful.\n"
        "Nate: We went camping at the lake last summer with the dogs.\n"
        "Nate: I adopted a turtle on 3 June 2023."
    )
    assert answer("What book did Joanna read as a kid?", context) == "Charlotte's Web"
    assert answer("How did Joanna feel about the letter?", context) == "touched, grateful"
    assert answer("When did Nate go camping?", context) == "summer 2023"
    assert answer("Which month did Nate adopt a turtle?", context) == "June 2023"
    assert answer("Where did Nate go camping?", context) == "lake"


def test_spans_leave_out_when_it_was_said_and_chatter() -> None:
    context = (
        "[Session 1 — 4:00 pm on 8 October, 2023]\n"
        "Gina: Wow, last week I actually launched a fashion internship program!"
    )
    assert answer("What did Gina launch?", context) == "fashion internship program"


def test_how_many_times_counts_the_sessions_that_tell_it() -> None:
    context = (
        "[Session 1 — 4:00 pm on 8 May, 2023]\n"
        "Nate: I walked my turtles in the park today.\n"
        "[Session 2 — 4:00 pm on 9 June, 2023]\n"
        "Nate: I walked my turtles along the beach."
    )
    assert answer("How many times has Nate walked his turtles?", context) == "2"


def test_a_sentence_that_enumerates_gives_comma_separated_items() -> None:
    context = "[Session 1 — 4:00 pm on 8 May, 2023]\nMelanie: I play the clarinet and the violin."
    assert answer("What instruments does Melanie play?", context) == "clarinet, violin"


# rag's context: windows in order of retrieval score, so their dates go back in time.
WINDOWS = (
    "[Session 3 — 4:00 pm on 9 June, 2023]\n"
    "Nate: I adopted a turtle this week.\n"
    "Joanna: So cute!\n"
    "\n"
    "[Session 1 — 4:00 pm on 8 May, 2023]\n"
    "Nate: I bought a turtle tank.\n"
    "Joanna: Nice!"
)


def test_passages_going_back_in_time_are_read_in_relevance_order() -> None:
    from bench.providers.offline_reader.index import PASSAGE_DECAY, PASSAGE_PRIOR, index, rank

    assert index(WINDOWS).by_relevance
    assert not index(CONTEXT).by_relevance  # a transcript runs forward in time
    ranked = rank(index(WINDOWS), "What did Nate do with a turtle?")
    first, second = (r for r in ranked if r.line.speaker == "Nate")
    # Same overlap ("turtle"); the first passage's line scores PASSAGE_PRIOR more.
    assert first.score == pytest.approx(
        second.score * (1 + PASSAGE_PRIOR) / (1 + PASSAGE_PRIOR * PASSAGE_DECAY)
    )
    assert first.line.passage == 0 and second.line.passage == 1


def test_a_when_question_sharing_no_word_is_dated_from_the_first_passage() -> None:
    assert answer("When did Nate get his new pet reptile?", WINDOWS) == "9 June 2023"
    # In a transcript (no relevance order) the same question abstains.
    assert answer("When did Nate get his new pet reptile?", CONTEXT) == ABSTAIN
