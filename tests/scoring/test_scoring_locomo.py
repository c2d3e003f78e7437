"""Official LoCoMo metrics, checked on examples worked by hand from the definitions."""

from __future__ import annotations

import pytest

from bench.scoring.locomo import (
    exact_match,
    f1_outcome_name,
    is_abstention,
    multi_answer_f1,
    normalize_answer,
    outcome_from_f1,
    score_answer,
    token_f1,
    trap_hit,
)
from bench.scoring.rules import f1_rule, threshold_from_outcome
from bench.types import Question


def q(category: int, gold: object, **kw: object) -> Question:
    """A LoCoMo question; gold may be an int as in the raw file."""
    return Question("conv-1:0", "conv-1", "?", category, gold, **kw)  # type: ignore[arg-type]


def test_normalisation_drops_commas_punctuation_and_articles() -> None:
    assert normalize_answer("The Beach, and the Mountains!") == "beach mountains"
    assert normalize_answer("An apple-a-day") == "appleaday"  # hyphens go before word removal
    assert normalize_answer("  Andrew  and Anna ") == "andrew anna"  # whole words only


def test_token_f1_uses_porter_stems() -> None:
    # pred stems: she, wa, paint, sunset; gold: paint, sunset -> P = 2/4, R = 2/2
    assert token_f1("She was painting sunsets", "painted sunset") == pytest.approx(2 / 3)
    assert token_f1("painting and running", "she paints") == pytest.approx(0.5)
    assert token_f1("Sweden", "Sweden") == 1.0
    assert token_f1("", "Sweden") == 0.0
    assert token_f1("Norway", "Sweden") == 0.0


def test_token_f1_counts_repeated_tokens_as_a_multiset() -> None:
    # pred: dog dog dog; gold: dog cat -> common 1 -> P = 1/3, R = 1/2, F1 = 0.4
    assert token_f1("dog dog dog", "dog cat") == pytest.approx(0.4)


def test_category_1_is_comma_split_multi_answer_f1() -> None:
    gold = "pottery, camping, painting, swimming"
    # parts: pottery 0, camping 1, painting 1, swimming 0 -> mean 0.5
    assert multi_answer_f1("painting, camping", gold) == pytest.approx(0.5)
    # one predicted part "camping and painting" = [camp, paint]: 2/3 against each of two parts
    assert multi_answer_f1("camping and painting", gold) == pytest.approx(1 / 3)
    assert score_answer("painting, camping", q(1, gold))["f1"] == pytest.approx(0.5)


def test_other_categories_do_not_split_on_commas() -> None:
    # category 4: gold tokens psycholog, counsel, certif; pred psycholog -> P 1, R 1/3 -> 0.5
    gold = "Psychology, counseling certification"
    assert score_answer("psychology", q(4, gold))["f1"] == pytest.approx(0.5)


def test_category_3_gold_is_cut_at_the_first_semicolon() -> None:
    gold = "Likely no; though she likes reading, she wants to be a counselor"
    scores = score_answer("likely no", q(3, gold))
    assert scores["f1"] == 1.0
    assert scores["em"] is True
    # the same gold in category 4 is not cut
    assert score_answer("likely no", q(4, gold))["f1"] < 0.5


def test_numeric_gold_given_as_int_or_text() -> None:
    assert score_answer("2022", q(2, 2022))["f1"] == 1.0
    assert score_answer("2022", q(2, "2022"))["em"] is True
    assert score_answer("In 2022", q(2, 2022))["f1"] == pytest.approx(2 / 3)


def test_exact_match_is_official_set_equality() -> None:
    assert exact_match("the beach and mountains", "Mountains, beach")
    assert not exact_match("beach", "beach mountains")


def test_abstention_phrases_case_insensitive() -> None:
    assert is_abstention("Not mentioned in the conversation.")
    assert is_abstention("NO INFORMATION AVAILABLE")
    assert not is_abstention("I don't know")  # the official rule is only these two phrases


def test_category_5_scores_abstention_never_the_trap() -> None:
    question = q(5, None, adversarial_answer="Yes")
    good = score_answer("not mentioned", question)
    assert good == {"f1": 1.0, "em": True, "abstained": True, "trap_hit": False}
    trapped = score_answer("Yes", question)
    assert trapped == {"f1": 0.0, "em": False, "abstained": False, "trap_hit": True}
    other = score_answer("No", question)
    assert other["trap_hit"] is False and other["f1"] == 0.0


def test_trap_hit_by_f1_or_contained_trap_tokens() -> None:
    # F1 against "Oscar" is 2·(1/5)·1/(6/5) = 1/3 < 0.5, but the trap is contained
    assert trap_hit("She has a dog named Oscar", "Oscar")
    assert trap_hit("painting classes", "painting class")  # F1 = 1.0 after stemming
    assert not trap_hit("not mentioned, but maybe Oscar", "Oscar")  # abstains first
    assert not trap_hit("Yesterday", "Yes")  # whole tokens only
    assert not trap_hit("anything", None)


def test_abstaining_on_answerable_question_is_recorded() -> None:
    scores = score_answer("not mentioned", q(4, "Sweden"))
    assert scores == {"f1": 0.0, "em": False, "abstained": True}


def test_outcome_rule() -> None:
    assert f1_outcome_name(0.5) == "f1>=0.5"
    assert threshold_from_outcome("f1>=0.25") == 0.25
    assert threshold_from_outcome("judge:llm") is None
    assert outcome_from_f1({"f1": 0.5, "abstained": False}, q(4, "x"), 0.5) is True
    assert outcome_from_f1({"f1": 0.49, "abstained": False}, q(4, "x"), 0.5) is False
    # category 5: the abstention decides, whatever the threshold
    assert outcome_from_f1({"f1": 1.0, "abstained": True}, q(5, None), 1.0) is True
    assert outcome_from_f1({"f1": 0.0, "abstained": False}, q(5, None), 0.0) is False
    assert f1_rule({}, abstention_item=False, threshold=0.5) is None


def test_longmemeval_questions_use_plain_f1_and_abs_suffix() -> None:
    typed = Question("q1", "q1", "?", 1, "red, blue", question_type="multi-session")
    # no comma split despite integer category 1: tokens red, blue vs red -> P 1, R 1/2
    assert score_answer("red", typed)["f1"] == pytest.approx(2 / 3)
    abstain = Question("q2_abs", "q2", "?", 5, "never said", question_type="temporal-reasoning")
    assert score_answer("not mentioned", abstain)["f1"] == 1.0
    assert "trap_hit" not in score_answer("not mentioned", abstain)
    cat5_typed = Question("q3", "q3", "?", 5, "blue", question_type="knowledge-update")
    assert score_answer("blue", cat5_typed)["f1"] == 1.0  # category 5 means nothing here
