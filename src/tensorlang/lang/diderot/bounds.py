"""Bounds on a typechecked Diderot program, checked before anything runs (docs/errors.md, "Limits on
program size"); both executors expand a function at every call: the expansion is counted iteratively."""

from __future__ import annotations

import math

from ...errors import error
from ...limits import shown_count
from . import ast as A

#: Syntax nodes of one method, block or function once every call in it is expanded.
MAX_EXPANSION = 1_000_000


def _size_and_calls(root, scopes, fields) -> tuple[int, list[str]]:
    """The syntax nodes under ``root`` and what it expands, one name per call: functions and global fields."""
    size, calls = 0, []
    for node in A.walk(root):
        size += 2  # the node and its span: the bound counts both
        if isinstance(node, A.Apply) and isinstance(node.func, A.Var) and scopes.get(id(node.func)) == "func":
            calls.append(node.func.name)
        elif isinstance(node, A.Var) and node.name in fields and scopes.get(id(node), "global") == "global":
            calls.append(node.name)
    return size, calls


#: The most components one value may have: a tensor, or a sequence of fixed length
#: (Diderot's tensors are small; ``tensor[10000,10000]`` per strand is 800 MB each).
MAX_COMPONENTS = 1 << 16
MAX_AXES, _AXES = 32, "{} axes (a tensor's order plus its sequence dimensions; a grid's iterators): at most 32"  # (a grid's outputs hold both; numpy: 64)


def _count(dims) -> int:
    return math.prod(d if isinstance(d, int) and d > 0 else 1 for d in dims)


def check_written_sizes(program) -> None:
    """error[too-large] for a type, ``zeros``, ``nan`` or ``identity`` written with more than
    :data:`MAX_COMPONENTS` components (before the checker builds them), and an int literal past 64 bits (and :data:`MAX_AXES`)."""
    for node in A.walk(program):
        if isinstance(node, A.Num) and node.is_int and not 0 <= node.value < 1 << 63:
            raise error("too-large", f"the integer {node.value} does not fit in 64 bits (ints are 64-bit: "
                        "at most 2^63-1; write -2^63 as -9223372036854775807 - 1)", node.span)
        if (axes := len(node.iters) if isinstance(node, A.Create) and node.grid else len(node.shape) + len(node.seq or ())
                if isinstance(node, A.TypeSyn) else 0) > MAX_AXES:
            raise error("too-large", ("a grid of " if isinstance(node, A.Create) else "a type of ") + _AXES.format(axes), node.span)
        if isinstance(node, A.TypeSyn) and node.kind not in ("image", "field", "kernel"):
            n = _count((*node.shape, *(node.seq or ())))
        elif isinstance(node, (A.Zeros, A.Nan)):
            n = _count(node.shape)
        elif isinstance(node, A.Identity):
            n = node.n * node.n if isinstance(node.n, int) else 1
        else:
            continue
        if n > MAX_COMPONENTS:
            raise error("too-large", f"a value of {shown_count(n)} components: at most {MAX_COMPONENTS:,} "
                        "(a tensor, or a sequence of fixed length)", getattr(node, "span", None))


def check_sizes(checked) -> None:
    """error[too-large] for an expression whose type has more than :data:`MAX_COMPONENTS` components."""
    for ty in checked.types.values():
        if axes(ty) > MAX_AXES:
            raise error("too-large", f"a value of type {ty} has " + _AXES.format(axes(ty)))
        n = components(ty) if ty.kind in ("tensor", "seq", "int", "bool") else 1
        if n > MAX_COMPONENTS:
            raise error("too-large", f"a value of type {ty} has {shown_count(n)} components: at most {MAX_COMPONENTS:,} "
                        "(a tensor, or a sequence of fixed length)")


