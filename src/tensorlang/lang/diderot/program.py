"""A checked Diderot program to run: its inputs, outputs and :meth:`StrandProgram.run`, as the command
line and ``tl.compile`` use it (docs/diderot.md, "From Python")."""

from __future__ import annotations

import numbers
import os
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from ...errors import TensorLangError, error, shown_value as _short
from ...limits import check_allocation, is_int64
from ...sampling.image import Image
from ...sampling.image import image as make_image
from . import ast as A
from . import interp as I
from .bounds import item_bytes
from .check import Checked
from .fieldval import BorderImage
from .types import Ty, elem


@dataclass(frozen=True)
class Input:
    name: str
    type: str
    kind: str  # int | real | bool | string | tensor | image | sequence
    shape: tuple[int, ...]
    dim: int | None
    default: object | None
    description: str | None

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class Output:
    name: str
    type: str
    kind: str  # int | real | bool | tensor
    shape: tuple[int, ...]


@dataclass(frozen=True)
class RunResult:
    outputs: dict[str, np.ndarray]
    grid_shape: tuple[int, ...] | None
    steps: int
    active: int
    stable: int
    printed: str


def _kind(ty: Ty) -> str:
    return ("tensor" if ty.shape else "real") if ty.kind == "tensor" else "sequence" if ty.kind == "seq" else ty.kind


