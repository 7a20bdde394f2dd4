"""Expected outputs of a run (``resources/expected/<run>/``): what an artifact evaluator's run is
checked against, written by the developers from a finished run of a named config.

A run's expected outputs are a folder, whatever the config (``tour``: the default config;
``all_papers``: the full run):

* ``tables/<study>/*paper_vs_ours.csv`` and ``tables/<study>/*acceptance*.csv``: the study's
  numbers against the paper's, copied as the run wrote them (``benchcast verify`` holds each row
  against the evaluator's); with ``copies`` ``csv`` (the default) every deterministic CSV output,
  with ``all`` every deterministic output, at its path under the results folder: the content that
  ``benchcast verify --rounding`` compares a file with when its bytes differ (a run of every paper
  may ship ``csv`` only, to keep the repository small; its Parquet files are then checked by bytes),
  each at most ``max_copy_mb`` (a larger one is checked by its digest only, and the manifest's
  ``not_copied`` names it);
* ``digests.tsv``: ``sha256<TAB>path`` (relative to the results folder) of every deterministic output,
  by the rules of :mod:`benchcast.verify.digests`;
* ``jobs.csv``: every job's measured seconds and peak memory, from the run's ``benchmarks/`` files
  (what the run cost here, for an evaluator's comparison; never part of the verdict);
* ``manifest.json``: the config file(s), the commit, the date, the benchcast and Snakemake versions,
  the Snakemake command, the job count, the studies, the run's signature (how
  ``benchcast verify`` tells which config made a results folder: :func:`run_signature`), the
  machine's ``kernels`` (:func:`benchcast.blas.kernels`: what decides a result's last bits), and,
  when the run was also made under other kernels, ``kernel_dependent``: the outputs whose bytes
  differed there (:func:`kernel_dependent_outputs`), which ``benchcast verify`` does not hold to
  our bytes on a machine with other kernels. Such a run also copies every output *not* listed,
  whatever ``copies`` says (under ``max_copy_mb``): on a machine with yet other kernels, verify
  tells a last-bit difference in one of them from a changed result by comparing with the copy.

Copied bytes are the run's bytes: nothing here rewrites a number.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from benchcast.data.io import atomic_path, write_csv_atomic, write_text_atomic
from benchcast.errors import DataError
from benchcast.verify.digests import digests, format_digests, read_digests

#: where a repository keeps its expected runs
EXPECTED_DIR = Path("resources") / "expected"
#: the expected run's table files, relative to the results folder (globs)
CLAIM_GLOBS = ("tables/*/*paper_vs_ours.csv", "tables/*/*acceptance*.csv")
#: the file every study's claims are in (the index counts it)
CLAIMS = "paper_vs_ours.csv"
MANIFEST = "manifest.json"
DIGESTS = "digests.tsv"
JOBS = "jobs.csv"
#: which deterministic outputs an expected run copies besides its claim tables
COPIES = ("none", "csv", "all")
#: a deterministic output larger than this (MB) is not copied (its digest is kept)
MAX_COPY_MB = 5.0


def looks_like_results(folder: Path) -> bool:
    """A workflow's results folder: an index, or tables or data folders."""
    folder = Path(folder)
    return folder.is_dir() and any((folder / name).exists() for name in ("index.md", "tables", "data"))


