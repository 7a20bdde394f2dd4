"""The catalog's harness identity: the blocks are checked, the ingest writes the columns and the
facts, every item-level dataset of the catalog says verified / assumed / none with its evidence,
and on the real MuSR matrix a model's answers read from harness logs give every method's estimate
exactly as the same answers in a CSV."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from helpers import FAST, MIRROR, REPO

from benchcast.cli import main
from benchcast.data.catalog import load_catalog
from benchcast.data.harness_identity import (
    DOC_COLUMN,
    TASK_COLUMN,
    catalog_columns,
    harness_map,
    parse_block,
    read_facts,
)
from benchcast.data.item_level import build_tables, write_tables
from benchcast.errors import DataError
from benchcast.lm_eval.simulate import write_logs
from benchcast.methods import REGISTRY
from benchcast.new_model.leaderboard import load_leaderboard

CATALOG = load_catalog(REPO / "src" / "benchcast" / "data" / "catalog.yaml")


def test_every_item_dataset_states_its_identity_with_evidence():
    labels = {n: parse_block(n, CATALOG[n].extra.get("lm_eval"))["identity"] for n in CATALOG.names("item_binary")}
    assert {n: labels[n] for n in ("musr", "ifeval", "openllm_math", "arc_challenge", "mdad_gpqa")} == dict.fromkeys(
        ("musr", "ifeval", "openllm_math", "arc_challenge", "mdad_gpqa"), "assumed"
    )
    for n in ("commonsense", "gsm", "mmlu", "mrpc", "rte", "qnli", "tailoredbench_gsm8k"):
        assert labels[n] == "none" and CATALOG[n].extra["lm_eval"]["evidence"]
    for n, label in labels.items():  # every block's tasks cover the dump's items exactly
        if label != "none" and CATALOG[n].n_items:
            columns, facts = catalog_columns(n, CATALOG[n].extra["lm_eval"], CATALOG[n].n_items)
            assert (
                len(columns[TASK_COLUMN]) == CATALOG[n].n_items
                and sum(t["docs"] for t in facts["tasks"].values()) == CATALOG[n].n_items
            )


@pytest.mark.parametrize(
    "block, message",
    [
        ({"identity": "maybe", "evidence": "x"}, "not one of"),
        ({"identity": "assumed"}, "has no evidence"),
        ({"identity": "assumed", "evidence": "x", "tasks": [{"name": "t", "items": 3}]}, "needs a metric"),
        ({"identity": "assumed", "evidence": "x", "metric": "acc", "tasks": {"a": "t"}}, "list of {name, items}"),
        ({"identity": "none", "evidence": "x", "colour": 1}, "unknown keys ['colour']"),
    ],
)
def test_a_bad_block_names_the_catalog_and_the_key(block, message):
    with pytest.raises(DataError, match="lm_eval") as err:
        parse_block("toy", block)
    assert message in str(err.value)


def test_blocks_must_cover_the_items():
    block = {
        "identity": "assumed",
        "evidence": "x",
        "metric": "acc",
        "tasks": [{"name": "a", "items": 3}, {"name": "b", "items": 2}],
    }
    columns, facts = catalog_columns("toy", block, 5)
    assert columns[TASK_COLUMN] == ["a", "a", "a", "b", "b"] and list(columns[DOC_COLUMN]) == [0, 1, 2, 0, 1]
    assert facts["tasks"] == {
        "a": {"metric": "acc", "filter": "none", "docs": 3},
        "b": {"metric": "acc", "filter": "none", "docs": 2},
    }
    with pytest.raises(DataError, match="cover 5 items, the dump has 6"):
        catalog_columns("toy", block, 6)


needs_mirror = pytest.mark.skipif(not (MIRROR / "benchmark-prediction").is_dir(), reason="needs ../shared/raw")


@pytest.fixture(scope="module")
def musr(tmp_path_factory):
    """MuSR ingested as the workflow does, into a results folder of its own."""
    data = tmp_path_factory.mktemp("results")
    spec = CATALOG["musr"]
    tables = build_tables(spec, MIRROR, log=lambda *_: None)
    folder = data / "data" / "musr"
    write_tables(tables, {k: folder / f"{k}.parquet" for k in ("responses", "models", "items")})
    return data


@needs_mirror
def test_the_ingest_writes_the_columns_and_the_facts(musr):
    items = pd.read_parquet(musr / "data" / "musr" / "items.parquet")
    assert list(items.columns) == ["item_idx", "item_id", "subtask", "subtask_position", TASK_COLUMN, DOC_COLUMN]
    assert items[TASK_COLUMN].iloc[[0, 250, 506]].tolist() == [
        "leaderboard_musr_murder_mysteries",
        "leaderboard_musr_object_placements",
        "leaderboard_musr_team_allocation",
    ]
    assert (items[DOC_COLUMN] == items["subtask_position"]).all()
    facts = read_facts(musr / "data" / "musr" / "items.parquet")
    assert facts["identity"] == "assumed" and facts["tasks"]["leaderboard_musr_object_placements"]["docs"] == 256
    hmap = harness_map(load_leaderboard("musr", musr))
    assert hmap.items[300] == ("leaderboard_musr_object_placements", 50) and hmap.display is None


#: the slow methods' fast settings
PARAMS = FAST
#: MuSR's models that make the lab's leaderboard (the last model is the held-out one)
LAB_MODELS = 60


@pytest.fixture(scope="module")
def lab(musr, tmp_path_factory):
    """A lab's leaderboard built from harness logs of real MuSR rows (its first 60 models), so that
    every method fits in seconds; the held-out model is MuSR's last."""
    root = tmp_path_factory.mktemp("musr_lab")
    board = load_leaderboard("musr", musr)
    hmap = harness_map(board)
    for i in range(LAB_MODELS):
        answers = dict(enumerate(board.matrix.scores[i]))
        write_logs(root / "zoo", board.matrix.model_ids[i], answers, hmap, np.random.default_rng(i))
    assert main(["leaderboard", "from-lm-eval", str(root / "zoo"), "--out", str(root / "board.parquet")]) == 0
    return {"root": root, "row": board.matrix.scores[-1], "catalog": hmap}


