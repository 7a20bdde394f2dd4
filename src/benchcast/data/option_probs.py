"""Multiple-choice dumps that keep every option's probability (TailoredBench's ARC-Challenge, Hellaswag).

Layout (marvelcell/TailoredBench, ``BenchmarkDatasets/<benchmark>/``, read by the released code's
``data/data_processor.py``): ``source_model_alldata.npy`` and ``target_model_alldata.npy`` hold,
per model and question, the model's probability of each answer option -- a numeric
``models x questions x options`` array, or an object ``models x questions`` array of 1-D arrays when
questions have different numbers of options (ARC has 3 to 5) -- and ``gt_label.npy`` the gold
option of each question (int64).

Two matrices come out. ``correct``: 1 where the model's most probable option is the gold one (the
true score is its mean; ``np.argmax``, so the first maximum wins a tie, as in the released code's
``get_arc_hellaswag_true_scores``). ``p_correct``: the probability the model gives the gold option
(``compute_acc_data``) -- paper Section 4.1: "For ARC Challenge and Hellaswag, model correctness is
represented by continuous probabilities"; the released code clusters items and calibrates its
estimate on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchcast.data.safe_pickle import safe_load_npy
from benchcast.errors import DataError, refuse_cells

_LABEL_FIX = "use the gt_label.npy of the same benchmark and commit as the probability files"


@dataclass(frozen=True)
class OptionScores:
    """``correct`` (0/1) and ``p_correct`` (probability of the gold option), models x questions."""

    correct: np.ndarray
    p_correct: np.ndarray


def read_gold_options(path: str | Path) -> np.ndarray:
    """The gold option index per question: a 1-D array of non-negative integers."""
    path = Path(path)
    labels = safe_load_npy(path)
    if labels.dtype == object:
        try:
            labels = labels.astype(np.int64)
        except (TypeError, ValueError) as exc:
            raise DataError(path, "labels", f"not integer option indices ({exc})", "re-download the file") from exc
    if labels.ndim != 1 or labels.dtype.kind not in "iu":
        raise DataError(
            path,
            "labels",
            f"expected a 1-D integer array of gold option indices, got {labels.dtype} {labels.shape}",
            "point files.labels at the benchmark's gt_label.npy",
        )
    if (labels < 0).any():
        j = int(np.argmax(labels < 0))
        raise DataError(path, f"labels[{j}]", f"negative option index {int(labels[j])}", "re-download the file")
    return labels.astype(np.int64)


def score_options(probs: np.ndarray, labels: np.ndarray, path: str | Path) -> OptionScores:
    """Per model and question: did the most probable option win, and what probability had the gold one.

    ``probs`` is a numeric ``models x questions x options`` array or an object ``models x questions``
    array of 1-D option-probability arrays; ``labels`` has one gold index per question (extra
    trailing labels are ignored, as the released code's ``gt[:n_questions]``).
    """
    path = Path(path)
    if probs.ndim >= 2 and probs.shape[1] > labels.size:
        raise DataError(path, "labels", f"{labels.size} gold labels for {probs.shape[1]} questions", _LABEL_FIX)
    if probs.dtype != object:
        if probs.ndim != 3:
            raise DataError(
                path,
                "options",
                f"expected models x questions x options probabilities, got shape {probs.shape}",
                "point the catalog at the per-option probability dump (*_model_alldata.npy)",
            )
        n_models, n_items, n_options = probs.shape
        gold = labels[:n_items]
        if (gold >= n_options).any():
            j = int(np.argmax(gold >= n_options))
            raise DataError(
                path, f"labels[{j}]", f"gold option {int(gold[j])} but questions have {n_options} options", _LABEL_FIX
            )
        values = probs.astype(np.float64)
        p_correct = np.take_along_axis(values, gold[None, :, None], axis=2)[:, :, 0]
        correct = values.argmax(axis=2) == gold[None, :]
    else:
        if probs.ndim != 2:
            raise DataError(
                path,
                "options",
                f"expected a models x questions array of option-probability arrays, got shape {probs.shape}",
                "point the catalog at the per-option probability dump (*_model_alldata.npy)",
            )
        n_models, n_items = probs.shape
        gold = labels[:n_items]
        p_correct = np.empty((n_models, n_items))
        correct = np.empty((n_models, n_items), dtype=bool)
        for (i, j), cell in np.ndenumerate(probs):
            option = np.asarray(cell, dtype=np.float64)
            if option.ndim != 1 or option.size <= gold[j]:
                raise DataError(
                    path,
                    f"[{i}, {j}]",
                    f"{option.size} option probabilities but the gold option is {int(gold[j])}",
                    _LABEL_FIX,
                )
            p_correct[i, j] = option[gold[j]]
            correct[i, j] = int(np.argmax(option)) == gold[j]
    refuse_cells(
        ~np.isfinite(p_correct) | (p_correct < 0) | (p_correct > 1),
        p_correct,
        path,
        "",
        "gold-option value {value!r} is not a probability in [0, 1] ({count} such cells)",
        "export option probabilities (softmax of the option log-likelihoods), not raw scores",
    )
    return OptionScores(correct=correct.astype(np.float64), p_correct=p_correct)


def read_option_dumps(
    source: Path, target: Path, labels_path: Path, max_items: int | None = None
) -> tuple[OptionScores, list[str]]:
    """Source then target rows of an option-probability benchmark, scored against its gold labels.

    ``max_items`` keeps the first questions only (the released code's ``max_dataset_size``, 6000:
    the paper's Hellaswag is the first 6000 of its 10,042 validation questions).
    """
    labels = read_gold_options(labels_path)
    parts, roles = [], []
    for role, path in (("source", source), ("target", target)):
        probs = safe_load_npy(path)
        if probs.ndim < 2:
            raise DataError(path, role, f"expected models x questions, got shape {probs.shape}", "re-download the file")
        if max_items is not None:
            probs = probs[:, :max_items]
        parts.append(score_options(probs, labels, path))
        roles += [role] * probs.shape[0]
    if parts[0].correct.shape[1] != parts[1].correct.shape[1]:
        raise DataError(
            target,
            "columns",
            f"source has {parts[0].correct.shape[1]} questions but target has {parts[1].correct.shape[1]}",
            "use the source/target files of the same benchmark",
        )
    scores = OptionScores(
        correct=np.vstack([p.correct for p in parts]), p_correct=np.vstack([p.p_correct for p in parts])
    )
    return scores, roles
