"""Narrow int state: the ``int`` and ``bool`` state slots an interval analysis bounds to 8, 16 or 32 bits
(a step counter by the run's step limit; every slot starts at 0: docs/diderot-compiled.md, "How a run goes")."""

from __future__ import annotations

from ...strand_ir import ir as S

TOP = None
#: the widths, each with the interval it holds
BOUNDS = ((8, (-(1 << 7), (1 << 7) - 1)), (16, (-(1 << 15), (1 << 15) - 1)), (32, (-(1 << 31), (1 << 31) - 1)))


#: passes with exact intervals before widening
EXACT = 8


def _widen(iv):
    """The smallest width's interval holding ``iv``, or TOP."""
    return iv if iv is TOP else next((bounds for _, bounds in BOUNDS if bounds[0] <= iv[0] and iv[1] <= bounds[1]), TOP)


def _join(a, b):
    if a is TOP or b is TOP:
        return TOP
    return (min(a[0], b[0]), max(a[1], b[1]))


class Ranges:
    def __init__(self, ir: S.StrandIR, steps: int | None = None):
        self.ir = ir
        kinds = {s.name: s.ty for s in ir.state}
        fixed = set(ir.params)
        #: the slots that may narrow (their interval so far): every row starts as zeros
        self.slots = {name: (0, 0) for name, ty in kinds.items() if ty in ("int", "bool") and name not in fixed}
        self.kinds = kinds
        self.locals: dict[int, dict[str, object]] = {}
        self.passes = 0
        #: the counters' intervals within ``steps`` updates (fixed: the passes do not join them)
        self.pinned = self._counters(steps) if steps is not None else {}
        self.slots.update(self.pinned)

    def _counters(self, steps: int) -> dict:
        ir, out = self.ir, {}
        sets = [(k, st, looped) for k, b in enumerate((ir.create + ir.init + (ir.start or ()), ir.update, ir.stabilize or (), ir.global_block or ()))
                for st, looped in _sets(b, False)]
        for name in self.slots:
            start: tuple[int, int] | None = (0, 0)  # the start's interval (None: unbounded)
            moves = [[0, 0], [0, 0]]  # update's and stabilize's steps (down, up)
            for k, st, looped in sets:
                if st.name != name:
                    continue
                if k == 0 and not _refs(st.value):
                    start = _join(start, self.ex(st.value, {}))
                    continue
                c = _step(st.value, name) if k in (1, 2) and not looped else None
                if c is None or start is None:
                    start = None
                    break
                moves[k - 1][c > 0] += abs(c)
            if start is not None:
                (du, uu), (ds, us) = moves
                iv = (start[0] - steps * du - ds, start[1] + steps * uu + us)
                if _widen(iv) is not TOP:
                    out[name] = iv
        return out

    def ex(self, e, loc: dict):
        ty = getattr(e, "ty", None)
        if ty == "bool":
            return (0, 1)
        if ty != "int":
            return TOP
        if isinstance(e, S.Const):
            v = int(e.value)  # type: ignore[call-overload]
            return (v, v)
        if isinstance(e, S.Ref):
            if e.space not in ("l", "g"):
                return self.slots.get(e.name, TOP)
            return loc.get(e.name, TOP) if e.space == "l" else TOP
        if isinstance(e, S.Sel):
            return _join(self.ex(e.a, loc), self.ex(e.b, loc))
        if isinstance(e, S.Un) and e.op == "-":
            a = self.ex(e.a, loc)
            return TOP if a is TOP else (-a[1], -a[0])
        if isinstance(e, S.Bin) and e.op in ("+", "-", "*"):
            a, b = self.ex(e.a, loc), self.ex(e.b, loc)
            if a is TOP or b is TOP:
                return TOP
            ps = [x + y if e.op == "+" else x - y if e.op == "-" else x * y for x in a for y in b]  # (the extremes at the ends)
            return (min(ps), max(ps))
        return TOP

    def body(self, stmts, loc: dict) -> bool:
        """One pass over ``stmts``: the slots' and locals' intervals joined with what is
        assigned to them; whether any grew."""
        grew = False

        def put(table: dict, name: str, iv) -> None:
            nonlocal grew
            old = table.get(name, "unset")
            new = iv if old == "unset" else _join(old, iv)  # type: ignore[arg-type]
            if new == old:
                return
            if new is not TOP and (self.passes >= EXACT or not BOUNDS[-1][1][0] <= new[0] <= new[1] <= BOUNDS[-1][1][1]):
                new = _widen(new)  # still growing: the width that holds it
            if new != old:
                table[name] = new
                grew = True

        for st in stmts:
            if isinstance(st, S.Local):
                put(loc, st.name, self.ex(st.init, loc) if st.init is not None else (0, 0))
            elif isinstance(st, S.Set):
                if st.space == "l":
                    put(loc, st.name, self.ex(st.value, loc))
                elif st.space == "s" and st.name in self.slots and st.name not in self.pinned:
                    put(self.slots, st.name, self.ex(st.value, loc))
            elif isinstance(st, S.For):
                put(loc, st.var, TOP)
            elif isinstance(st, S.Reduce):
                put(loc, st.target, (0, 1) if st.ty == "bool" or st.op in ("all", "exists") else TOP)
            elif isinstance(st, (S.Probe, S.Lib)):
                for t in st.targets:
                    put(loc, t, TOP)
            for part in ("then", "other", "body"):
                inner = getattr(st, part, None)
                if isinstance(inner, tuple):
                    grew = self.body(inner, loc) or grew
        return grew

    def solve(self) -> dict[str, int]:
        ir = self.ir
        bodies = [b for b in (ir.create + ir.init + (ir.start or ()), ir.init, ir.update, ir.stabilize, ir.global_block) if b]
        for self.passes in range(EXACT + 64):  # then each interval widens at most four times
            grew = False
            for k, b in enumerate(bodies):
                grew = self.body(b, self.locals.setdefault(k, {})) or grew
            if not grew:
                break
        else:
            self.slots = {}  # (no interval settled: nothing is bounded)
            return {}
        return {name: next(bits for bits, (lo, hi) in BOUNDS if lo <= iv[0] and iv[1] <= hi)
                for name, iv in self.slots.items() if iv is not TOP}

    def bound(self, e) -> int | None:
        """After :meth:`solve`: the most ``|v|`` of the int expression ``e`` of a strand's
        state or its neighbours' (locals and inputs unbounded), or None."""
        iv = self.ex(e, {})
        return None if iv is TOP else max(-iv[0], iv[1])


