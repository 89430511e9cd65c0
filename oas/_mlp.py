"""MLP utility model: the paper's capacity control of MODEL §8 (same 11 inputs, four outputs).

Where this follows the paper (MODEL §8): one hidden ReLU layer of width in {4, 8, 16}, weight
decay in {0.001, 0.01, 0.1}, early stopping, four sigmoid utility outputs, width and decay chosen
by grouped cross-validation inside the training rows it is given (the caller's outer training
split; groups, e.g. conversations, never split across inner folds, ``oas.grouped_folds``).

Where it is our reading (the paper does not say):

* Loss: the Bernoulli log-loss (binary cross-entropy) of each sigmoid output against its outcome
  in [0, 1], the mean over rows and the four actions. It is the proper scoring rule that matches
  a sigmoid output (fractional outcomes, e.g. averaged label realisations, are fine) and its
  gradient in the logit is ``sigmoid(z) - y``.
* Optimizer: full-batch AdamW (optax; the weight decay is AdamW's decoupled decay, on every
  parameter), learning rate ``3e-2``; features standardized on the training rows once (the
  inner folds share that standardization).
* Early stopping: each fit stops after ``patience`` (20) epochs without a validation
  improvement and keeps the parameters of its best validation epoch (the lowest validation
  loss); at most ``max_epochs`` (2000).
* Selection: every (width, decay) is trained on ``K - 1`` inner folds and stopped early on the
  held-out fold; the criterion is the held-out log-loss at the best epoch, averaged over the K
  folds; the lowest wins (ties to the narrower width, then the larger decay).
* Final model: refitted on all the training rows with the chosen width and decay for the mean
  best epoch of that configuration's inner folds (early stopping's epoch, chosen by the inner
  CV, so the final fit needs no rows of its own to stop on).

Compilation: one jitted trainer serves every grid point, fold and call, compiled once per row
bucket. The hidden layer is padded to 16 units with a width mask (a masked unit outputs 0, so it
has no gradient and no effect), the weight decay, patience and learning rate are traced
arguments, and rows are padded to a bucketed count (``oas._identify.row_bucket``) with zero weights. One call
trains one width on one inner fold at the grid's three decays (a ``vmap``); the 3 widths x K
folds are a Python loop over that call, and the refit is the same call with the chosen decay in
every slot. Not one ``vmap`` over all 9 x K: a batched ``while_loop`` runs until its last member
stops, and the stopping epochs differ across widths and folds by up to 10 times but hardly
across decays, so on CPU the whole-grid batch cost about twice the CPU of this one. A new row
count in the same bucket, or other widths or decays of the same grid size, reuse the compiled
trainer (``tests/oas/test_oas_evaluate.py`` counts the traces).

References: MODEL §8 (baselines: an MLP utility model of the same inputs; the paper's MLP control).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from oas._identify import row_bucket
from retcon.errors import InputError, check_at_least

#: The paper's grid (MODEL §8).
WIDTHS = (4, 8, 16)
WEIGHT_DECAYS = (0.001, 0.01, 0.1)
#: The hidden layer's padded width: every width of a grid is at most this.
HIDDEN_MAX = 16


class MLPFit(NamedTuple):
    """A fitted MLP utility model.

    Fields:
      params: ``[(W1 (p, width), b1 (width,)), (W2 (width, 4), b2 (4,))]``, numpy.
      mean, scale: ``(p,)`` the standardization of the features (training rows).
      epochs: epochs of the final refit (the chosen configuration's mean best inner epoch).
      val_loss: the chosen configuration's inner-CV log-loss (the selection criterion).
      width, weight_decay: the chosen grid point.
      cv_loss: ``(len(widths), len(weight_decays))`` inner-CV log-loss of every grid point, widths
        and decays each ascending.
    """

    params: list
    mean: np.ndarray
    scale: np.ndarray
    epochs: int
    val_loss: float
    width: int
    weight_decay: float
    cv_loss: np.ndarray


def _logits(params, xt, mask):
    """``(4, N)`` logits of the rows ``xt`` (p, N); rows last, which XLA's CPU dot runs about
    40% faster here than rows first."""
    w1, b1, w2, b2 = params
    h = jax.nn.relu(w1.T @ xt + b1[:, None]) * mask[:, None]  # (HIDDEN_MAX, N); masked units 0
    return w2.T @ h + b2[:, None]


def _losses(params, xt, yt, mask, w_train, w_val):
    """Weighted mean log-loss on the training and the validation rows, from one forward pass.

    Per row and action: ``softplus(z) - y z = -y log s(z) - (1 - y) log(1 - s(z))``."""
    z = _logits(params, xt, mask)
    per_row = jnp.mean(jax.nn.softplus(z) - yt * z, axis=0)  # (N,)
    train = jnp.sum(w_train * per_row) / jnp.maximum(jnp.sum(w_train), 1.0)
    val = jnp.sum(w_val * per_row) / jnp.maximum(jnp.sum(w_val), 1.0)
    return train, val


def _train_one(params, xt, yt, w_train, w_val, decay, mask, cap, patience, learning_rate):
    """Train one network; early stopping on ``w_val`` (or exactly ``cap`` epochs without one).

    Returns ``(params, best validation loss, epochs)``: with validation rows the parameters of the
    best validation epoch and that epoch's number of updates; without (``w_val`` all zero) the
    parameters after ``cap`` updates and ``cap``."""
    opt = optax.adamw(learning_rate, weight_decay=decay)
    has_val = jnp.sum(w_val) > 0
    grad_and_loss = jax.value_and_grad(
        lambda p: _losses(p, xt, yt, mask, w_train, w_val), has_aux=True
    )

    def cond(c):
        epoch, _, _, _, _, _, since = c
        return (epoch < cap) & (since < patience)

    def body(c):
        epoch, p, s, best_p, best_loss, best_epoch, since = c
        (_, val), g = grad_and_loss(p)  # the validation loss of ``p``, before its update
        better = val < best_loss
        best_p = jax.tree.map(lambda new, old: jnp.where(better, new, old), p, best_p)
        # optax's Adam bias correction raises a Python float to its int32 step count, which strict
        # dtype promotion rejects; the exemption covers that third-party step only.
        with jax.numpy_dtype_promotion("standard"):
            updates, s = opt.update(g, s, p)
        return (
            epoch + 1,
            optax.apply_updates(p, updates),
            s,
            best_p,
            jnp.where(better, val, best_loss),
            jnp.where(better, epoch, best_epoch),
            jnp.where(better | ~has_val, 0, since + 1),
        )

    init = (jnp.int32(0), params, opt.init(params), params, jnp.float32(jnp.inf), jnp.int32(0),
            jnp.int32(0))  # fmt: skip
    epoch, last, _, best_p, best_loss, best_epoch, _ = jax.lax.while_loop(cond, body, init)
    out = jax.tree.map(lambda b, lt: jnp.where(has_val, b, lt), best_p, last)
    return out, best_loss, jnp.where(has_val, best_epoch, epoch)


@jax.jit
def _train(xt, yt, params, w_train, w_val, decay, mask, cap, patience, learning_rate):
    """``_train_one`` over a batch of ``B`` networks sharing the rows.

    Shapes: ``params`` (W1 (B, p, H), b1 (B, H), W2 (B, H, 4), b2 (B, 4)); ``xt`` (p, N) and
    ``yt`` (4, N) the rows, transposed; ``w_train``, ``w_val`` (B, N) row weights (0 for padding
    and held-out rows); ``decay`` (B,); ``mask`` (B, H) the width mask; ``cap`` (B,) int epoch
    limit; ``patience`` int and ``learning_rate`` float scalars. Every value is traced: only the
    shapes compile."""
    return jax.vmap(_train_one, in_axes=(0, None, None, 0, 0, 0, 0, 0, None, None))(
        params, xt, yt, w_train, w_val, decay, mask, cap, patience, learning_rate
    )


def _init(key, p: int, widths, mean_y):
    """Initial parameters of the ``B = len(widths)`` networks: one He-normal draw of the padded
    first layer shared by all (so a narrower network starts as the first units of a wider one),
    the output layer scaled by ``1 / sqrt(width)``, the output bias the logit of each network's
    mean training outcome ``mean_y`` (B, 4)."""
    k1, k2 = jax.random.split(key)
    w1 = jax.random.normal(k1, (p, HIDDEN_MAX)) * np.sqrt(2.0 / p)
    w2 = jax.random.normal(k2, (HIDDEN_MAX, 4))
    widths = np.asarray(widths, np.float32)
    b = len(widths)
    m = np.clip(np.asarray(mean_y, np.float32), 0.01, 0.99)
    return (
        jnp.broadcast_to(w1, (b, p, HIDDEN_MAX)).astype(jnp.float32),
        jnp.zeros((b, HIDDEN_MAX), jnp.float32),
        (w2[None] / np.sqrt(widths)[:, None, None]).astype(jnp.float32),
        jnp.asarray(np.log(m / (1 - m)), jnp.float32),
    )


def _grid(widths, weight_decays) -> list[tuple[int, float]]:
    """The grid in selection order: width ascending, then decay descending (the simpler model
    first, so ``argmin``'s ties go to it)."""
    ws = sorted({check_at_least("widths", w, 1) for w in widths})
    ds = sorted({float(d) for d in weight_decays}, reverse=True)
    if not ws or not ds or max(ws) > HIDDEN_MAX or min(ds) < 0:
        raise InputError(
            f"fit_mlp: widths must be in 1..{HIDDEN_MAX} and weight_decays >= 0, neither empty; "
            f"got widths={tuple(widths)}, weight_decays={tuple(weight_decays)}."
        )
    return [(w, d) for w in ws for d in ds]


def fit_mlp(
    key: jax.Array,
    features,
    outcomes,
    groups,
    *,
    widths=WIDTHS,
    weight_decays=WEIGHT_DECAYS,
    n_folds: int = 3,
    learning_rate: float = 3e-2,
    max_epochs: int = 2000,
    patience: int = 20,
) -> MLPFit:
    """Fit the paper's MLP control: width and decay by inner grouped CV, then a refit (module
    docstring).

    Args:
      key: JAX PRNG key; split into the inner folds and the initialization.
      features: shape ``(n, p)``; the outer training split only.
      outcomes: shape ``(n, 4)`` in [0, 1].
      groups: shape ``(n,)``; inner folds never split a group (``oas.grouped_folds``).
      widths, weight_decays: the grid (the paper's by default); widths at most 16.
      n_folds: inner grouped folds K, at least 2; fewer groups than K use one fold per group.
      learning_rate: AdamW's.
      max_epochs, patience: full-batch epochs of an inner fit; stop after ``patience`` epochs
        without a validation improvement.

    Returns:
      ``MLPFit`` (the refitted network of the chosen width and decay).

    Raises:
      InputError: outcomes outside [0, 1], shapes that disagree, a bad grid, fewer than 2 groups.

    References: MODEL §8 (the paper's MLP control).
    """
    from oas._ridge import grouped_folds

    max_epochs = check_at_least("max_epochs", max_epochs, 1)
    patience = check_at_least("patience", patience, 1)
    n_folds = check_at_least("n_folds", n_folds, 2)
    grid = _grid(widths, weight_decays)
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    g = np.asarray(groups).reshape(-1)
    if x.ndim != 2 or y.shape != (x.shape[0], 4) or g.shape[0] != x.shape[0]:
        raise InputError(
            "fit_mlp: features must be (n, p), outcomes (n, 4) and groups (n,) for the same n; "
            f"got {x.shape}, {y.shape} and {g.shape}."
        )
    if not np.all((y >= 0) & (y <= 1)):
        raise InputError("fit_mlp: outcomes must lie in [0, 1] (the sigmoid outputs' range).")
    n_groups = len(np.unique(g.astype(str)))
    if n_groups < 2:
        raise InputError(
            f"fit_mlp: groups must hold at least 2 distinct labels for the inner grouped CV; got "
            f"{n_groups}."
        )
    n_folds = min(n_folds, n_groups)
    k_fold, k_init = jax.random.split(key)
    fold = grouped_folds(k_fold, g.astype(str), n_folds)
    n, p = x.shape
    size = row_bucket(n)
    mean = x.mean(axis=0)
    sd = x.std(axis=0)
    scale = np.where(sd > 1e-6, sd, 1.0)
    z = np.zeros((size, p), np.float32)
    z[:n] = (x - mean) / scale
    yy = np.zeros((size, 4), np.float32)
    yy[:n] = y
    real = np.arange(size) < n
    fold_p = np.full(size, -1)
    fold_p[:n] = fold

    ws = sorted({w for w, _ in grid})
    ds = [d for w, d in grid if w == ws[0]]  # descending: argmin's ties go to the larger decay
    train = partial(
        _train,
        jnp.asarray(z.T),
        jnp.asarray(yy.T),
        decay=jnp.asarray(ds, jnp.float32),
        patience=jnp.int32(patience),
        learning_rate=jnp.float32(learning_rate),
    )

    def batch(width: int, w_train, w_val, cap: int, decay=None):
        """One call of the trainer: ``width`` at every decay of the grid (or ``decay`` in every
        slot), on the rows of weight ``w_train``, stopped on ``w_val`` (N,)."""
        b = len(ds)
        tile = np.broadcast_to(np.asarray(w_train, np.float32), (b, size))
        return train(
            _init(k_init, p, [width] * b, np.repeat((tile[:1] @ yy) / tile[0].sum(), b, 0)),
            w_train=jnp.asarray(tile),
            w_val=jnp.asarray(np.broadcast_to(np.asarray(w_val, np.float32), (b, size))),
            mask=jnp.asarray(_masks([width] * b)),
            cap=jnp.full(b, cap, jnp.int32),
            **({} if decay is None else {"decay": jnp.full(b, decay, jnp.float32)}),
        )

    # the grid: for each width and inner fold f, one batch over the decays, trained on the other
    # folds and stopped on f (a batch stops when its last member does, and the decays of one
    # width and fold stop at nearly the same epoch, so batching them wastes little)
    val = np.zeros((len(ws), len(ds), n_folds))
    best_epoch = np.zeros((len(ws), len(ds), n_folds))
    for i, width in enumerate(ws):
        for f in range(n_folds):
            _, v, e = batch(width, real & (fold_p != f), fold_p == f, max_epochs)
            val[i, :, f], best_epoch[i, :, f] = np.asarray(v), np.asarray(e)
    cv = val.mean(axis=2)  # (widths ascending, decays descending)
    i, j = np.unravel_index(int(np.argmin(cv)), cv.shape)
    width, decay = ws[i], ds[j]
    epochs = max(1, int(np.rint(best_epoch[i, j].mean())))

    # the refit: the chosen point on every training row for ``epochs`` updates, no validation
    # (the same batch shape, the chosen decay in every slot: the same compiled trainer)
    params, _, _ = batch(width, real, np.zeros(size), epochs, decay=decay)
    w1, b1, w2, b2 = (np.asarray(a[0], np.float64) for a in params)
    return MLPFit(
        [(w1[:, :width], b1[:width]), (w2[:width], b2)],
        mean,
        scale,
        epochs,
        float(cv[i, j]),
        int(width),
        float(decay),
        cv[:, ::-1],  # decays ascending
    )


def _masks(widths) -> np.ndarray:
    """``(B, HIDDEN_MAX)`` float mask: 1 on the first ``width`` units of each network."""
    return (np.arange(HIDDEN_MAX)[None] < np.asarray(widths)[:, None]).astype(np.float32)


def predict_mlp(fit: MLPFit, features) -> np.ndarray:
    """Predicted utilities, shape ``(n, 4)`` in (0, 1) (the sigmoid outputs), in numpy.

    References: MODEL §8."""
    h = (np.asarray(features, dtype=np.float64) - fit.mean) / fit.scale
    (w1, b1), (w2, b2) = fit.params
    z = np.maximum(h @ w1 + b1, 0.0) @ w2 + b2
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # the logistic sigmoid, without overflow