def check_results_folder(folder: Path) -> None:
    """Stop with one line when ``folder`` is not a results folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise DataError(
            folder, "(folder)", "does not exist", "give the results folder of a finished run (e.g. results)"
        )
    if not looks_like_results(folder):
        raise DataError(
            folder,
            "(folder)",
            "is not a workflow's results folder (no index.md, tables/ or data/ in it)",
            "give the folder the workflow wrote (results, or the one a run's --directory made)",
        )


def studies_of(results: Path) -> list[str]:
    """The studies whose paper-vs-ours table the folder holds."""
    return sorted(p.parent.name for p in Path(results).glob(f"tables/*/{CLAIMS}"))


def sha256_of(path: Path) -> str | None:
    path = Path(path)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def run_signature(results: Path) -> list[str] | None:
    """What in a results folder's ``index.md`` the config decides and the wording of its labels does
    not: per study, whether the run is a slice or full, and its scope sentence (what of the paper it
    ran: datasets, budgets, trials, methods). Two runs of one config have one signature across
    releases whose index only rewords a section's label; the whole file's digest would not be.
    ``None`` without an index."""
    index = Path(results) / "index.md"
    if not index.is_file():
        return None
    modes, scopes, study = {}, {}, None
    for line in index.read_text(errors="replace").splitlines():
        if line.startswith("| [") and "](#" in line:
            cells = [c.strip() for c in line.strip("|").split("|")]
            modes[cells[0][1 : cells[0].index("]")]] = cells[2] if len(cells) > 2 else ""
        elif line.startswith("## "):
            study = line[3:].strip()
        elif study and line.startswith("This run is "):
            scopes[study] = line
    return [f"{s}: {modes.get(s, '')}: {scopes.get(s, '')}" for s in sorted(set(modes) | set(scopes))]


def jobs_table(run_dir: Path) -> pd.DataFrame:
    """One row per job with a ``benchmark:`` file under ``run_dir/benchmarks``: ``job`` (the file's
    path under ``benchmarks/``, without ``.tsv``), ``study`` (its first folder), ``seconds`` and
    ``max_rss_mb`` (as the performance table reads them, :func:`benchcast.workflow.dag.read_benchmark`)."""
    from benchcast.workflow.dag import read_benchmark

    root = Path(run_dir) / "benchmarks"
    rows = []
    for path in sorted(root.rglob("*.tsv")) if root.is_dir() else []:
        rel = path.relative_to(root)
        seconds, rss = read_benchmark(path)
        study = rel.parts[0] if len(rel.parts) > 1 else ""
        rows.append({"job": str(rel.with_suffix("")), "study": study, "seconds": seconds, "max_rss_mb": rss})
    return pd.DataFrame(rows, columns=["job", "study", "seconds", "max_rss_mb"])


def _git(repo: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def run_date(results: Path, run_dir: Path) -> str:
    """The run's date (UTC): when its newest output or benchmark file was written."""
    files = [
        p for folder in (Path(results), Path(run_dir) / "benchmarks") if folder.is_dir() for p in folder.rglob("*")
    ]
    newest = max((p.stat().st_mtime for p in files if p.is_file()), default=None)
    when = datetime.fromtimestamp(newest, UTC) if newest else datetime.now(UTC)
    return when.strftime("%Y-%m-%d")


def kernel_dependent_outputs(rows: list[tuple[str, str]], others: list[list[tuple[str, str]]]) -> list[str]:
    """The outputs (paths) whose digest in ``rows`` differs from theirs in any of ``others``: the same
    run's digests made under other BLAS kernels. An output another run lacks is not judged by it."""
    ours = {p: d for d, p in rows}
    differ = set()
    for other in others:
        differ |= {p for d, p in other if p in ours and ours[p] != d}
    return sorted(differ)