def select_rounds(select_args: list[str], hmap, row, tmp_path) -> tuple[list[str], dict[int, float]]:
    """``select --format lm-eval`` round by round, each round's documents answered (from ``row``)
    through harness logs; the log folders and the answers (item index -> score)."""
    rounds: list[str] = []
    answered: dict[int, float] = {}
    index = hmap.index()
    for k in range(1, 6):
        samples = tmp_path / f"s{k}.json"
        assert main([*select_args, "--out", str(samples), *(["--answers", *rounds] if rounds else [])]) == 0
        if not samples.exists():
            break
        batch = {index[(t, d)]: row[index[(t, d)]] for t, docs in json.loads(samples.read_text()).items() for d in docs}
        write_logs(tmp_path / f"r{k}", "org/held-out", batch, hmap, np.random.default_rng(k))
        rounds.append(str(tmp_path / f"r{k}"))
        answered.update(batch)
        samples.rename(tmp_path / f"done{k}.json")
    return rounds, answered


def same_estimate(common: list[str], rounds, answered, item_ids, tmp_path) -> None:
    assert main(["estimate", *common, "--answers", *rounds, "--out", str(tmp_path / "logs.json")]) == 0
    ids = [item_ids[j] for j in answered]
    pd.DataFrame({"item_id": ids, "score": [int(v) for v in answered.values()]}).to_csv(tmp_path / "a.csv", index=False)
    assert main(["estimate", *common, "--answers", str(tmp_path / "a.csv"), "--out", str(tmp_path / "csv.json")]) == 0
    assert (tmp_path / "logs.json").read_bytes() == (tmp_path / "csv.json").read_bytes()


