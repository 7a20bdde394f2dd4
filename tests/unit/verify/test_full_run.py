"""The study pages' "Full run" sections (benchcast.verify.full_run, scripts/full_run_pages.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchcast.verify.full_run import BEGIN, END, claims_table, render, section

REPO = Path(__file__).resolve().parents[3]


def claims() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "table": ["t1", "t1", "t1", "t2", "t2"],
            "ours": [1.0, 2.0, None, 4.0, 5.0],
            "paper": [1.0, 3.0, 1.0, None, 5.0],
            "within_tolerance": [True, False, None, None, None],
            "not_comparable": ["", "", "", "", "other data"],
        }
    )


def test_claims_are_counted_by_status_per_part_of_the_paper_and_in_all():
    text = claims_table(claims(), ("table",))
    assert text.splitlines() == [
        "| table or figure | claims | within | outside | not comparable | not run | no paper number |",
        "|---|---|---|---|---|---|---|",
        "| t1 | 3 | 1 | 1 | 0 | 1 | 0 |",
        "| t2 | 2 | 0 | 0 | 1 | 0 | 1 |",
        "| **all** | **5** | **1** | **1** | **1** | **1** | **1** |",
    ]


def test_the_section_names_the_run_and_the_share_within(tmp_path):
    (tmp_path / "tables/tailoredbench").mkdir(parents=True)
    claims().to_csv(tmp_path / "tables/tailoredbench/paper_vs_ours.csv", index=False)
    manifest = {"run": "all_papers", "configfiles": ["config/all_papers.yaml"], "date": "2026-11-29"}
    manifest |= {"commit": "abcdef0123", "snakemake_command": "snakemake --cores 2"}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    text = section(tmp_path, "tailoredbench")
    assert "at commit `abcdef0`: of 5 paper claims, **1 within tolerance** (50.0% of those judged), 1 outside" in text
    assert "1 not run (a benchmark" in text and "and 1 with no paper number" in text
    assert "`benchcast verify results --against all_papers`" in text and text.endswith("| **1** |")


def test_only_the_marked_section_is_replaced_and_a_page_without_it_is_refused():
    page = f"# S\n\nbefore\n\n{BEGIN}\nold\n{END}\n\nafter\n"
    assert render(page, "new") == f"# S\n\nbefore\n\n{BEGIN}\nnew\n{END}\n\nafter\n"
    with pytest.raises(ValueError, match="full-run:begin"):
        render("# S\n", "new")


def test_the_study_pages_show_the_shipped_full_run():
    done = subprocess.run(
        [sys.executable, "scripts/full_run_pages.py", "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("run", sorted(p.name for p in (REPO / "resources/expected").iterdir() if p.is_dir()))
def test_every_shipped_copy_is_the_file_its_digest_names(run):
    """A shipped expected run is self-consistent: each copied output has the digest digests.tsv gives
    it, every study of the manifest has its claims, and the manifest names what it did not copy."""
    from benchcast.verify.digests import digest
    from benchcast.verify.expected import read_expected

    expected = read_expected(REPO / "resources/expected" / run)
    copies = [p for p in expected.folder.rglob("*") if p.is_file() and p.suffix in (".csv", ".parquet")]
    copies = [p for p in copies if p.name != "jobs.csv" or p.parent != expected.folder]
    assert copies
    for path in copies:
        rel = str(path.relative_to(expected.folder))
        assert expected.digests[rel] == digest(path), rel
    for study in expected.manifest["studies"]:
        assert (expected.folder / "tables" / study / "paper_vs_ours.csv").is_file(), study
    assert set(expected.manifest.get("not_copied", [])) <= set(expected.digests)
