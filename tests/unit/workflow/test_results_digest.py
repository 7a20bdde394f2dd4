"""scripts/results_digest.py: the same multiset of result bytes, paths free to move, timing ignored."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from helpers import REPO

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


def test_measured_seconds_are_excepted_column_by_column(tmp_path):
    """A table of numbers and seconds: the seconds may differ, every other number may not."""
    import pandas as pd

    def table(seconds, mae):
        return pd.DataFrame({"repeat": [0, 1], "mae": mae, "seconds": seconds})

    a = tmp_path / "a"
    (a / "runs").mkdir(parents=True)
    table([0.1, 0.2], [0.5, 0.25]).to_parquet(a / "runs" / "r.metrics.parquet")
    table([0.1, 0.2], [0.5, 0.25]).to_csv(a / "table3.csv", index=False)
    (a / "runs" / "n=5.timing.parquet").write_bytes(b"whatever")
    b = tmp_path / "b"
    (b / "runs").mkdir(parents=True)
    table([9.0, 8.0], [0.5, 0.25]).to_parquet(b / "runs" / "r.metrics.parquet")
    table([9.0, 8.0], [0.5, 0.25]).to_csv(b / "table3.csv", index=False)
    rel = lambda root: [(d, p.replace(str(root), "r")) for d, p in rd.digests(root)]
    assert rel(a) == rel(b) and len(rel(a)) == 2
    table([9.0, 8.0], [0.5, 0.3]).to_parquet(b / "runs" / "r.metrics.parquet")
    assert rel(a) != rel(b)


def test_file_by_file_through_declared_moves(tmp_path):
    before = [("d1", "results/tables/deploy/heldout.csv"), ("d2", "results/runs/x.parquet")]
    moves = [("results/tables/deploy/", "results/tables/heldout_intervals/")]
    after = [("d1", "results/tables/heldout_intervals/heldout.csv"), ("d2", "results/runs/x.parquet")]
    lines, same = rd.compare_file_by_file(before, after, moves)
    assert same and lines == ["moved results/tables/deploy/heldout.csv -> results/tables/heldout_intervals/heldout.csv"]
    # an undeclared move fails even with the same bytes; so do a changed file and a new one
    lines, same = rd.compare_file_by_file(before, [("d1", "results/tables/other/heldout.csv"), after[1]], moves)
    assert not same and lines[0].startswith("MISSING results/tables/heldout_intervals/heldout.csv")
    lines, same = rd.compare_file_by_file(before, [("zz", after[0][1]), after[1], ("d3", "results/new.csv")], moves)
    assert not same and lines[0].startswith("CHANGED") and lines[-1] == "NEW results/new.csv"
    (tmp_path / "moves.tsv").write_text("old\tnew\nresults/tables/deploy/\tresults/tables/heldout_intervals/\n")
    assert rd.read_moves(tmp_path / "moves.tsv") == moves
