"""The C printer: a schedule's loop steps (their loop IR, :mod:`tensorlang.loops`) as C99.
It decides nothing: it spells the schedule's and the loop IR's choices in C
(docs/c-backend.md, "From EIN to loops to C", has the conventions)."""

from __future__ import annotations

import math

from dataclasses import dataclass

from ...ein.index import Affine, zero_based_text
from ...ein.printer import statement_to_text
from ...errors import KernelFailed
from ...loops import ir as loops
from ...loops import microkernel
from ...loops.ir import slots as used_slots
from ...machine import TILE_BYTES
from ...schedule.padding import padded_shape
from ...schedule.gemm import gemm_of
from ...schedule.plan import SCRATCH, Schedule
from ...schedule.steps import EinsumStep, GemmStep, GramStep, LoopStep, ModeStep, ProbeStep, statement_of
from ...semantics.values import FUNCTIONS, REDUCTIONS, epsilon_pairs, power_exponent
from . import blascall, csrc, gram, probe

#: The C type of each dtype.
REAL = {"float64": "double", "float32": "float"}
#: How a parallel loop keeps choosing between one thread and its team (csrc/tl_threads.h).
CHOICE = {"warm": 3, "explore": 32, "decay": 4}
#: The comment heading each register tile (a reader's mark; print_c goes by CPrinter.uses).
TILE_MARK = "/* register tile:"
#: The comment heading a packed product printed as a BLAS call.
PACKED_BLAS_MARK = "packed product: one BLAS call"
#: At the head of a source compiled with ``fma=True`` (docs/optimizer.md, "Fused multiply-add").
FMA_NOTE = "/* fma=True: each multiply-add x + a*b of a sum is fma(a, b, x), rounded once */\n"
#: What a step returns when it could not allocate (:func:`check_status`: ``too-large``);
#: 0: done; -1: BLAS not set up (:mod:`.blascall`).
NO_MEMORY = -2


def _comment(text: str) -> str:
    """Text safe inside a C block comment (no ``*/``, no line breaks, ASCII only)."""
    return text.replace("*/", "* /").replace("\n", " ").encode("ascii", "replace").decode("ascii")


def check_status(status: int) -> None:
    """Raise what a step's nonzero ``status`` means: :class:`~tensorlang.errors.KernelFailed`
    (never retried: the step may have written part of its buffers)."""
    if status == NO_MEMORY:
        raise KernelFailed("too-large", "the C kernel could not allocate memory for a packed structured statement's copies")
    if status != 0:
        raise KernelFailed("backend", f"the C kernel failed (status {status})")


def _idx(i) -> str:
    """An index in C: a loop variable, a 0-based position, or an affine index's 0-based offset."""
    if isinstance(i, Affine):
        return zero_based_text(i, "x_{}".format, "{}LL".format)
    return f"x_{i}" if isinstance(i, str) else f"{int(i)}LL"


def _number(value: float, real: str) -> str:
    if math.isnan(value):
        return "((real)NAN)"
    if math.isinf(value):
        return "((real)INFINITY)" if value > 0 else "(-(real)INFINITY)"
    return f"((real){float(value)!r})"


