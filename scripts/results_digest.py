"""Digest of a workflow's outputs, to show that a refactoring changed no result.

    python scripts/results_digest.py results > before.tsv          # sha256 <TAB> path, sorted
    python scripts/results_digest.py results --compare before.tsv  # exit 1 unless the same multiset
    python scripts/results_digest.py results --compare before.tsv --moves moves.tsv  # file by file

Every Parquet and CSV file under the folder counts, except timing files (``results/timing/``,
``timing.parquet``, ``*.timing.parquet``, the performance table and the Table 2 of "misses the mark"
and of MDAD): they hold wall-clock seconds. A file that holds measured seconds beside other columns
(a column whose name says ``seconds``) is digested without those columns. Paths may move:
``--compare`` lists each file whose digest is found under another path (old -> new) and fails only
when a digest is missing or new. The rules live in :mod:`benchcast.verify.digests` (``benchcast
verify`` and the expected outputs use the same ones).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchcast.verify.digests import (  # noqa: F401  (the names tests and older callers import from here)
    SUFFIXES,
    TIMING_TABLES,
    compare,
    compare_file_by_file,
    digest,
    digests,
    is_timing,
    moved,
    read_digests,
    read_moves,
    timing_columns,
)


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
