"""Plug-in arms run guarded (issue 40, defect 10; bench/arm/guard.py).

Before, an exception at a plug-in's import or construction was a traceback, a plug-in
that hung in import, ingest or retrieve hung the run with no limit, and `os._exit(7)`
in a plug-in ended the run with exit status 7 and no message. The echo plug-in of
tests/arm/test_arm_plugins.py is installed with a fault chosen by `$ECHO_FAULT`, and
`python -m bench.run` is run on it as a user would.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.arm.test_arm_plugins import ARM, write_plugin
from tests.support.e2e_support import ROOT, last_line, load_records, run_cli

FAULTY = (
    'import os as _os\nimport time as _time\nFAULT = _os.environ.get("ECHO_FAULT", "")\n'
    'if FAULT == "import":\n    raise RuntimeError("boom at import")\n'
    'if FAULT == "hang_import":\n    _time.sleep(600)\n'
    + ARM.replace(
        "        self.name, self.config, self.turns = name, config, []\n",
        '        if FAULT == "init":\n            raise ValueError("bad options")\n'
        "        self.name, self.config, self.turns = name, config, []\n",
    ).replace(
        "    def retrieve(self, question: Question) -> Context:\n",
        "    def retrieve(self, question: Question) -> Context:\n"
        '        if FAULT == "exit":\n            _os._exit(7)\n'
        '        if FAULT == "hang":\n            _time.sleep(600)\n',
    )
)
QUICK = (
    "dataset=smoke",
    "arms=[echo]",
    "progress=false",
    "limit.conversations=1",
    "limit.questions=2",
    "plugins.import_timeout_s=2",
    "plugins.retrieve_timeout_s=2",
    "plugins.breaker_timeouts=1",
)


def _run(tmp_path: Path, fault: str) -> tuple[int, str, Path]:
    site = write_plugin(tmp_path, source=FAULTY)
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(site)]), "ECHO_FAULT": fault}
    out = tmp_path / "run"
    done = run_cli(*QUICK, f"out={out}", env=env, timeout=120)
    return done.returncode, done.stderr, out


@pytest.mark.parametrize(("fault", "expected"), [
    ("import", "error: plug-in arm echo (armbench-echo): importing armbench_echo:EchoArm.config_"
               "class failed: RuntimeError: boom at import; fix or reinstall the plug-in"),
    ("hang_import", "error: plug-in arm echo (armbench-echo): importing armbench_echo:EchoArm."
                    "config_class did not return within 2s; fix or reinstall the plug-in"),
    ("init", "error: plug-in arm echo (armbench-echo): construction failed: ValueError: bad "
             "options; fix the plug-in or its options"),
])  # fmt: skip
def test_a_broken_plugin_is_one_error_line_naming_it(
    tmp_path: Path, fault: str, expected: str
) -> None:
    rc, stderr, _ = _run(tmp_path, fault)
    assert (rc, last_line(stderr)) == (2, expected)
    assert "Traceback" not in stderr


@pytest.mark.slow
@pytest.mark.parametrize(("fault", "why"), [
    ("exit", "plug-in arm echo (armbench-echo) called os._exit(7) in retrieve"),
    ("hang", "plug-in arm echo (armbench-echo): retrieve did not return within 2s"),
])  # fmt: skip
def test_a_plugin_that_exits_or_hangs_in_retrieve_is_reported(
    tmp_path: Path, fault: str, why: str
) -> None:
    rc, stderr, out = _run(tmp_path, fault)
    assert rc == 1, stderr[-2000:]  # finished, with results in error: not 7, not a hang
    assert why in last_line(stderr)  # the run's closing line says what the plug-in did
    log = (out / "run.log").read_text(encoding="utf-8")
    assert "arm echo: circuit breaker open (" in log  # later calls fail at once
    results = [r["arms"]["echo"] for r in load_records(out).values()]
    assert len(results) == 2 and all(r["status"] == "error" for r in results)
    assert why in results[0]["error"]
