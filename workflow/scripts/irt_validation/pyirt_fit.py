"""Fit py-irt's multidimensional 2PL on the training cells of one dataset; write an .npz.

Runs under the separate venv ``.venv-pyirt`` (``scripts/dev/setup_pyirt_env.sh``: py-irt
0.7.1 pins pandas<3) and therefore must not import ``benchcast``. It is the py-irt half of
the IRT validation study (``benchcast.studies.irt_validation``), which compares our MAP fit
``benchcast.irt.fit_mirt_2pl`` against it.

Example::

    .venv-pyirt/bin/python workflow/scripts/irt_validation_pyirt.py \\
        --responses results/data/musr/responses.parquet \\
        --models results/data/musr/models.parquet \\
        --mask /tmp/irt_validation/musr_mask.npy --out /tmp/irt_validation/musr_pyirt.npz \\
        --epochs 2000 --dims 10 --lr 0.1 --seed 0 --threads 1

Data. ``responses.parquet`` is long (``model_idx, item_idx, score``); the dense matrix is
``Y[model_idx, item_idx]`` restricted to the models with ``excluded == False`` in
``models.parquet``, in that file's order (row ``r`` of every output is the r-th kept
model). The mask marks *held-out* cells (True = held out): either a ``.npy`` bool array of
shape ``(n_kept_models, n_items)`` or a ``.parquet`` listing held-out cells as columns
``model_idx, item_idx`` (original model indices). py-irt sees only the training cells
(observed and not held out); missing cells are simply not listed in its Dataset.

Models (``--variant``):

``pyirt`` (default)
    py-irt 0.7.1's registered ``multidim_2pl``, unchanged. NOTE: in 0.7.1 its likelihood is
    ``logit = sum_d disc[i,d] * (ability[j,d] - diff[i,d])`` with a *per-dimension*
    difficulty ``diff (n_items, dims)`` and a LogNormal (positive) discrimination; its
    ``export()`` reports ``disc = exp(loc_disc)``. Its hyperpriors are N(0, 1e6) with guide
    scales initialised at 100, and with lr 0.1 its SVI is unstable here: on MuSR and QNLI
    (10 % held out, seeds 0-2) a Gamma guide parameter turned NaN after 416-1074 of the
    2,000 steps every time (see ``diverged`` below).
``paper``
    The variant the paper ran: tinyBenchmarks' modified copy of py-irt's ``multidim_2pl``
    (vendored in socialfoundations/benchmark-prediction, ``benchpred/py_irt``):
    ``logit = sum_d (disc[i,d] * ability[j,d] - diff[i])`` = ``ability @ disc.T - dims *
    diff`` with a scalar difficulty per item, Normal (signed) discrimination, hyperprior
    means ~ N(0, 10) and guide scales initialised at 1. Re-expressed here as a py-irt
    ``IrtModel`` subclass and trained by the same py-irt 0.7.1 ``IrtModelTrainer``.

Outputs (.npz, no pickled objects). Both variants are converted to the common convention
``logit = ability @ disc.T - dims * diff`` (the one of ``benchcast.irt``):

``disc`` (items, dims)
    ``pyirt``: ``exp(loc_disc)`` (py-irt's own export: the posterior median of the
    LogNormal); ``paper``: ``loc_disc``.
``diff`` (items,)
    the item intercept divided by ``dims``: ``pyirt``: ``sum_d disc*loc_diff / dims``;
    ``paper``: ``loc_diff[:, 0]``.
``ability`` (subjects, dims)
    ``loc_ability``.
``diff_raw``, ``loc_disc``
    the raw posterior locations as py-irt stores them.
``losses`` (epochs,)
    the ELBO loss of every SVI step; ``best_epoch`` is its argmin (0-based).
``fit_seconds``
    wall time of ``IrtModelTrainer.train`` alone (includes py-irt's per-improvement
    ``export`` of ``best_params``, as in the paper's runs); ``setup_seconds`` the Dataset +
    trainer construction.
``heldout_loglik``, ``heldout_accuracy``, ``train_loglik``
    mean Bernoulli log-likelihood / accuracy (threshold 0.5) of the point estimates.
``diverged``, ``error``, ``epochs_completed``
    py-irt's SVI can produce NaN parameters, which then fail a distribution's argument
    check (a ValueError) and abort ``train``. The script catches that, records the error and
    the number of SVI steps run, and falls back to ``best_params`` -- the export at the
    lowest finite loss before the divergence (``--params last`` then fails).
plus the run settings, thread counts and package versions as 0-d str/number arrays.

Which parameters (``--params``): ``best`` (default) = ``trainer.best_params``, the export at
the lowest ELBO loss, as tinyBenchmarks and the paper use; ``last`` = after the final epoch.

Seeding: py-irt 0.7.1's ``IrtModelTrainer`` ignores ``IrtConfig.seed`` and
``deterministic`` (only its CLI applies them), so this script seeds python/numpy/torch via
``pyro.set_rng_seed`` and calls ``torch.use_deterministic_algorithms(True)`` itself.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--responses", required=True, type=Path, help="long responses.parquet")
    p.add_argument("--models", required=True, type=Path, help="models.parquet (uses excluded == False)")
    p.add_argument(
        "--mask",
        type=Path,
        default=None,
        help="held-out cells: .npy bool (n_kept_models, n_items) or .parquet (model_idx, item_idx); "
        "omit to train on all observed cells",
    )
    p.add_argument("--out", required=True, type=Path, help="output .npz")
    p.add_argument("--epochs", type=int, default=2000)
    p.add_argument("--dims", type=int, default=10)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--lr-decay", type=float, default=0.9999, help="py-irt's default ExponentialLR gamma")
    p.add_argument("--priors", default="hierarchical")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads and BLAS/OpenMP threads")
    p.add_argument("--variant", choices=("pyirt", "paper"), default="pyirt")
    p.add_argument("--params", choices=("best", "last"), default="best")
    p.add_argument("--no-deterministic", dest="deterministic", action="store_false")
    p.add_argument("--verbose", action="store_true", help="py-irt's live progress table")
    return p.parse_args(argv)


# --------------------------------------------------------------------------- data


def load_matrix(responses: Path, models: Path):
    """Dense ``Y`` (kept models x items, NaN = unobserved) and the kept original model indices."""
    import numpy as np
    import pandas as pd

    resp = pd.read_parquet(responses, columns=["model_idx", "item_idx", "score"])
    mods = pd.read_parquet(models, columns=["model_idx", "excluded"])
    n_models = int(max(mods["model_idx"].max(), resp["model_idx"].max())) + 1
    n_items = int(resp["item_idx"].max()) + 1
    full = np.full((n_models, n_items), np.nan)
    mi = resp["model_idx"].to_numpy(np.int64)
    ii = resp["item_idx"].to_numpy(np.int64)
    if np.bincount(mi * n_items + ii).max() > 1:
        sys.exit(f"error: {responses}: some (model_idx, item_idx) pairs are repeated")
    full[mi, ii] = resp["score"].to_numpy(np.float64)
    kept = mods.loc[~mods["excluded"].astype(bool), "model_idx"].to_numpy(np.int64)
    return full[kept], kept


def load_mask(path: Path | None, shape: tuple[int, int], kept):
    import numpy as np
    import pandas as pd

    if path is None:
        return np.zeros(shape, bool)
    if path.suffix == ".npy":
        mask = np.load(path, allow_pickle=False)
        if mask.shape != shape:
            sys.exit(f"error: mask {path} has shape {mask.shape}, expected {shape} (kept models x items)")
        return mask.astype(bool)
    if path.suffix == ".parquet":
        cells = pd.read_parquet(path, columns=["model_idx", "item_idx"])
        row_of = {int(m): r for r, m in enumerate(kept)}
        mask = np.zeros(shape, bool)
        try:
            rows = [row_of[int(m)] for m in cells["model_idx"]]
        except KeyError as exc:
            sys.exit(f"error: mask {path} lists model_idx {exc} which is not a kept model")
        mask[rows, cells["item_idx"].to_numpy(np.int64)] = True
        return mask
    sys.exit(f"error: mask {path}: expected a .npy or .parquet file")


def build_dataset(Y, train):
    """A py-irt Dataset of the training cells; subject id = str(row), item id = str(column).

    Indices are assigned in first-appearance order over the row-major training cells, as
    py-irt's own ``Dataset.from_jsonlines`` does; :func:`index_maps` maps them back.
    """
    import numpy as np
    from ordered_set import OrderedSet
    from py_irt.dataset import Dataset

    rows, cols = np.nonzero(train)  # row-major order
    _, first = np.unique(cols, return_index=True)
    subj_order = np.unique(rows)  # rows appear in increasing order
    item_order = cols[np.sort(first)]  # columns by first appearance
    row_to_ix = np.full(Y.shape[0], -1, np.int64)  # -1: no training cell
    col_to_ix = np.full(Y.shape[1], -1, np.int64)
    row_to_ix[subj_order] = np.arange(subj_order.size)
    col_to_ix[item_order] = np.arange(item_order.size)
    subject_ids = OrderedSet(str(r) for r in subj_order)
    item_ids = OrderedSet(str(c) for c in item_order)
    subject_id_to_ix = {sid: k for k, sid in enumerate(subject_ids)}
    item_id_to_ix = {iid: k for k, iid in enumerate(item_ids)}
    return Dataset(
        item_ids=item_ids,
        subject_ids=subject_ids,
        item_id_to_ix=item_id_to_ix,
        ix_to_item_id={k: s for s, k in item_id_to_ix.items()},
        subject_id_to_ix=subject_id_to_ix,
        ix_to_subject_id={k: s for s, k in subject_id_to_ix.items()},
        observation_subjects=row_to_ix[rows].tolist(),
        observation_items=col_to_ix[cols].tolist(),
        observations=Y[rows, cols].astype(float).tolist(),
        training_example=[True] * len(rows),
    )


def index_maps(ix_to_id: dict, n: int, what: str):
    """``order[k]`` = py-irt index of our row/column ``k``; a clear error if any is missing."""
    import numpy as np

    order = np.full(n, -1, np.int64)
    for ix, ident in ix_to_id.items():
        k = int(ident)
        if not 0 <= k < n or order[k] != -1:
            sys.exit(f"error: py-irt {what} id {ident!r} (ix {ix}) is out of range or repeated")
        order[k] = int(ix)
    missing = np.flatnonzero(order < 0)
    if missing.size:
        sys.exit(
            f"error: {missing.size} {what}s have no training cell (first: {missing[:10].tolist()}); "
            f"py-irt cannot estimate them -- use a mask that leaves every {what} a training cell"
        )
    return order


# --------------------------------------------------------------------------- the paper's variant


def paper_model_class():
    """tinyBenchmarks' ``multidim_2pl`` (as run by the paper), as a py-irt 0.7.1 IrtModel."""
    import pyro
    import pyro.distributions as dist
    import torch
    from py_irt.models.abstract_model import IrtModel
    from torch.distributions import constraints

    class PaperMultidim2PL(IrtModel):
        """``logit = ability @ disc.T - dims * diff``; Normal disc; scalar diff per item."""

        def __init__(self, *, num_items, num_subjects, dims=2, verbose=False, device="cpu", **kwargs):
            super().__init__(device=device, num_items=num_items, num_subjects=num_subjects, verbose=verbose)
            self.dims = dims

        def export(self):
            return {name: pyro.param(f"loc_{name}").data.tolist() for name in ("ability", "diff", "disc")}

        def get_model(self):
            return self.model

        def get_guide(self):
            return self.guide

        def _t(self, v):
            return torch.tensor(v, device=self.device)

        def _hyper(self, name, size):
            with pyro.plate(f"mu_{name}_plate", size):
                mu = pyro.sample(f"mu_{name}", dist.Normal(self._t(0.0), self._t(10.0)))
            with pyro.plate(f"u_{name}_plate", size):
                u = pyro.sample(f"u_{name}", dist.Gamma(self._t(1.0), self._t(1.0)))
            return mu, u

        def model(self, subjects, items, obs):
            mu_b, u_b = self._hyper("b", 1)
            mu_theta, u_theta = self._hyper("theta", self.dims)
            mu_gamma, u_gamma = self._hyper("gamma", self.dims)
            with pyro.plate("thetas", self.num_subjects, dim=-2, device=self.device):
                with pyro.plate("theta_dims", self.dims, dim=-1):
                    ability = pyro.sample("theta", dist.Normal(mu_theta, 1.0 / u_theta))
            with pyro.plate("bs", self.num_items, dim=-2, device=self.device):
                with pyro.plate("bs_dims", 1, dim=-1):
                    diff = pyro.sample("b", dist.Normal(mu_b, 1.0 / u_b))
            with pyro.plate("gammas", self.num_items, dim=-2, device=self.device):
                with pyro.plate("gamma_dims", self.dims, dim=-1):
                    disc = pyro.sample("gamma", dist.Normal(mu_gamma, 1.0 / u_gamma))
            with pyro.plate("observe_data", obs.size(0)):
                # (n_obs, dims) - (n_obs, 1): diff broadcasts over dims before the sum
                logits = (disc[items] * ability[subjects] - diff[items]).sum(axis=-1)
                pyro.sample("obs", dist.Bernoulli(logits=logits), obs=obs)

        def _hyper_guide(self, name, size):
            zeros, ones = torch.zeros(size, device=self.device), torch.ones(size, device=self.device)
            pos = constraints.positive
            loc = pyro.param(f"loc_mu_{name}", zeros)
            scale = pyro.param(f"scale_mu_{name}", ones.clone(), constraint=pos)
            alpha = pyro.param(f"alpha_{name}", ones.clone(), constraint=pos)
            beta = pyro.param(f"beta_{name}", ones.clone(), constraint=pos)
            with pyro.plate(f"mu_{name}_plate", size):
                pyro.sample(f"mu_{name}", dist.Normal(loc, scale))
            with pyro.plate(f"u_{name}_plate", size):
                pyro.sample(f"u_{name}", dist.Gamma(alpha, beta))

        def _local_guide(self, site, loc_name, scale_name, rows, cols, plates):
            shape = [rows, cols]
            loc = pyro.param(loc_name, torch.zeros(shape, device=self.device))
            scale = pyro.param(scale_name, torch.ones(shape, device=self.device), constraint=constraints.positive)
            with pyro.plate(plates[0], rows, dim=-2, device=self.device):
                with pyro.plate(plates[1], cols, dim=-1):
                    pyro.sample(site, dist.Normal(loc, scale))

        def guide(self, subjects, items, obs):
            self._hyper_guide("b", 1)
            self._hyper_guide("theta", self.dims)
            self._hyper_guide("gamma", self.dims)
            self._local_guide(
                "theta", "loc_ability", "scale_ability", self.num_subjects, self.dims, ("thetas", "theta_dims")
            )
            self._local_guide("b", "loc_diff", "scale_diff", self.num_items, 1, ("bs", "bs_dims"))
            self._local_guide("gamma", "loc_disc", "scale_disc", self.num_items, self.dims, ("gammas", "gamma_dims"))

    return PaperMultidim2PL


