"""An evaluator's results folder against an expected run (:mod:`benchcast.verify.expected`), study
by study: the paper claims, then the bytes of every deterministic output.

* A claim (a row of a study's ``paper_vs_ours.csv``) holds when the evaluator's ``ours`` is within
  the study's tolerance of our ``ours`` and its verdict against the paper (``within_tolerance``, or
  the ``not_comparable`` reason) is ours. The tolerance is the row's own, from the file: a
  ``tolerance`` column (TailoredBench, MDAD: already widened for fewer trials), else
  ``max(abs_tolerance, rel_tolerance x |paper|) x tolerance_factor`` from the columns the file has
  ("misses the mark": ``rel_tolerance``; BenchPress: ``abs_tolerance``). The parts of a study's rule
  that its file does not state (the abs of "misses the mark", the rel of BenchPress) are not
  applied, so the check is at most as wide as the study's; a row without any (the CF claims) must
  be equal (to ``rounding`` when given). Each claim says where its tolerance came from.
* A deterministic output (:mod:`benchcast.verify.digests`) holds when its digest is ours. With
  ``rounding`` (a relative tolerance), a CSV or Parquet whose bytes differ still holds -- *equal to
  rounding*, reported as such -- when the expected run has a copy of it and the two tables have the
  same columns and rows, equal non-numeric cells and numeric cells within ``rounding`` (relative;
  1e-12 absolute near zero): other hardware's BLAS may round the last digits differently.
* On a machine whose BLAS kernels are not the expected run's (:func:`benchcast.blas.kernels`; the
  manifest's ``kernels``), an output the manifest lists as ``kernel_dependent`` (its bytes differed
  when the run was made under other kernels) whose bytes differ is *not compared*, counted apart:
  from other kernels' last bits, a clustering's or an optimiser's choice may flip and move such an
  output by more than any rounding. Every other output is held to our bytes there too, and every
  claim to its tolerance -- except that one whose bytes differ still holds, *equal to rounding*, when
  the expected run has a copy of it and its numbers are within :data:`KERNEL_RTOL` (or
  ``rounding``): the kernels the run was made under are a few, and a machine's own may move the
  last bit of a sum that theirs did not. An expected run that lists no ``kernel_dependent`` outputs
  leaves none uncompared: each differing output is a mismatch.
* An expected output the folder does not have makes the study *partial*; a file the expected run
  does not have is listed, never judged (an evaluator's run may have made more).

Outputs that belong to no study (``data/``: the validated tables every study reads) are reported
as the group ``(shared)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.verify.digests import deterministic_files, digest, timing_columns
from benchcast.verify.expected import Expected

PASS, PARTIAL, FAIL = "PASS", "PARTIAL", "FAIL"
SHARED = "(shared)"
#: the absolute slack of the rounding comparison (a number near zero has no relative rounding)
ATOL = 1e-12
#: on other BLAS kernels, the relative rounding an output held to our bytes may differ by: a last
#: bit of a sum moves a number by about 1e-16, a changed result by far more than this
KERNEL_RTOL = 1e-9


@dataclass
class Mismatch:
    path: str
    what: str
    row: str = ""

    def line(self) -> str:
        return f"{self.path}{f' row {self.row}' if self.row else ''}: {self.what}"


@dataclass
class StudyCheck:
    """What was checked of one study (or of the shared outputs), and what did not hold."""

    study: str
    claims: int = 0
    claims_held: int = 0
    files: int = 0
    identical: int = 0
    rounded: list[str] = field(default_factory=list)
    other_kernels: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    tolerance_sources: dict[str, int] = field(default_factory=dict)

    @property
    def status(self) -> str:
        if self.mismatches:
            return FAIL
        return PARTIAL if self.missing else PASS

    def first_reason(self) -> str:
        if self.mismatches:
            return self.mismatches[0].line()
        if self.missing:
            return f"missing {self.missing[0]}"
        return ""


@dataclass
class Verification:
    results: Path
    expected: Expected
    chosen: str
    #: the relative rounding the outputs were compared to (``--rounding``, else :data:`KERNEL_RTOL`
    #: on other kernels, else none) and where it came from
    rounding: float | None
    studies: dict[str, StudyCheck]
    extra: list[str]
    #: the kernels the run is taken to be made with (this machine's) and the expected run's
    kernels: str = ""
    expected_kernels: str | None = None
    rounding_source: str = ""

    @property
    def other_kernels(self) -> bool:
        return self.expected_kernels is not None and self.kernels != self.expected_kernels

    @property
    def status(self) -> str:
        statuses = {c.status for c in self.studies.values()}
        return FAIL if FAIL in statuses else PARTIAL if PARTIAL in statuses else PASS

    @property
    def missing(self) -> list[str]:
        return sorted(p for c in self.studies.values() for p in c.missing)


def study_of(path: str, studies) -> str:
    """The study a result belongs to: its second folder (``tables/<study>/...``), else shared."""
    parts = Path(path).parts
    return parts[1] if len(parts) > 2 and parts[1] in studies else SHARED


def _verdict(row: pd.Series) -> str:
    """The row's status (``benchcast.output.comparison.STATUSES``), with the reason where it is not
    comparable; a table from before the status column: the same from its verdict and reason."""
    reason = str(row.get("not_comparable", "") if pd.notna(row.get("not_comparable", "")) else "").strip()
    status = row.get("status")
    if isinstance(status, str) and status.strip():
        return f"{status} ({reason})" if reason else status
    if reason:
        return f"not comparable ({reason})"
    value = row.get("within_tolerance")
    if value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == "":
        return "not judged"
    return "within" if str(value).strip().lower() in ("true", "1", "1.0") else "outside"


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def tolerance_of(row: pd.Series) -> tuple[float, str]:
    """The row's tolerance on ``ours`` and where it came from (module docstring)."""
    tol = _number(row.get("tolerance"))
    if not math.isnan(tol):
        return tol, "the file's tolerance column"
    absolute, relative = _number(row.get("abs_tolerance")), _number(row.get("rel_tolerance"))
    if math.isnan(absolute) and math.isnan(relative):
        return 0.0, "none in the file: equal"
    factor = _number(row.get("tolerance_factor"))
    factor = 1.0 if math.isnan(factor) else factor
    paper = abs(_number(row.get("paper")))
    if math.isnan(paper):  # a relative tolerance needs the paper's number
        relative = math.nan
    names = [n for n, v in (("abs_tolerance", absolute), ("rel_tolerance x |paper|", relative)) if not math.isnan(v)]
    if not names:
        return 0.0, "none for a row without the paper's number: equal"
    width = max(0.0 if math.isnan(absolute) else absolute, 0.0 if math.isnan(relative) else relative * paper)
    return width * factor, f"the file's {' and '.join(names)} x tolerance_factor"


