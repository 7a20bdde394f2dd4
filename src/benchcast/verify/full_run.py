"""The "Full run" section of each study's page, written from a shipped expected run.

Each study page (``docs/studies/<study>.md``) holds the section between the markers
``<!-- full-run:begin -->`` and ``<!-- full-run:end -->``: the run's date, commit and command, and
its paper-vs-ours claims counted by status (:data:`benchcast.output.comparison.STATUSES`), one row
per part of the paper (:data:`GROUPS`). ``scripts/full_run_pages.py`` writes it from
``resources/expected/all_papers/``; a test holds the pages to it, so a page cannot show numbers other
than the shipped run's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from benchcast.output.comparison import NO_PAPER, NOT_COMPARABLE, NOT_RUN, OUTSIDE, STATUSES, WITHIN, counts, statuses
from benchcast.verify.expected import CLAIMS, MANIFEST

BEGIN, END = "<!-- full-run:begin -->", "<!-- full-run:end -->"
#: the columns of a study's paper-vs-ours table that name the part of the paper a claim is from
GROUPS = {
    "misses_the_mark": ("split", "n"),
    "benchpress": ("table",),
    "tailoredbench": ("table",),
    "mdad": ("table",),
    "cf_tasks": ("claim",),
}
_HEADER = {"split": "split", "n": "budget", "table": "table or figure", "claim": "claim"}


def _cell(value) -> str:
    text = str(value)
    return text.replace("|", "\\|")


def _status_of(table: pd.DataFrame) -> pd.Series:
    return table["status"] if "status" in table else statuses(table)


def claims_table(table: pd.DataFrame, keys: tuple[str, ...]) -> str:
    """Markdown: one row per group of ``keys`` (in the table's order), its claims by status, then all."""
    status = _status_of(table)
    shown = [s for s in STATUSES if (status == s).any()]
    head = [_HEADER.get(k, k) for k in keys] + ["claims", *shown]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    groups = table.groupby(list(keys), sort=False, dropna=False)
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        found = counts(part.assign(status=status.loc[part.index]))
        lines.append("| " + " | ".join([*map(_cell, key), str(len(part)), *(str(found[s]) for s in shown)]) + " |")
    found = counts(table.assign(status=status))
    total = ["**all**"] + [""] * (len(keys) - 1)
    lines.append("| " + " | ".join([*total, f"**{len(table)}**", *(f"**{found[s]}**" for s in shown)]) + " |")
    return "\n".join(lines)


def section(expected: Path, study: str) -> str:
    """The markdown between the markers for ``study``, from the expected run in ``expected``."""
    manifest = json.loads((expected / MANIFEST).read_text(encoding="utf-8"))
    table = pd.read_csv(expected / "tables" / study / CLAIMS, keep_default_na=False, na_values=[""])
    found = counts(table.assign(status=_status_of(table)))
    judged = found[WITHIN] + found[OUTSIDE]
    share = f" ({100 * found[WITHIN] / judged:.1f}% of those judged)" if judged else ""
    run = f"resources/expected/{manifest['run']}"
    intro = (
        f"The run of `{' '.join(manifest['configfiles'])}` (`{manifest['snakemake_command']}`), finished "
        f"{manifest['date']}, its tables made at commit `{manifest['commit'][:7]}`: of {len(table)} paper claims, "
        f"**{found[WITHIN]} within tolerance**{share}, {found[OUTSIDE]} outside, {found[NOT_COMPARABLE]} not "
        f"comparable (each row's reason is in its `not_comparable` column), {found[NOT_RUN]} not run (a "
        f"benchmark or setting of the paper's that the study does not have) and {found[NO_PAPER]} with no "
        f"paper number. Every row, ours and the paper's: `{run}/tables/{study}/{CLAIMS}`; "
        f"`benchcast verify results --against {manifest['run']}` checks a run against it "
        "([Artifact evaluation](../evaluators.md))."
    )
    return f"{intro}\n\n{claims_table(table, GROUPS[study])}"


def render(page: str, text: str) -> str:
    """``page`` with its full-run section replaced by ``text``; ``ValueError`` without both markers."""
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    if len(pattern.findall(page)) != 1:
        raise ValueError(f"the page needs one {BEGIN} ... {END} section")
    return pattern.sub(lambda _: f"{BEGIN}\n{text}\n{END}", page)
