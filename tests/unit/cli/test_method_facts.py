"""`benchcast methods`' measured figures: scripts/method_facts.py writes them from the held-out test's
tables with their provenance, the package carries the file, and the listing shows them per budget."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pandas as pd
import pytest
from helpers import REPO

from benchcast.cli import main, methods
from benchcast.methods import REGISTRY

SCRIPT = REPO / "scripts" / "method_facts.py"


@pytest.fixture
def tables(tmp_path):
    """A held-out test's two tables: two methods, two datasets, two budgets (fewer for one)."""
    held = pd.DataFrame(
        [
            ("musr", "aipw", 50, 448, 0.92, 0.14, 0.91, 0.13, 0.030),
            ("gsm", "aipw", 50, 83, 0.94, 0.16, 0.93, 0.17, 0.040),
            ("musr", "aipw", 100, 448, 0.90, 0.10, 0.90, 0.10, 0.020),
            ("musr", "tailoredbench", 50, 448, 0.91, 0.10, 0.91, 0.10, 0.025),
        ],
        columns=[
            "dataset",
            "method",
            "budget",
            "models",
            "coverage",
            "mean_width",
            "conformal_coverage",
            "conformal_width",
            "mae",
        ],
    )
    held.to_csv(tmp_path / "heldout.csv", index=False)
    speed = held[["dataset", "method", "budget"]].assign(fit_seconds=[0.5, 0.1, 0.7, 1.2], calibration_seconds=10.0)
    speed.to_csv(tmp_path / "speed.csv", index=False)
    return tmp_path


def generate(tables, out) -> dict:
    cmd = [sys.executable, str(SCRIPT), "--tables", str(tables), "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_the_script_records_each_sources_sha256_and_the_command(tables, tmp_path):
    doc = generate(tables, tmp_path / "facts.json")
    prov = doc["provenance"]
    heldout, speed = prov["sources"]
    assert heldout["sha256"] == hashlib.sha256((tables / "heldout.csv").read_bytes()).hexdigest()
    assert speed["sha256"] == hashlib.sha256((tables / "speed.csv").read_bytes()).hexdigest()
    assert heldout["rows"] == 4 and prov["level"] == 0.9 and len(prov["generated"]) == 10
    assert prov["command"].startswith("python scripts/method_facts.py --tables ")
    aipw = doc["methods"]["aipw"]
    assert [(c["dataset"], c["budget"], c["mae"]) for c in aipw["heldout"]] == [
        ("gsm", 50, 0.04),
        ("musr", 50, 0.03),
        ("musr", 100, 0.02),
    ]
    assert max(c["seconds"] for c in aipw["first_fit_seconds"]) == 10.7
    # the same tables, the same facts (but the date)
    again = generate(tables, tmp_path / "again.json")
    assert {**again, "provenance": None} == {**doc, "provenance": None}


def test_without_the_held_out_table_the_script_says_how_to_make_it(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--tables", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode != 0 and "snakemake heldout_intervals" in proc.stderr and "Traceback" not in proc.stderr


def test_the_listing_shows_what_each_method_needs_and_its_measured_figures(tables, tmp_path, capsys, monkeypatch):
    doc = generate(tables, tmp_path / "facts.json")
    monkeypatch.setattr(methods, "load_facts", lambda: doc)
    assert main(["methods", "--json"]) == 0
    rows = {r["method"]: r for r in json.loads(capsys.readouterr().out)}
    assert set(rows) == set(REGISTRY)
    assert {m for m, r in rows.items() if r["rounds"] == "yes"} == {"tailoredbench", "cf_probe"}
    assert rows["tailoredbench"]["min_budget"] == 11 and rows["gp_irt"]["prefit"] == "irt"
    aipw = rows["aipw"]
    assert aipw["mae_50"] == 3.5 and aipw["coverage_50"] == 93.0  # mean of musr and gsm, in points / percent
    assert aipw["mae_100"] == 2.0 and aipw["first_fit_s"] == 10.7 and aipw["heldout_on"] == "gsm,musr"
    assert rows["tailoredbench"]["mae_100"] is None and rows["lasso"]["mae_50"] is None  # not measured
    assert main(["methods", "--dataset", "gsm", "--json", "--grep", "aipw"]) == 0
    (gsm,) = json.loads(capsys.readouterr().out)
    assert gsm["mae_50"] == 4.0 and gsm["first_fit_s"] == 10.1 and gsm["heldout_on"] == "gsm"
    assert main(["methods", "--grep", "aipw"]) == 0
    printed = capsys.readouterr()
    assert "mae_50" in printed.out.splitlines()[0] and hashlib.sha256(
        (tables / "heldout.csv").read_bytes()
    ).hexdigest()[:12] in " ".join(printed.err.split())


def test_the_committed_facts_name_their_source_and_only_registered_methods():
    doc = methods.load_facts()
    prov = doc["provenance"]
    assert prov["sources"][0]["file"].endswith("heldout.csv")
    for source in prov["sources"]:  # a reader can check each figure against a file in the repository
        path = REPO / source["file"]
        assert path.is_file(), source["file"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == source["sha256"], source["file"]
    assert prov["command"].startswith("python scripts/method_facts.py")
    assert doc["methods"] and set(doc["methods"]) <= set(REGISTRY)
    for m in doc["methods"].values():
        assert all({"dataset", "budget", "mae", "coverage"} <= set(c) for c in m["heldout"])