def narrow_slots(ir: S.StrandIR, steps: int | None = None) -> dict[str, int]:
    """The state slots that fit in fewer than 64 bits, with their width (8, 16 or 32), in a
    run of at most ``steps`` super-steps (None: any number)."""
    return Ranges(ir, steps).solve()


def _sets(body, looped: bool):
    """The sets of state in ``body`` (as (statement, whether a loop is around it))."""
    for st in body or ():
        if isinstance(st, S.Set) and st.space == "s":
            yield st, looped
        for part in ("then", "other", "body"):
            inner = getattr(st, part, None)
            if isinstance(inner, tuple):
                yield from _sets(inner, looped or isinstance(st, S.For))


def _refs(e) -> bool:
    """Whether ``e`` reads a variable (anything but constants and their operators)."""
    return not all(isinstance(x, (S.Const, S.Bin, S.Un, S.Sel)) for x in S.nodes(e, object))


def _step(e, name: str) -> int | None:
    """c where ``e`` is ``x + c``, ``c + x`` or ``x - c`` (``x`` the slot ``name``, ``c`` a constant int)."""
    if not (isinstance(e, S.Bin) and e.ty == "int" and e.op in ("+", "-")):
        return None
    this = lambda x: isinstance(x, S.Ref) and x.space == "s" and x.name == name  # noqa: E731
    if this(e.a) and isinstance(e.b, S.Const) and e.b.ty == "int":
        return int(e.b.value) if e.op == "+" else -int(e.b.value)  # type: ignore[call-overload]
    if e.op == "+" and isinstance(e.a, S.Const) and e.a.ty == "int" and this(e.b):
        return int(e.a.value)  # type: ignore[call-overload]
    return None
