"""The Dask target: a kernel run chunk by chunk over Dask arrays, as a task graph (one task
per chunk, each result put together by its kind; docs/dask.md)."""

from __future__ import annotations

import math
import operator
from functools import partial
from typing import Any, Callable, Mapping

import numpy as np

from ... import limits
from ...analysis.batch import NotDataParallel, Verdict, batch_verdict as data_parallel
from ...ein.index import index_variables
from ...ein.structure import position_names
from ...errors import TensorLangError, error, is_integer


def batch_verdict(program, positions: dict[str, int], line_of=lambda n: None) -> Verdict:
    """:func:`~tensorlang.analysis.batch.batch_verdict`, where no batched input's structure has an equation on its
    batch position (``where i1 = 2`` fixes a row of the whole array; an inequality is checked chunk by chunk)."""
    for decl in program.decls:
        if decl.structure is not None and decl.name in positions:
            position = position_names(len(decl.shape))[positions[decl.name]]
            if any(c.op == "=" and position in index_variables(side) for conditions in decl.structure.unique
                   for c in conditions for side in (c.left, c.right)):
                raise NotDataParallel(f"{decl.name!r} is declared {decl.structure.text}, an equation on its batch "
                                      f"position {position}: it holds of the whole array, not of each chunk")
    return data_parallel(program, positions, line_of)


def default_batch(symbols: tuple[str, ...], verdict_along: Callable[[str], tuple[Verdict, str]],
                  inputs: tuple[str, ...]) -> tuple[Verdict, str]:
    """The batch when ``batch=`` is not given: the first symbolic size (in declaration order)
    that an input has and along which the program is data-parallel (``verdict_along``
    says, or raises error[input]); none is error[input] with each size's reason (docs/dask.md)."""
    why: dict[str, str] = {}
    for symbol in symbols:
        try:
            verdict, batch = verdict_along(symbol)
        except TensorLangError as exc:
            if exc.code != "input" or len(symbols) == 1:
                raise
            why[symbol] = exc.message
            continue
        if any(name in verdict.positions for name in inputs):
            return verdict, batch
        why[symbol] = f"no input has {symbol}"
    raise error("input", "no batch can be chosen: the program is data-parallel along none of its sizes that an "
                "input has (" + "; ".join(why[s] for s in symbols) + "); name one with batch=")


#: The most chunks a run of several results (or a sum) is cut into (one mapped result: no limit).
MAX_CHUNKS = 65_536


def check_split_every(split_every) -> int:
    """``split_every`` as an int of at least 2, else error[input] (1 would never shrink the tree)."""
    if not is_integer(split_every, 2):
        raise error("input", f"split_every is an integer of at least 2, got {split_every!r}")
    return int(split_every)


def check_chunks(chunks, length: int):
    """``chunks`` along a batch of ``length``: ``"auto"``, a positive length, or positive
    lengths adding up to ``length``; error[input] otherwise."""
    if isinstance(chunks, str):
        if chunks != "auto":
            raise error("input", f"chunks is 'auto', a positive integer or a tuple of them, got {chunks!r}")
        return chunks
    if is_integer(chunks, -math.inf):
        if chunks < 1:
            raise error("input", f"chunks is a positive chunk length, got {chunks!r}")
        return min(int(chunks), max(length, 1))  # longer than the batch: one chunk (10**30 broke dask)
    if isinstance(chunks, (tuple, list)) and chunks and all(is_integer(n, 1) for n in chunks):
        if sum(chunks) != length:
            raise error("input", f"chunks {tuple(chunks)} add up to {sum(chunks)}, but the batch has {length} elements (chunks= are lengths along the batch only, not a chunk shape as dask's: chunks={chunks[0]} cuts it into chunks of {chunks[0]})")
        return tuple(int(n) for n in chunks)
    raise error("input", f"chunks is 'auto', a positive integer or a tuple of positive integers, got {chunks!r}")


def _total(*parts):
    """One level of the tree reduction: the sum of some partial sums, as IEEE adds them (no warnings)."""
    with np.errstate(all="ignore"):
        return np.array(sum(parts[1:], parts[0]))


def _map_blocks(da, spec, runner, arrays: dict, positions: dict, others: Mapping[str, Any], result: str,
                shape: tuple, dtype) -> Any:
    """One mapped result: ``dask.array.blockwise`` over the batched inputs' blocks."""
    names = list(arrays)
    args = []
    for name in names:  # the batch is index "b"; every other dimension is one block of its own
        args += [arrays[name], tuple("b" if d == positions[name] else f"{name}.{d}" for d in range(arrays[name].ndim))]
    out_index = tuple("b" if n is None else f"out.{d}" for d, n in enumerate(shape))
    return da.blockwise(partial(_run_part, dict(others)), out_index, *args, dtype=dtype, concatenate=True,
                        new_axes={f"out.{d}": n for d, n in enumerate(shape) if n is not None},
                        spec=spec, runner=runner, names=names, result=result)


