"""``results/index.md``: for every study of a run, its paper's sections linked to the tables and
figures that reproduce them, and the share of the paper's numbers we reproduce within the study's
tolerance (counted from the study's ``paper_vs_ours.csv``).

A study describes itself in its rules file (``STUDY_INDEX[study]``, see ``workflow/rules/common.smk``):
``{"title", "paper", "scope", "slice", "tolerance", "paper_vs_ours", "sections": [[section, [path, ...]], ...]}``
(``scope``: the run in words; ``slice``: whether it is a slice of the study's full run).
Every ``paper_vs_ours.csv`` has the columns ``ours``, ``paper``, ``within_tolerance`` and ``status``
(:mod:`benchcast.output.comparison`); the index counts the statuses, so its share is the one a reader
computes from the CSV (``within_tolerance.mean()``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from benchcast.errors import DataError
from benchcast.output.comparison import NOT_COMPARABLE, OUTSIDE, WIDENING, WITHIN, counts

REQUIRED = ("ours", "paper", "within_tolerance")


def share_within(comparison: pd.DataFrame, source: str = "<table>") -> tuple[int, int]:
    """(numbers within tolerance, numbers compared) of a paper-vs-ours table: its rows of status
    ``within`` and ``within`` or ``outside`` (:func:`benchcast.output.comparison.counts`)."""
    found = _counts(comparison, source)
    return found[WITHIN], found[WITHIN] + found[OUTSIDE]


def not_comparable(comparison: pd.DataFrame, source: str = "<table>") -> int:
    """Numbers of a paper-vs-ours table that this run has but cannot compare with the paper's
    (status ``not comparable``, a reason in ``not_comparable``); not counted as compared."""
    return _counts(comparison, source)[NOT_COMPARABLE]


def _counts(comparison: pd.DataFrame, source: str) -> dict[str, int]:
    missing = [c for c in REQUIRED if c not in comparison.columns]
    if missing:
        raise DataError(source, ",".join(missing), "missing columns", "rebuild it with this version's study rules")
    try:
        return counts(comparison)
    except ValueError as err:
        raise DataError(source, "within_tolerance", str(err), "rebuild it with this version's study rules") from None


def _link(path: str, index_dir: Path) -> str:
    rel = os.path.relpath(path, index_dir)
    return f"[{Path(path).name}]({rel})"


def render_index(
    studies: Sequence[str],
    entries: Mapping[str, Mapping],
    comparisons: Mapping[str, pd.DataFrame],
    index_path: str = "results/index.md",
) -> str:
    """The index's Markdown: a summary table (one row per study), then one section per study."""
    index_dir = Path(index_path).parent
    slices = [s for s in studies if entries[s].get("slice")]
    lines = [
        "# benchcast results index",
        "",
        "Each paper's sections, linked to the tables and figures of this run that reproduce them. "
        "*Within tolerance*: the paper's numbers that this run reproduces within the study's "
        "tolerance, out of those it compares (its paper-vs-ours table marks each one). *Not comparable*: "
        "numbers this run has but cannot hold against the paper's (a rank among fewer settings, a count "
        "over a smaller sample); each table's `not_comparable` column says why, and they are not counted.",
        "",
    ]
    if slices:
        lines += [
            f"**This run is a slice** of {'every study' if len(slices) == len(studies) else ', '.join(slices)}: "
            "fewer trials, datasets, budgets or methods than the paper (each study's line below says "
            f"which), so its numbers are noisier and fewer. Where a number is a mean over fewer trials "
            f"than the paper's, the study's tolerance widens: {WIDENING}. Every study's full run is one "
            'command with its own config file (README, "The studies").',
            "",
        ]
    lines += [
        "| study | paper | this run | compared | within tolerance | share | not comparable |",
        "|---|---|---|---|---|---|---|",
    ]
    shares = {}
    for study in studies:
        entry = entries[study]
        within, compared = share_within(comparisons[study], entry["paper_vs_ours"])
        apart = not_comparable(comparisons[study], entry["paper_vs_ours"])
        shares[study] = (within, compared, apart)
        share = f"{100.0 * within / compared:.1f}%" if compared else "n/a"
        run = "slice" if entry.get("slice") else ("full" if "slice" in entry else "")
        lines.append(f"| [{study}](#{study}) | {entry['title']} | {run} | {compared} | {within} | {share} | {apart} |")
    for study in studies:
        entry = entries[study]
        within, compared, apart = shares[study]
        scope = entry.get("scope")
        lines += [
            "",
            f"## {study}",
            "",
            f"**{entry['title']}** (`{entry['paper']}`). {within} of {compared} numbers within tolerance"
            + (f", {apart} not comparable" if apart else "")
            + f": {entry['tolerance']}. Comparison: {_link(entry['paper_vs_ours'], index_dir)}.",
            *(["", f"This run is {scope}."] if scope else []),
            "",
            "| paper section | results |",
            "|---|---|",
        ]
        for section, paths in entry["sections"]:
            lines.append(f"| {section} | {', '.join(_link(p, index_dir) for p in paths)} |")
    return "\n".join(lines) + "\n"


def index_inputs(studies: Sequence[str], entries: Mapping[str, Mapping]) -> list[str]:
    """Every file the index links (so that the index rule makes the workflow build them)."""
    paths = []
    for study in studies:
        paths.append(entries[study]["paper_vs_ours"])
        paths += [p for _, section_paths in entries[study]["sections"] for p in section_paths]
    return list(dict.fromkeys(paths))
