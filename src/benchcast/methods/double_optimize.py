"""Double-Optimize: gradient descent on a core-set selector and a linear model at once
("misses the mark", App. A.2, eqs. 18-19).

A NumPy port of the paper's PyTorch code (``benchpred/double_optimize.py``) with analytic
gradients and a hand-written Adam that performs torch's update step by step.
"""

from __future__ import annotations

import numpy as np

from benchcast.methods.base import UNIT, Method, check_budget, register


def project_capped_simplex(v: np.ndarray, k: float, eps: float = 1e-6, max_iter: int = 1000) -> np.ndarray:
    """Project ``v`` onto ``{x : sum(x) = k, 0 <= x <= 1}`` by bisection on the shift, as the paper's code.

    ``x = clip(v - lambda, 0, 1)`` where ``lambda`` is found by bisection of
    ``phi(lambda) = sum clip(v - lambda, 0, 1) - k`` on ``[min(v) - 1, max(v)]`` until the
    bracket is narrower than ``eps`` (1e-6) or ``max_iter`` (1000) halvings; ``lambda`` is the
    bracket's midpoint. Each halving evaluates ``phi`` on the whole vector (about 21 of them).
    Because ``lambda`` is only ``eps``-accurate, ``sum(x)`` equals ``k`` up to
    ``(number of entries strictly inside (0, 1)) * eps / 2``. ``k`` is clamped to ``[0, len(v)]``.
    The paper's code does this in float32; here float64.
    """
    v = np.asarray(v, dtype=np.float64)
    k = min(max(float(k), 0.0), float(v.size))
    lo, hi = float(v.min()) - 1.0, float(v.max())
    buf = np.empty_like(v)
    it = 0
    while hi - lo > eps and it < max_iter:
        mid = (lo + hi) / 2.0
        np.subtract(v, mid, out=buf)
        np.clip(buf, 0.0, 1.0, out=buf)
        if buf.sum() - k > 0:
            lo = mid
        else:
            hi = mid
        it += 1
    lam = (lo + hi) / 2.0
    return np.clip(v - lam, 0.0, 1.0)


def top_n(p: np.ndarray, n: int) -> np.ndarray:
    """Ascending indices of the ``n`` largest entries of ``p``; ties go to the lower index.

    Equals ``np.sort(np.argsort(-p, kind="stable")[:n])`` (a stable descending sort), in
    O(N) with a partition. The paper's code uses ``torch.argsort(p, descending=True)``,
    whose order among ties is unspecified; ties matter at the first step, where the
    projected ``p`` is constant (``n / N`` everywhere), and here they are broken stably, so
    the first mask is items ``0 .. n-1``. Always exactly ``n`` distinct indices.
    """
    p = np.asarray(p)
    N = p.size
    if not 0 < n <= N:
        raise ValueError(f"need 0 < n <= {N}, got {n}")
    kth = np.partition(p, N - n)[N - n]  # the n-th largest value
    above = np.flatnonzero(p > kth)
    tied = np.flatnonzero(p == kth)[: n - above.size]
    idx = np.sort(np.concatenate([above, tied]))
    assert idx.size == n
    return idx


class Adam:
    """``torch.optim.Adam`` (``amsgrad=False``, ``maximize=False``) on one float64 vector, in place.

    torch's single-tensor step: ``g = grad + weight_decay * param`` (L2 added to the
    gradient, not AdamW's decoupled decay); ``m <- m + (1 - beta1) (g - m)`` (torch's
    ``lerp``); ``v <- beta2 v + (1 - beta2) g^2``; with ``t`` the step count,
    ``param -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)``.
    """

    def __init__(self, lr: float, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0):
        self.lr, self.beta1, self.beta2 = float(lr), float(betas[0]), float(betas[1])
        self.eps, self.weight_decay = float(eps), float(weight_decay)
        self.t = 0
        self.m = self.v = None

    def step(self, param: np.ndarray, grad: np.ndarray) -> None:
        if self.m is None:
            self.m, self.v = np.zeros_like(param), np.zeros_like(param)
        self.t += 1
        g = grad + self.weight_decay * param if self.weight_decay else grad
        self.m += (1.0 - self.beta1) * (g - self.m)
        self.v *= self.beta2
        self.v += (1.0 - self.beta2) * g * g
        bc1 = 1.0 - self.beta1**self.t
        bc2_sqrt = (1.0 - self.beta2**self.t) ** 0.5
        denom = np.sqrt(self.v) / bc2_sqrt + self.eps
        param -= (self.lr / bc1) * self.m / denom


def loss_and_grads(S: np.ndarray, y: np.ndarray, mask: np.ndarray, w: np.ndarray, n: int):
    """Training loss of eq. 19 and its gradients w.r.t. the mask and ``w``.

    ``pred_i = sum_j S_ij mask_j w_j / n``; ``L = mean_i (pred_i - y_i)^2`` (torch's
    ``mse_loss``); with ``r_i = 2 (pred_i - y_i) / len(y)`` and ``h_j = sum_i r_i S_ij / n``:
    ``dL/dmask_j = h_j w_j`` and ``dL/dw_j = h_j mask_j``. With the straight-through
    estimator ``mask + p - stopgrad(p)`` the mask gradient is ``p``'s gradient.
    """
    pred = S @ (mask * w) / n
    resid = pred - y
    h = S.T @ (2.0 * resid / len(y)) / n
    return float(np.mean(resid**2)), h * w, h * mask


