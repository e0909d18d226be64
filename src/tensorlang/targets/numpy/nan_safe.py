"""The array functions opt_einsum calls for the NumPy target's contractions (its
``backend``), with ⊥ kept: numpy's tensordot with the product by ``matmul``, since
``numpy.dot`` of an inner extent of 1 skips terms whose factor is zero (⊥ · 0 is ⊥)."""

from __future__ import annotations

import numpy as np

#: opt_einsum's ``backend=`` for the NumPy target's contractions.
BACKEND = __name__

transpose = np.transpose

LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def einsum(subscripts: str, *operands, **options):
    """numpy.einsum; beyond its 52 letters the same sum of products by broadcasting."""
    if set(subscripts) - set(",->") <= LETTERS:
        return np.einsum(subscripts, *operands, **options)
    inputs, out = subscripts.split("->")
    terms = []
    for term, x in zip(inputs.split(","), operands):
        x, labels = _diagonals(np.asarray(x), list(term))
        own = [n for n, label in enumerate(labels) if label not in out and inputs.count(label) == labels.count(label)]
        if own:
            x = x.sum(axis=tuple(own))
            labels = [label for n, label in enumerate(labels) if n not in own]
        terms.append((x, labels))
    order = list(out) + [label for _, labels in terms for label in labels if label not in out]
    order = list(dict.fromkeys(order))
    if len(order) > 64:
        raise ValueError(f"a contraction step over {len(order)} indices (numpy has at most 64 dimensions)")
    product = None
    for x, labels in terms:
        present = [label for label in order if label in labels]
        x = np.transpose(x, [labels.index(label) for label in present])
        x = x.reshape([x.shape[present.index(label)] if label in labels else 1 for label in order])
        product = x if product is None else product * x
    assert product is not None
    if len(order) > len(out):
        product = product.sum(axis=tuple(range(len(out), len(order))))
    return np.asarray(product)


def _diagonals(x, labels: list[str]):
    """``x`` with every repeated label taken once (the diagonal), and its labels."""
    while len(set(labels)) < len(labels):
        label = next(label for label in labels if labels.count(label) > 1)
        first = labels.index(label)
        second = labels.index(label, first + 1)
        x = np.diagonal(x, axis1=first, axis2=second)  # the diagonal's axis goes last
        labels = [item for n, item in enumerate(labels) if n not in (first, second)] + [label]
    return x, labels


def tensordot(a, b, axes=2):
    """numpy.tensordot, with the matrix product by matmul."""
    a, b = np.asarray(a), np.asarray(b)
    if isinstance(axes, int):
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        axes_a, axes_b = [list(x) if not isinstance(x, int) else [x] for x in axes]
    axes_a = [x % a.ndim for x in axes_a] if a.ndim else axes_a
    axes_b = [x % b.ndim for x in axes_b] if b.ndim else axes_b
    free_a = [d for d in range(a.ndim) if d not in axes_a]
    free_b = [d for d in range(b.ndim) if d not in axes_b]
    inner = int(np.prod([a.shape[d] for d in axes_a], dtype=np.int64))
    left = a.transpose(free_a + axes_a).reshape(-1, inner)
    right = b.transpose(axes_b + free_b).reshape(inner, -1)
    shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    return np.matmul(left, right).reshape(shape)
