"""Test oracle: the k-NN mean outcomes by a dense distance matrix and a full stable sort (MODEL §8).

The path ``oas._baselines`` took before the chunked search (issue 47): one ``(m, n)`` matrix of
squared distances and a stable ``argsort`` of every row, O(m n log n) time and O(m n) memory.
``tests/oas/test_baselines.py`` pins the chunked ``argpartition`` search to it, neighbours, their
order and the mean outcomes bit for bit, ties included.
"""

import numpy as np


def knn_mean_outcomes_dense(train_x, train_y, test_x, k: int) -> np.ndarray:
    """Mean outcome of each action over the k nearest training rows (Euclidean; ties to the lower
    training index, by a stable sort). Shapes: ``(n, p)``, ``(n, 4)``, ``(m, p)`` -> ``(m, 4)``."""
    return train_y[nearest_dense(train_x, test_x, k)].mean(axis=1)


def nearest_dense(train_x, test_x, k: int) -> np.ndarray:
    """``(m, min(k, n))`` training indices ordered by (squared distance, index)."""
    d2 = (
        (test_x**2).sum(axis=1)[:, None]
        + (train_x**2).sum(axis=1)[None, :]
        - 2.0 * test_x @ train_x.T
    )
    k = min(k, train_x.shape[0])
    return np.argsort(d2, axis=1, kind="stable")[:, :k]