# --------------------------------------------------------------------------- main


def mean_loglik(Y, P, cells):
    import numpy as np

    y, p = Y[cells], np.clip(P[cells], 1e-12, 1 - 1e-12)
    if y.size == 0:
        return float("nan"), float("nan")
    ll = float(np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))
    acc = float(np.mean((p >= 0.5) == (y >= 0.5)))
    return ll, acc


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    for var in _THREAD_VARS:  # before numpy/torch load their thread pools
        os.environ[var] = str(args.threads)

    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(args.threads)
    except RuntimeError:
        pass
    from importlib.metadata import version

    import py_irt.training as pyirt_training
    import pyro
    from py_irt.config import IrtConfig
    from py_irt.training import IrtModelTrainer

    Y, kept = load_matrix(args.responses, args.models)
    heldout = load_mask(args.mask, Y.shape, kept)
    observed = ~np.isnan(Y)
    if (heldout & ~observed).any():
        print(f"warning: {(heldout & ~observed).sum()} held-out cells are unobserved; ignoring them", file=sys.stderr)
    heldout &= observed
    train = observed & ~heldout
    n_subjects, n_items = Y.shape
    print(
        f"{args.responses}: {n_subjects} models x {n_items} items; {int(train.sum())} training cells, "
        f"{int(heldout.sum())} held out; variant={args.variant} dims={args.dims} epochs={args.epochs} "
        f"lr={args.lr} threads={args.threads}",
        flush=True,
    )

    pyro.set_rng_seed(args.seed)  # seeds python random, numpy and torch
    if args.deterministic:
        torch.use_deterministic_algorithms(True)

    # record the ELBO loss of every SVI step without changing py-irt's loop
    losses: list[float] = []

    class RecordingSVI(pyirt_training.SVI):
        def step(self, *a, **k):
            loss = super().step(*a, **k)
            losses.append(loss)
            return loss

    pyirt_training.SVI = RecordingSVI

    t0 = time.perf_counter()
    dataset = build_dataset(Y, train)
    model_type = "multidim_2pl" if args.variant == "pyirt" else paper_model_class()
    config = IrtConfig(
        model_type=model_type,
        priors=args.priors,
        dims=args.dims,
        lr=args.lr,
        lr_decay=args.lr_decay,
        epochs=args.epochs,
        seed=args.seed,
        deterministic=args.deterministic,
        log_every=max(1, args.epochs // 10),
    )
    trainer = IrtModelTrainer(data_path=None, config=config, dataset=dataset, verbose=args.verbose)
    setup_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    error = ""
    try:
        trainer.train(epochs=args.epochs, device="cpu")
    except ValueError as exc:  # a NaN parameter fails a distribution's argument check
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    fit_seconds = time.perf_counter() - t0
    if error:
        print(
            f"warning: py-irt diverged after {len(losses)} SVI steps ({error}); "
            f"falling back to best_params (the export at the lowest finite loss)",
            file=sys.stderr,
            flush=True,
        )
        if args.params == "last" or trainer.best_params is None:
            sys.exit("error: no usable parameters after the divergence")

    params = trainer.best_params if args.params == "best" else trainer.last_params
    subj_order = index_maps(params["subject_ids"], n_subjects, "subject")
    item_order = index_maps(params["item_ids"], n_items, "item")
    ability = np.asarray(params["ability"], np.float64)[subj_order]
    if args.variant == "pyirt":
        disc = np.asarray(params["disc"], np.float64)[item_order]  # exp(loc_disc)
        loc_disc = np.log(disc)
        diff_raw = np.asarray(params["diff"], np.float64)[item_order]  # (items, dims)
        diff = (disc * diff_raw).sum(axis=1) / args.dims
    else:
        disc = np.asarray(params["disc"], np.float64)[item_order]
        loc_disc = disc
        diff_raw = np.asarray(params["diff"], np.float64)[item_order]  # (items, 1)
        diff = diff_raw[:, 0]

    logits = ability @ disc.T - args.dims * diff
    P = np.exp(-np.logaddexp(0.0, -logits))  # sigmoid without overflow
    heldout_ll, heldout_acc = mean_loglik(Y, P, heldout)
    train_ll, _ = mean_loglik(Y, P, train)
    loss_arr = np.asarray(losses, np.float64)
    best_epoch = int(np.argmin(loss_arr)) if loss_arr.size else -1

    s = lambda v: np.array(str(v))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(args.out.name + ".tmp.npz")
    np.savez(
        tmp,
        disc=disc,
        diff=diff,
        ability=ability,
        diff_raw=diff_raw,
        loc_disc=loc_disc,
        losses=loss_arr,
        best_epoch=np.array(best_epoch),
        fit_seconds=np.array(fit_seconds),
        setup_seconds=np.array(setup_seconds),
        seconds_per_epoch=np.array(fit_seconds / max(len(losses), 1)),
        diverged=np.array(bool(error)),
        error=s(error),
        epochs_completed=np.array(len(losses)),
        heldout_loglik=np.array(heldout_ll),
        heldout_accuracy=np.array(heldout_acc),
        train_loglik=np.array(train_ll),
        n_train=np.array(int(train.sum())),
        n_heldout=np.array(int(heldout.sum())),
        model_idx=kept,
        item_idx=np.arange(n_items),
        variant=s(args.variant),
        params=s(args.params),
        logit_convention=s("ability @ disc.T - dims * diff"),
        epochs=np.array(args.epochs),
        dims=np.array(args.dims),
        lr=np.array(args.lr),
        lr_decay=np.array(args.lr_decay),
        priors=s(args.priors),
        seed=np.array(args.seed),
        deterministic=np.array(bool(args.deterministic)),
        threads=np.array(args.threads),
        torch_num_threads=np.array(torch.get_num_threads()),
        torch_num_interop_threads=np.array(torch.get_num_interop_threads()),
        py_irt_version=s(version("py-irt")),
        torch_version=s(torch.__version__),
        pyro_version=s(pyro.__version__),
        numpy_version=s(np.__version__),
        python_version=s(platform.python_version()),
    )
    os.replace(tmp, args.out)
    print(
        f"fit {fit_seconds:.1f}s over {len(losses)} epochs ({1000 * fit_seconds / max(len(losses), 1):.1f} "
        f"ms/epoch; setup "
        f"{setup_seconds:.1f}s), best epoch {best_epoch}, held-out loglik {heldout_ll:.4f}, "
        f"held-out acc {heldout_acc:.4f}, train loglik {train_ll:.4f} -> {args.out}",
        flush=True,
    )


if __name__ == "__main__":
    main()