def write_expected(
    results: Path,
    out: Path,
    name: str,
    configfiles: list[str],
    command: str | None = None,
    commit: str | None = None,
    config: list[str] = (),
    copies: str = "csv",
    max_copy_mb: float = MAX_COPY_MB,
    kernels: str | None = None,
    other_kernels: dict[str, list[tuple[str, str]]] | None = None,
) -> dict:
    """Write a finished run's expected outputs to ``out`` (replacing what is there); its manifest.

    ``results``: the run's results folder (its ``benchmarks/`` beside it); ``configfiles`` and
    ``config``: what the run was given (``--configfile``, ``--config``); ``command``: the Snakemake
    command as run (default: built from them); ``commit``: the code that made the run (default: the
    repository's HEAD); ``copies``: which deterministic outputs to copy besides the claim tables
    (``none``, ``csv`` or ``all``), each at most ``max_copy_mb``; the claim tables are always copied;
    ``kernels``: the kernels the run was made with (default: this machine's); ``other_kernels``: the
    digests of the same run made under other kernels, by a line naming those kernels (their
    differences make the manifest's ``kernel_dependent``; every other output is then copied)."""
    from benchcast import __version__
    from benchcast.blas import kernels as machine_kernels

    results, out = Path(results), Path(out)
    if copies not in COPIES:
        raise DataError("(command line)", "--copies", f"{copies!r} is not one of {', '.join(COPIES)}", "e.g. csv")
    check_results_folder(results)
    studies = studies_of(results)
    if not studies:
        raise DataError(results, "tables/<study>/paper_vs_ours.csv", "no study's table", "ship a finished run")
    run_dir = results.resolve().parent
    rows = digests(results, relative=True)
    jobs = jobs_table(run_dir)
    if command is None:
        command = " ".join(["snakemake --cores all", *(f"--configfile {c}" for c in configfiles)])
        command += f" --config {' '.join(config)}" if config else ""
    try:
        import snakemake

        snakemake_version = snakemake.__version__
    except ImportError:
        snakemake_version = None
    claims = {str(p.relative_to(results)) for pattern in CLAIM_GLOBS for p in results.glob(pattern)}
    dependent = kernel_dependent_outputs(rows, list(other_kernels.values())) if other_kernels else None
    held = {p for _, p in rows} - set(dependent) if dependent is not None else set()  # compared on other kernels
    wanted = {p for _, p in rows if copies == "all" or (copies == "csv" and p.endswith(".csv")) or p in held} - claims
    too_large = sorted(p for p in wanted if (results / p).stat().st_size > max_copy_mb * 1e6)
    manifest = {
        "run": name,
        "configfiles": list(configfiles),
        "config": list(config),
        "commit": commit or _git(run_dir, "rev-parse", "HEAD"),
        "date": run_date(results, run_dir),
        "benchcast_version": __version__,
        "snakemake_version": snakemake_version,
        "snakemake_command": command,
        "jobs": len(jobs),
        "studies": studies,
        "deterministic_outputs": len(rows),
        "index_sha256": sha256_of(results / "index.md"),
        "signature": run_signature(results),
        "copies": copies,
        "not_copied": too_large,
        "kernels": kernels or machine_kernels(),
    }
    if other_kernels:
        manifest["kernel_dependent_from"] = sorted(other_kernels)
        manifest["kernel_dependent"] = dependent
    staging = out.with_name(f".{out.name}.new")
    shutil.rmtree(staging, ignore_errors=True)
    copied = claims | (wanted - set(too_large))
    for rel in sorted(copied):
        with atomic_path(staging / rel) as tmp:
            shutil.copyfile(results / rel, tmp)
    write_text_atomic(staging / DIGESTS, format_digests(rows))
    write_csv_atomic(jobs, staging / JOBS, index=False, float_format="%.4f")
    write_text_atomic(staging / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    shutil.rmtree(out, ignore_errors=True)  # whole or absent: the new folder replaces the old at once
    staging.rename(out)
    return manifest


@dataclass
class Expected:
    """An expected run, read: its folder, manifest and digests (path -> sha256)."""

    folder: Path
    manifest: dict
    digests: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.manifest.get("run") or self.folder.name

    def claims(self) -> list[str]:
        """The claim files (relative to a results folder), sorted."""
        return sorted(str(p.relative_to(self.folder)) for p in self.folder.glob(f"tables/*/{CLAIMS}"))


def repository_roots() -> list[Path]:
    """Where expected runs are looked for: the current folder, then the repository this benchcast
    was installed from (an editable install in a clone)."""
    import benchcast

    roots = [Path.cwd(), Path(benchcast.__file__).resolve().parents[2]]
    return list(dict.fromkeys(roots))


def available_runs() -> dict[str, Path]:
    """Expected runs by name, from :func:`repository_roots` (the first root with a name wins)."""
    runs: dict[str, Path] = {}
    for root in repository_roots():
        for manifest in sorted((root / EXPECTED_DIR).glob(f"*/{MANIFEST}")):
            runs.setdefault(manifest.parent.name, manifest.parent)
    return runs


def read_expected(folder: Path) -> Expected:
    folder = Path(folder)
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise DataError(
            folder,
            MANIFEST,
            "is not an expected run (no manifest.json)",
            "give a folder scripts/ship_expected.py wrote, or a run's name under resources/expected/",
        )
    try:
        manifest = json.loads(manifest_path.read_text())
    except json.JSONDecodeError as exc:
        raise DataError(manifest_path, "(file)", f"is not JSON ({exc.msg})", "ship the expected run again") from None
    if not (folder / DIGESTS).is_file():
        raise DataError(folder, DIGESTS, "missing", "ship the expected run again (scripts/ship_expected.py)")
    return Expected(folder, manifest, {p: d for d, p in read_digests(folder / DIGESTS)})


def resolve_against(against: str | None, results: Path) -> tuple[Expected, str]:
    """The expected run to compare ``results`` with, and how it was chosen (for the report):
    ``against`` (a run's name, or a folder), else the run whose ``index.md`` is the folder's."""
    runs = available_runs()
    names = ", ".join(sorted(runs)) or "none found"
    if against:
        path = Path(against)
        if against in runs:
            return read_expected(runs[against]), f"--against {against} ({runs[against]})"
        if path.is_dir():
            return read_expected(path), f"--against {path}"
        raise DataError(
            against,
            "--against",
            f"no expected run of that name or folder (expected runs: {names})",
            "give one of those names or the folder of an expected run; run from the repository's root",
        )
    signature, index = run_signature(results), sha256_of(Path(results) / "index.md")

    def same(manifest: dict) -> bool:
        if "signature" not in manifest:  # shipped before signatures: the index's digest
            return index is not None and manifest.get("index_sha256") == index
        return signature is not None and manifest["signature"] == signature

    matches = [n for n, f in runs.items() if same(read_expected(f).manifest)]
    if len(matches) == 1:
        run = runs[matches[0]]
        return read_expected(run), f"detected: {Path(results) / 'index.md'} is the one of run {matches[0]} ({run})"
    if index is None:
        why = "its index.md is missing (a partial run?)"
    elif matches:
        why = f"its index.md matches several expected runs' ({', '.join(matches)})"
    else:
        why = "its index.md (its studies, slice or full, and their scope) matches no expected run's"
    raise DataError(
        results,
        "index.md",
        f"cannot tell which config made this folder: {why} (expected runs: {names})",
        "say which with --against NAME (e.g. --against tour) or --against FOLDER",
    )