def _label(frame: pd.DataFrame, i: int) -> str:
    """A row's number (1 = the first row after the header) and its identity (the columns before ``ours``)."""
    keys = list(frame.columns[: list(frame.columns).index("ours")]) if "ours" in frame.columns else []
    ident = ", ".join(f"{k}={frame.iloc[i][k]}" for k in keys)
    return f"{i + 1} ({ident})" if ident else str(i + 1)


def check_claims(ours_path: Path, theirs_path: Path, rel: str, check: StudyCheck, rounding: float | None) -> None:
    """Every row of an expected ``paper_vs_ours.csv`` against the evaluator's (same order: the
    workflow writes it sorted)."""
    expected = pd.read_csv(ours_path, keep_default_na=True)
    got = pd.read_csv(theirs_path, keep_default_na=True)
    if list(expected.columns) != list(got.columns) or len(expected) != len(got):
        check.mismatches.append(
            Mismatch(
                rel,
                f"not the expected table: {len(got)} rows, columns {list(got.columns)}; expected {len(expected)} rows, columns {list(expected.columns)}",
            )
        )
        check.claims += len(expected)
        return
    keys = list(expected.columns[: list(expected.columns).index("ours")]) if "ours" in expected.columns else []
    for i in range(len(expected)):
        check.claims += 1
        mine, theirs = expected.iloc[i], got.iloc[i]
        label = _label(expected, i)
        if any(str(mine[k]) != str(theirs[k]) for k in keys):
            check.mismatches.append(Mismatch(rel, f"a different row ({_label(got, i)})", label))
            continue
        width, source = tolerance_of(mine)
        if rounding:
            width = max(width, rounding * abs(_number(mine["ours"])))
            source += f" (or --rounding {rounding:g})" if width == rounding * abs(_number(mine["ours"])) else ""
        check.tolerance_sources[source] = check.tolerance_sources.get(source, 0) + 1
        a, b = _number(mine["ours"]), _number(theirs["ours"])
        if math.isnan(a) != math.isnan(b) or (not math.isnan(a) and abs(a - b) > width + ATOL):
            check.mismatches.append(
                Mismatch(
                    rel, f"ours {theirs['ours']}, expected {mine['ours']} (tolerance {width:.4g}: {source})", label
                )
            )
            continue
        if _verdict(mine) != _verdict(theirs):
            check.mismatches.append(Mismatch(rel, f"verdict {_verdict(theirs)!r}, expected {_verdict(mine)!r}", label))
            continue
        check.claims_held += 1