class StrandProgram:
    """A runnable Diderot program."""

    def __init__(self, checked: Checked, base_dir: str | None = None):
        self.checked = checked
        self.name = checked.program.strand.name
        self.grid = checked.program.create.grid
        self.base_dir = base_dir
        pr = checked.program  # (an input's default is left to the inputs' check: the value given may replace it)
        named = tuple(n for n in (*pr.decls, pr.strand, pr.update, pr.start, pr.initialize, pr.create)
                      if n is not None and not isinstance(n, A.InputDecl))
        loads = [n.path if isinstance(n, A.Load) else n.args[0] for n in A.walk(named) if isinstance(n, A.Load)
                 or isinstance(n, A.Apply) and isinstance(n.func, A.Var) and n.func.name == "load" and n.args]
        self.files = tuple(p.value for p in loads if isinstance(p, A.Str))  # image("f"), load("f"): no output may replace them
        self.compiled = I.compile_program(checked)
        self.executor_note: str | None = None  # why the last run used the interpreter, where C was asked for
        inputs = []
        rt = I.Runtime(checked, self.compiled, base_dir)
        closures = {n: f for n, _, f, _ in self.compiled.globals}
        for decl in checked.program.decls:
            if not isinstance(decl, A.InputDecl):
                continue
            ty, closure, default = checked.globals[decl.name], closures[decl.name], None
            if isinstance(closure, tuple):  # load("file"), image("file"): the file's name
                default = closure[1]
            elif closure is not None:
                try:
                    default = closure(rt.frame(None))
                except (KeyError, TypeError, ValueError, TensorLangError, RecursionError):  # known at run time
                    pass
            inputs.append(Input(decl.name, decl.type.text(), _kind(ty), _out_shape(ty) if ty.kind == "seq" else tuple(ty.shape),
                                ty.dim, default, decl.description))
        self.inputs = tuple(inputs)
        self.outputs = tuple(Output(sv.name, sv.type.text(), _kind(checked.state[sv.name]),
                                    _out_shape(checked.state[sv.name]))
                             for sv in checked.program.strand.state if sv.output)

    def run(self, values: Mapping[str, object] | None = None, *, limit: int = 0, snapshot: int = 0,
            on_snapshot: Callable[[int, RunResult], None] | None = None, threads: int = 1,
            progress: Callable[[int, int], None] | None = None, backend: str | None = None) -> RunResult:
        """``backend``: "c" (:mod:`.lower`), "interp", or None: C where it can, else the interpreter
        (``executor_note`` says why; docs/diderot.md, "C or the interpreter")."""
        limit, snapshot = (0 if n is None else n for n in (limit, snapshot))  # None: no limit, no snapshots
        for what, count in (("limit", limit), ("snapshot", snapshot), ("threads", threads)):
            if isinstance(count, (bool, np.bool_)) or not isinstance(count, numbers.Integral):
                raise error("input", f"{what} must be an integer, got {count!r}")
        limit, snapshot = min(int(limit), 2**62), min(int(snapshot), 2**62)  # (the C executor's counts are int64)
        def run():
            return self._run(dict(values or {}), limit, snapshot, on_snapshot, progress, threads, backend)
        with np.errstate(all="ignore"):  # ⊥ and ±inf follow IEEE arithmetic, without warnings
            try:
                return I.run_deep(run) if self.compiled.deep else run()
            except RecursionError:  # recursion or expressions nested deeper than the stack (run_deep's or not)
                raise error("too-large", f"{self.name}: the program nests calls or expressions more deeply than the "
                            f"interpreter's stack allows (recursion: at most {I.MAX_CALL_DEPTH:,} calls, fewer for "
                            "large function bodies; docs/diderot.md)") from None

    def _run(self, values: dict, limit: int, snapshot: int,
             on_snapshot: Callable[[int, RunResult], None] | None,
             progress: Callable[[int, int], None] | None, threads: int = 1, backend: str | None = None) -> RunResult:
        known = {i.name for i in self.inputs}
        unknown = sorted(set(values) - known)
        if unknown:
            raise error("input", f"{self.name}: no input called {unknown[0]} (inputs: {', '.join(sorted(known))})")
        rt = I.Runtime(self.checked, self.compiled, self.base_dir)
        rt.within = getattr(progress, "within", None)  # progress inside a long super-step
        fr, kinds = rt.frame(None), {True: "input", False: "global"}
        for name, ty, init, is_input in self.compiled.globals:
            if is_input and name in values:
                rt.g[name] = self._convert(rt, name, ty, values[name])
            elif is_input and init is None:
                raise error("input", f"input {name} ({ty}) is required: it has no default")
            elif isinstance(init, tuple):  # load("file") / image("file") defaults: an error at the program's call
                try:
                    rt.g[name] = self._convert(rt, name, ty, init[1] or "", kinds[is_input])
                except TensorLangError as exc:
                    if exc.diagnostics[0].span is not None:
                        raise
                    raise error(exc.code, exc.message, init[2]) from None
            elif init is not None:
                rt.g[name] = self._convert(rt, name, ty, init(fr), kinds[is_input]) if ty.kind in ("image", "seq") else I.coerce(ty, init(fr))
            else:
                rt.g[name] = I._zero(ty)
        if backend != "interp":
            from .lower import run_compiled
            done = run_compiled(self, rt, backend, RunResult, limit=limit, snapshot=snapshot, on_snapshot=on_snapshot,
                                threads=threads, progress=progress)
            if done is not None:
                return done
        shape = I.create(rt)
        cap = limit if limit and limit > 0 else I.DEFAULT_LIMIT
        steps = 0
        if snapshot and on_snapshot is not None:
            on_snapshot(0, self._result(rt, shape, 0, snap=True))  # the strands as made, before the start blocks (diderotc's -0000)
        I.begin(rt)
        rt.every = snapshot if snapshot and on_snapshot is not None else 0
        while (any(s.status == I.ACTIVE for s in rt.strands) or not steps and rt.p.start and rt.strands and rt.bsp) and steps < cap:
            rt.made = steps
            rt.step()  # (a bulk-synchronous program's first super-step runs the start methods: it runs, global update too, though none is active)
            steps += 1
            if progress is not None:
                progress(steps, rt.count((I.ACTIVE,)))
            if snapshot and on_snapshot is not None and (steps % snapshot == 0 or steps == cap or not rt.count((I.ACTIVE,))):
                on_snapshot(steps, self._result(rt, shape, steps, snap=True))  # and the last step's, as Diderot's
        return self._result(rt, shape, steps)

    def _convert(self, rt, name: str, ty: Ty, value, kind: str = "input"):
        try:
            return self._converted(rt, name, ty, value, kind)
        except (TypeError, ValueError, OverflowError) as exc:  # a complex, a string, 10**400, a ragged list
            raise error("input", f"{kind} {name} is {ty}, got {_short(value)} ({type(exc).__name__}: {exc})") from None

    def _converted(self, rt, name: str, ty: Ty, value, kind: str):
        if ty.kind == "image":
            if isinstance(value, BorderImage):  # clamp(img), wrap(img), mirror(img): checked already
                return value
            if isinstance(value, (str, os.PathLike, Image)):  # a file, or an image
                img = rt.image(value if isinstance(value, Image) else os.fspath(value))
            else:
                img = make_image(value, ty.dim)
            if ty.dim is not None and (img.dim != ty.dim or img.voxel_shape != ty.shape):
                raise error("input", f"{kind} {name} is {ty}, the image given is {img.dim}-D with voxels "
                                     f"of shape {list(img.voxel_shape)}")
            return img
        if ty.kind == "seq":
            if isinstance(value, os.PathLike):
                value = os.fspath(value)
            if not isinstance(value, str):  # items: real numbers, each of the element's shape
                check_allocation(len(value) if hasattr(value, "__len__") else 0, item_bytes(ty.elem), f"{kind} {name}")
                exact = ty.elem is not None and ty.elem.kind == "int" and not isinstance(value, np.ndarray)  # ([2**63 - 1, 1.0]: not as floats)
                value = list(value)
                item = _item_shape(ty.elem)
                arr = np.asarray(value, dtype=object if exact else None) if value and item is not None else np.zeros((0,) + (item or ()))
                if ty.n is not None and len(value) != ty.n:
                    raise error("input", f"{kind} {name} is {ty}, got {len(value)} items: it takes {ty.n}")
                if not (all(_fits(v, ty.elem) for v in value) if item is None else arr.shape[1:] == item and _numbers(arr, ty)):
                    raise error("input", f"{kind} {name} is {ty}, got {_short(value)}: not a sequence of "
                                         f"{ty.elem}")
            return rt.sequence(value, ty.elem)
        if ty.kind in ("tensor", "int") and np.asarray(value).dtype.kind not in "biuf":
            raise error("input", f"{kind} {name} is {ty}, got {_short(value)}: not real numbers")
        if ty.kind == "tensor" and ty.shape:
            arr = np.asarray(value, dtype=np.float64)
            if arr.shape != ty.shape:
                raise error("input", f"{kind} {name} is {ty}, got shape {arr.shape}")
            return arr
        if ty.kind == "tensor":
            return float(value)
        if ty.kind == "int":
            if isinstance(value, bool) or not is_int64(value):
                raise error("input", f"{kind} {name} is a 64-bit int, got {_short(value)}")
            return int(value)
        if ty.kind == "bool":
            return bool(value)
        return value

    def _result(self, rt, shape, steps: int, snap: bool = False) -> RunResult:
        grid, which = shape if self.grid else None, (I.ACTIVE, I.STABLE) if snap else (I.STABLE,)
        chosen = rt.strands if self.grid else [s for s in rt.alive() if s.status in which]  # in Diderot's order
        outputs = {}
        for o in self.outputs:
            ty = self.checked.state[o.name]
            if ty.kind == "seq" and ty.n is None:  # T[]: one array (length, *element shape) per strand
                arr = np.empty(len(chosen), dtype=object)
                for i, s in enumerate(chosen):
                    arr[i] = _dynamic(s.state[o.name], ty)
                outputs[o.name] = arr.reshape(grid) if grid is not None else arr
                continue
            arr = np.array([s.state[o.name] for s in chosen], dtype=_dtype(ty)).reshape((len(chosen),) + o.shape)
            outputs[o.name] = arr.reshape(grid + o.shape) if grid is not None else arr
        return RunResult(outputs, grid, steps, rt.count((I.ACTIVE,)), rt.count((I.STABLE,)),
                         rt.printed_text())


