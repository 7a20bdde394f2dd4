"""Tests for benchcast.data.aggregate on small inputs written by the tests themselves.

Nothing here reads the raw mirror: every JSON/CSV is built in tmp_path, shaped like
the real files (same keys and column names) but a few rows big.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchcast.data import aggregate as agg
from benchcast.data.aggregate import (
    AggregateTables,
    model_metadata_for,
    read_benchpress,
    read_llm_benchmark_matrix,
    read_sloth_leaderboard,
    write_aggregate,
)
from benchcast.errors import DataError

# --------------------------------------------------------------------------- builders


def _prov(url, status="verified", type_="official_blog"):
    return {
        "url": url,
        "type": type_,
        "matches_canonical": True,
        "reported_setting": None,
        "audit_status": status,
        "notes": None,
    }


def benchpress_doc():
    """3 models x 4 benchmarks, with the quirks of the real file in miniature."""
    models = [
        {
            "id": "m-a",
            "name": "Model A",
            "provider": "OpenAI",
            "reasoning": True,
            "release_date": "2025-01-31",
            "canonical_setting": {"mode": "thinking", "temperature": "default"},
            "open_weights": False,
        },
        {
            "id": "m-b",
            "name": "Model B",
            "provider": "Google",
            "reasoning": False,
            "release_date": "2024-09",
            "canonical_setting": {"mode": "non-thinking", "temperature": 0.0},
            "open_weights": None,
        },
        {
            "id": "m-c",
            "name": "Model C",
            "provider": "Meta",
            "reasoning": False,
            "release_date": "2025",
            "canonical_setting": None,
            "open_weights": True,
        },
    ]
    benchmarks = [
        {"id": "b1", "name": "Bench 1"},
        {"id": "b2", "name": "Bench 2"},
        {"id": "elo", "name": "Arena Elo"},
        {"id": "b4", "name": "Bench 4"},
    ]
    observed = [
        [87.3, None, 1338.0, 10],
        [None, None, None, None],  # a model with no observed cell stays in the tables
        [50.5, 0.0, None, 12.25],
    ]
    sources = [
        [
            _prov("https://a/1"),
            _prov("https://a/dropped", status="dropped"),  # null cell: not ingested
            _prov("https://a/elo", status="dropped", type_=None),
            None,
        ],  # dropped but kept; no provenance
        [None, None, None, None],
        [
            _prov("https://c/1", type_=""),
            _prov("https://c/2", status="verified_third_party", type_="third_party_aggregator"),
            None,
            _prov("https://c/4", status="needs_review"),
        ],
    ]
    return {
        "models": models,
        "benchmarks": benchmarks,
        "predictions": [[0.0] * 4] * 3,
        "observed": observed,
        "sources": sources,
        "meta": {"method": "x"},
    }


def write_json(tmp_path, doc, name="data.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc), encoding="utf-8")
    return p


def llm_matrix_doc():
    return {
        "models": [
            {
                "id": "gpt-oss-120b",
                "name": "gpt-oss-120B",
                "provider": "OpenAI",
                "release_date": "2025-08-05",
                "params_total_M": 116800,
                "params_active_M": 5100,
                "architecture": "MoE",
                "is_reasoning": True,
                "open_weights": True,
            },
            {
                "id": "o3",
                "name": "o3",
                "provider": "OpenAI",
                "release_date": "2025-04-16",
                "params_total_M": None,
                "params_active_M": None,
                "architecture": None,
                "is_reasoning": True,
                "open_weights": False,
            },
        ],
        "benchmarks": [
            {
                "id": "gpqa",
                "name": "GPQA Diamond",
                "category": "Science",
                "metric": "% correct",
                "num_problems": 198,
                "source_url": "https://arxiv.org/abs/2311.12022",
            },
            {
                "id": "cf",
                "name": "Codeforces",
                "category": "Coding",
                "metric": "Elo rating",
                "num_problems": None,
                "source_url": "https://codeforces.com",
            },
        ],
        # File order is not (model, benchmark) order, ints appear, and one cell repeats.
        "scores": [
            {"model_id": "o3", "benchmark_id": "cf", "score": 2706, "reference_url": "https://o3/cf"},
            {"model_id": "gpt-oss-120b", "benchmark_id": "gpqa", "score": 80.1, "reference_url": "https://g/1"},
            {"model_id": "o3", "benchmark_id": "gpqa", "score": 83.3, "reference_url": "https://o3/gpqa"},
            {"model_id": "gpt-oss-120b", "benchmark_id": "gpqa", "score": 79.0, "reference_url": "https://g/2"},
        ],
        "generated": "2026-02-24T12:03:39.038392",
    }


V2_HEADER = (
    "T,Model,Average ⬆️,IFEval,IFEval Raw,MATH Lvl 5,Type,Architecture,Precision,Not_Merged,"
    "#Params (B),Hub ❤️,Flagged,Submission Date,Upload To Hub Date\n"
)


def write_v2_csv(tmp_path, rows=None, header=V2_HEADER, name="open-llm-leaderboard_new.csv"):
    rows = (
        rows
        if rows is not None
        else [
            # float16 row first: the choice must not depend on row order
            '💬,01-ai/Yi-1.5-34B-Chat,33.4,60.67,0.61,15.0,"💬 chat models (RLHF, DPO, IFT, ...)",'
            "LlamaForCausalLM,float16,True,34,10,True,2024-06-12,2024-05-10",
            "🟢,01-ai/Yi-1.5-34B,25.7,28.41,0.28,14.2,🟢 pretrained,LlamaForCausalLM,bfloat16,True,34,45,True,"
            "2024-06-12,2024-05-15",
            '💬,01-ai/Yi-1.5-34B-Chat,33.9,61.00,0.61,15.5,"💬 chat models (RLHF, DPO, IFT, ...)",'
            "LlamaForCausalLM,bfloat16,True,34,10,True,2024-06-13,2024-05-10",
            "🟢,openai-community/gpt2,6.5,17.8,0.18,0.5,🟢 pretrained,GPT2LMHeadModel,bfloat16,True,0,2,True,"
            "2024-06-26,",
        ]
    )
    p = tmp_path / name
    p.write_text(header + "\n".join(rows) + "\n", encoding="utf-8")
    return p


def assert_field(excinfo, *fragments):
    msg = str(excinfo.value)
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"
    assert "Fix:" in msg


# --------------------------------------------------------------------------- BenchPress


def test_benchpress_happy_path(tmp_path):
    t = read_benchpress(write_json(tmp_path, benchpress_doc()))
    assert t.shape == (3, 4)
    assert t.models["model_id"].tolist() == ["m-a", "m-b", "m-c"]
    assert t.benchmarks["benchmark_id"].tolist() == ["b1", "b2", "elo", "b4"]
    assert len(t.scores) == 6
    # sorted by (model order, benchmark order)
    assert list(zip(t.scores.model_id, t.scores.benchmark_id)) == [
        ("m-a", "b1"),
        ("m-a", "elo"),
        ("m-a", "b4"),
        ("m-c", "b1"),
        ("m-c", "b2"),
        ("m-c", "b4"),
    ]
    assert t.scores["score"].dtype == np.float64
    assert t.scores["score"].tolist() == [87.3, 1338.0, 10.0, 50.5, 0.0, 12.25]
    s = t.scores.set_index(["model_id", "benchmark_id"])
    # dropped-but-present value is kept, with its status and NA type
    assert s.loc[("m-a", "elo"), "audit_status"] == "dropped"
    assert pd.isna(s.loc[("m-a", "elo"), "source_type"])
    # a cell without provenance has NA source columns
    assert s.loc[("m-a", "b4")][["source_url", "source_type", "audit_status"]].isna().all()
    assert pd.isna(s.loc[("m-c", "b1"), "source_type"])  # '' -> NA
    assert s.loc[("m-c", "b2"), "audit_status"] == "verified_third_party"
    assert s.loc[("m-c", "b4"), "source_url"] == "https://c/4"

    m = t.models.set_index("model_id")
    assert str(m["reasoning"].dtype) == "boolean" and str(m["open_weights"].dtype) == "boolean"
    assert pd.isna(m.loc["m-b", "open_weights"])
    assert m["release_date"].dtype == "datetime64[ns]"
    assert m.loc["m-b", "release_date"] == pd.Timestamp("2024-09-01")
    assert m.loc["m-c", "release_date"] == pd.Timestamp("2025-01-01")
    assert m["release_date_precision"].tolist() == ["day", "month", "year"]
    assert m.loc["m-a", "canonical_setting_mode"] == "thinking"
    # mixed str/number values become one string column, strings unquoted
    assert m["canonical_setting_temperature"].tolist()[:2] == ["default", "0.0"]
    assert pd.isna(m.loc["m-c", "canonical_setting_mode"])
    assert t.benchmarks["category"].isna().all() and t.benchmarks["metric"].isna().all()


def test_benchpress_to_matrix(tmp_path):
    mat = read_benchpress(write_json(tmp_path, benchpress_doc())).to_matrix()
    assert mat.shape == (3, 4)
    assert mat.index.tolist() == ["m-a", "m-b", "m-c"]
    assert mat.columns.tolist() == ["b1", "b2", "elo", "b4"]
    assert (mat.dtypes == np.float64).all()
    assert mat.loc["m-a", "elo"] == 1338.0
    assert mat.loc["m-c", "b2"] == 0.0
    assert mat.loc["m-b"].isna().all()
    assert int(mat.notna().sum().sum()) == 6


@pytest.mark.parametrize("key", ["models", "benchmarks", "observed", "sources"])
def test_benchpress_missing_key(tmp_path, key):
    doc = benchpress_doc()
    del doc[key]
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field == key
    assert_field(ei, f"field '{key}'", "data.json")


def test_benchpress_observed_wrong_row_count(tmp_path):
    doc = benchpress_doc()
    doc["observed"] = doc["observed"][:2]
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field == "observed"
    assert_field(ei, "2 rows", "expected 3")


def test_benchpress_ragged_observed_row(tmp_path):
    doc = benchpress_doc()
    doc["observed"][1] = [None, None, None]
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field == "observed[1]"
    assert_field(ei, "3 entries", "expected 4")


def test_benchpress_sources_shape_mismatch(tmp_path):
    doc = benchpress_doc()
    doc["sources"][2] = doc["sources"][2][:3]
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field == "sources[2]"


@pytest.mark.parametrize("bad", ["87.1", True, [1.0], {"v": 1}])
def test_benchpress_non_numeric_cell(tmp_path, bad):
    doc = benchpress_doc()
    doc["observed"][2][1] = bad
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field.startswith("observed[2][1]")
    assert_field(ei, "observed[2][1]", "m-c", "b2")


def test_benchpress_non_finite_cell(tmp_path):
    p = tmp_path / "data.json"
    # json.dumps writes NaN, which Python's json accepts back: the reader must refuse it.
    doc = benchpress_doc()
    doc["observed"][0][0] = float("nan")
    p.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError) as ei:
        read_benchpress(p)
    assert_field(ei, "observed[0][0]", "not finite")


def test_benchpress_duplicate_model_id(tmp_path):
    doc = benchpress_doc()
    doc["models"][2]["id"] = "m-a"
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field == "models[2].id"
    assert_field(ei, "duplicate id 'm-a'", "models[0]")


def test_benchpress_duplicate_benchmark_id(tmp_path):
    doc = benchpress_doc()
    doc["benchmarks"][3]["id"] = "b2"
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field == "benchmarks[3].id"
    assert_field(ei, "duplicate id 'b2'")


def test_benchpress_missing_model_id_and_bad_metadata(tmp_path):
    doc = benchpress_doc()
    del doc["models"][1]["id"]
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field == "models[1].id"

    doc = benchpress_doc()
    doc["models"][0]["release_date"] = "Jan 2025"
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field == "models[0].release_date"

    doc = benchpress_doc()
    doc["models"][0]["reasoning"] = "yes"
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field == "models[0].reasoning"


def test_benchpress_bad_provenance(tmp_path):
    doc = benchpress_doc()
    doc["sources"][0][0] = "https://a/1"
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, doc))
    assert ei.value.field == "sources[0][0]"


def test_benchpress_unreadable_json(tmp_path):
    p = tmp_path / "data.json"
    p.write_text(json.dumps(benchpress_doc())[:-40], encoding="utf-8")  # truncated download
    with pytest.raises(DataError) as ei:
        read_benchpress(p)
    assert ei.value.field.startswith("(JSON syntax, line 1")
    assert_field(ei, "JSON syntax", "truncated")


def test_benchpress_missing_file_and_wrong_top_level(tmp_path):
    with pytest.raises(DataError) as ei:
        read_benchpress(tmp_path / "nope.json")
    assert_field(ei, "nope.json", "does not exist")
    with pytest.raises(DataError) as ei:
        read_benchpress(write_json(tmp_path, [1, 2, 3]))
    assert ei.value.field == "(top level)"


# --------------------------------------------------------------------------- llm-benchmark-matrix


def test_llm_matrix_happy_path(tmp_path):
    t = read_llm_benchmark_matrix(write_json(tmp_path, llm_matrix_doc()))
    assert t.shape == (2, 2)
    # 4 records, one repeated cell -> 3 cells, in (model, benchmark) order
    assert list(zip(t.scores.model_id, t.scores.benchmark_id)) == [
        ("gpt-oss-120b", "gpqa"),
        ("o3", "gpqa"),
        ("o3", "cf"),
    ]
    assert t.scores["score"].dtype == np.float64
    assert t.scores["score"].tolist() == [80.1, 83.3, 2706.0]
    assert t.scores["source_url"].tolist() == ["https://g/1", "https://o3/gpqa", "https://o3/cf"]
    assert t.scores["source_type"].isna().all()
    # first record kept; the later, different value marks the cell
    assert t.scores["audit_status"].iloc[0] == "conflicting_duplicate"
    assert t.scores["audit_status"].iloc[1:].isna().all()

    m = t.models.set_index("model_id")
    assert m.loc["gpt-oss-120b", "params_total_b"] == pytest.approx(116.8)
    assert m.loc["gpt-oss-120b", "params_active_b"] == pytest.approx(5.1)
    assert math.isnan(m.loc["o3", "params_total_b"])
    assert bool(m.loc["o3", "reasoning"]) is True and bool(m.loc["o3", "open_weights"]) is False
    assert m.loc["o3", "release_date"] == pd.Timestamp("2025-04-16")
    assert m.loc["gpt-oss-120b", "architecture"] == "MoE" and pd.isna(m.loc["o3", "architecture"])
    b = t.benchmarks.set_index("benchmark_id")
    assert b.loc["cf", "metric"] == "Elo rating" and b.loc["gpqa", "category"] == "Science"
    assert str(b["num_problems"].dtype) == "Int64" and b.loc["gpqa", "num_problems"] == 198
    assert pd.isna(b.loc["cf", "num_problems"])

    mat = t.to_matrix()
    assert mat.loc["o3", "cf"] == 2706.0 and math.isnan(mat.loc["gpt-oss-120b", "cf"])


def test_llm_matrix_same_value_duplicate_is_not_flagged(tmp_path):
    doc = llm_matrix_doc()
    doc["scores"][3]["score"] = 80.1
    t = read_llm_benchmark_matrix(write_json(tmp_path, doc))
    assert t.scores["audit_status"].isna().all()


def test_llm_matrix_duplicate_cell_error_mode(tmp_path):
    with pytest.raises(DataError) as ei:
        read_llm_benchmark_matrix(write_json(tmp_path, llm_matrix_doc()), on_duplicate="error")
    assert ei.value.field == "scores[3]"
    assert_field(ei, "scores[1]", "gpt-oss-120b", "gpqa")


@pytest.mark.parametrize("key", ["models", "benchmarks", "scores"])
def test_llm_matrix_missing_key(tmp_path, key):
    doc = llm_matrix_doc()
    del doc[key]
    with pytest.raises(DataError) as ei:
        read_llm_benchmark_matrix(write_json(tmp_path, doc))
    assert ei.value.field == key


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["scores"][0].__setitem__("score", "n/a"), "scores[0].score"),
        (lambda d: d["scores"][1].__setitem__("model_id", "ghost"), "scores[1].model_id"),
        (lambda d: d["scores"][2].__setitem__("benchmark_id", "ghost"), "scores[2].benchmark_id"),
        (lambda d: d["scores"][2].pop("score"), "scores[2].score"),
        (lambda d: d["models"][1].__setitem__("id", "gpt-oss-120b"), "models[1].id"),
        (lambda d: d["benchmarks"][1].__setitem__("id", "gpqa"), "benchmarks[1].id"),
        (lambda d: d["models"][0].__setitem__("params_total_M", "117B"), "models[0].params_total_M"),
    ],
)
def test_llm_matrix_bad_inputs(tmp_path, mutate, field):
    doc = copy.deepcopy(llm_matrix_doc())
    mutate(doc)
    with pytest.raises(DataError) as ei:
        read_llm_benchmark_matrix(write_json(tmp_path, doc))
    assert ei.value.field.startswith(field)
    assert_field(ei, field)


def test_llm_matrix_unreadable_json(tmp_path):
    p = tmp_path / "llm.json"
    p.write_bytes(b"\xff\xfe not json")
    with pytest.raises(DataError) as ei:
        read_llm_benchmark_matrix(p)
    assert_field(ei, "llm.json", "JSON")


# --------------------------------------------------------------------------- sloth CSVs


def test_sloth_v2_happy_path(tmp_path):
    df = read_sloth_leaderboard(write_v2_csv(tmp_path))
    assert df.attrs["layout"] == "open_llm_v2"
    assert df["model"].tolist() == ["01-ai/Yi-1.5-34B-Chat", "01-ai/Yi-1.5-34B", "openai-community/gpt2"]
    assert df.attrs["score_columns"] == ["average", "ifeval", "ifeval_raw", "math_lvl_5"]
    assert "T" not in df.columns and "t" not in df.columns
    chat = df.set_index("model").loc["01-ai/Yi-1.5-34B-Chat"]
    # bfloat16 evaluation wins although the float16 row comes first
    assert chat["precision"] == "bfloat16" and chat["ifeval"] == 61.0 and chat["n_evaluations"] == 2
    assert chat["submission_date"] == pd.Timestamp("2024-06-13")
    assert chat["model_type"] == "chat models (RLHF, DPO, IFT, ...)"
    gpt2 = df.set_index("model").loc["openai-community/gpt2"]
    assert pd.isna(gpt2["params_b"])  # 0 B means "unknown / under 0.5 B"
    assert pd.isna(gpt2["upload_date"])
    assert df["params_b"].dtype == np.float64 and df["params_b"].iloc[1] == 34.0
    assert str(df["hub_likes"].dtype) == "Int64"
    assert str(df["not_merged"].dtype) == "boolean"
    assert df["submission_date"].dtype == "datetime64[ns]"
    assert df["math_lvl_5"].dtype == np.float64
    assert df.columns.get_loc("n_evaluations") < df.columns.get_loc("average")


def test_sloth_duplicate_choice_is_order_independent(tmp_path):
    p1 = write_v2_csv(tmp_path, name="a.csv")
    rows = (tmp_path / "a.csv").read_text(encoding="utf-8").splitlines()
    p2 = tmp_path / "b.csv"
    p2.write_text("\n".join([rows[0], rows[3], rows[2], rows[1], rows[4]]) + "\n", encoding="utf-8")
    a = read_sloth_leaderboard(p1).set_index("model").sort_index()
    b = read_sloth_leaderboard(p2).set_index("model").sort_index()
    pd.testing.assert_frame_equal(a, b)


def test_sloth_v1_and_curated_dates(tmp_path):
    v1 = tmp_path / "old.csv"
    v1.write_text(
        "T,Model,Average ⬆️,ARC,GSM8K,Type,Precision,Merged,#Params (B),date\n"
        "🔶,org/a,60.0,61.0,40.0,🔶 fine-tuned on domain-specific datasets,float16,True,7,2024-05-05T12:22:44Z\n"
        "?,org/b,50.0,51.0,30.0,,bfloat16,False,13,2023-09-15T11:25:37.918274\n"
        "?,org/c,40.0,41.0,,,GPTQ,False,0,\n",
        encoding="utf-8",
    )
    df = read_sloth_leaderboard(v1)
    assert df.attrs["layout"] == "open_llm_v1"
    assert "release_date" not in df.columns
    assert df["submission_date"].tolist()[:2] == [
        pd.Timestamp("2024-05-05 12:22:44"),
        pd.Timestamp("2023-09-15 11:25:37.918274"),
    ]
    assert pd.isna(df["model_type"].iloc[1]) and math.isnan(df["gsm8k"].iloc[2])

    cur = tmp_path / "data_v2.csv"
    cur.write_text(
        ",Model,Family,Instruct,date,#Params (B),Pretraining Data Size (T),FLOPs (1E21),IFEval,"
        "MATH Lvl 5,hendrycksTest-anatomy,Arena-Elo\n"
        "0,bloom,bloom,False,,176.0,0.366,386.496,,,,\n"
        "1,yi-1.5-34b,yi-1.5,False,2024-05-16,34.0,3.5,714.0,0.28,0.14,0.7,0.5\n",
        encoding="utf-8",
    )
    df = read_sloth_leaderboard(cur)
    assert df.attrs["layout"] == "curated"
    assert list(df.columns) == [
        "model",
        "family",
        "instruct",
        "release_date",
        "params_b",
        "pretraining_tokens_t",
        "flops_1e21",
        "n_evaluations",
        "ifeval",
        "math_lvl_5",
        "hendryckstest_anatomy",
        "arena_elo",
    ]
    assert df["release_date"].iloc[1] == pd.Timestamp("2024-05-16") and pd.isna(df["release_date"].iloc[0])
    assert df["flops_1e21"].iloc[0] == pytest.approx(386.496)


def test_sloth_missing_model_column(tmp_path):
    p = write_v2_csv(tmp_path, header=V2_HEADER.replace(",Model,", ",Name,"))
    with pytest.raises(DataError) as ei:
        read_sloth_leaderboard(p)
    assert ei.value.field == "Model"
    assert_field(ei, "field 'Model'", "required column is missing")


def test_sloth_duplicate_without_precision_column(tmp_path):
    p = tmp_path / "data_v1.csv"
    p.write_text("Model,Family,IFEval\nbloom,bloom,0.1\nbloom,bloom,0.2\n", encoding="utf-8")
    with pytest.raises(DataError) as ei:
        read_sloth_leaderboard(p)
    assert_field(ei, "column 'Model', row 1", "duplicate model name 'bloom'")


def test_sloth_duplicate_model_and_precision(tmp_path):
    rows = [
        "🟢,org/x,1,2,0.2,3,🟢 pretrained,A,bfloat16,True,7,1,True,2024-06-12,2024-05-15",
        "🟢,org/x,1,2,0.2,3,🟢 pretrained,A,bfloat16,True,7,1,True,2024-06-13,2024-05-15",
    ]
    with pytest.raises(DataError) as ei:
        read_sloth_leaderboard(write_v2_csv(tmp_path, rows=rows))
    assert_field(ei, "'Model'+'Precision'", "org/x", "bfloat16")


@pytest.mark.parametrize(
    "row, field",
    [
        ("🟢,org/x,1,abc,0.2,3,🟢 pretrained,A,bfloat16,True,7,1,True,2024-06-12,2024-05-15", "column 'IFEval', row 0"),
        (
            "🟢,org/x,1,2,0.2,3,🟢 pretrained,A,bfloat16,True,7,1,True,12/06/2024x,2024-05-15",
            "column 'Submission Date', row 0",
        ),
        (
            "🟢,org/x,1,2,0.2,3,🟢 pretrained,A,bfloat16,maybe,7,1,True,2024-06-12,2024-05-15",
            "column 'Not_Merged', row 0",
        ),
        ("🟢,,1,2,0.2,3,🟢 pretrained,A,bfloat16,True,7,1,True,2024-06-12,2024-05-15", "column 'Model', row 0"),
    ],
)
def test_sloth_bad_cells(tmp_path, row, field):
    with pytest.raises(DataError) as ei:
        read_sloth_leaderboard(write_v2_csv(tmp_path, rows=[row]))
    assert ei.value.field.startswith(field)
    assert_field(ei, field, "line 2")


def test_sloth_unreadable_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DataError) as ei:
        read_sloth_leaderboard(empty)
    assert_field(ei, "empty.csv")
    with pytest.raises(DataError) as ei:
        read_sloth_leaderboard(tmp_path / "missing.csv")
    assert_field(ei, "missing.csv", "does not exist")


# --------------------------------------------------------------------------- model_metadata_for


def _metadata():
    return pd.DataFrame(
        {
            "model": pd.Series(["01-ai/Yi-1.5-34B", "Org/Mixed-Case", "dup/A", "dup/a"], dtype="str"),
            "params_b": [34.0, 7.0, 1.0, 2.0],
            "release_date": pd.to_datetime(["2024-05-16", "2024-01-01", None, None]).astype("datetime64[ns]"),
            "instruct": pd.array([False, True, None, None], dtype="boolean"),
        }
    )


def test_model_metadata_for_matching():
    names = ["org/mixed-case", "unknown/model", "01-ai/Yi-1.5-34B", "DUP/A", "dup/a", "01-ai/Yi-1.5-34B"]
    out = model_metadata_for(names, _metadata())
    assert out["query"].tolist() == names
    assert out["match"].tolist()[:1] == ["case_insensitive"]
    assert pd.isna(out["match"].iloc[1])
    assert out["match"].tolist()[2:] == ["exact", "ambiguous", "exact", "exact"]
    assert out["model"].tolist()[0] == "Org/Mixed-Case"
    assert out["params_b"].tolist()[0] == 7.0 and out["params_b"].tolist()[2] == 34.0
    assert out["params_b"].iloc[4] == 2.0
    assert math.isnan(out["params_b"].iloc[1]) and math.isnan(out["params_b"].iloc[3])
    assert out["release_date"].iloc[2] == pd.Timestamp("2024-05-16") and pd.isna(out["release_date"].iloc[1])
    assert str(out["instruct"].dtype) == "boolean"
    assert list(out.columns) == ["query", "match", "model", "params_b", "release_date", "instruct"]


def test_model_metadata_for_with_reader_output(tmp_path):
    md = read_sloth_leaderboard(write_v2_csv(tmp_path))
    out = model_metadata_for(["01-ai/yi-1.5-34b", "nobody/x"], md)
    assert out["params_b"].iloc[0] == 34.0 and out["match"].iloc[0] == "case_insensitive"
    assert out["model"].isna().iloc[1]
    assert len(model_metadata_for([], md)) == 0


def test_model_metadata_for_bad_inputs():
    with pytest.raises(DataError) as ei:
        model_metadata_for("01-ai/Yi-1.5-34B", _metadata())
    assert ei.value.field == "names"
    with pytest.raises(DataError) as ei:
        model_metadata_for(["a", None], _metadata())
    assert ei.value.field == "names[1]"
    md = _metadata()
    md.loc[1, "model"] = "dup/A"
    with pytest.raises(DataError) as ei:
        model_metadata_for(["a"], md)
    assert ei.value.field == "metadata.model"
    with pytest.raises(DataError) as ei:
        model_metadata_for(["a"], _metadata().rename(columns={"model": "name"}))
    assert ei.value.field == "metadata.model"


# --------------------------------------------------------------------------- tables + writing


def test_to_matrix_rejects_inconsistent_tables(tmp_path):
    t = read_benchpress(write_json(tmp_path, benchpress_doc()))
    bad = AggregateTables(t.models, t.benchmarks, pd.concat([t.scores, t.scores.iloc[:1]], ignore_index=True))
    with pytest.raises(DataError) as ei:
        bad.to_matrix()
    assert_field(ei, "more than once")
    ghost = t.scores.copy()
    ghost.loc[0, "model_id"] = "ghost"
    with pytest.raises(DataError) as ei:
        AggregateTables(t.models, t.benchmarks, ghost).to_matrix()
    assert ei.value.field == "scores.model_id"
    with pytest.raises(DataError) as ei:
        AggregateTables(t.models.drop(columns="release_date"), t.benchmarks, t.scores)
    assert ei.value.field == "models"


def test_write_aggregate_roundtrip_and_determinism(tmp_path):
    t = read_benchpress(write_json(tmp_path, benchpress_doc()))
    paths = write_aggregate(t, tmp_path / "out1")
    write_aggregate(t, tmp_path / "out2")
    assert sorted(p.name for p in (tmp_path / "out1").iterdir()) == [
        "benchmarks.parquet",
        "models.parquet",
        "scores.parquet",
    ]  # no temp files left behind
    for name in ("models", "benchmarks", "scores"):
        a = (tmp_path / "out1" / f"{name}.parquet").read_bytes()
        assert a == (tmp_path / "out2" / f"{name}.parquet").read_bytes()
        back = pd.read_parquet(paths[name])
        orig = getattr(t, name)
        assert list(back.columns) == list(orig.columns)
        assert isinstance(back.index, pd.RangeIndex)
        assert len(back) == len(orig)
    scores = pd.read_parquet(paths["scores"])
    assert scores["score"].tolist() == t.scores["score"].tolist()
    models = pd.read_parquet(paths["models"])
    assert models["release_date"].tolist() == t.models["release_date"].tolist()
    import pyarrow.parquet as pq

    assert pq.ParquetFile(paths["scores"]).metadata.row_group(0).column(0).compression == "ZSTD"


def test_write_aggregate_is_atomic_on_failure(tmp_path, monkeypatch):
    t = read_llm_benchmark_matrix(write_json(tmp_path, llm_matrix_doc()))
    out = tmp_path / "out"
    write_aggregate(t, out)
    before = (out / "models.parquet").read_bytes()

    import pyarrow.parquet as pq

    def half_write(table, where, **kwargs):
        with open(where, "wb") as fh:
            fh.write(b"PAR1 half")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", half_write)
    with pytest.raises(OSError):
        write_aggregate(t, out)
    assert (out / "models.parquet").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["benchmarks.parquet", "models.parquet", "scores.parquet"]


def test_module_never_uses_pickle():
    modules = sorted(Path(agg.__file__).parent.glob("*.py"))
    assert len(modules) > 5  # every reader of the package is read
    for module in modules:
        src = module.read_text(encoding="utf-8")
        assert "import pickle" not in src and "joblib" not in src, module