def _read_table(path: Path) -> pd.DataFrame:
    frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    return frame.drop(columns=timing_columns(frame.columns))


def equal_to_rounding(ours: Path, theirs: Path, rtol: float) -> str:
    """ "" when the two tables have the same columns and rows, equal non-numeric cells and numeric
    cells within ``rtol`` (relative); else the first difference in words."""
    try:
        a, b = _read_table(ours), _read_table(theirs)
    except Exception as exc:  # unreadable: its bytes differ and nothing more can be said
        return f"cannot be read as a table ({type(exc).__name__})"
    if list(a.columns) != list(b.columns):
        return f"columns {list(b.columns)}, expected {list(a.columns)}"
    if len(a) != len(b):
        return f"{len(b)} rows, expected {len(a)}"
    for col in a.columns:
        x, y = a[col], b[col]
        numeric = all(pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s) for s in (x, y))
        if numeric:
            fx, fy = x.to_numpy(dtype=float), y.to_numpy(dtype=float)
            ok = np.isclose(fy, fx, rtol=rtol, atol=ATOL, equal_nan=True)
        else:
            ok = (x.astype(str) == y.astype(str)).to_numpy()
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            theirs, ours = (v.item() if isinstance(v, np.generic) else v for v in (y.iloc[i], x.iloc[i]))
            return f"column {col} row {i + 1}: {theirs!r}, expected {ours!r}" + (
                f" (beyond rounding {rtol:g})" if numeric else ""
            )
    return ""


def verify(
    results: Path, expected: Expected, chosen: str = "", rounding: float | None = None, kernels: str | None = None
) -> Verification:
    """Check ``results`` against ``expected`` (module docstring); ``chosen``: how the expected run
    was chosen, for the report; ``kernels``: the BLAS kernels the run was made with (default: this
    machine's, :func:`benchcast.blas.kernels`)."""
    from benchcast.blas import kernels as machine_kernels

    results = Path(results)
    kernels = kernels or machine_kernels()
    theirs = expected.manifest.get("kernels")
    other = theirs is not None and theirs != kernels
    dependent = set(expected.manifest.get("kernel_dependent") or []) if other else set()
    tolerance = rounding or (KERNEL_RTOL if other else None)
    source = f"--rounding {rounding:g}" if rounding else f"other BLAS kernels: {KERNEL_RTOL:g}" if other else ""
    studies = list(expected.manifest.get("studies") or [])
    checks = {s: StudyCheck(s) for s in studies}
    shared = StudyCheck(SHARED)

    def check_for(path: str) -> StudyCheck:
        study = study_of(path, studies)
        return checks[study] if study in checks else shared

    for rel in expected.claims():
        if (results / rel).is_file():
            check_claims(expected.folder / rel, results / rel, rel, check_for(rel), rounding)
    for rel, want in sorted(expected.digests.items()):
        check = check_for(rel)
        if not (results / rel).is_file():
            check.missing.append(rel)
            continue
        check.files += 1
        if digest(results / rel) == want:
            check.identical += 1
            continue
        copy = expected.folder / rel
        why = equal_to_rounding(copy, results / rel, tolerance) if tolerance and copy.is_file() else None
        if why == "":
            check.rounded.append(rel)
        elif rel in dependent:
            check.other_kernels.append(rel)
        elif why:
            where = " (not on other kernels when we made the run)" if other else ""
            check.mismatches.append(Mismatch(rel, f"bytes differ{where}; {why}"))
        elif rounding:
            check.mismatches.append(Mismatch(rel, "bytes differ (the expected run has no copy to compare to rounding)"))
        elif other:
            check.mismatches.append(
                Mismatch(rel, "bytes differ (sha256), and not on other kernels when we made the run")
            )
        else:
            check.mismatches.append(Mismatch(rel, "bytes differ (sha256)"))
    extra = sorted(str(p) for p in deterministic_files(results) if str(p) not in expected.digests)
    if shared.files or shared.missing or shared.mismatches:
        checks[SHARED] = shared
    return Verification(results, expected, chosen, tolerance, checks, extra, kernels, theirs, source)