@needs_mirror
@pytest.mark.parametrize("method", sorted(REGISTRY))
def test_logs_and_csv_give_the_same_estimate_for_every_method(lab, tmp_path, method):
    """MuSR's held-out model answers through harness logs (per task, two filters, the lines of two
    processes), round by round for adaptive methods; then the same answers as a CSV: the same bytes."""
    board = load_leaderboard(str(lab["root"] / "board.parquet"))
    hmap = harness_map(board)
    row = dict(zip(hmap.items, lab["row"]))  # the held-out model's answers by (task, doc_id)
    row = np.array([row[key] for key in hmap.items])
    params = ["--params", json.dumps(PARAMS[method])] if method in PARAMS else []
    common = [
        str(lab["root"] / "board.parquet"),
        "--method",
        method,
        "--budget",
        "40",
        "--data-dir",
        str(tmp_path / "fits"),
        "--folds",
        "2",
        *params,
    ]
    rounds, answered = select_rounds(["select", *common, "--format", "lm-eval"], hmap, row, tmp_path)
    same_estimate(common, rounds, answered, board.matrix.item_ids, tmp_path)


@needs_mirror
def test_the_catalog_dataset_round_trip(musr, lab, tmp_path):
    """The same on the catalog's own MuSR (its items.parquet identity), with Random-Sampling."""
    common = ["musr", "--method", "random_sampling", "--budget", "40", "--data-dir", str(musr), "--folds", "2"]
    board = load_leaderboard("musr", musr)
    rounds, answered = select_rounds(["select", *common, "--format", "lm-eval"], lab["catalog"], lab["row"], tmp_path)
    assert len(rounds) == 1 and len(answered) == 40
    same_estimate(common, rounds, answered, board.matrix.item_ids, tmp_path)


@needs_mirror
def test_the_speed_table_times_the_harness_path(musr):
    """The held-out study's command-line timing covers ``--format lm-eval`` and harness-log answers."""
    from benchcast.new_model.fits import build_fit
    from benchcast.studies.heldout_intervals.heldout import cli_seconds

    build_fit(load_leaderboard("musr", musr), "random_sampling", None, 20, 0, 2, musr, log=lambda *_: None)
    seconds = cli_seconds("musr", "random_sampling", 20, musr, None, 2, 0)
    assert seconds["lm_eval_select_seconds"] > 0 and seconds["lm_eval_estimate_seconds"] > 0
    assert seconds["select_calls"] == 2  # the batch, then "complete"


@needs_mirror
def test_gpqa_main_estimates_are_also_given_on_the_leaderboards_normalised_scale(tmp_path, capsys):
    spec = CATALOG["mdad_gpqa"]
    folder = tmp_path / "data" / "mdad_gpqa"
    write_tables(
        build_tables(spec, MIRROR, log=lambda *_: None),
        {k: folder / f"{k}.parquet" for k in ("responses", "models", "items")},
    )
    board = load_leaderboard("mdad_gpqa", tmp_path)
    answers = tmp_path / "a.csv"
    common = ["mdad_gpqa", "--method", "random_sampling", "--budget", "40", "--data-dir", str(tmp_path), "--folds", "2"]
    assert main(["select", *common, "--out", str(answers)]) == 0
    picked = pd.read_csv(answers)
    picked["score"] = picked.item_id.map(dict(zip(board.matrix.item_ids, board.matrix.scores[0].astype(int))))
    picked.to_csv(answers, index=False)
    assert main(["estimate", *common, "--answers", str(answers), "--out", str(tmp_path / "e.json")]) == 0
    result = json.loads((tmp_path / "e.json").read_text())
    d = result["display"]
    for key in ("estimate", "lower", "upper"):
        assert d[key] == pytest.approx(100 * max(0.0, (result[key] - 0.25) / 0.75))
    assert "applied to GPQA-main" in d["scale"] and "on the leaderboard's scale" in capsys.readouterr().out