def _out_shape(ty: Ty) -> tuple[int, ...]:
    if ty.kind == "seq":
        return ((ty.n or 0),) + _out_shape(elem(ty))
    return tuple(ty.shape) if ty.kind == "tensor" else ()


def _dynamic(v, ty: Ty) -> np.ndarray:
    """A strand's sequence of any length as an array of shape (length, *element shape)."""
    item = elem(ty)
    return np.array(v, dtype=_dtype(item)).reshape((len(v),) + _out_shape(item))


def _dtype(ty: Ty):
    return {"int": np.int64, "bool": bool}.get(ty.kind, np.float64)


def _item_shape(ty: Ty | None) -> tuple[int, ...] | None:
    """The array shape of a sequence's item (a fixed-length sequence's items nested: ``real[3][2]``'s
    is (3,)), or None where an item holds a sequence of any length (checked item by item: :func:`_fits`)."""
    if ty is None or ty.kind != "seq":
        return tuple(ty.shape or ()) if ty is not None else ()
    inner = _item_shape(ty.elem)
    return None if ty.n is None or inner is None else (ty.n, *inner)


def _fits(value, ty: Ty | None) -> bool:
    """``value`` is a value of ``ty`` (a sequence's item; sequences of any length nested in it)."""
    if ty is not None and ty.kind == "seq":
        return (not isinstance(value, (str, bytes)) and hasattr(value, "__len__") and (ty.n is None or len(value) == ty.n)
                and all(_fits(v, ty.elem) for v in value))
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):  # (ragged)
        return False
    return arr.shape == _item_shape(ty) and _numbers(arr, ty)


def _numbers(arr: np.ndarray, ty: Ty | None) -> bool:
    """``arr`` holds numbers, whole ones of 64 bits where ``ty``'s (innermost) items are ints (an int input's range)."""
    while ty is not None and ty.kind == "seq":
        ty = ty.elem
    if ty is not None and ty.kind == "int" and arr.size and arr.dtype.kind == "f":  # (1e19, ⊥, 2.5)
        with np.errstate(invalid="ignore"):
            return bool(np.all((np.floor(arr) == arr) & (arr >= -2.0 ** 63) & (arr < 2.0 ** 63)))
    if ty is not None and ty.kind == "int" and arr.size and arr.dtype.kind == "O":  # (2**64)
        return all(isinstance(x, numbers.Real) and is_int64(x) for x in arr.flat)
    return arr.dtype.kind in "biu" and (arr.dtype != np.uint64 or ty is None or ty.kind != "int" or arr.max(initial=0) < 1 << 63) \
        or arr.dtype.kind == "f"
