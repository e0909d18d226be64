"""The ``einsum`` suite: ``tl.einsum`` as a drop-in for numpy.einsum, opt_einsum and
torch.einsum, called the way users call them (no ``out=`` buffers, the result returned).

Expressions (small, medium and large sizes; ``--quick`` keeps the first two):

* ``mm``: ``ij,jk->ik``, the per-call cost of a cached product (2x2) up to BLAS sizes;
* ``readme``: opt_einsum's README example ``pi,qj,ijkl,rk,sl->pqrs``;
* ``chain``: a matrix chain ``ij,jk,kl->il`` of unequal sizes (the order matters);
* ``batched``: many small products ``bij,bjk->bik``;
* ``gram``: ``ni,nj->ij`` with one array X twice (XᵀX): tensorlang sees that the result is
  symmetric and computes one triangle (a C kernel generated per shape, targets/c/gram.py;
  the peers reach OpenBLAS's SYRK or run a full GEMM); ``gram3``: ``ni,nj,nk->ijk`` with X
  three times (a third-moment tensor), of which tensorlang computes the sorted entries
  only (the same kernel's tiles, about a sixth of the full product's flops);
* ``mttkrp``: the MTTKRP of CP decompositions, ``ijk,jr,kr->ir`` (three operands).

tensorlang's contenders are ``tl.einsum`` on each back end: ``tensorlang[c]`` is the
default call ``tl.einsum(subs, *ops)`` (the C back end is what ``auto`` picks), the others
pass ``backend=``; ``tensorlang[c] contract_expression`` calls the expression
``tl.contract_expression(subs, *shapes)`` built once, as opt_einsum's users call it.
Flops are those of the best pairwise order (opt_einsum's count); the reference is numpy's einsum in long double arithmetic, independent of every contender.
"""

from __future__ import annotations

import numpy as np
import opt_einsum

import tensorlang as tl

from ..contenders import Bound, Contender
from .common import Case, Context, make_rng, missing


def _tl(ctx: Context, subs: str, names, interp_ok: bool) -> list[Contender]:
    result = []
    for backend in ctx.backends:
        if backend == "interp" and not interp_ok:
            result.append(missing("tensorlang[interp]", "tensorlang",
                                  "reference interpreter skipped: it materializes every product"))
            continue

        def make(inp, backend=backend):
            ops = [inp[n] for n in names]
            cell = [None]
            if backend == "c":  # the default call, as a user writes it
                def call():
                    cell[0] = tl.einsum(subs, *ops)
            else:
                def call():
                    cell[0] = tl.einsum(subs, *ops, backend=backend)
            call()  # compiles and caches; the timed calls are the cache's hits
            return Bound(call, lambda: np.asarray(cell[0]))
        note = "tl.einsum(subs, *ops): cached kernel" + ("" if backend == "c" else f", backend={backend!r}")
        result.append(Contender(f"tensorlang[{backend}]", "tensorlang", make, note))
        if backend == "c":
            result.append(Contender(EXPRESSION, "tensorlang", _expression(subs, names),
                                    "tl.contract_expression(subs, *shapes), built once; expr(*ops)"))
    return result


#: the contender that calls ``tl.contract_expression``'s compiled expression (opt_einsum's
#: interface); the report's table "contract_expression against tl.einsum" sets it beside
#: ``tensorlang[c]``, the default ``tl.einsum`` call, timed in the same rounds
EXPRESSION = "tensorlang[c] contract_expression"


def _expression(subs: str, names):
    def make(inp):
        ops = [inp[n] for n in names]
        expr = tl.contract_expression(subs, *[o.shape for o in ops])
        cell = [None]

        def call():
            cell[0] = expr(*ops)
        return Bound(call, lambda: np.asarray(cell[0]))
    return make


def _returning(name: str, fn, names, note: str) -> Contender:
    def make(inp):
        ops = [inp[n] for n in names]
        cell = [None]

        def call():
            cell[0] = fn(*ops)
        return Bound(call, lambda: np.asarray(cell[0]))
    return Contender(name, "peer", make, note)


