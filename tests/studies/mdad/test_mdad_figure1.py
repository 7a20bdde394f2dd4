"""MDAD's Figure 1 in a slice: a size the slice did not run is drawn at the nearest one that ran,
and the panel says so (issue 58 item 5: never four empty axes linked as the paper's figure)."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd

from benchcast.studies.mdad import figures


def test_the_dataset_with_the_most_of_the_papers_sizes_is_drawn():
    mdad = pd.DataFrame(
        {
            "dataset": ["gpqa"] * 3 + ["musr"] * 2 + ["math"] * 2,
            "k": [10, 100, 200, 10, 250, 10, 250],
            "n_source": [300] * 3 + [100] * 2 + [300] * 2,
        }
    )
    # two datasets ran both sizes: the one with more source models wins, as before
    assert figures._pick_figure1_dataset(mdad, [10, 250]) == "math"
    # a slice where none ran 250: the dataset that ran one of them, not "no dataset"
    assert figures._pick_figure1_dataset(mdad[mdad.dataset == "gpqa"], [10, 250]) == "gpqa"
    assert figures.nearest_sizes({10, 25, 50, 100, 200}, [10, 250]) == [10, 200]
    assert figures.nearest_sizes({10, 20, 30}, [15]) == [10]  # ties to the smaller


def test_a_slice_without_the_large_size_draws_the_nearest_and_says_so(tmp_path, monkeypatch):
    rows = [(k, m) for k in (10, 25, 200) for m in ("random", "anchor_points")]
    estimation = pd.DataFrame(
        [{"dataset": "gpqa", "split": "seen", "n_source": 300, "k": k, "method": m, "tau": 0.5} for k, m in rows]
    )
    mdad = estimation.drop(columns="tau").assign(mdad=5.0)
    agreement = pd.concat(
        [mdad.drop(columns="mdad").assign(bin=b, agreement=0.7, pairs=10) for b in (0.0, 1.0, 2.0)], ignore_index=True
    )
    titles = []
    original = figures._save

    def keep_titles(fig, path):
        titles.extend(ax.get_title() for ax in fig.axes)
        original(fig, path)

    monkeypatch.setattr(figures, "_save", keep_titles)
    figures.overview(estimation, agreement, mdad, None, [10, 250], str(tmp_path / "figure1.png"))
    assert "k = 10" in titles and "k = 200 (the paper's panel: 250; not run here)" in titles
    assert (tmp_path / "figure1.png").stat().st_size > 0
