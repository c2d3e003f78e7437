"""Every `python -m bench.run` command in docs/providers.md works as typed.

Each command's overrides are composed with Hydra exactly as the CLI does (no `+`
added) and typed with `load_run_config`, so a documented override that names a key the
YAML lacks, or a value of the wrong type, fails here. The refusal line the doc quotes is
the one the code prints.
"""

from __future__ import annotations

import re
import shlex

import pytest
from hydra import compose, initialize_config_dir

from bench.answer.answer_prompt import load_answer_prompt
from bench.answer.context_fit import fit_context
from bench.errors import ConfigError
from bench.paths import CONF_DIR, PROJECT_ROOT
from bench.run.settings import check_group_overrides, load_run_config
from bench.tokens import TokenCounter

DOC = PROJECT_ROOT / "docs" / "providers.md"


def documented_commands() -> list[list[str]]:
    """The override lists of every `python -m bench.run` command in a code block."""
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL)
    commands = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" # ")[0].strip()
            if line.startswith("python -m bench.run"):
                commands.append(shlex.split(line)[3:])
    return commands


COMMANDS = documented_commands()


def test_the_doc_has_the_new_overrides() -> None:
    flat = " ".join(" ".join(c) for c in COMMANDS)
    for key in (
        "answer.max_context_tokens=",
        "answer.truncate_to_fit=true",
        "provider.context_tokens=",
        "provider.context_shared=true",
        "provider.extractor.extract_mode=json_schema",
        "provider.answerer.json_schema=true",
        "scoring.judge_attempts=",
        "provider.embedder.base_url=",
        "answer.stop=",
    ):
        assert key in flat, key
    assert len(COMMANDS) >= 12


@pytest.mark.parametrize("overrides", COMMANDS, ids=[" ".join(c)[:60] for c in COMMANDS])
def test_documented_override_composes_as_typed(overrides: list[str]) -> None:
    check_group_overrides(overrides)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    run = load_run_config(cfg)
    for override in overrides:
        key, _, value = override.partition("=")
        if key.startswith(("provider.", "answer.", "scoring.")) and "[" not in value:
            node = run
            for part in key.split("."):
                node = getattr(node, part)
            assert str(node).lower() == value.lower(), override


def test_llamacpp_recipe_fits_and_the_default_budget_is_refused_as_documented() -> None:
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        recipe = compose(
            config_name="config",
            overrides=[
                "provider=llamacpp",
                "answer.max_context_tokens=29000",
                "provider.context_tokens=32768",
            ],
        )
        default = compose(
            config_name="config", overrides=["provider=llamacpp", "provider.context_tokens=32768"]
        )
    prompt, tokens = load_answer_prompt("conf/prompts/answer_v2.txt"), TokenCounter()
    fitted = fit_context(load_run_config(recipe), prompt, tokens)
    assert fitted.answer.max_context_tokens == 29000  # fits: unchanged
    with pytest.raises(ConfigError) as refused:
        fit_context(load_run_config(default), prompt, tokens)
    quoted = " ".join(DOC.read_text(encoding="utf-8").split())
    numbers = str(refused.value).split(" tokens, over")[0]
    assert numbers in quoted  # the doc quotes the real figures


def _recipe(lines: list[str]) -> list[str]:
    """The `llama-server ...` and `python -m bench.run ...` commands, continuations joined."""
    joined = " ".join(ln.strip() for ln in lines).replace("\\ ", "")
    return re.findall(
        r"(llama-server .*?--no-repack|python -m bench\.run provider=llamacpp \S+)", joined
    )


def test_llamacpp_yaml_comment_gives_the_documented_recipe() -> None:
    """The provider file's recipe is the doc's: `--no-repack`, 2 slots of 32k, budget 29000."""
    doc = DOC.read_text(encoding="utf-8")
    block = doc.split("## llama.cpp server with a local GGUF file", 1)[1].split("```bash", 1)[1]
    documented = _recipe(block.split("```", 1)[0].splitlines())
    yaml = (CONF_DIR / "provider" / "llamacpp.yaml").read_text(encoding="utf-8")
    comment = [ln.lstrip("#") for ln in yaml.splitlines() if ln.startswith("#")]
    assert len(documented) == 2 and _recipe(comment) == documented
    assert "--no-repack" in documented[0] and "answer.max_context_tokens=29000" in documented[1]
