"""MLP utility model: the capacity control of MODEL §8 (same 11 inputs, four outputs).

A two-hidden-layer tanh network on standardized features, mean squared error against the four
outcomes, full-batch Adam (optax). Early stopping: a validation part of the training groups
(disjoint groups) is held out; training stops after ``patience`` epochs without a validation
improvement and returns the parameters of the best validation epoch. The whole loop is one
``jax.lax.while_loop`` inside ``jit``.

References: MODEL §8 (baselines: an MLP utility model of the same inputs).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from oas._checks import check_positive_int
from retcon.errors import InputError


class MLPFit(NamedTuple):
    """A fitted MLP: ``params`` (list of (W, b)), standardization ``mean``/``scale`` (p,),
    ``epochs`` run, best validation MSE ``val_loss``."""

    params: list
    mean: np.ndarray
    scale: np.ndarray
    epochs: int
    val_loss: float


def _init(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [
        (jax.random.normal(k, (m, n)) * jnp.sqrt(1.0 / m), jnp.zeros(n))
        for k, m, n in zip(keys, sizes[:-1], sizes[1:])
    ]


def _forward(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def _mse(params, x, y, w):
    return jnp.sum(w[:, None] * (_forward(params, x) - y) ** 2) / (jnp.sum(w) * y.shape[1])


@partial(jax.jit, static_argnames=("max_epochs", "patience", "learning_rate", "weight_decay"))
def _train(params, x, y, w_train, w_val, *, max_epochs, patience, learning_rate, weight_decay):
    opt = optax.adamw(learning_rate, weight_decay=weight_decay)
    state = opt.init(params)
    grad = jax.grad(_mse)

    def cond(c):
        epoch, _, _, _, _, since = c
        return (epoch < max_epochs) & (since < patience)

    def body(c):
        epoch, p, s, best_p, best_loss, since = c
        # optax's Adam bias correction raises a Python float to its int32 step count, which strict
        # dtype promotion rejects; the exemption covers that third-party step only.
        with jax.numpy_dtype_promotion("standard"):
            updates, s = opt.update(grad(p, x, y, w_train), s, p)
        p = optax.apply_updates(p, updates)
        loss = _mse(p, x, y, w_val)
        better = loss < best_loss
        best_p = jax.tree.map(lambda new, old: jnp.where(better, new, old), p, best_p)
        return (
            epoch + 1,
            p,
            s,
            best_p,
            jnp.where(better, loss, best_loss),
            jnp.where(better, 0, since + 1),
        )

    init = (0, params, state, params, _mse(params, x, y, w_val), 0)
    epoch, _, _, best_p, best_loss, _ = jax.lax.while_loop(cond, body, init)
    return best_p, best_loss, epoch


def fit_mlp(
    key: jax.Array,
    features,
    outcomes,
    groups,
    *,
    hidden=(32, 32),
    learning_rate: float = 3e-3,
    weight_decay: float = 1e-4,
    max_epochs: int = 3000,
    patience: int = 100,
    validation_fraction: float = 0.2,
    validation=None,
) -> MLPFit:
    """Fit the MLP utility model with early stopping on a group-disjoint validation part.

    Args:
      key: JAX PRNG key; split into the validation split and the initialization.
      features: shape ``(n, p)``.
      outcomes: shape ``(n, 4)`` in [0, 1].
      groups: shape ``(n,)``; validation groups are disjoint from training groups.
      hidden: hidden layer widths.
      learning_rate, weight_decay: AdamW settings.
      max_epochs, patience: full-batch epochs; stop after ``patience`` epochs without improvement.
      validation_fraction: share of groups for validation, in (0, 1).
      validation: optional bool mask ``(n,)`` of validation rows (then ``validation_fraction`` is
        unused); the caller keeps its groups disjoint from the training rows.

    Returns:
      ``MLPFit`` (parameters of the best validation epoch).

    References: MODEL §8 (MLP baseline).
    """
    from oas._fit import group_split

    max_epochs = check_positive_int("max_epochs", max_epochs)
    patience = check_positive_int("patience", patience)
    if not 0 < validation_fraction < 1:
        raise InputError(f"validation_fraction must be in (0, 1); got {validation_fraction}.")
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    k_split, k_init = jax.random.split(key)
    if validation is None:
        train = group_split(k_split, groups, (1 - validation_fraction, validation_fraction)) == 0
    else:
        train = ~np.asarray(validation, bool).reshape(-1)
        if train.shape[0] != x.shape[0] or train.all() or not train.any():
            raise InputError(
                "fit_mlp: validation must be a bool mask of shape (n,) with rows in both parts."
            )
    mean = x[train].mean(axis=0)
    sd = x[train].std(axis=0)
    scale = np.where(sd > 1e-6, sd, 1.0)
    z = jnp.asarray((x - mean) / scale, jnp.float32)
    params = _init(k_init, (x.shape[1], *hidden, y.shape[1]))
    best, loss, epochs = _train(
        params,
        z,
        jnp.asarray(y, jnp.float32),
        jnp.asarray(train, jnp.float32),
        jnp.asarray(~train, jnp.float32),
        max_epochs=max_epochs,
        patience=patience,
        learning_rate=float(learning_rate),
        weight_decay=float(weight_decay),
    )
    return MLPFit(
        [(np.asarray(w), np.asarray(b)) for w, b in best], mean, scale, int(epochs), float(loss)
    )


def predict_mlp(fit: MLPFit, features) -> np.ndarray:
    """Predicted utilities, shape ``(n, 4)``, in numpy."""
    h = (np.asarray(features, dtype=np.float64) - fit.mean) / fit.scale
    for w, b in fit.params[:-1]:
        h = np.tanh(h @ w + b)
    w, b = fit.params[-1]
    return h @ w + b
