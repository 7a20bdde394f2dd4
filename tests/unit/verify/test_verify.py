"""benchcast verify on small generated results folders with known answers: identical passes, a number
beyond its tolerance fails naming the study, file and row, a difference within tolerance fails by
its bytes unless --rounding, a deleted output is partial, a changed byte fails, bad input is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchcast.cli import main
from benchcast.errors import DataError
from benchcast.verify.check import FAIL, PARTIAL, PASS, verify
from benchcast.verify.expected import read_expected, resolve_against, write_expected
from benchcast.verify.report import exit_code, markdown, summary_lines

CLAIMS = "tables/alpha/paper_vs_ours.csv"


TOY_INDEX = """# benchcast results index

| study | paper | this run | compared | within tolerance | share | not comparable |
|---|---|---|---|---|---|---|
| [alpha](#alpha) | Alpha paper | slice | 3 | 2 | 66.7% | 0 |
| [beta](#beta) | Beta paper | full | 1 | 1 | 100.0% | 0 |

## alpha

**Alpha paper**. 2 of 3 numbers within tolerance.

This run is a slice of the full study (config/alpha.yaml): 2 of the paper's 10 trials.

| paper section | results |
|---|---|
| Table 1: the gap | [table1.csv](tables/alpha/table1.csv) |

## beta

**Beta paper**. 1 of 1 numbers within tolerance.
"""


def make_run(root: Path) -> Path:
    """A run's folder: results/ of two studies (alpha: a tolerance column; beta: none) and shared
    data, a timing file, benchmark files beside it."""
    results = root / "results"
    (results / "tables/alpha").mkdir(parents=True)
    pd.DataFrame(
        {
            "dataset": ["a", "a", "b"],
            "method": ["m1", "m2", "m1"],
            "ours": [0.5, 0.7, 0.2],
            "paper": [0.52, 0.9, 0.25],
            "tolerance": [0.05, 0.05, 0.1],
            "within_tolerance": [True, False, True],
            "tolerance_factor": [1.0, 1.0, 1.0],
            "not_comparable": ["", "", ""],
        }
    ).to_csv(results / CLAIMS, index=False, float_format="%.4f")
    pd.DataFrame({"k": [1, 2], "score": [0.25, 0.125]}).to_csv(results / "tables/alpha/table1.csv", index=False)
    (results / "tables/beta").mkdir(parents=True)
    pd.DataFrame(
        {"claim": ["x"], "ours": [0.03], "paper": [0.035], "within_tolerance": [True], "not_comparable": [""]}
    ).to_csv(results / "tables/beta/paper_vs_ours.csv", index=False)
    (results / "runs/beta").mkdir(parents=True)
    pd.DataFrame({"trial": [0, 1, 2], "estimate": [0.1, 0.2, 0.3]}).to_parquet(results / "runs/beta/n=5.parquet")
    (results / "data/toy").mkdir(parents=True)
    pd.DataFrame({"model_idx": [0, 1], "score": [1.0, 0.0]}).to_parquet(results / "data/toy/responses.parquet")
    (results / "timing/beta").mkdir(parents=True)
    pd.DataFrame({"seconds": [1.5]}).to_parquet(results / "timing/beta/n=5.parquet")
    (results / "index.md").write_text(TOY_INDEX)
    (root / "benchmarks/alpha").mkdir(parents=True)
    (root / "benchmarks/alpha/run.tsv").write_text("s\th:m:s\tmax_rss\n1.25\t0:00:01\t88.5\n")
    return results


@pytest.fixture
def run(tmp_path):
    results = make_run(tmp_path / "ours")
    expected = tmp_path / "expected" / "toy"
    write_expected(results, expected, "toy", ["config/toy.yaml"], commit="0" * 40, copies="all")
    theirs = tmp_path / "theirs" / "results"
    shutil.copytree(results, theirs)
    return theirs, read_expected(expected)


def edit_csv(path: Path, row: int, column: str, value) -> None:
    frame = pd.read_csv(path, keep_default_na=False)
    frame.loc[row, column] = value
    frame.to_csv(path, index=False)


def test_shipping_writes_claims_digests_jobs_and_a_manifest(run):
    _, expected = run
    files = sorted(str(p.relative_to(expected.folder)) for p in expected.folder.rglob("*") if p.is_file())
    assert {"manifest.json", "digests.tsv", "jobs.csv", CLAIMS, "tables/beta/paper_vs_ours.csv"} <= set(files)
    assert "timing/beta/n=5.parquet" not in expected.digests and "runs/beta/n=5.parquet" in expected.digests
    m = json.loads((expected.folder / "manifest.json").read_text())
    assert m["studies"] == ["alpha", "beta"] and m["jobs"] == 1 and m["deterministic_outputs"] == 5
    assert m["configfiles"] == ["config/toy.yaml"] and m["commit"] == "0" * 40 and m["index_sha256"]
    assert m["signature"] == [
        "alpha: slice: This run is a slice of the full study (config/alpha.yaml): 2 of the paper's 10 trials.",
        "beta: full: ",
    ]
    jobs = pd.read_csv(expected.folder / "jobs.csv")
    assert jobs.to_dict("records") == [{"job": "alpha/run", "study": "alpha", "seconds": 1.25, "max_rss_mb": 88.5}]


def test_an_output_over_the_copy_cap_keeps_its_digest_only_and_is_named(tmp_path):
    results = make_run(tmp_path / "ours")
    size_mb = (results / "runs/beta/n=5.parquet").stat().st_size / 1e6
    out = tmp_path / "expected" / "toy"
    m = write_expected(results, out, "toy", ["config/toy.yaml"], commit="0" * 40, copies="all", max_copy_mb=size_mb / 2)
    assert "runs/beta/n=5.parquet" in m["not_copied"] and not (out / "runs/beta/n=5.parquet").exists()
    assert "runs/beta/n=5.parquet" in read_expected(out).digests
    assert (out / CLAIMS).is_file()  # claim tables are copied whatever their size


def test_an_identical_folder_passes(run):
    theirs, expected = run
    result = verify(theirs, expected)
    assert result.status == PASS and exit_code(result) == 0
    assert {c.status for c in result.studies.values()} == {PASS}
    assert result.studies["alpha"].claims == result.studies["alpha"].claims_held == 3


def test_a_number_beyond_its_tolerance_fails_naming_the_study_file_and_row(run):
    theirs, expected = run
    edit_csv(theirs / CLAIMS, 1, "ours", 0.8)  # tolerance 0.05 of 0.7; the verdict (outside) unchanged
    result = verify(theirs, expected)
    assert result.status == FAIL and exit_code(result) == 1
    assert result.studies["beta"].status == PASS
    line = summary_lines(result)[0]
    assert line.startswith("FAIL    alpha:") and CLAIMS in line and "row 2 (dataset=a, method=m2)" in line
    assert "ours 0.8, expected 0.7" in line and "tolerance column" in line


def test_a_changed_verdict_fails(run):
    theirs, expected = run
    edit_csv(theirs / CLAIMS, 0, "within_tolerance", False)
    result = verify(theirs, expected)
    assert result.studies["alpha"].mismatches[0].what == "verdict 'outside', expected 'within'"


def test_within_tolerance_but_other_bytes_fails_strict_and_passes_to_rounding(run):
    theirs, expected = run
    edit_csv(theirs / CLAIMS, 0, "ours", 0.5000000001)
    frame = pd.read_parquet(theirs / "runs/beta/n=5.parquet")
    frame["estimate"] = frame["estimate"] * (1 + 1e-10)
    frame.to_parquet(theirs / "runs/beta/n=5.parquet")
    strict = verify(theirs, expected)
    assert strict.status == FAIL
    assert [m.line() for m in strict.studies["alpha"].mismatches] == [f"{CLAIMS}: bytes differ (sha256)"]
    assert [m.path for m in strict.studies["beta"].mismatches] == ["runs/beta/n=5.parquet"]
    rounded = verify(theirs, expected, rounding=1e-9)
    assert rounded.status == PASS and exit_code(rounded) == 0
    assert rounded.studies["alpha"].rounded == [CLAIMS] and rounded.studies["beta"].rounded == ["runs/beta/n=5.parquet"]
    assert "equal to rounding" in summary_lines(rounded)[0] and "not identical" in summary_lines(rounded)[-1]
    # beyond the rounding: still a failure, with the column and row
    too_far = verify(theirs, expected, rounding=1e-11)
    assert too_far.status == FAIL and "column estimate row 1" in too_far.studies["beta"].first_reason()


def other_kernels_run(tmp_path: Path, listed: bool):
    """Our run shipped as made with kernels "A", its Parquet run file differing (a flipped choice:
    far beyond any rounding) when made with kernels "B"; theirs is the "B" run."""
    results = make_run(tmp_path / "ours")
    flipped = tmp_path / "flipped" / "results"
    shutil.copytree(results, flipped)
    pd.DataFrame({"trial": [0, 1, 2], "estimate": [0.1, 0.5, 0.3]}).to_parquet(flipped / "runs/beta/n=5.parquet")
    from benchcast.verify.digests import digests

    other = {"B": digests(flipped, relative=True)} if listed else None
    out = tmp_path / "expected" / "toy"
    m = write_expected(results, out, "toy", ["config/toy.yaml"], commit="0" * 40, kernels="A", other_kernels=other)
    return flipped, read_expected(out), m


def test_the_manifest_records_the_kernels_and_the_outputs_that_differ_under_other_kernels(tmp_path):
    _, _, m = other_kernels_run(tmp_path, listed=True)
    assert m["kernels"] == "A" and m["kernel_dependent_from"] == ["B"]
    assert m["kernel_dependent"] == ["runs/beta/n=5.parquet"]
    results = make_run(tmp_path / "default")
    default = write_expected(results, tmp_path / "e2", "toy", ["config/toy.yaml"], commit="0" * 40)
    from benchcast.blas import kernels

    assert default["kernels"] == kernels() and "kernel_dependent" not in default


def test_on_other_kernels_a_kernel_dependent_output_is_not_compared_and_said_so(tmp_path):
    theirs, expected, _ = other_kernels_run(tmp_path, listed=True)
    result = verify(theirs, expected, kernels="B")
    assert result.status == PASS and exit_code(result) == 0 and result.other_kernels
    assert result.studies["beta"].other_kernels == ["runs/beta/n=5.parquet"]
    lines = summary_lines(result)
    assert lines[1] == "PASS    beta: claims 1/1, outputs 1/2 identical, 1 not compared (other BLAS kernels)"
    assert lines[-2].startswith("note    kernels: this machine runs B, the expected run was made with A; 1 output")
    assert lines[-1].startswith("PASS    overall:")
    assert "- beta: runs/beta/n=5.parquet" in markdown(result).split("## Not compared")[1]
    # on the expected run's own kernels the same difference is a mismatch
    same = verify(theirs, expected, kernels="A")
    assert same.status == FAIL and same.studies["beta"].first_reason() == "runs/beta/n=5.parquet: bytes differ (sha256)"
    assert not same.other_kernels and not any(line.startswith("note") for line in summary_lines(same))


def test_on_other_kernels_an_output_that_did_not_differ_there_is_still_held_to_our_bytes(tmp_path):
    theirs, expected, _ = other_kernels_run(tmp_path, listed=True)
    path = theirs / "tables/alpha/table1.csv"
    path.write_bytes(path.read_bytes().replace(b"0.125", b"0.126"))
    edit_csv(theirs / CLAIMS, 1, "ours", 0.8)  # a claim beyond its tolerance fails on any kernels
    result = verify(theirs, expected, kernels="B")
    assert result.status == FAIL
    whats = [m.line() for m in result.studies["alpha"].mismatches]
    assert (
        "tables/alpha/table1.csv: bytes differ (not on other kernels when we made the run); "
        "column score row 2: 0.126, expected 0.125 (beyond rounding 1e-09)"
    ) in whats
    assert any("ours 0.8, expected 0.7" in w for w in whats)
    # no copy to compare with: its bytes alone
    (expected.folder / "tables/alpha/table1.csv").unlink()
    whats = [m.line() for m in verify(theirs, expected, kernels="B").studies["alpha"].mismatches]
    assert "tables/alpha/table1.csv: bytes differ (sha256), and not on other kernels when we made the run" in whats


def test_an_expected_run_with_a_kernel_list_copies_every_output_it_holds_to_our_bytes(tmp_path):
    _, expected, m = other_kernels_run(tmp_path, listed=True)
    assert m["copies"] == "csv"
    assert (expected.folder / "data/toy/responses.parquet").is_file()  # held to our bytes: copied
    assert not (expected.folder / "runs/beta/n=5.parquet").exists()  # kernel-dependent: not
    assert (expected.folder / "tables/alpha/table1.csv").is_file()


def test_on_yet_other_kernels_a_last_bit_difference_in_a_held_output_is_equal_to_rounding(tmp_path):
    # kernels "C", not among those the run was made under: a sum's last bit moves in an output whose
    # bytes were ours under "B"; a change beyond 1e-9 in the same output still fails
    theirs, expected, _ = other_kernels_run(tmp_path, listed=True)
    path = theirs / "data/toy/responses.parquet"
    pd.DataFrame({"model_idx": [0, 1], "score": [1.0 - 2**-52, 0.0]}).to_parquet(path)
    result = verify(theirs, expected, kernels="C")
    assert result.status == PASS and result.rounding == 1e-9
    assert result.studies["(shared)"].rounded == ["data/toy/responses.parquet"]
    assert summary_lines(result)[-1].endswith("reproduces (1 outputs equal to rounding 1e-09, not identical)")
    assert "other BLAS kernels: 1e-09" in markdown(result)
    assert verify(theirs, expected, kernels="A").status == FAIL  # on the run's own kernels: bytes
    pd.DataFrame({"model_idx": [0, 1], "score": [1.0 - 1e-6, 0.0]}).to_parquet(path)
    far = verify(theirs, expected, kernels="C")
    assert far.status == FAIL and "(beyond rounding 1e-09)" in far.studies["(shared)"].first_reason()


def test_an_expected_run_without_a_kernel_list_holds_every_output_on_any_kernels(tmp_path):
    theirs, expected, _ = other_kernels_run(tmp_path, listed=False)
    result = verify(theirs, expected, kernels="B")
    assert result.status == FAIL and result.other_kernels
    assert result.studies["beta"].mismatches[0].path == "runs/beta/n=5.parquet"


def test_an_expected_run_that_records_no_kernels_is_strict_and_says_bytes_alone_differ(tmp_path):
    theirs, expected, _ = other_kernels_run(tmp_path, listed=False)
    del expected.manifest["kernels"]  # shipped before manifests recorded kernels
    result = verify(theirs, expected, kernels="B")
    assert result.status == FAIL and not result.other_kernels
    assert summary_lines(result)[-2].startswith("note    kernels: every claim holds and only bytes differ")
    edit_csv(theirs / CLAIMS, 1, "ours", 0.8)  # a claim beyond tolerance: no such note
    assert not any(line.startswith("note") for line in summary_lines(verify(theirs, expected, kernels="B")))


def test_a_changed_string_is_not_equal_to_rounding(run):
    theirs, expected = run
    frame = pd.read_parquet(theirs / "data/toy/responses.parquet").rename(columns={"score": "scores"})
    frame.to_parquet(theirs / "data/toy/responses.parquet")
    result = verify(theirs, expected, rounding=0.5)
    assert result.studies["(shared)"].status == FAIL and "columns" in result.studies["(shared)"].first_reason()


def test_a_deleted_output_is_partial_and_named(run):
    theirs, expected = run
    (theirs / "tables/alpha/table1.csv").unlink()
    result = verify(theirs, expected)
    assert result.status == PARTIAL and exit_code(result) == 3
    assert result.missing == ["tables/alpha/table1.csv"]
    assert summary_lines(result)[0] == (
        "PARTIAL alpha: claims 3/3, outputs 1/2 identical, 1 missing; first: missing tables/alpha/table1.csv"
    )
    assert "- alpha: tables/alpha/table1.csv" in markdown(result)


def test_a_changed_byte_of_a_deterministic_file_fails_naming_it(run):
    theirs, expected = run
    path = theirs / "tables/alpha/table1.csv"
    path.write_bytes(path.read_bytes().replace(b"0.125", b"0.126"))
    result = verify(theirs, expected)
    assert result.status == FAIL
    assert result.studies["alpha"].first_reason() == "tables/alpha/table1.csv: bytes differ (sha256)"
    assert "tables/alpha/table1.csv" in markdown(result)


def test_timing_files_and_extra_outputs_do_not_count(run):
    theirs, expected = run
    pd.DataFrame({"seconds": [99.0]}).to_parquet(theirs / "timing/beta/n=5.parquet")
    pd.DataFrame({"x": [1]}).to_csv(theirs / "tables/alpha/more.csv", index=False)
    result = verify(theirs, expected)
    assert result.status == PASS and result.extra == ["tables/alpha/more.csv"]


def test_the_expected_run_is_detected_from_the_index_or_asked_for(run, tmp_path, monkeypatch):
    theirs, expected = run
    (tmp_path / "resources").mkdir()
    shutil.copytree(expected.folder, tmp_path / "resources/expected/toy")
    monkeypatch.chdir(tmp_path)
    found, how = resolve_against(None, theirs)
    assert found.name == "toy" and how.startswith("detected")
    index = theirs / "index.md"
    index.write_text(TOY_INDEX.replace("Table 1: the gap", "Table 1: the estimation gap"))
    assert resolve_against(None, theirs)[0].name == "toy"  # a reworded label: the same config
    index.write_text(TOY_INDEX.replace("2 of the paper's 10 trials", "5 of the paper's 10 trials"))
    with pytest.raises(DataError, match="matches no expected run"):
        resolve_against(None, theirs)  # another scope: another config
    index.write_text(TOY_INDEX.replace("| slice |", "| full |"))
    with pytest.raises(DataError, match="matches no expected run"):
        resolve_against(None, theirs)
    (theirs / "index.md").unlink()
    assert main(["verify", str(theirs)]) == 2
    assert main(["verify", str(theirs), "--against", "toy"]) == 0


def test_the_command_line_exit_codes_and_one_line_errors(run, tmp_path, capsys):
    theirs, expected = run
    report = tmp_path / "verify.md"
    assert main(["verify", str(theirs), "--against", str(expected.folder), "--report", str(report)]) == 0
    assert "**PASS**" in report.read_text()
    (theirs / "tables/alpha/table1.csv").unlink()
    assert main(["verify", str(theirs), "--against", str(expected.folder)]) == 3
    edit_csv(theirs / CLAIMS, 2, "ours", np.nan)
    assert main(["verify", str(theirs), "--against", str(expected.folder)]) == 1
    capsys.readouterr()
    not_results = tmp_path / "empty"
    not_results.mkdir()
    assert main(["verify", str(not_results), "--against", str(expected.folder)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1
        and str(not_results) in err[0]
        and "not a workflow's results folder" in err[0]
        and "Fix:" in err[0]
    )
    assert main(["verify", str(theirs), "--against", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere" in err[0] and "--against" in err[0] and "Traceback" not in err[0]
