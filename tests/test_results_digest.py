"""scripts/results_digest.py: the same multiset of result bytes, paths free to move, timing ignored."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("results_digest", REPO / "scripts" / "results_digest.py")
rd = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rd)


def write(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def test_moves_are_listed_and_changes_fail(tmp_path, capsys):
    before = write(
        tmp_path / "a",
        {
            "tables/x.csv": b"1",
            "runs/y.parquet": b"2",
            "timing/t.parquet": b"3",
            "lasso/timing.parquet": b"4",
            "notes.md": b"5",
            "tables/misses_the_mark/table2.csv": b"6",
        },
    )
    assert sorted(p for _, p in rd.digests(before)) == [str(before / "runs/y.parquet"), str(before / "tables/x.csv")]
    (tmp_path / "before.tsv").write_text(
        "".join(f"{d}\t{p.replace(str(before), 'results')}\n" for d, p in rd.digests(before))
    )
    moved = write(tmp_path / "b", {"tables/study/x.csv": b"1", "runs/y.parquet": b"2", "timing/t.parquet": b"9"})
    lines, same = rd.compare(
        rd.read_digests(tmp_path / "before.tsv"), [(d, p.replace(str(moved), "results")) for d, p in rd.digests(moved)]
    )
    assert same and lines == ["moved results/tables/x.csv -> results/tables/study/x.csv"]
    changed = write(tmp_path / "c", {"tables/x.csv": b"1", "runs/y.parquet": b"other"})
    lines, same = rd.compare(rd.digests(before), rd.digests(changed))
    assert not same and sum(line.startswith("CHANGED") for line in lines) == 2
