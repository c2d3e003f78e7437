"""The board as Markdown and as one self-contained HTML page (rows sortable, no server).

Every group (one scale, one question set) is its own table, ranked within itself; a
header click sorts that table by the column (numbers by value, text alphabetically;
again to reverse) with the inline script below, so the page needs no server and no
network. Standard library only.
"""

from __future__ import annotations

import html

from bench.board.entries import PAIRED_TESTS, Entry

COLUMNS = [
    "rank",
    "run",
    "arm",
    "accuracy",
    "95% CI",
    "n",
    "scale (rule, judge)",
    "calibration",
    "cost / correct",
    "ctx tokens",
    "publishable",
    "reasons",
    "vs top: n",
    "top only",
    "this only",
    *PAIRED_TESTS,
]
_DASH = "—"

_SCRIPT = """
document.querySelectorAll('table.board').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var up = th.getAttribute('data-dir') !== 'up';
      table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-dir'); });
      th.setAttribute('data-dir', up ? 'up' : 'down');
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute('data-v'), y = b.cells[col].getAttribute('data-v');
        var nx = parseFloat(x), ny = parseFloat(y), c;
        if (!isNaN(nx) && !isNaN(ny)) { c = nx - ny; } else { c = x < y ? -1 : x > y ? 1 : 0; }
        return up ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""
_CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1400px;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}
td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}
th{background:#f4f4f4;cursor:pointer;user-select:none}th[data-dir=up]::after{content:" ▲"}
th[data-dir=down]::after{content:" ▼"}td:nth-child(2),td:nth-child(3),td:nth-child(7),
td:nth-child(8),td:nth-child(12){text-align:left}.no{color:#b00020;font-weight:700}
.yes{color:#1b5e20;font-weight:700}.note{color:#555}
"""


def _pct(value: float | None) -> str:
    return _DASH if value is None else f"{100 * value:.1f}%"


def _p(value: float | None) -> str:
    if value is None:
        return _DASH
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def cells(entry: Entry) -> list[tuple[str, str]]:
    """(shown text, sort value) of each column of one entry's row."""
    ci = entry.accuracy.ci
    ci_text = _DASH if ci is None else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    paired = entry.paired
    rows: list[tuple[str, str]] = [
        (str(entry.rank), str(entry.rank)),
        (entry.run, entry.run),
        (entry.arm, entry.arm),
        (_pct(entry.accuracy.value), str(entry.accuracy.value or 0)),
        (ci_text, str(ci[0] if ci else 0)),
        (str(entry.accuracy.n), str(entry.accuracy.n)),
        (entry.scale, entry.scale),
        (entry.calibration, entry.calibration),
        (entry.cost, entry.cost.strip("$").split(" ")[0].replace(",", "")),
        (_DASH if entry.context_tokens is None else f"{entry.context_tokens:.0f}",
         str(entry.context_tokens or 0)),
        (str(entry.publishable).lower(), str(int(entry.publishable))),
        (", ".join(entry.reasons) or _DASH, ", ".join(entry.reasons)),
    ]  # fmt: skip
    for key in ("n", "top only", "this only"):
        value = paired.get(key)
        rows.append((_DASH if value is None else f"{value:.0f}", str(value or 0)))
    for name in PAIRED_TESTS:
        value = paired.get(name)
        rows.append((_p(value), str(2 if value is None else value)))
    return rows


def _title(group: list[Entry], number: int) -> str:
    top = group[0]
    return (
        f"Group {number}: scale {top.scale}, {len(top.questions)} scored questions "
        f"({len(group)} entr{'y' if len(group) == 1 else 'ies'}, ranked within the group)"
    )


def render_markdown(dataset: str, groups: list[list[Entry]], notes: list[str]) -> str:
    """The board as Markdown: one table per group."""
    lines = [f"# Leaderboard: {dataset}", "", *(f"> {n}" for n in notes)]
    for number, group in enumerate(groups, 1):
        lines += ["", f"## {_title(group, number)}", ""]
        lines += ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(text for text, _ in cells(e)) + " |" for e in group]
    return "\n".join(lines) + "\n"


def render_html(dataset: str, groups: list[list[Entry]], notes: list[str]) -> str:
    """The board as one self-contained HTML page with sortable tables."""
    esc = html.escape
    parts = [f"<h1>Leaderboard: {esc(dataset)}</h1>"]
    parts += [f'<p class="note">{esc(n)}</p>' for n in notes]
    head = "".join(f"<th>{esc(c)}</th>" for c in COLUMNS)
    for number, group in enumerate(groups, 1):
        rows = []
        for entry in group:
            tds = []
            for col, (text, value) in zip(COLUMNS, cells(entry), strict=True):
                css = (
                    f' class="{"yes" if entry.publishable else "no"}"'
                    if col == "publishable"
                    else ""
                )
                tds.append(f'<td data-v="{esc(value)}"{css}>{esc(text)}</td>')
            rows.append(f"<tr>{''.join(tds)}</tr>")
        parts.append(f"<h2>{esc(_title(group, number))}</h2>")
        parts.append(
            f'<table class="board"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    title = esc(f"armbench leaderboard — {dataset}")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_CSS}</style></head><body>\n"
        + "\n".join(parts)
        + f"\n<script>{_SCRIPT}</script>\n</body></html>\n"
    )
