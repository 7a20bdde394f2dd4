"""A lab's lm-evaluation-harness logs as a workflow dataset (catalog format ``lm_eval_logs``): the
ingest builds its tables from the logs (with the harness identity), and a study runs on it: the
held-out test of the new-model intervals, whose speed table then also times the harness path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import snakemake

from benchcast.data.harness_identity import DOC_COLUMN, TASK_COLUMN, HarnessMap, LeafTask, read_facts
from benchcast.lm_eval.simulate import write_logs

pytestmark = pytest.mark.e2e
TASKS = {"lab_quiz": 50, "lab_math": 40}


def make_workdir(root):
    rng = np.random.default_rng(7)
    n_items = sum(TASKS.values())
    p = 1 / (1 + np.exp(rng.normal(size=(1, n_items)) - rng.normal(size=(36, 1))))
    scores = (rng.random((36, n_items)) < p).astype(float)
    tasks = {t: LeafTask(t, "acc", "none", n) for t, n in TASKS.items()}
    hmap = HarnessMap("lab", "verified", "test", tasks, tuple((t, d) for t, n in TASKS.items() for d in range(n)))
    for i in range(36):
        write_logs(root / "lab_runs", f"lab/model-{i:02d}", dict(enumerate(scores[i])), hmap, np.random.default_rng(i))
    spec = {"title": "Our harness runs", "suite": "lab", "kind": "item_binary", "source": "repo"}
    spec.update(format="lm_eval_logs", files={"logs": {"path": "lab_runs", "source": "repo"}}, min_accuracy=0.0)
    spec.update(lm_eval_logs={"metric": ["acc"], "filter": ["none"]})
    catalog = {"sources": {}, "url_template": "https://example.invalid/{repository}/{commit}/{path}"}
    catalog.update(repo_root="..", datasets={"lab": spec})
    (root / "config").mkdir()
    (root / "raw").mkdir()  # a lab's runs need no raw mirror: the logs are kept with the catalog
    (root / "config" / "catalog.yaml").write_text(yaml.safe_dump(catalog))
    study = {"datasets": ["lab"], "methods": [{"name": "random_sampling"}], "budgets": [20], "folds": 3}
    config = {
        "raw_dir": str(root / "raw"),
        "catalog": "config/catalog.yaml",
        "seed": 0,
        "studies": ["heldout_intervals"],
    }
    (root / "config" / "config.yaml").write_text(
        yaml.safe_dump({**config, "heldout_intervals": {**study, "heldout_folds": 4}})
    )
    return root, scores


def test_harness_logs_are_a_dataset_the_studies_run_on(tmp_path):
    work, scores = make_workdir(tmp_path)
    snakemake(work, "heldout_intervals", "--cores", "2", "--quiet")
    data = work / "results" / "data" / "lab"
    items = pd.read_parquet(data / "items.parquet")
    assert items[TASK_COLUMN].tolist() == ["lab_math"] * 40 + ["lab_quiz"] * 50  # the board's order: by task
    assert items[DOC_COLUMN].tolist() == list(range(40)) + list(range(50))
    assert items.subtask.tolist() == items[TASK_COLUMN].tolist()
    assert read_facts(data / "items.parquet")["tasks"]["lab_quiz"] == {"metric": "acc", "filter": "none", "docs": 50}
    models = pd.read_parquet(data / "models.parquet")
    assert models.model_id.tolist() == [f"lab/model-{i:02d}" for i in range(36)]
    np.testing.assert_allclose(models.accuracy, scores.mean(axis=1))
    speed = pd.read_csv(work / "results" / "tables" / "heldout_intervals" / "speed.csv")
    assert (speed.cli_lm_eval_select_seconds > 0).all() and (speed.cli_lm_eval_estimate_seconds > 0).all()
    held = pd.read_csv(work / "results" / "tables" / "heldout_intervals" / "heldout.csv")
    assert held.models.tolist() == [36]
    # an edited log inside a model's folder reruns the ingest (here a line of the filter not counted)
    log = next((work / "lab_runs" / "lab__model-03").glob("samples_lab_quiz_*.jsonl"))
    log.write_text(log.read_text().replace('"filter": "benchcast-decoy"', '"filter": "another-decoy"', 1))
    plan = snakemake(work, "heldout_intervals", "--cores", "1", "-n").stdout
    assert "ingest_item_dataset" in plan