def _peers(ctx: Context, subs: str, names, naive_ok: bool) -> list[Contender]:
    peers = [
        _returning("numpy.einsum(optimize=True)", lambda *ops: np.einsum(subs, *ops, optimize=True), names,
                   "numpy's pairwise order via tensordot/BLAS, path found on every call"),
        _returning("numpy.einsum", lambda *ops: np.einsum(subs, *ops), names, "numpy's default: one C loop nest")
        if naive_ok else missing("numpy.einsum", "peer", "the one-loop-nest default is far too slow at this size"),
    ]
    oe = ctx.peers.get("opt_einsum")
    if oe is None:
        peers.append(missing("opt_einsum", "peer", ctx.peers.notes["opt_einsum"]))
    else:
        peers.append(_returning("opt_einsum", lambda *ops: oe.contract(subs, *ops), names,
                                "opt_einsum.contract per call"))
    torch = ctx.peers.get("torch")
    if torch is None:
        peers.append(missing("torch", "peer", ctx.peers.notes["torch"]))
    else:
        def make(inp):
            ops = [torch.from_numpy(np.ascontiguousarray(inp[n])) for n in names]
            cell = [None]

            def call():
                cell[0] = torch.einsum(subs, *ops)
            return Bound(call, lambda: cell[0].numpy())
        peers.append(Contender("torch", "peer", make, "torch.einsum on torch.from_numpy inputs"))
    return peers


#: (kernel, subscripts, operand names (a repeated name is one array twice), sizes per
#: label for each size step (small, medium, large))
EXPRESSIONS = [
    ("mm", "ij,jk->ik", ["A", "B"], [dict(i=2, j=2, k=2), dict(i=64, j=64, k=64), dict(i=512, j=512, k=512)]),
    ("readme", "pi,qj,ijkl,rk,sl->pqrs", ["C", "C", "I", "C", "C"],
     [dict(p=4, q=4, r=4, s=4, i=4, j=4, k=4, l=4), dict(p=10, q=10, r=10, s=10, i=10, j=10, k=10, l=10),
      dict(p=20, q=20, r=20, s=20, i=20, j=20, k=20, l=20)]),
    ("chain", "ij,jk,kl->il", ["A", "B", "C"], [dict(i=3, j=4, k=2, l=5), dict(i=200, j=20, k=300, l=10),
                                                dict(i=1000, j=50, k=1000, l=40)]),
    ("batched", "bij,bjk->bik", ["A", "B"], [dict(b=100, i=2, j=2, k=2), dict(b=256, i=16, j=16, k=16),
                                             dict(b=64, i=96, j=96, k=96)]),
    ("gram", "ni,nj->ij", ["X", "X"], [dict(n=100, i=10, j=10), dict(n=2000, i=100, j=100),
                                       dict(n=20000, i=200, j=200)]),
    ("gram3", "ni,nj,nk->ijk", ["X", "X", "X"], [dict(n=100, i=8, j=8, k=8), dict(n=2000, i=40, j=40, k=40),
                                                 dict(n=4000, i=64, j=64, k=64)]),
    ("mttkrp", "ijk,jr,kr->ir", ["X", "B", "C"], [dict(i=8, j=8, k=8, r=4), dict(i=64, j=64, k=64, r=16),
                                                  dict(i=128, j=128, k=128, r=32)]),
]


def _shapes(subs: str, names, sizes) -> dict[str, tuple[int, ...]]:
    terms = subs.split("->")[0].split(",")
    return {name: tuple(sizes[c] for c in term) for name, term in zip(names, terms)}


def cases(ctx: Context) -> list[Case]:
    steps = 2 if ctx.quick else 3
    result = []
    for kernel, subs, names, all_sizes in EXPRESSIONS:
        for step, sizes in enumerate(all_sizes[:steps]):
            shapes = _shapes(subs, names, sizes)
            out_shape = tuple(sizes[c] for c in subs.split("->")[1])
            flops = float(opt_einsum.contract_path(subs, *[shapes[n] for n in names], shapes=True,
                                                   optimize="optimal")[1].opt_cost)
            elements = sum(int(np.prod(s)) for s in shapes.values()) + int(np.prod(out_shape))

            def inputs(shapes=shapes, seed=step):
                rng = make_rng(seed + 20)
                return {name: rng.uniform(-1, 1, shape) for name, shape in shapes.items()}

            def reference(inp, subs=subs, names=names):
                ops = [inp[n].astype(np.longdouble) for n in names]
                return np.asarray(np.einsum(subs, *ops, optimize=True), dtype=np.float64)

            small = step == 0
            contenders = _tl(ctx, subs, names, interp_ok=small) + _peers(ctx, subs, names, naive_ok=step < 2)
            label = " ".join(f"{c}={n}" for c, n in sizes.items())
            biggest = max(sizes.values())
            result.append(Case("einsum", kernel, label, biggest, 1, flops, 8.0 * elements, inputs, reference,
                               contenders, "numpy.einsum(optimize=True)", tolerance=1e-9,
                               pairs=[("tensorlang[c]", EXPRESSION)]))
    return result