@register("double_optimize")
class DoubleOptimize(Method):
    """Learned top-``n`` mask and item weights by gradient descent (eqs. 18-19).

    As the paper's code: ``p = project(ones(N))``, ``w ~ N(0, 1)^N``; source models split
    once into ``int(train_fraction * M)`` training and the rest validation models (random
    permutation). Each step: ``mask = TopMask(p; n)``, predictions
    ``pred = S (mask * w) / n`` of the full means, training and validation MSE; keep the
    ``(w, p)`` of the best validation loss so far (strict improvement), stop once it has not
    improved for more than ``patience`` consecutive steps; otherwise one Adam step on ``w``
    (``lr_w``) and on ``p`` (``lr_p``, gradient passed straight through the mask), both with
    L2 ``weight_decay``, then ``p = project(p)`` (:func:`project_capped_simplex`). At most
    ``max_steps`` steps. The core set is ``TopMask(best_p; n)`` -- exactly ``n`` distinct
    items -- and ``h(f) = sum_{j in C} s(f, j) w_j / n`` (eq. 18; the paper's
    ``(scores * w).mean(1)``).

    Randomness, all from the ``fit`` ``rng`` and in the paper's order: ``w`` first
    (``standard_normal``), then the model permutation. Top-``n`` ties are broken towards the
    lower item index (:func:`top_n`).

    Deliberate differences from the paper's code: float64 throughout (the paper's ``p`` and
    ``w`` are float32 parameters, its loss float64); the forward mask is exactly 0/1 (torch's
    ``mask + p - p.detach()`` can be ``1 +- 1 ulp``); the initial best loss is ``inf``
    instead of ``0x3F3F3F3F``.
    """

    scores = UNIT

    uses_coreset_stream = False
    deterministic_fit = False

    def __init__(
        self,
        lr_w: float = 0.1,
        lr_p: float = 0.001,
        weight_decay: float = 1e-4,
        max_steps: int = 1000,
        patience: int = 100,
        train_fraction: float = 0.8,
    ):
        self.lr_w, self.lr_p, self.weight_decay = float(lr_w), float(lr_p), float(weight_decay)
        self.max_steps, self.patience = int(max_steps), int(patience)
        self.train_fraction = float(train_fraction)
        if not 0.0 < self.train_fraction < 1.0:
            raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction}")

    def params(self):
        return {
            "lr_w": self.lr_w,
            "lr_p": self.lr_p,
            "weight_decay": self.weight_decay,
            "max_steps": self.max_steps,
            "patience": self.patience,
            "train_fraction": self.train_fraction,
        }

    def fit(self, source, budget, rng):
        check_budget(source, budget)
        S = np.asarray(source, dtype=np.float64)
        n_models, n_items = S.shape
        n = int(budget)
        y = S.mean(axis=1)
        p = project_capped_simplex(np.ones(n_items), n)
        w = rng.standard_normal(n_items)
        order = rng.permutation(n_models)
        n_train = int(n_models * self.train_fraction)
        train, valid = order[:n_train], order[n_train:]
        if n_train == 0 or valid.size == 0:
            raise ValueError(
                f"{n_models} source models leave an empty training or validation set "
                f"at train_fraction={self.train_fraction}"
            )
        S_tr, y_tr, S_va, y_va = S[train], y[train], S[valid], y[valid]
        opt_w = Adam(self.lr_w, weight_decay=self.weight_decay)
        opt_p = Adam(self.lr_p, weight_decay=self.weight_decay)

        best_loss, best_w, best_p, best_step = np.inf, w.copy(), p.copy(), 0
        no_improvement, history = 0, []
        mask = np.zeros(n_items)
        for step in range(self.max_steps):
            idx = top_n(p, n)
            mask[:] = 0.0
            mask[idx] = 1.0
            loss_tr, grad_mask, grad_w = loss_and_grads(S_tr, y_tr, mask, w, n)
            loss_val = float(np.mean((S_va[:, idx] @ w[idx] / n - y_va) ** 2))
            history.append((loss_tr, loss_val))
            if loss_val < best_loss:
                best_loss, best_w, best_p, best_step = loss_val, w.copy(), p.copy(), step
                no_improvement = 0
            else:
                no_improvement += 1
                if no_improvement > self.patience:
                    break
            opt_w.step(w, grad_w)
            opt_p.step(p, grad_mask)  # straight-through
            p = project_capped_simplex(p, n)

        coreset = top_n(best_p, n)
        assert coreset.size == n and np.unique(coreset).size == n
        self.coreset_ = coreset
        self.weights_ = best_w[coreset]
        self.best_loss_, self.best_step_ = best_loss, best_step
        self.history_ = np.array(history)  # (steps run, 2): train, valid loss
        self.n_steps_ = len(history)
        self.stopped_early_ = no_improvement > self.patience
        return self

    def estimate(self, oracle, rng):
        return oracle.query(self.coreset_) @ self.weights_ / len(self.coreset_)
