"""LoCoMo-Plus's judge read out of its upstream files' syntax trees, never by running them.

Two files of LoCoMo-Plus (`evaluation_framework/task_eval/`) define the judge:

- `prompt.py`: the dict `PROMPT_TEMPLATES` (one template per category; LoCoMo-Plus
  items use `Cognitive`) and `CONV_START_PROMPT`, the preamble upstream's `call_llm`
  puts before every input that has no category (the judge's case), filled with the
  default speaker names `A` and `B`. `call_llm` reads it from `utils.py`, whose copy is
  identical at the pinned commit; armbench reads the one in `prompt.py`;
- `llm_as_judge.py`: `get_judge_prompt` fills the template with
  `template.format(gold=..., pred=..., evidence=...)` (each value `or ""`), falling back
  to the `default` template for an unknown category; `LABEL_TO_SCORE` maps the parsed
  label to a score; the argument parser's defaults are the model, temperature and
  completion cap `judge.sh` runs with (it passes none of them).

Every shape is checked; a file that differs is a `TemplateShapeError`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from bench.judge.official.templates import TemplateShapeError

COGNITIVE = "Cognitive"
"""The category of every LoCoMo-Plus item (upstream's sixth category)."""
FILL = (
    "template.format(gold=gold or '', pred=pred or '', evidence=evidence or '')",
    "PROMPT_TEMPLATES.get(category) or PROMPT_TEMPLATES['default']",
)
"""The expressions (as `ast.unparse` writes them) `get_judge_prompt` must hold."""
DEFAULT_SPEAKERS = ("A", "B")
"""The names `call_llm`'s preamble is filled with (its defaults)."""


@dataclass(frozen=True)
class PlusTemplates:
    """What LoCoMo-Plus's judge sends and how its label scores, as read upstream."""

    templates: dict[str, str]
    """Category -> template (`{gold}`, `{pred}`, `{evidence}` fields)."""
    preamble: str
    """`CONV_START_PROMPT` (two positional `{}` fields: the speaker names)."""
    label_scores: dict[str, float]
    """Lower-case label -> score (`LABEL_TO_SCORE`)."""
    defaults: dict[str, object]
    """The judge script's argument defaults: `model`, `temperature`, `max_tokens`."""

    def prompt(self, category: str, evidence: str, pred: str, gold: str = "") -> str:
        """The one user message: preamble + the filled template, stripped, as upstream."""
        template = self.templates.get(category) or self.templates["default"]
        body = template.format(gold=gold or "", pred=pred or "", evidence=evidence or "")
        head = self.preamble.format(*DEFAULT_SPEAKERS)
        return head + body.strip() if body.strip() else head.strip()


def _literal(tree: ast.Module, name: str) -> object:
    for node in tree.body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == [name]:
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                break
    raise TemplateShapeError(f"no literal {name}")


def _defaults(tree: ast.Module) -> dict[str, object]:
    """`dest` (or the option name) -> default of every `parser.add_argument(...)`."""
    found: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "parser.add_argument":
            keywords = {k.arg: k.value for k in node.keywords if k.arg}
            first = node.args[0] if node.args else None
            name = ast.literal_eval(first) if isinstance(first, ast.Constant) else ""
            dest = keywords.get("dest")
            key = ast.literal_eval(dest) if dest else str(name).lstrip("-").replace("-", "_")
            if "default" in keywords:
                found[key] = ast.literal_eval(keywords["default"])
    return found


def plus_templates(prompt_source: str, judge_source: str) -> PlusTemplates:
    """LoCoMo-Plus's judge from `prompt.py` and `llm_as_judge.py` (shapes checked)."""
    prompt_tree, judge_tree = ast.parse(prompt_source), ast.parse(judge_source)
    templates = _literal(prompt_tree, "PROMPT_TEMPLATES")
    preamble = _literal(prompt_tree, "CONV_START_PROMPT")
    if not (isinstance(templates, dict) and {COGNITIVE, "default"} <= set(templates)):
        raise TemplateShapeError(f"PROMPT_TEMPLATES lacks {COGNITIVE!r} or 'default'")
    if not isinstance(preamble, str) or preamble.count("{}") != len(DEFAULT_SPEAKERS):
        raise TemplateShapeError("CONV_START_PROMPT is not a string with two {} fields")
    func = next(
        (
            n
            for n in judge_tree.body
            if isinstance(n, ast.FunctionDef) and n.name == "get_judge_prompt"
        ),
        None,
    )
    code = ast.unparse(func) if func else ""
    if not all(expected in code for expected in FILL):
        raise TemplateShapeError("get_judge_prompt: expected " + " and ".join(FILL))
    scores = _literal(judge_tree, "LABEL_TO_SCORE")
    if not isinstance(scores, dict):
        raise TemplateShapeError("LABEL_TO_SCORE: expected a dict literal")
    defaults = _defaults(judge_tree)
    if not {"model", "temperature", "max_tokens"} <= set(defaults):
        raise TemplateShapeError("the judge script's model/temperature/max_tokens defaults")
    return PlusTemplates(
        {str(k): str(v) for k, v in templates.items()},
        preamble,
        {str(k): float(v) for k, v in scores.items()},
        defaults,
    )
