"""The verdict of :func:`benchcast.verify.check.verify` in words: one line per study and one overall
(stdout), a Markdown report with every mismatch and missing file, and the exit code.

Exit codes (the command's ``--help`` lists them): 0 every study passes (identical, or equal to
rounding under ``--rounding``); 1 a mismatch; 3 a partial run without a mismatch (expected outputs
missing, everything present holds); 2 (the command line's own) bad input.
"""

from __future__ import annotations

from benchcast.verify.check import FAIL, PARTIAL, PASS, StudyCheck, Verification

EXIT = {PASS: 0, FAIL: 1, PARTIAL: 3}
EXIT_HELP = (
    "exit codes: 0 every study passes (identical, equal to rounding with --rounding or across BLAS kernels, or not compared across BLAS kernels); 1 a mismatch "
    "(a claim beyond tolerance or with another verdict, or a deterministic output's bytes); 3 a partial "
    "run, no mismatch (expected outputs missing; what is present holds); 2 bad input (not a results "
    "folder, no such expected run)"
)


def exit_code(result: Verification) -> int:
    return EXIT[result.status]


def _counts(check: StudyCheck) -> str:
    parts = [f"claims {check.claims_held}/{check.claims}"] if check.claims else []
    expected = check.files + len(check.missing)
    parts.append(f"outputs {check.identical}/{expected} identical")
    if check.rounded:
        parts.append(f"{len(check.rounded)} equal to rounding")
    if check.other_kernels:
        parts.append(f"{len(check.other_kernels)} not compared (other BLAS kernels)")
    if check.mismatches:
        parts.append(f"{len(check.mismatches)} mismatch{'es' if len(check.mismatches) > 1 else ''}")
    if check.missing:
        parts.append(f"{len(check.missing)} missing")
    return ", ".join(parts)


def study_line(check: StudyCheck) -> str:
    reason = check.first_reason()
    return f"{check.status:<7} {check.study}: {_counts(check)}" + (f"; first: {reason}" if reason else "")


def summary_lines(result: Verification) -> list[str]:
    """One line per study, a note when the BLAS kernels are not the expected run's, then the overall line."""
    lines = [study_line(c) for c in result.studies.values()]
    mismatches = sum(len(c.mismatches) for c in result.studies.values())
    rounded = sum(len(c.rounded) for c in result.studies.values())
    uncompared = sum(len(c.other_kernels) for c in result.studies.values())
    n = len(result.missing)
    missing = f"{n} expected output{'' if n == 1 else 's'} missing"
    what = {
        PASS: "reproduces"
        + (f" ({rounded} outputs equal to rounding {result.rounding:g}, not identical)" if rounded else ""),
        PARTIAL: f"partial: {missing}, no mismatch in what is present",
        FAIL: f"does not reproduce: {mismatches} mismatches" + (f", {missing}" if result.missing else ""),
    }[result.status]
    if result.other_kernels:
        lines.append(kernels_line(result, uncompared))
    elif result.expected_kernels is None and _only_bytes_differ(result):
        lines.append(
            f"note    kernels: every claim holds and only bytes differ; the expected run records no BLAS kernels "
            f"(shipped before it did), and a machine with other kernels than its own ({result.kernels} here) "
            "computes other bytes"
        )
    lines.append(
        f"{result.status:<7} overall: {result.results} against expected run {result.expected.name} ({result.chosen}): {what}"
    )
    return lines


def _only_bytes_differ(result: Verification) -> bool:
    mismatches = [m for c in result.studies.values() for m in c.mismatches]
    return bool(mismatches) and all(m.what.startswith("bytes differ") for m in mismatches)


def kernels_line(result: Verification, uncompared: int) -> str:
    """What comparing across BLAS kernels left out, and why."""
    return (
        f"note    kernels: this machine runs {result.kernels}, the expected run was made with "
        f"{result.expected_kernels}; {uncompared} output{'' if uncompared == 1 else 's'} whose bytes differed "
        "under other kernels when we made the run not compared (each claim held to its tolerance, every other "
        f"output to our bytes or, where the expected run has a copy, to rounding {result.rounding:g})"
    )


def markdown(result: Verification) -> str:
    """The report: what was compared with what, the per-study table, every mismatch, every missing
    file, every output equal only to rounding, and the files the expected run does not have."""
    m = result.expected.manifest
    lines = [
        f"# benchcast verify: {result.results}",
        "",
        f"**{result.status}**. Expected run **{result.expected.name}** ({result.chosen}): config "
        f"{', '.join(m.get('configfiles') or []) or '?'}, commit {m.get('commit') or '?'}, {m.get('date') or '?'}, "
        f"benchcast {m.get('benchcast_version') or '?'}, {m.get('jobs', '?')} jobs (`{m.get('snakemake_command') or '?'}`).",
        "",
        "Rounding: "
        + (
            f"{result.rounding_source or result.rounding}: a CSV/Parquet whose bytes differ counts as equal to "
            "rounding when the expected run has a copy of it, its non-numeric cells are equal and its numbers "
            f"within {result.rounding:g} (relative)."
            if result.rounding
            else "strict: every deterministic output must have our bytes (sha256)."
        ),
        "",
        "BLAS kernels: "
        + (
            f"this machine's ({result.kernels}) are not the expected run's ({result.expected_kernels}): an output "
            "whose bytes differed under other kernels when we made the run is not compared when its bytes differ."
            if result.other_kernels
            else f"{result.kernels}"
            + (", the expected run's." if result.expected_kernels else " (the expected run does not record its own).")
        ),
        "",
        "| study | status | claims held | outputs identical | equal to rounding | not compared (kernels) | mismatches | missing |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in result.studies.values():
        lines.append(
            f"| {c.study} | {c.status} | {c.claims_held}/{c.claims} | {c.identical}/{c.files + len(c.missing)} | "
            f"{len(c.rounded)} | {len(c.other_kernels)} | {len(c.mismatches)} | {len(c.missing)} |"
        )
    sources = {s: n for c in result.studies.values() for s, n in c.tolerance_sources.items()}
    if sources:
        lines += ["", "## Where each claim's tolerance came from", ""]
        for c in result.studies.values():
            for source, n in c.tolerance_sources.items():
                lines.append(f"- {c.study}: {n} claims: {source}")
    sections = (
        ("Mismatches", [f"{c.study}: {x.line()}" for c in result.studies.values() for x in c.mismatches]),
        ("Missing expected outputs", [f"{c.study}: {p}" for c in result.studies.values() for p in c.missing]),
        ("Equal to rounding, not identical", [f"{c.study}: {p}" for c in result.studies.values() for p in c.rounded]),
        (
            "Not compared: their bytes differ under other BLAS kernels",
            [f"{c.study}: {p}" for c in result.studies.values() for p in c.other_kernels],
        ),
        ("Outputs the expected run does not have (not checked)", result.extra),
    )
    for title, items in sections:
        lines += ["", f"## {title} ({len(items)})", ""]
        lines += [f"- `{i}`" if title.startswith("Outputs") else f"- {i}" for i in items] or ["None."]
    return "\n".join(lines) + "\n"