def check_expansion(checked) -> None:
    """error[too-large] where a function, method or block would expand (every call replaced by its body) to
    more than :data:`MAX_EXPANSION` nodes; a cycle (recursion) counts once."""
    program = checked.program
    fields = {d.name: d for d in program.decls
              if isinstance(d, A.GlobalDecl) and d.type.kind == "field" and d.init is not None}
    functions: dict = {**fields, **checked.functions}
    local = {name: _size_and_calls(decl.body if isinstance(decl, A.FunctionDecl) else decl.init, checked.scopes, fields)
             for name, decl in functions.items()}
    total: dict[str, int] = {}
    for start in functions:
        stack, visiting = [start], {start}
        while stack:  # post-order over the call graph, without recursion
            name = stack[-1]
            pending = [c for c in set(local[name][1]) if c in functions and c not in total and c not in visiting]
            if pending:
                visiting.update(pending)
                stack.extend(pending)
                continue
            stack.pop()
            size = local[name][0] + sum(total.get(c, 1) for c in local[name][1] if c in functions)
            total[name] = min(size, MAX_EXPANSION + 1)
    for name, size in total.items():
        if size > MAX_EXPANSION:
            raise error("too-large", f"{'function' if name in checked.functions else 'field'} {name} expands to more than {MAX_EXPANSION} syntax nodes once "
                        "the functions it calls are expanded at each call (both executors expand every call); "
                        "compute the repeated calls once, in a local variable (or define the field once)", functions[name].span)
    strand = program.strand
    roots = [program.update, program.start, program.initialize, *(body for _, body in strand.methods), *strand.state,
             *(d for d in program.decls if not isinstance(d, A.FunctionDecl)), program.create]
    for root in (r for r in roots if r is not None):
        size, calls = _size_and_calls(root, checked.scopes, fields)
        if size + sum(total.get(c, 1) for c in calls) > MAX_EXPANSION:
            raise error("too-large", f"this part of the program expands to more than {MAX_EXPANSION} syntax nodes "
                        "once every function call is expanded (both executors expand every call)",
                        getattr(root, "span", A.NOWHERE))


def recursive_functions(checked) -> frozenset[str]:
    """The functions that can call themselves, directly or not (:data:`.interp.MAX_CALL_DEPTH`)."""
    calls = {name: set(_size_and_calls(decl.body, checked.scopes, {})[1]) for name, decl in checked.functions.items()}
    found = set()
    for start in calls:
        seen, stack = set(), list(calls[start])
        while stack:
            name = stack.pop()
            if name not in seen:
                seen.add(name)
                stack.extend(calls.get(name, ()))
        if start in seen:
            found.add(start)
    return frozenset(found)

#: The C executor lowers every tensor and fixed-length sequence to its components: a
#: value of more components than this runs in the interpreter (a ``tensor[10000]`` made
#: 20 000 lines of C that the C compiler took minutes over).
MAX_C_COMPONENTS = 4096
#: ... and so does a program whose strand IR prints to more characters than this (deep
#: nesting, very long methods: the C compiler's time grows faster than the text).
MAX_C_PLAN = 1_000_000


def components(ty) -> int:
    return 1 if ty is None else (ty.n or 1) * components(ty.elem) if ty.kind == "seq" else math.prod(ty.shape)


def axes(ty) -> int:
    return 0 if ty is None else 1 + axes(ty.elem) if ty.kind == "seq" else len(ty.shape)


def item_bytes(ty) -> int:
    """About what one item of a sequence of ``ty`` takes in the interpreter (the memory budget): 64 bytes a
    number (an object and its slot), 128 + 8 a component for a tensor or a sequence (an array)."""
    return 64 if ty is None or (ty.kind != "seq" and not ty.shape) else 128 + 8 * components(ty)


def strand_bytes(types) -> int:
    """What a strand whose parameters and state have ``types`` takes in the interpreter: 256 bytes (measured)
    and its values; a sequence 48 bytes a component (a tuple of objects), a dynamic one adds its items when made."""
    return 256 + sum(64 + 48 * components(t) if t is not None and t.kind == "seq" else item_bytes(t) for t in types)


def c_plan_limit(checked) -> str | None:
    """Why the C executor should not take this program on (too large to compile in reasonable time), or None."""
    biggest = max((components(ty) for ty in checked.types.values()), default=1)
    if biggest > MAX_C_COMPONENTS:
        return f"values of more than {MAX_C_COMPONENTS} components (one has {biggest})"
    return None