class CPrinter:
    """Print loop nests over the slots of a :class:`~.loops.LoopProgram`."""

    def __init__(self, program: loops.LoopProgram, real: str, step: str = "tl_step"):
        self.program = program
        self.real = real
        self.suffix = "f" if real == "float" else ""
        self.step = step
        #: the bodies of parallel loops, as functions of their own (:meth:`outline`)
        self.prototypes: list[str] = []
        self.helpers: list[str] = []
        #: each slot's shape in memory: padded under pad=M (000 §4, schedule/padding.py)
        self.storage = list(program.buffers.all_storage_shapes)
        #: the nest being printed was compiled with ``fma=True`` (:attr:`loops.Nest.fma`)
        self.fma = False
        self.itemsize = 4 if real == "float" else 8
        self._choices = 0  # parallel loops with a measured choice so far (CHOICE)
        self._rebuilds = 0  # table reconstructions so far (their tables' names)
        self._heap = 0  # the heap block's bytes of the nest being printed (loops.Nest.heap)
        self._statement_functions = 0  # statements printed as functions of their own so far
        self._tiles = 0  # register tiles so far (their accumulators' names, :meth:`tile`)
        #: the slots whose loads read another pointer (an inout input, :attr:`loops.Nest.inputs`)
        self.reads: dict[int, str] = {}
        #: what the printed code needs: "threads" (tl_threads, function() declares it), and of the source's
        #: head (print_c) "heap", "teams", "tiles", "forced" (tiles without a plain branch), "vfma", "tail", "blas"
        self.uses: set[str] = set()
        self._acc_ops: dict[str, str] = {}  # each accumulator's reduction, as its last Init said

    # ---------------------------------------------------------------- scalars
    def offset(self, slot: int, indices) -> str:
        """Row-major offset of ``indices`` in slot's buffer, in int64 arithmetic."""
        if slot < len(self.program.names) and self.program.names[slot] == SCRATCH:
            raise AssertionError("the scratch buffer is written through store(), never read")
        return _row_major(indices, self.storage[slot])

    def scalar(self, e) -> str:
        if isinstance(e, loops.Load):  # an inout variable's input: v<slot>_in (loops.Nest.inputs)
            return f"{self.reads.get(e.slot, f'v{e.slot}')}[{self.offset(e.slot, e.indices)}]"
        if isinstance(e, loops.Acc):
            return e.name
        if isinstance(e, loops.Const):
            return _number(e.value, self.real)
        if isinstance(e, loops.Delta):
            return f"(({_idx(e.first)}) == ({_idx(e.second)}) ? (real)1 : (real)0)"
        if isinstance(e, loops.Epsilon):  # Π_{a<b} sgn(x_b - x_a) (semantics.values.epsilon_sign)
            ix = [_idx(i) for i in e.indices]
            signs = " * ".join(f"((({ix[b]}) > ({ix[a]})) - (({ix[b]}) < ({ix[a]})))" for a, b in epsilon_pairs(len(ix)))
            return f"((real)({signs}))"
        if isinstance(e, loops.Neg):  # a sum's -(s + 0), as -s: GCC 12 folds -fma(a, b, c) (docs/c-backend.md)
            plus = self.fma and isinstance(e.arg, loops.Acc) and self._acc_ops.get(e.arg.name) == "+"
            return f"(-({self.scalar(e.arg)} + (real)0))" if plus else f"(-{self.scalar(e.arg)})"
        if isinstance(e, loops.Power):  # semantics.values.powers: pow(|x|, n), x's sign where n is odd
            x, f = self.scalar(e.arg), self.suffix
            magnitude = f"pow{f}(fabs{f}({x}), {_number(power_exponent(e.n), self.real)})"
            return f"copysign{f}({magnitude}, {x})" if e.n % 2 else magnitude
        if isinstance(e, loops.Apply):
            return f"{FUNCTIONS[e.fn].c_name}{self.suffix}({self.scalar(e.arg)})"
        if isinstance(e, loops.BinOp):
            left, right = self.scalar(e.left), self.scalar(e.right)
            sl, sr = (math.copysign(1.0, x.value) if isinstance(x, loops.Const) and x.value == 0 else 0.0 for x in (e.left, e.right))
            if e.op in "+-" and (sl > 0 or sr == (1.0 if e.op == "+" else -1.0)):  # GCC folds 0 - fabs(x), -fabs(x) - -0.0
                return f"tl_z{'sub' if sl > 0 and e.op == '-' else 'add'}({right if sl > 0 else left})"  # tl_prelude.h
            return f"tl_cdiv({left}, {right})" if e.op == "/" else f"({left} {e.op} {right})"
        if isinstance(e, loops.Select):  # a direct sum (bounds): only the chosen case is evaluated
            text = self.scalar(e.cases[-1]) if e.bounds else _number(float("nan"), self.real)
            for n in reversed(range(len(e.cases) - bool(e.bounds))):
                test = f"< {e.bounds[n]}LL" if e.bounds else f"== {n}LL"
                text = f"({_idx(e.var)} {test} ? {self.scalar(e.cases[n])} : {text})"
            return text
        raise TypeError(f"not a loop-program scalar: {e!r}")

    # ------------------------------------------------------------- statements
    def rebuild(self, node: loops.Rebuild, lines: list[str], pad: str) -> None:
        """A packed statement's reconstruction (loops.ir.Rebuild): tables of packed positions,
        then one nest over the target sorting each group's positions by compare-exchanges."""
        k = self._rebuilds
        self._rebuilds += 1
        rank = len(node.extents)
        loop_vars, packed = [f"rb{k}_{d}" for d in range(rank)], [f"ru{k}_{d}" for d in range(rank)]
        lines += [f"{pad}static const int32_t tl_u{k}_{d}[{len(table)}] = {{{', '.join(map(str, table))}}};"
                  for d, table in enumerate(node.tables) if table is not None]
        lines += [f"{pad}{'    ' * d}for (int64_t {v} = 0; {v} < {node.extents[d]}LL; ++{v}) {{" for d, v in enumerate(map(_idx, loop_vars))]
        inner = pad + "    " * rank
        lines += [f"{inner}int64_t {_idx(packed[d])} = {f'tl_u{k}_{d}[{v}]' if node.tables[d] is not None else v};"
                  for d, v in enumerate(map(_idx, loop_vars))]
        for group in node.groups:  # a bubble sort's compare-exchanges: ascending in the group's order
            for n in range(len(group) - 1, 0, -1):
                for a in range(n):
                    lo, hi = _idx(packed[group[a]]), _idx(packed[group[a + 1]])
                    lines.append(f"{inner}if ({hi} < {lo}) {{ const int64_t tl_s = {lo}; {lo} = {hi}; {hi} = tl_s; }}")
        lines.append(f"{inner}v{node.target}[{_row_major(loop_vars, self.storage[node.target])}] = "
                     f"v{node.source}[{_row_major(packed, self.storage[node.source])}];")
        lines += [f"{pad}{'    ' * d}}}" for d in reversed(range(rank))]

    def node(self, node, lines: list[str], depth: int) -> None:
        pad = "    " * depth
        fused = loops.multiply_add(node) if self.fma else None
        if fused is not None:  # x = fma(a, b, x): one rounding (the nest's fma mark, loops.ir.multiply_add)
            place, a, b, from_zero = fused
            x = place if isinstance(place, str) else f"v{place[0]}[{_row_major(place[1], self._store_shape(node))}]"
            addend = "(real)0" if from_zero else x
            if not from_zero and not isinstance(place, str) and place[0] in self.reads:  # x = fma(a, b, x_in)
                addend = self.scalar(loops.Load(*place))
            lines.append(f"{pad}{x} = fma{self.suffix}({self.scalar(a)}, {self.scalar(b)}, {addend});")
        elif isinstance(node, loops.Init):
            self._acc_ops[node.acc] = node.op
            lines.append(f"{pad}real {node.acc} = {_number(REDUCTIONS[node.op].identity, self.real)};")
        elif isinstance(node, loops.Update):
            value = self.scalar(node.value)
            lines.append(f"{pad}{node.acc} {node.op}= {value};" if node.op in ("+", "*")
                         else f"{pad}{node.acc} = tl_{node.op}({node.acc}, {value});")
        elif isinstance(node, loops.Store):
            place = f"v{node.slot}[{_row_major(node.indices, self._store_shape(node))}]"
            added = loops.row_update(node) if node.slot not in self.reads else None  # x += p (loops.interchange)
            lines.append(f"{pad}{place} = {self.scalar(node.value)};" if added is None else f"{pad}{place} += {self.scalar(added)};")
        elif isinstance(node, loops.Prefetch):  # a hint: no address past the buffer is formed
            shape = self.storage[node.slot]
            guard = " && ".join(f"{_idx(i)} < {shape[d]}LL" for d, i in enumerate(node.indices) if isinstance(i, Affine))
            ask = f"__builtin_prefetch((const char *)(v{node.slot} + {self.offset(node.slot, node.indices)}), 0, 3);"
            lines.append(f"{pad}if ({guard}) {ask}" if guard else f"{pad}{ask}")
        elif isinstance(node, loops.Declare):  # a fused loop's local buffer (loops/fusion.py)
            size = max(math.prod(node.shape), 1)
            while len(self.storage) <= node.slot:  # a micro-kernel's accumulator block
                self.storage.append(())
            self.storage[node.slot] = node.shape
            name = self.program.names[node.slot] if node.slot < len(self.program.names) else "accumulators"
            if node.home == "heap":  # a part of the nest's heap block (nest)
                lines.append(f"{pad}real *restrict v{node.slot} = (real *)(tl_heap + {node.offset}LL);"
                             "  /* packed, on the heap */")
            elif node.home == "pointer":
                lines += [f"{pad}real v{node.slot}_storage[{size}] __attribute__((aligned(64)));  /* packed */",
                          f"{pad}real *restrict v{node.slot} = v{node.slot}_storage;"]
            else:
                lines.append(f"{pad}real v{node.slot}[{size}] __attribute__((aligned(64)));  /* {_comment(name)} */")
        elif isinstance(node, loops.Copy):
            lines.append(f"{pad}memcpy(v{node.target}, v{node.source}, (size_t){node.count}LL * sizeof(real));")
        elif isinstance(node, loops.Rebuild):
            self.rebuild(node, lines, pad)
        elif isinstance(node, loops.Tile):
            self.tile(node, lines, depth)
        elif isinstance(node, loops.BlasProduct):
            self.packed_blas(node, lines, depth)
        elif isinstance(node, loops.Loop):
            chosen = node.parallel and bool(node.team)  # a measured choice (CHOICE): timed below
            self._choices += chosen
            lines.extend(f"{pad}{pragma}" for pragma in self.pragmas(node))
            var = _idx(node.var)
            start = _idx(node.start) if isinstance(node.start, str) else "0" if node.start == 0 else f"{node.start}LL"
            lines.append(f"{pad}for (int64_t {var} = {start}; {var} < {node.extent}LL; ++{var}) {{")
            lines.extend(f"{pad}    {line}" for line in self.prefetch(node))
            if node.parallel and not node.reductions:
                lines.append(f"{pad}    {self.outline(node)};")
            else:
                self.children(node, var, lines, depth + 1)
            lines.append(f"{pad}}}")
            if chosen:
                team = f"tl_team{self._choices}_{var}"
                lines += [f"{pad}#ifdef _OPENMP", f"{pad}tl_record(&tl_choice{self._choices}, {team}, tl_clock() - {team}_t0);",
                          f"{pad}#endif"]
        else:
            raise TypeError(f"not a loop-program node: {node!r}")

    def tile(self, node: loops.Tile, lines: list[str], depth: int) -> None:
        """A register tile (loops.ir.Tile), with its plain loop as the ``#else`` of ``TL_TILES``."""
        self._tiles += 1
        code = self.tile_code(node.tile, depth)
        if not node.plain:
            self.uses.add("forced")
            lines.extend(code)
            return
        pad = "    " * depth
        lines += [f"{pad}#if TL_TILES", *code, f"{pad}#else"]
        if node.rows:
            self.rows_plain(node.tile, lines, depth)
        else:
            self.node(node.loop, lines, depth)
        lines.append(f"{pad}#endif")

    def rows_plain(self, tile: microkernel.Tile, lines: list[str], depth: int) -> None:
        """A tile's plain branch row by row (:attr:`loops.Tile.rows`), the same sums in the same order."""

        pad, x, k = "    " * depth, _idx(tile.x), _idx(tile.k)
        acc, width = tile.init.acc, tile.width
        each = f"for (int64_t {x} = 0; {x} < {width}LL; ++{x}) {{"
        lines += [f"{pad}for (int64_t {_idx(tile.u)} = 0; {_idx(tile.u)} < {tile.height}LL; ++{_idx(tile.u)}) {{",
                  f"{pad}    real tl_row[{width}];", f"{pad}    #pragma omp simd", f"{pad}    {each}"]
        self.node(tile.init, lines, depth + 2)
        lines += [f"{pad}        tl_row[{x}] = {acc};", f"{pad}    }}",
                  f"{pad}    for (int64_t {k} = 0; {k} < {tile.extent}LL; ++{k}) {{", f"{pad}        #pragma omp simd",
                  f"{pad}        {each}", f"{pad}            real {acc} = tl_row[{x}];"]
        self.node(tile.update, lines, depth + 3)
        lines += [f"{pad}            tl_row[{x}] = {acc};", f"{pad}        }}", f"{pad}    }}",
                  f"{pad}    #pragma omp simd", f"{pad}    {each}", f"{pad}        const real {acc} = tl_row[{x}];"]
        self.node(tile.store, lines, depth + 2)
        lines += [f"{pad}    }}", f"{pad}}}"]

    def tile_code(self, tile: microkernel.Tile, depth: int) -> list[str]:
        """The C of a register tile (docs/c-backend.md, "Register tiles"): per group of rows the
        accumulator vectors ``tl_t<N>[rows][vectors]``, one k step at a time, then stored."""
        pad = "    " * depth
        lanes = TILE_BYTES // self.itemsize
        vectors, tail = tile.vectors(self.itemsize), tile.tail(self.itemsize)
        self.uses |= {"tiles"} | ({"tail"} if tail else set())
        n = self._tiles
        t, g = f"tl_t{n}", f"tl_g{n}"
        x, u, k = _idx(tile.x), _idx(tile.u), _idx(tile.k)
        moving = set(tile.moving)

        def vector(e) -> str:  # e as a vector: the loads that move with x read as vectors, and
            # each largest part without them computed as a scalar, then put in every lane
            if not any(f in moving or isinstance(f, loops.Acc) for f in loops.walk((e,))):
                return f"tl_vsplat({self.scalar(e)})"
            if isinstance(e, loops.Acc):  # the stored value's sum: the row's accumulator vector
                return acc
            if isinstance(e, loops.Load):  # a row that is not whole vectors: its last one masked
                where = f"&v{e.slot}[{self.offset(e.slot, e.indices)}]"
                return f"tl_vloadn({where}, tl_n)" if tail else f"tl_vload({where})"
            if isinstance(e, loops.BinOp):
                return f"({vector(e.left)} {e.op} {vector(e.right)})"
            assert isinstance(e, loops.Neg), e  # microkernel.tile_of: loads, constants, - and + - *
            return f"(-{vector(e.arg)})"

        acc = f"{t}[tl_r][tl_v]"
        fused = loops.multiply_add(tile.update) if self.fma else None
        if fused is not None:
            _, a, b, _ = fused
            self.uses.add("vfma")
            step = f"tl_vfma({vector(a)}, {vector(b)}, {acc})"
        else:
            step = f"{acc} + {vector(tile.update.value)}"
        where = f"&v{tile.store.slot}[{_row_major(tile.store.indices, self._store_shape(tile.store))}]"
        stored = vector(tile.store.value)
        store = f"tl_vstoren({where}, {stored}, tl_n);" if tail else f"tl_vstore({where}, {stored});"
        each = (f"    for (int64_t tl_v = 0; tl_v < {vectors}LL; ++tl_v) {{", f"        const int64_t {x} = tl_v * {lanes}LL;",
                *([f"        const int tl_n = tl_v < {vectors - 1}LL ? {lanes} : {tail};"] if tail else []))
        body = []
        for first, end, group in tile.groups(self.itemsize):  # microkernel.Tile.groups
            rows = (f"for (int64_t tl_r = 0; tl_r < {group}LL; ++tl_r) {{", f"    const int64_t {u} = {g} + tl_r;")
            body += [
                f"{TILE_MARK} {group} rows of {vectors} vectors at a time"
                + (f", the last {tail} of {lanes} lanes */" if tail else " */"),
                f"for (int64_t {g} = {first}; {g} < {end}LL; {g} += {group}LL) {{",
                f"    tl_vd {t}[{group}][{vectors}];",
                f"    #pragma GCC unroll {group}",
                "    for (int64_t tl_r = 0; tl_r < " + f"{group}LL; ++tl_r)",
                f"        for (int64_t tl_v = 0; tl_v < {vectors}LL; ++tl_v) {t}[tl_r][tl_v] = (tl_vd){{0}};",
                f"    for (int64_t {k} = 0; {k} < {tile.extent}LL; ++{k}) {{",
                f"        #pragma GCC unroll {group}",
                *(f"        {line}" for line in rows),
                f"            #pragma GCC unroll {vectors}",
                *(f"        {line}" for line in each),
                f"                {acc} = {step};",
                "            }",
                "        }",
                "    }",
                f"    #pragma GCC unroll {group}",
                *(f"    {line}" for line in rows),
                f"        #pragma GCC unroll {vectors}",
                *(f"    {line}" for line in each),
                f"            {store}",
                "        }",
                "    }",
                "}",
            ]
        return [f"{pad}{line}" for line in body]

    def prefetch(self, loop: loops.Loop) -> list[str]:
        """The ``__builtin_prefetch`` hints of ``loop.prefetch`` (:class:`loops.Ahead`), one per
        64-byte line, guarded so that no address past a buffer is formed."""
        groups: dict[str, list[str]] = {}  # the hints under one guard share its block
        for ahead in loop.prefetch:
            shape = self.storage[ahead.slot]
            guard = " && ".join(f"{_idx(v)} + {o} < {shape[d]}LL" for d, (v, o) in enumerate(ahead.at) if o)
            position = "0"
            for d, (v, o) in enumerate(ahead.at):
                term = f"{_idx(v)} + {o}" if o else _idx(v)
                position = f"({term})" if position == "0" else f"({position} * {shape[d]}LL + {term})"
            size = math.prod(shape[len(ahead.at):])
            slab = size * self.itemsize
            hint = f"{int(ahead.write)}, 2"
            name = f"tl_ahead{ahead.slot}"
            if ahead.spread:
                first, stop = ahead.lines or (0, -(-slab // 64))
                var, count, share, base = _idx(loop.var), stop - first, loop.extent, f"{first}LL + " if first else ""
                walk = (f"for (int64_t tl_l = {base}{var} * {count}LL / {share}LL; tl_l < {base}({var} + 1) * {count}LL / {share}LL; ++tl_l) "
                        f"__builtin_prefetch({name} + 64 * tl_l, {hint});")
            else:
                walk = f"for (int64_t tl_b = 0; tl_b < {slab}LL; tl_b += 64) __builtin_prefetch({name} + tl_b, {hint});"
            groups.setdefault(guard, []).extend(
                [f"    const char *{name} = (const char *)(v{ahead.slot} + {position} * {size}LL);", f"    {walk}"])
        lines: list[str] = []
        for guard, body in groups.items():
            lines += [f"if ({guard}) {{" if guard else "{", *body, "}"]
        return lines

    def packed_blas(self, node: loops.BlasProduct, lines: list[str], depth: int) -> None:
        """A packed product as one BLAS call (loops.ir.BlasProduct, :func:`blascall.packed_call`)."""
        pad = "    " * depth
        self.uses.add("blas")
        lines.append(f"{pad}/* {PACKED_BLAS_MARK} ({node.routine}), {node.product.loop_work} multiply-adds of block loops */")
        *first, call = blascall.packed_call(node)
        lines.extend(f"{pad}{c}" for c in first)
        fail = "{ free(tl_heap_block); return -1; }" if self._heap else "return -1;"  # the heap block is freed
        lines.append(f"{pad}if ({call} != 0) {fail}")

    def outline(self, loop: loops.Loop) -> str:
        """The body of a parallel loop as ``static inline void <step>_bodyN(...)`` (the
        ``restrict`` GCC's outlined region loses, docs/c-backend.md); returns the call."""
        name = f"{self.step}_body{len(self.helpers) + 1}"
        var = _idx(loop.var)
        body: list[str] = []
        self.children(loop, var, body, 1)
        return self._function("static inline", name, sorted(used_slots(loop.body)), var, body)

    def _function(self, kind: str, name: str, slots: list[int], var: str, body: list[str]) -> str:
        """``kind void name(real *restrict v<slot>..., int64_t var) { body }``, declared before
        the step and defined after it; returns the call."""
        head = f"{kind} void {name}({', '.join([_param(s, self.program.buffers.aliased) for s in slots] + [f'int64_t {var}'])})"
        self.prototypes.append(head + ";")
        self.helpers.append("\n".join([head + " {", *body, "}"]) + "\n")
        return f"{name}({', '.join([f'v{s}' for s in slots] + [var])})"

    def children(self, loop: loops.Loop, var: str, lines: list[str], depth: int) -> None:
        """The body of the loop over ``var``, a statement of :attr:`loops.Loop.apart` as a call."""
        for k, node in enumerate(loop.body):
            if k in loop.apart:
                lines.append(f"{'    ' * depth}{self.statement_function(node, var)};")
            else:
                self.node(node, lines, depth)

    def statement_function(self, loop: loops.Node, var: str) -> str:
        """A fused loop's statement of :attr:`loops.Loop.apart` as ``static TL_NOINLINE void
        <step>_sN(...)``, its slots ``restrict`` pointers; returns the call."""
        self._statement_functions += 1
        body = [f"    (void){var};"]
        self.node(loop, body, 1)
        return self._function("static TL_NOINLINE", f"{self.step}_s{self._statement_functions}",
                              sorted(used_slots((loop,))), var, body)

    def _store_shape(self, node: loops.Store) -> tuple[int, ...]:
        """The shape a Store indexes (the scratch slot: the statement's, set by :meth:`nest`)."""
        if node.slot < len(self.program.names) and self.program.names[node.slot] == SCRATCH:
            return self._target_shape
        return self.storage[node.slot]

    def pragmas(self, loop: loops.Loop) -> list[str]:
        simd_reductions = [(op, acc) for op, acc in loop.reductions if op in ("+", "*")]
        exact = len(simd_reductions) == len(loop.reductions)  # max/min: NaN rules, no OpenMP reduction
        clause = "".join(f" reduction({op}:{acc})" for op, acc in simd_reductions)
        if loop.parallel:
            self.uses.add("threads")
            if not loop.team:  # threads forced: as many as asked for
                return [f"#pragma omp parallel for schedule({loop.omp_schedule}) num_threads(tl_threads) if(tl_threads > 1){clause}"]
            # the team decided at run time (csrc/tl_threads.h), named by its choice too (two loops may share a variable)
            team = f"tl_team{self._choices}_{_idx(loop.var)}"
            self.uses.add("teams")
            choice = f"tl_choice{self._choices}"
            return ["#ifdef _OPENMP", f"static tl_choice {choice};",
                    f"const int {team} = tl_pick(&{choice}, tl_team(tl_threads, {loop.team}));",
                    f"const int64_t {team}_t0 = tl_clock();",
                    f"#pragma omp parallel for schedule({loop.omp_schedule}) num_threads({team}) if({team} > 1){clause}",
                    "#endif"]
        if loop.simd and exact:
            return [f"#pragma omp simd{clause}"]
        if loop.unroll > 1:  # a register block's rows (loops.microkernel); gcc and clang know it
            return [f"#pragma GCC unroll {loop.unroll}"]
        return []

    def nest(self, nest: loops.Nest, lines: list[str]) -> None:
        self._target_shape = padded_shape(tuple(n for _, n in nest.statement.index), self.program.buffers.pad)
        self.fma = nest.fma
        for stmt in nest.fused or (nest.statement,):
            lines.append(f"    /* {_comment(statement_to_text(stmt))} */")
        lines.append("    {")  # a block per statement: its accumulators are its own
        self._heap = nest.heap
        if self._heap:  # one block for the large local buffers; nothing in a nest returns early
            self.uses.add("heap")
            lines.append("        void *tl_heap_block = NULL;")
            lines.append(f"        if (posix_memalign(&tl_heap_block, 64, (size_t){self._heap}LL) != 0) return {NO_MEMORY};")
            lines.append("        char *tl_heap = (char *)tl_heap_block;")
        for node in nest.body:
            self.node(node, lines, 2)
        if self._heap:
            lines.append("        free(tl_heap_block);")
            self._heap = 0
        lines.append("    }")


def _row_major(indices, shape) -> str:
    if not indices:
        return "0"
    text = _idx(indices[0])
    for i, n in zip(indices[1:], shape[1:]):
        text = f"({text}) * {n}LL + {_idx(i)}"
    return text


def _param(slot: int, plain) -> str:
    """A slot's pointer parameter: ``restrict`` unless another may reach it (``plain``)."""
    return f"real *{'' if slot in plain else 'restrict '}v{slot}"


def _copy_input(slot: int, storage: tuple[int, ...], itemsize: int) -> str:
    """The C copying an inout slot's input into its buffer where the caller passed another."""
    return f"    if (v{slot}_in != v{slot}) memcpy(v{slot}, v{slot}_in, (size_t){math.prod(storage) * itemsize}LL);"


def function(program: loops.LoopProgram, name: str, nests: tuple[loops.Nest, ...], real: str,
             slots: tuple[int, ...], inputs: tuple[int, ...] = ()) -> tuple[str, frozenset[str]]:
    """One step ``int name(real *v<slot>..., const real *v<slot>_in..., int nthreads)`` running
    ``nests``: each inout slot's input read in place up to its first assignment
    (:attr:`loops.Nest.inputs`) or copied into the buffer first; and what its code needs of the
    source's head (:attr:`CPrinter.uses`)."""
    printer = CPrinter(program, real, name)
    aliased = program.buffers.aliased
    reading = set(nests[0].inputs) if nests else set()  # read in place up to the first assignment
    params = [_param(slot, aliased | reading) for slot in slots]
    params += [f"const real *v{slot}_in" for slot in inputs] + ["int nthreads"]
    lines = [f"int {name}({', '.join(params)}) {{"]
    lines += [f"    /* v{slot}: {_comment(program.names[slot])} {list(program.shapes[slot])} */" for slot in slots]
    threads_at = len(lines)  # the team's size goes here where a loop asks for it (below)
    lines += [_copy_input(slot, printer.storage[slot], printer.itemsize) if slot not in reading else
              f"    /* v{slot}_in: read until the first assignment of v{slot} (in place: v{slot}_in == v{slot}) */"
              for slot in inputs]
    for nest in nests:
        printer.reads = {slot: f"v{slot}_in" for slot in nest.inputs}
        printer.nest(nest, lines)
    if "threads" in printer.uses:  # else no call of omp_get_max_threads per call
        lines[threads_at:threads_at] = ["#ifdef _OPENMP", "    int tl_threads = nthreads > 0 ? nthreads : omp_get_max_threads();",
                                        "#else", "    int tl_threads = 1;", "#endif", "    (void)tl_threads;"]
    else:
        lines.insert(threads_at, "    (void)nthreads;")
    lines += ["    return 0;", "}"]
    # the parallel loops' bodies: declared before the step, defined after it in the order it runs them
    text = "\n".join(lines) + "\n"
    if printer.helpers:
        text = "\n".join(printer.prototypes) + "\n\n" + text + "\n" + "\n".join(printer.helpers)
    if any(nest.wide_vectors for nest in nests):
        # gcc on x86-64 prefers 256-bit vectors even with AVX-512; these functions may use 512
        text = csrc.text("tl_wide_begin.h") + text + csrc.text("tl_wide_end.h")
    return text, frozenset(printer.uses)


def prelude(real: str, teams: bool = False) -> str:
    """The source's head (csrc/tl_prelude.h; ``teams``: and csrc/tl_threads.h)."""
    return csrc.text("tl_prelude.h", real=real) + (csrc.text("tl_threads.h", **CHOICE) if teams else "")


def tiles_prelude(real: str, fma: bool, forced: bool = False, tail: bool = False) -> str:
    """The register tiles' vector type and helpers (csrc/tl_tiles*.h) for ``real``; ``forced``:
    tiles without a plain branch (docs/c-backend.md, "Register tiles")."""
    lanes = TILE_BYTES // (4 if real == "float" else 8)
    ps = "ps" if real == "float" else "pd"
    head = csrc.text("tl_tiles.h", forced=int(forced), lanes=", ".join(["s"] * lanes), set1=f"_mm512_set1_{ps}")
    m512 = "__m512" if real == "float" else "__m512d"
    if fma:
        head += csrc.text("tl_tiles_fma.h", forced=int(forced), fmadd=f"_mm512_fmadd_{ps}", m512=m512, count=lanes,
                          fma="fmaf" if real == "float" else "fma")
    if tail:
        head += csrc.text("tl_tiles_tail.h", forced=int(forced), mask=f"__mmask{lanes}", loadn=f"_mm512_maskz_loadu_{ps}",
                          storen=f"_mm512_mask_storeu_{ps}", m512=m512)
    return head


@dataclass(frozen=True)
class CFunction:
    """Loop step ``step``'s C function: its name, its slots in order, then the ``inout``
    slots whose caller's input it takes after them."""

    step: int
    name: str
    slots: tuple[int, ...]
    inputs: tuple[int, ...] = ()


@dataclass(frozen=True)
class Generated:
    """The C source of a schedule, its C functions and cffi declarations; ``entry``: the
    ``tl_kernel`` running several steps all in C; ``blas``: the source calls BLAS
    (``tl_set_blas`` installs :mod:`tensorlang.machine.blas`'s pointers first)."""

    source: str
    schedule: Schedule
    loop_program: loops.LoopProgram
    functions: tuple[CFunction, ...]
    declarations: str
    entry: CFunction | None = None
    blas: bool = False


#: How each BLAS step runs, as the source's comment says it.
_BLAS_COMMENT = {ModeStep: "numpy.matmul (mode product)", GemmStep: "numpy.matmul", EinsumStep: "opt_einsum"}


def _entry(functions: list[CFunction], inout: frozenset[int], storage, itemsize: int) -> tuple[CFunction, str]:
    """``tl_kernel``: every step's function in order over the union of their slots, then the
    inputs of the inout slots (handed to the first step using each, else copied)."""
    slots = tuple(sorted(set().union(*(c.slots for c in functions))))
    inputs = tuple(s for s in slots if s in inout)
    params = ", ".join([f"real *v{slot}" for slot in slots] + [f"const real *v{slot}_in" for slot in inputs]
                       + ["int nthreads"])
    lines = [f"int tl_kernel({params}) {{", "    int tl_status;"]
    first = {s: next(c for c in functions if s in c.slots) for s in inputs}
    lines += [_copy_input(s, storage[s], itemsize) for s in inputs if s not in first[s].inputs]
    for c in functions:  # a step's own status (NO_MEMORY, -1) is the kernel's
        args = ", ".join([f"v{slot}" for slot in c.slots] + [f"v{s}_in" if first[s] is c else f"v{s}" for s in c.inputs]
                         + ["nthreads"])
        lines.append(f"    if ((tl_status = {c.name}({args})) != 0) return tl_status;")
    lines += ["    return 0;", "}"]
    return CFunction(-1, "tl_kernel", slots, inputs), "\n".join(lines) + "\n"


def _step_comment(step) -> str:
    return _comment(statement_to_text(statement_of(step)))


def print_c(schedule: Schedule, loop_program: loops.LoopProgram) -> Generated:
    """The C source of ``schedule`` with its loop steps' nests from ``loop_program``: a BLAS
    step that ``runs`` in C a call (:mod:`.blascall`), any other a comment; a Gram step the
    Gram kernel (:mod:`.gram`), a probe step :mod:`.probe`'s."""
    real = REAL[schedule.dtype]
    parts: list[str] = []
    functions: list[CFunction] = []
    extra: list[str] = []  # cffi declarations beyond the steps' (a probe step's general entry)
    uses: set[str] = set()  # what the steps' code needs of the head (CPrinter.uses)
    inout = frozenset(n for n, b in enumerate(loop_program.buffers.buffers) if b.role == "inout")
    for n, step in enumerate(schedule.steps):
        name = f"tl_step{n}"
        if isinstance(step, LoopStep):
            nests = loop_program.nests_of(n)
            # the nests may read fewer buffers than the statements name: such a slot stays a parameter
            assert used_slots(nests) <= set(step.slots), "the nests use only the schedule's slots"
            c = CFunction(n, name, step.slots, tuple(s for s in step.slots if s in inout))
            text, used = function(loop_program, name, nests, real, c.slots, c.inputs)
            uses |= used
        elif isinstance(step, GramStep):
            c = CFunction(n, name, tuple(sorted((step.operand, step.target))))
            text = gram.step_function(name, step, _step_comment(step), dict(loop_program.teams).get(n, -1))
        elif isinstance(step, ProbeStep):  # a field probe's probe tensor (targets/c/probe.py)
            c = CFunction(n, name, tuple(sorted({step.target, *step.operands})))
            text, entry_declaration = probe.step_function(name, step, _step_comment(step), dict(loop_program.probes).get(n))
            extra.append(entry_declaration)
        elif step.runs != "c":  # the schedule's choice (schedule.gemm.runs): a Python runner
            parts.append(f"/* BLAS step ({_BLAS_COMMENT[type(step)]}): {_step_comment(step)} */\n")
            continue
        else:
            gemm = gemm_of(step)
            assert gemm is not None, "a step that runs in C is one GEMM over its buffers (schedule.gemm.runs)"
            c = CFunction(n, name, gemm.slots)
            text = blascall.function(name, gemm, "mode product" if isinstance(step, ModeStep) else "GEMM",
                                     _step_comment(step))
            uses.add("blas")
        parts.append(text)
        functions.append(c)
    entry = None
    # several steps all in C, or one taking no input of an inout slot it has: tl_kernel, which every call takes
    if functions and len(functions) == len(schedule.steps) and (
            len(functions) > 1 or any(s in inout and s not in functions[0].inputs for s in functions[0].slots)):
        entry, text = _entry(functions, inout, loop_program.buffers.all_storage_shapes, 4 if real == "float" else 8)
        parts.append(text)
    declared = [*functions, entry] if entry is not None else functions
    declarations = "\n".join(f"int {c.name}({', '.join(['void *'] * (len(c.slots) + len(c.inputs)) + ['int'])});"
                             for c in declared)
    blas = "blas" in uses
    declarations += "".join("\n" + line for line in extra) + "\nint tl_set_blas(void *, void *, void *, int);" * blas
    body = "".join("\n" + part for part in parts)
    if "heap" in uses:  # a nest's heap block (CPrinter.nest)
        body = "\n#include <stdlib.h>\n" + body
    if "tiles" in uses:
        body = tiles_prelude(real, fma="vfma" in uses, forced="forced" in uses, tail="tail" in uses) + body
    source = (prelude(real, teams="teams" in uses) + FMA_NOTE * any(n.fma for n in loop_program.nests)
              + (blascall.WRAPPERS if blas else "") + body)
    return Generated(source, schedule, loop_program, tuple(functions), declarations, entry, blas)
