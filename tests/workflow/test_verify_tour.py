"""``benchcast verify`` through the command line, as an evaluator types it, on the real default run
(the tour) against ``resources/expected/tour/``: the run passes; a copy with a paper-vs-ours number
changed beyond tolerance, an output deleted and one byte of a deterministic CSV changed fails, each
damage named on its study's line.

The tour's run is not made again here (minutes on 2 cores): the test reads a finished one, the
folder ``$BENCHCAST_TOUR_RESULTS`` names, else the repository's own ``results/`` (CI: the README's
default run, made before the tests). Without one it is skipped, and with
``BENCHCAST_REQUIRE_TOUR_RESULTS=1`` that is a failure.

On a machine whose BLAS kernels are not the expected tour's (``manifest.json``'s ``kernels``), the
outputs that differed under other kernels when the tour was shipped are not compared and said so,
every claim and every other output still held (to our bytes, or its copy's numbers to 1e-9): the
same test passes there, by that route.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

pytestmark = pytest.mark.e2e

BENCHCAST = str(Path(sys.executable).parent / "benchcast")
EXPECTED = REPO / "resources" / "expected" / "tour"


@pytest.fixture(scope="module")
def tour_results() -> Path:
    results = Path(os.environ.get("BENCHCAST_TOUR_RESULTS") or REPO / "results")
    if not (results / "index.md").is_file():
        reason = f"no finished default run at {results} (make one: snakemake --cores all)"
        if os.environ.get("BENCHCAST_REQUIRE_TOUR_RESULTS") == "1":
            pytest.fail(f"BENCHCAST_REQUIRE_TOUR_RESULTS=1 but {reason}")
        pytest.skip(reason)
    return results


def manifest() -> dict:
    return json.loads((EXPECTED / "manifest.json").read_text())


def other_kernels() -> bool:
    from benchcast.blas import kernels

    return manifest()["kernels"] != kernels()


def manifest_digests() -> list[str]:
    return [line.split("\t", 1)[1] for line in (EXPECTED / "digests.tsv").read_text().splitlines() if line]


def verify(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([BENCHCAST, "verify", "results", *args], cwd=cwd, capture_output=True, text=True)


def test_the_default_run_reproduces_the_tour(tour_results, tmp_path):
    (tmp_path / "results").symlink_to(tour_results.resolve())
    proc = verify(tmp_path, "--report", "verify.md")  # the expected run detected from results/index.md
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for study in ("misses_the_mark", "benchpress", "tailoredbench", "mdad", "cf_tasks"):
        assert any(line.startswith(f"PASS    {study}: ") for line in lines), proc.stdout
    (overall,) = [line for line in lines if line.startswith("PASS    overall:")]
    assert "against expected run tour (detected" in overall
    # on yet other kernels a held output may differ in a last bit: equal to rounding, said so
    rounded = r" \(\d+ outputs equal to rounding 1e-09, not identical\)" if other_kernels() else ""
    assert re.search(rf": reproduces({rounded})?$", overall), overall
    for study in ("misses_the_mark", "benchpress", "tailoredbench", "mdad", "cf_tasks"):
        got, of = re.search(r"claims (\d+)/(\d+)", next(x for x in lines if f" {study}: " in x)).groups()
        assert got == of and int(of) > 0  # every paper claim, on any kernels
    uncompared = sum(int(n) for n in re.findall(r"(\d+) not compared \(other BLAS kernels\)", proc.stdout))
    if other_kernels():
        assert lines[-3].startswith("note    kernels: this machine runs "), proc.stdout  # then overall, report
        assert 0 < uncompared <= len(manifest()["kernel_dependent"])
    else:
        assert uncompared == 0 and not any(line.startswith("note") for line in lines)
    assert "**PASS**" in (tmp_path / "verify.md").read_text()


def test_a_damaged_copy_fails_with_each_damage_on_one_line(tour_results, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(tour_results, results, ignore=shutil.ignore_patterns("report.html"))
    # 1. TailoredBench's first paper-vs-ours number, one point beyond its tolerance (a few hundredths)
    claims = results / "tables/tailoredbench/paper_vs_ours.csv"
    header, first, *rest = claims.read_text().split("\n")
    cells = first.split(",")
    at = header.split(",").index("ours")
    cells[at] = f"{float(cells[at]) + 1:.4f}"
    claims.write_text("\n".join([header, ",".join(cells), *rest]))
    # 2. an MDAD output deleted
    (results / "tables/mdad/table3.csv").unlink()
    # 3. one byte of a deterministic CSV of the CF study changed (a digit of its first data line): one
    # that did not differ under other kernels, so that it is held to our bytes on any machine
    dependent = set(manifest().get("kernel_dependent", []))
    (rel, *_) = sorted(
        p for p in manifest_digests() if p.startswith("tables/cf_tasks/") and p.endswith(".csv") and p not in dependent
    )
    table = results / rel
    data = bytearray(table.read_bytes())
    at = data.index(b"\n") + 1 + next(i for i, c in enumerate(data[data.index(b"\n") + 1 :]) if chr(c).isdigit())
    data[at] = ord("7") if data[at] != ord("7") else ord("3")
    table.write_bytes(bytes(data))

    proc = verify(tmp_path, "--against", "tour")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = {line.split()[1].rstrip(":"): line for line in proc.stdout.splitlines()}
    assert (
        lines["tailoredbench"].startswith("FAIL")
        and "tables/tailoredbench/paper_vs_ours.csv row 1 (" in lines["tailoredbench"]
    )
    assert "beyond" not in lines["tailoredbench"] and ", expected " in lines["tailoredbench"]
    assert lines["mdad"].startswith("PARTIAL") and "missing tables/mdad/table3.csv" in lines["mdad"]
    assert lines["cf_tasks"].startswith("FAIL") and f"{rel}: bytes differ" in lines["cf_tasks"]
    assert lines["benchpress"].startswith("PASS") and lines["misses_the_mark"].startswith("PASS")
    assert lines["overall"].startswith("FAIL")
    # the deleted output alone: partial, its own exit code
    shutil.copyfile(tour_results / claims.relative_to(results), claims)
    shutil.copyfile(tour_results / table.relative_to(results), table)
    proc = verify(tmp_path, "--against", "tour")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("PARTIAL overall:") and "1 expected output missing" in proc.stdout


def test_bad_input_is_one_line(tmp_path):
    (tmp_path / "results").mkdir()
    proc = verify(tmp_path, "--against", "tour")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "not a workflow's results folder" in proc.stderr
    assert EXPECTED.is_dir()
