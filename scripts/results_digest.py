"""Digest of a workflow's outputs, to show that a refactoring changed no result.

    python scripts/results_digest.py results > before.tsv          # sha256 <TAB> path, sorted
    python scripts/results_digest.py results --compare before.tsv  # exit 1 unless the same multiset
    python scripts/results_digest.py results --compare before.tsv --moves moves.tsv  # file by file

Every Parquet and CSV file under the folder counts, except timing files (``results/timing/``,
``timing.parquet``, ``*.timing.parquet``, the performance table and the Table 2 of "misses the mark"
and of MDAD): they hold wall-clock seconds. A file that holds measured seconds beside other columns
(a column whose name says ``seconds``: the CF study's per-repeat metrics, its Tables 3 and 5, the
held-out test's speed table) is digested without those columns -- the sha256 of the rest, written
as CSV with round-trip floats -- so every other number is still compared. Every other file's digest
is the sha256 of its bytes. Paths may move: ``--compare`` lists each file whose digest is found under
another path (old -> new) and fails only when a digest is missing or new.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import defaultdict
from pathlib import Path

SUFFIXES = {".parquet", ".csv"}


#: tables made of measured seconds (Table 2 of "misses the mark": training and estimation time)
TIMING_TABLES = ("tables/misses_the_mark/table2", "tables/mdad/table2", "tables/performance")


def is_timing(path: Path) -> bool:
    return (
        "timing" in path.parts
        or path.stem == "timing"
        or path.stem.endswith(("_timing", ".timing"))
        or str(path.with_suffix("")) in TIMING_TABLES
    )


def timing_columns(columns) -> list[str]:
    """The columns that hold measured seconds."""
    return [c for c in columns if "seconds" in str(c)]


def digest(path: Path) -> str:
    """sha256 of the file's bytes, or of its content without measured-seconds columns (CSV)."""
    import pandas as pd

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


def digests(root: Path) -> list[tuple[str, str]]:
    rows = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in SUFFIXES and not is_timing(path.relative_to(root)):
            rows.append((digest(path), str(path)))
    return sorted(rows)


def read_digests(path: Path) -> list[tuple[str, str]]:
    return [tuple(line.split("\t", 1)) for line in path.read_text().splitlines() if line.strip()]


def compare(before: list[tuple[str, str]], after: list[tuple[str, str]]) -> tuple[list[str], bool]:
    """Lines describing the differences, and whether the multisets of digests are equal."""
    old, new = defaultdict(list), defaultdict(list)
    for digest, path in before:
        old[digest].append(path)
    for digest, path in after:
        new[digest].append(path)
    lines, same = [], True
    for digest in sorted(set(old) | set(new)):
        a, b = sorted(old.get(digest, [])), sorted(new.get(digest, []))
        if len(a) != len(b):
            same = False
            lines.append(f"CHANGED {digest[:12]}: {len(a)} file(s) before {a}, {len(b)} after {b}")
        elif a != b:
            moved_from = [p for p in a if p not in b]
            moved_to = [p for p in b if p not in a]
            lines += [f"moved {src} -> {dst}" for src, dst in zip(moved_from, moved_to)]
    return lines, same


def read_moves(path: Path) -> list[tuple[str, str]]:
    """Declared moves, ``old<TAB>new`` per line (a header line ``old<TAB>new`` allowed): a path
    starting with ``old`` is expected under ``new`` + the rest of it."""
    rows = [line.split("\t") for line in path.read_text().splitlines() if line.strip()]
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
    for path, (old, digest) in sorted(expected.items()):
        if path not in new:
            lines.append(f"MISSING {path}" + (f" (was {old})" if old != path else ""))
        elif new[path] != digest:
            lines.append(f"CHANGED {path}" + (f" (was {old})" if old != path else ""))
        elif old != path:
            lines.append(f"moved {old} -> {path}")
    lines += [f"NEW {path}" for path in sorted(set(new) - set(expected))]
    return lines, not any(line.split()[0] in ("MISSING", "CHANGED", "NEW") for line in lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path, help="the results folder")
    parser.add_argument("--compare", type=Path, help="a digest file written before")
    parser.add_argument("--moves", type=Path, help="declared moves (old<TAB>new path prefixes): compare file by file")
    args = parser.parse_args(argv)
    rows = digests(args.root)
    if args.compare is None:
        sys.stdout.writelines(f"{d}\t{p}\n" for d, p in rows)
        return 0
    before = read_digests(args.compare)
    if args.moves is not None:
        lines, same = compare_file_by_file(before, rows, read_moves(args.moves))
    else:
        lines, same = compare(before, rows)
    print("\n".join(lines) if lines else "identical paths and bytes")
    what = "file by file through the declared moves" if args.moves is not None else "multiset of digests"
    print(f"{len(rows)} files; {what}: {'identical' if same else 'DIFFERS'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
