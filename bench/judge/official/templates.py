"""Prompt templates read out of an upstream Python file's syntax tree, never by running it.

The file is parsed with `ast`; only string constants are taken, and the code around
them is checked to still have the shape armbench replicates (which arguments fill the
template, in which order, by position or keyword). A file whose shape differs is a
`TemplateShapeError` naming what changed, so a new upstream revision can never be used
with the wrong formatting silently.

- LongMemEval (`get_anscheck_prompt(task, question, answer, response, abstention)`):
  one template per question type, chosen by `if task in [...]` / `elif task == ...`
  inside `if not abstention:`; the `else:` branch is the abstention template (key
  `ABSTENTION`). Each is filled with `template.format(question, answer, response)`.
- Mem0 (`ACCURACY_PROMPT`): a module-level string filled with
  `ACCURACY_PROMPT.format(question=..., gold_answer=..., generated_answer=...)` inside
  `evaluate_llm_judge`.
"""

from __future__ import annotations

import ast

ABSTENTION = "abstention"
"""Key of LongMemEval's abstention template (question ids containing `_abs`)."""
LME_FUNCTION = "get_anscheck_prompt"
LME_FORMAT_ARGS = ("question", "answer", "response")
"""The positional arguments LongMemEval's `template.format(...)` passes, in order."""
MEM0_NAME = "ACCURACY_PROMPT"
MEM0_FUNCTION = "evaluate_llm_judge"
MEM0_FORMAT_KEYWORDS = ("question", "gold_answer", "generated_answer")
"""The keyword arguments Mem0's `ACCURACY_PROMPT.format(...)` passes."""


class TemplateShapeError(ValueError):
    """The upstream file no longer has the shape armbench reads templates from."""


def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise TemplateShapeError(f"no function {name}()")


def _branch_template(body: list[ast.stmt], where: str) -> str:
    """The string assigned to `template` in one branch, checked to be formatted positionally."""
    text: str | None = None
    formatted = False
    for stmt in body:
        if isinstance(stmt, ast.Assign) and [ast.unparse(t) for t in stmt.targets] == ["template"]:
            if not (isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
                raise TemplateShapeError(f"{where}: template is not a string constant")
            text = stmt.value.value
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            args = tuple(ast.unparse(a) for a in call.args)
            is_format = ast.unparse(call.func) == "template.format"
            formatted = is_format and args == LME_FORMAT_ARGS and not call.keywords
    if text is None or not formatted:
        raise TemplateShapeError(f"{where}: expected template = '...' and template.format(...)")
    return text


def _tasks(test: ast.expr) -> list[str]:
    """The task names an `if task in [...]` or `if task == '...'` test selects."""
    if not (isinstance(test, ast.Compare) and ast.unparse(test.left) == "task"):
        raise TemplateShapeError(f"unexpected test {ast.unparse(test)!r}")
    (op,), (right,) = test.ops, test.comparators
    if isinstance(op, ast.Eq) and isinstance(right, ast.Constant):
        return [str(right.value)]
    if isinstance(op, ast.In) and isinstance(right, ast.List | ast.Tuple):
        return [str(e.value) for e in right.elts if isinstance(e, ast.Constant)]
    raise TemplateShapeError(f"unexpected test {ast.unparse(test)!r}")


def longmemeval_templates(source: str) -> dict[str, str]:
    """Question type -> template, plus `ABSTENTION`, from LongMemEval's `evaluate_qa.py`."""
    func = _function(ast.parse(source), LME_FUNCTION)
    outer = next((s for s in func.body if isinstance(s, ast.If)), None)
    if outer is None or ast.unparse(outer.test) != "not abstention":
        raise TemplateShapeError(f"{LME_FUNCTION}: expected `if not abstention:` first")
    templates = {ABSTENTION: _branch_template(outer.orelse, "abstention branch")}
    chain: list[ast.stmt] = outer.body
    while chain:
        node = chain[0]
        if not isinstance(node, ast.If):
            break  # the final `else: raise NotImplementedError`
        for task in _tasks(node.test):
            templates[task] = _branch_template(node.body, f"task {task}")
        chain = node.orelse
    if len(templates) < 2:
        raise TemplateShapeError(f"{LME_FUNCTION}: no per-type templates found")
    return templates


def mem0_prompt(source: str) -> str:
    """Mem0's `ACCURACY_PROMPT`, checked to be formatted by keyword in `evaluate_llm_judge`."""
    tree = ast.parse(source)
    text = None
    for node in tree.body:
        targets = [ast.unparse(t) for t in node.targets] if isinstance(node, ast.Assign) else []
        if targets == [MEM0_NAME] and isinstance(node, ast.Assign):
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                text = value.value
    if text is None:
        raise TemplateShapeError(f"no string constant {MEM0_NAME}")
    calls = [
        n
        for n in ast.walk(_function(tree, MEM0_FUNCTION))
        if isinstance(n, ast.Call) and ast.unparse(n.func) == f"{MEM0_NAME}.format"
    ]
    keywords = sorted(k.arg or "" for k in calls[0].keywords) if len(calls) == 1 else []
    if keywords != sorted(MEM0_FORMAT_KEYWORDS) or calls[0].args:
        raise TemplateShapeError(
            f"{MEM0_FUNCTION}: expected one {MEM0_NAME}.format("
            + ", ".join(f"{k}=..." for k in MEM0_FORMAT_KEYWORDS)
            + ")"
        )
    return text