def run_chunked(spec: Any, runner: Callable, verdict: Verdict, batched: Mapping[str, Any], others: Mapping[str, Any],
                outputs: Mapping[str, tuple], dtype: np.dtype, chunks=None, split_every: int = 8) -> dict[str, Any]:
    """The results as dask arrays (docs/dask.md): ``runner(spec, inputs, others)`` runs a
    chunk (a module-level function: a task pickles it by reference); ``batched``: the inputs
    with the batch, ``others`` the rest; ``outputs``: each result's shape, None in its batch
    dimension; ``chunks``, ``split_every``: :func:`check_chunks`, :func:`check_split_every`."""
    try:
        import dask.array as da
        from dask import delayed
        from dask.base import tokenize
        from dask.highlevelgraph import HighLevelGraph
    except ImportError:  # pragma: no cover - dask is in the test extra
        raise error("backend", "the Dask target needs dask: pip install 'tensorlang[dask]'") from None
    split_every = check_split_every(split_every)
    if not batched:
        raise error("input", "a chunked run needs at least one input that has the batch dimension")
    positions = verdict.positions
    arrays = {}
    first = next(iter(batched))
    length = np.shape(batched[first])[positions[first]]
    if chunks is not None and length == length:  # whatever the input (a dask one keeps its chunks; NaN: below)
        check_chunks(chunks, length)
    for name, value in batched.items():
        if not isinstance(value, da.Array):
            limits.refuse_masked(value, f"input {name!r}")
            value = np.asarray(value)
            if value.dtype.kind in "biuf":  # (else refused below, unchunked: an object array was dask's NotImplementedError)
                along = (check_chunks(chunks, value.shape[positions[name]])
                         if name == first and chunks is not None else "auto")
                value = da.from_array(value, chunks={positions[name]: along} if along != "auto" else "auto")
        if value.dtype.kind not in "biuf":
            raise error("input", f"input {name!r} has dtype {value.dtype}; expected real numbers ({dtype})")
        arrays[name] = value
    along = arrays[first].chunks[positions[first]]
    along = tuple(n for n in along if n > 0) or along  # a filter's empty chunks: no kernel binds a size of 0
    for name, value in arrays.items():  # the batch in the first input's chunks, the rest whole
        wanted = {d: (along if d == positions[name] else -1) for d in range(value.ndim)}
        count = value.shape[positions[name]]
        if count != sum(along):  # nan: dask's unknown chunk sizes, which compare unequal to anything
            unknown = name if math.isnan(count) else first
            raise error("input", f"{unknown!r} has unknown chunk sizes along its batch dimension (after a filter, "
                        f"say): call {unknown}.compute_chunk_sizes() first" if math.isnan(count + sum(along)) else
                        f"{name!r} has {count} elements in its batch dimension but {first!r} has {sum(along)}")
        arrays[name] = value.rechunk(wanted)
    kinds = {name: verdict.kinds.get(name, "map" if name in positions else "replicated") for name in outputs}
    if len(outputs) == 1 and set(kinds.values()) == {"map"}:  # one result, chunk by chunk: map_blocks
        (name, shape), = outputs.items()
        return {name: _map_blocks(da, spec, runner, arrays, positions, others, name, shape, dtype)}
    if len(along) > MAX_CHUNKS:  # a task or more per chunk, held in memory
        raise error("too-large", f"the batch is cut into {len(along)} chunks; a run with more than one result or a "
                    f"sum takes at most {MAX_CHUNKS} (each chunk is a task): give a longer chunk length (chunks=)")
    # the graph written out in one pass, each chunk's task naming its blocks' keys (linear in the chunks)
    small = delayed(dict(others), pure=True)  # one key: every task depends on it, none copies it
    token = tokenize(spec, tuple(arrays.values()), small.key, split_every, tuple(outputs.items()), kinds, str(dtype))
    run = partial(_run_part, spec=spec, runner=runner, names=tuple(arrays))
    parts = [(f"tl-chunk-{token}", i) for i in range(len(along))]
    inputs = HighLevelGraph.from_collections(parts[0][0], {part: (run, small.key, *(  # chunk i of each input
        (a.name, *(i if d == positions[n] else 0 for d in range(a.ndim))) for n, a in arrays.items()))
        for i, part in enumerate(parts)}, [*arrays.values(), small])
    results: dict[str, Any] = {}
    for name, shape in outputs.items():
        key, layer = f"tl-{name}-{token}", dict[Any, Any]()
        if kinds[name] == "map":
            p = positions[name]
            for i, part in enumerate(parts):
                layer[(key, *(i if d == p else 0 for d in range(len(shape))))] = (operator.getitem, part, name)
            chunks = tuple(along if d == p else (n,) for d, n in enumerate(shape))
        else:
            pieces: list = [(operator.getitem, part, name) for part in (parts if kinds[name] == "sum" else parts[:1])]
            level = 0
            while len(pieces) > 1:  # the tree reduction: split_every partial sums per task
                tasks = [(_total, *pieces[j:j + split_every]) for j in range(0, len(pieces), split_every)]
                pieces = [(f"tl-sum-{key}", level, j) for j in range(len(tasks))]
                layer.update(zip(pieces, tasks))
                level += 1
            layer[(key, *(0,) * len(shape))] = pieces[0]
            chunks = tuple((n,) for n in shape)
        graph = HighLevelGraph({**inputs.layers, key: layer}, {**inputs.dependencies, key: {parts[0][0]}})
        results[name] = da.Array(graph, key, chunks, dtype=dtype)
    return results


def _run_part(small, *blocks, spec, runner, names, result=None):
    """One chunk: the kernel on its blocks (``small``: the inputs without the batch); every
    result (a run of several, or a sum), or only ``result`` (a map_blocks run)."""
    found = runner(spec, dict(zip(names, blocks)), small)
    return found if result is None else found[result]
