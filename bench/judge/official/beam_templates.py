"""BEAM's judge prompts read out of its upstream files' syntax trees, never by running them.

Two files of BEAM (`src/prompts.py`, `src/evaluation/compute_metrics.py`) define the judge:

- the rubric judge: the module-level string `unified_llm_judge_base_prompt` in
  `prompts.py`, filled in every `evaluate_<ability>` function of `compute_metrics.py` by
  two chained `str.replace` calls, first `<rubric_item>` with the rubric item, then
  `<llm_response>` with the reply. Nothing else is replaced: the template's other
  placeholders (its `<question>`) reach the model as written, as upstream sends them.
  The reply's `score` is cast with `int()` in nine abilities and `float()` in
  `event_ordering` (the arithmetic `bench.scoring.beam.rubric_scores` replicates);
- the event-equivalence question of `llm_equivalence`: a system message (a string
  constant) and a user message (an f-string over `first_paragraph`, the reference
  item, and `second_paragraph`, the reply line), correct iff `yes` is in the
  lower-cased reply.

Each shape is checked; a file that differs is a `TemplateShapeError` naming what
changed, so a new upstream revision is never filled the wrong way silently.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from bench.judge.official.templates import TemplateShapeError

RUBRIC_NAME = "unified_llm_judge_base_prompt"
RUBRIC_FILL = (
    f"{RUBRIC_NAME}.replace('<rubric_item>', item).replace('<llm_response>', llm_response)"
)
"""The exact expression (as `ast.unparse` writes it) upstream fills the template with."""
RUBRIC_INNER = RUBRIC_FILL.rsplit(".replace(", 1)[0]
EQUIVALENCE_FUNCTION = "llm_equivalence"
EQUIVALENCE_FIELDS = ("first_paragraph", "second_paragraph")
"""The f-string's fields, in the roles armbench fills: reference item, reply line."""
FLOAT_ABILITIES = frozenset({"event_ordering"})
"""The abilities whose item scores upstream keeps as floats (the rest: `int()`)."""
ABILITY_PREFIX = "evaluate_"

Piece = tuple[str, str | None]
"""One part of an f-string: (literal text, None) or ('', field name)."""


@dataclass(frozen=True)
class BeamTemplates:
    """What BEAM's judge sends, as read from the two upstream files."""

    rubric: str
    """The rubric-judge template (one user message)."""
    equivalence_system: str
    """The event-equivalence system message."""
    equivalence_user: tuple[Piece, ...]
    """The event-equivalence user message as f-string pieces."""

    def rubric_prompt(self, item: str, response: str) -> str:
        """The template with `<rubric_item>` then `<llm_response>` replaced, as upstream."""
        return self.rubric.replace("<rubric_item>", item).replace("<llm_response>", response)

    def equivalence_user_text(self, reference: str, system: str) -> str:
        """The user message with the reference item and the reply line, as the f-string does."""
        values = dict(zip(EQUIVALENCE_FIELDS, (reference, system), strict=True))
        return "".join(
            text if name is None else values[name] for text, name in self.equivalence_user
        )


def _string_constant(tree: ast.Module, name: str) -> str:
    for node in tree.body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == [name]:
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
    raise TemplateShapeError(f"no string constant {name}")


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _check_rubric_fill(funcs: dict[str, ast.FunctionDef]) -> None:
    """Check the template's fill and the score casts in `compute_metrics.py`.

    Every use of the template is the two chained replaces; every ability function using
    it casts the score with `float()` exactly in `FLOAT_ABILITIES`, else `int()`.
    """
    floats, abilities = set(), set()
    for name, func in funcs.items():
        uses = [
            ast.unparse(n)
            for n in ast.walk(func)
            if isinstance(n, ast.Call) and ast.unparse(n.func).startswith(f"{RUBRIC_NAME}.")
        ]
        if sorted(uses) != sorted([RUBRIC_FILL, RUBRIC_INNER] * (len(uses) // 2)):
            raise TemplateShapeError(f"{name}: expected {RUBRIC_FILL}")
        if not name.startswith(ABILITY_PREFIX) or not uses:
            continue
        ability = name.removeprefix(ABILITY_PREFIX)
        abilities.add(ability)
        casts = {
            ast.unparse(n.func)
            for n in ast.walk(func)
            if isinstance(n, ast.Call)
            and len(n.args) == 1
            and ast.unparse(n.args[0]) == "response['score']"
        }
        if casts == {"float"}:
            floats.add(ability)
        elif casts != {"int"}:
            raise TemplateShapeError(f"{name}: expected int(...) or float(response['score'])")
    if not abilities or floats != FLOAT_ABILITIES:
        raise TemplateShapeError(
            f"expected float scores in {sorted(FLOAT_ABILITIES)} only, got {sorted(floats)}"
        )


def _message_content(func: ast.FunctionDef, target: str, role: str) -> ast.expr:
    for node in func.body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == [target]:
            value = node.value
            if isinstance(value, ast.Dict):
                fields = {
                    ast.unparse(k): v for k, v in zip(value.keys, value.values, strict=True) if k
                }
                if ast.unparse(fields.get("'role'", value)) == repr(role) and "'content'" in fields:
                    return fields["'content'"]
    raise TemplateShapeError(f"{func.name}: expected {target} = {{'role': {role!r}, ...}}")


def _fstring_pieces(node: ast.expr, where: str) -> tuple[Piece, ...]:
    if not isinstance(node, ast.JoinedStr):
        raise TemplateShapeError(f"{where}: the user message is not an f-string")
    pieces: list[Piece] = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            pieces.append((part.value, None))
        elif (
            isinstance(part, ast.FormattedValue)
            and isinstance(part.value, ast.Name)
            and part.conversion == -1
            and part.format_spec is None
        ):
            pieces.append(("", part.value.id))
        else:
            raise TemplateShapeError(f"{where}: unexpected f-string field {ast.unparse(part)}")
    if tuple(n for _, n in pieces if n is not None) != EQUIVALENCE_FIELDS:
        raise TemplateShapeError(f"{where}: expected fields {EQUIVALENCE_FIELDS} in order")
    return tuple(pieces)


def _equivalence(func: ast.FunctionDef) -> tuple[str, tuple[Piece, ...]]:
    """The system text and the user f-string of `llm_equivalence`, its call and test checked."""
    system = _message_content(func, "system_msg", "system")
    if not (isinstance(system, ast.Constant) and isinstance(system.value, str)):
        raise TemplateShapeError(f"{func.name}: the system message is not a string constant")
    user = _fstring_pieces(_message_content(func, "user_msg", "user"), func.name)
    code = ast.unparse(func)
    for expected in (
        "messages = [system_msg, user_msg]",
        "response = llm.invoke(messages).content.lower()",
        "if 'yes' in response:",
    ):
        if expected not in code:
            raise TemplateShapeError(f"{func.name}: expected `{expected}`")
    return system.value, user


def beam_templates(prompts_source: str, metrics_source: str) -> BeamTemplates:
    """BEAM's judge templates from `prompts.py` and `compute_metrics.py` (shapes checked)."""
    rubric = _string_constant(ast.parse(prompts_source), RUBRIC_NAME)
    funcs = _functions(ast.parse(metrics_source))
    _check_rubric_fill(funcs)
    if EQUIVALENCE_FUNCTION not in funcs:
        raise TemplateShapeError(f"no function {EQUIVALENCE_FUNCTION}()")
    system, user = _equivalence(funcs[EQUIVALENCE_FUNCTION])
    return BeamTemplates(rubric, system, user)
