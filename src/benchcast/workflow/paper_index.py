"""``results/index.md``: for every study of a run, its paper's sections linked to the tables and
figures that reproduce them, and the share of the paper's numbers we reproduce within the study's
tolerance (counted from the study's ``paper_vs_ours.csv``).

A study describes itself in its rules file (``STUDY_INDEX[study]``, see ``workflow/rules/common.smk``):
``{"title", "paper", "scope", "slice", "tolerance", "paper_vs_ours", "sections": [[section, [path, ...]], ...]}``
(``scope``: the run in words; ``slice``: whether it is a slice of the study's full run).
Every ``paper_vs_ours.csv`` has the columns ``ours``, ``paper`` and ``within_tolerance``; a number
counts when ``ours``, ``paper`` and its verdict are present (a blank ``within_tolerance`` is a number
the study reports without judging it, e.g. MDAD at k = 10).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from benchcast.errors import DataError
from benchcast.output.comparison import WIDENING

REQUIRED = ("ours", "paper", "within_tolerance")


def share_within(comparison: pd.DataFrame, source: str = "<table>") -> tuple[int, int]:
    """(numbers within tolerance, numbers compared) of a paper-vs-ours table."""
    missing = [c for c in REQUIRED if c not in comparison.columns]
    if missing:
        raise DataError(source, ",".join(missing), "missing columns", "rebuild it with this version's study rules")
    both = comparison.dropna(subset=["ours", "paper", "within_tolerance"])
    within = both["within_tolerance"].map(lambda v: str(v).strip().lower() in ("true", "1", "1.0"))
    return int(within.sum()), len(both)


def not_comparable(comparison: pd.DataFrame) -> int:
    """Numbers of a paper-vs-ours table that this run has but cannot compare with the paper's
    (a reason in ``not_comparable``, :mod:`benchcast.output.comparison`); not counted as compared."""
    if "not_comparable" not in comparison.columns:
        return 0
    reasons = comparison["not_comparable"].fillna("").astype(str).str.strip()
    return int(((reasons != "") & comparison["ours"].notna() & comparison["paper"].notna()).sum())


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
        apart = not_comparable(comparisons[study])
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
