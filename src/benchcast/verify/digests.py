"""Which outputs of a run are deterministic, and their digests: the one rule that
``scripts/results_digest.py`` (a refactoring changed no result), the expected outputs
(:mod:`benchcast.verify.expected`) and ``benchcast verify`` share, so that the three never disagree
on what "the same bytes" means.

Every Parquet and CSV file under the folder counts, except timing files (``results/timing/``,
``timing.parquet``, ``*.timing.parquet``, the performance table and the Table 2 of "misses the mark"
and of MDAD): they hold wall-clock seconds. A file that holds measured seconds beside other columns
(a column whose name says ``seconds``: the CF study's per-repeat metrics, its Tables 3 and 5, the
held-out test's speed table) is digested without those columns -- the sha256 of the rest, written
as CSV with round-trip floats -- so every other number is still compared. Every other file's digest
is the sha256 of its bytes.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path

SUFFIXES = {".parquet", ".csv"}

#: tables made of measured seconds (Table 2 of "misses the mark": training and estimation time)
TIMING_TABLES = ("tables/misses_the_mark/table2", "tables/mdad/table2", "tables/performance")


def is_timing(path: Path) -> bool:
    """Whether a file (its path relative to the results folder) holds wall-clock seconds only,
    and so differs from run to run."""
    path = Path(path)
    return (
        "timing" in path.parts
        or path.stem == "timing"
        or path.stem.endswith(("_timing", ".timing"))
        or str(path.with_suffix("")) in TIMING_TABLES
    )


def is_deterministic(path: Path) -> bool:
    """A CSV or Parquet output that is not a timing file: same inputs, same digest."""
    return Path(path).suffix in SUFFIXES and not is_timing(path)


def timing_columns(columns) -> list[str]:
    """The columns that hold measured seconds."""
    return [c for c in columns if "seconds" in str(c)]


def digest(path: Path) -> str:
    """sha256 of the file's bytes, or of its content without measured-seconds columns (CSV)."""
    import pandas as pd

    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            drop = timing_columns(pq.read_schema(path).names)
        except Exception:  # not a Parquet file after all: its bytes
            drop = []
        frame = pd.read_parquet(path) if drop else None
    else:
        drop = timing_columns(path.read_text(errors="replace").partition("\n")[0].split(","))
        frame = pd.read_csv(path, dtype=str, keep_default_na=False) if drop else None
    if frame is None:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    rest = frame.drop(columns=drop).to_csv(index=False, float_format=repr).encode()
    return hashlib.sha256(rest).hexdigest()


def deterministic_files(root: Path) -> list[Path]:
    """Every deterministic output under ``root``, relative to it, sorted."""
    root = Path(root)
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and is_deterministic(p.relative_to(root)))


def digests(root: Path, relative: bool = False) -> list[tuple[str, str]]:
    """(sha256, path) of every deterministic output under ``root``, sorted; the path as
    ``root/...`` (the script's historical form, ``resources/digests/*.tsv``) or, ``relative``,
    relative to ``root`` (the expected outputs: any results folder's name compares)."""
    root = Path(root)
    rows = [(digest(root / rel), str(rel if relative else root / rel)) for rel in deterministic_files(root)]
    return sorted(rows)


def format_digests(rows: list[tuple[str, str]]) -> str:
    """``sha256<TAB>path`` lines, as :func:`read_digests` reads them."""
    return "".join(f"{d}\t{p}\n" for d, p in rows)


def read_digests(path: Path) -> list[tuple[str, str]]:
    return [tuple(line.split("\t", 1)) for line in Path(path).read_text().splitlines() if line.strip()]


def compare(before: list[tuple[str, str]], after: list[tuple[str, str]]) -> tuple[list[str], bool]:
    """Lines describing the differences, and whether the multisets of digests are equal."""
    old, new = defaultdict(list), defaultdict(list)
    for d, path in before:
        old[d].append(path)
    for d, path in after:
        new[d].append(path)
    lines, same = [], True
    for d in sorted(set(old) | set(new)):
        a, b = sorted(old.get(d, [])), sorted(new.get(d, []))
        if len(a) != len(b):
            same = False
            lines.append(f"CHANGED {d[:12]}: {len(a)} file(s) before {a}, {len(b)} after {b}")
        elif a != b:
            moved_from = [p for p in a if p not in b]
            moved_to = [p for p in b if p not in a]
            lines += [f"moved {src} -> {dst}" for src, dst in zip(moved_from, moved_to)]
    return lines, same


def read_moves(path: Path) -> list[tuple[str, str]]:
    """Declared moves, ``old<TAB>new`` per line (a header line ``old<TAB>new`` allowed): a path
    starting with ``old`` is expected under ``new`` + the rest of it."""
    rows = [line.split("\t") for line in Path(path).read_text().splitlines() if line.strip()]
    return [(old, new) for old, new in rows if (old, new) != ("old", "new")]


def moved(path: str, moves: list[tuple[str, str]]) -> str:
    for old, new in moves:
        if path.startswith(old):
            return new + path[len(old) :]
    return path


def compare_file_by_file(
    before: list[tuple[str, str]], after: list[tuple[str, str]], moves: list[tuple[str, str]]
) -> tuple[list[str], bool]:
    """Every file of ``before`` at its path (after the declared ``moves``) in ``after`` with the same
    digest, and no other file in ``after``."""
    new = {p: d for d, p in after}
    expected = {moved(p, moves): (p, d) for d, p in before}
    lines = []
    for path, (old, d) in sorted(expected.items()):
        if path not in new:
            lines.append(f"MISSING {path}" + (f" (was {old})" if old != path else ""))
        elif new[path] != d:
            lines.append(f"CHANGED {path}" + (f" (was {old})" if old != path else ""))
        elif old != path:
            lines.append(f"moved {old} -> {path}")
    lines += [f"NEW {path}" for path in sorted(set(new) - set(expected))]
    return lines, not any(line.split()[0] in ("MISSING", "CHANGED", "NEW") for line in lines)
