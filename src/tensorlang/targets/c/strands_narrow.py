"""Narrow int state: the ``int`` and ``bool`` state slots an interval analysis bounds to 8, 16
or 32 bits are stored that narrow (docs/diderot-compiled.md, "How a run goes"); every slot
starts at 0 (a state row is zeroed before creation writes it), and C converts every read
back to ``int64_t``, so values stay exact."""

from __future__ import annotations

from ...strand_ir import ir as S

TOP = None
#: the widths, each with the interval it holds
BOUNDS = ((8, (-(1 << 7), (1 << 7) - 1)), (16, (-(1 << 15), (1 << 15) - 1)), (32, (-(1 << 31), (1 << 31) - 1)))


#: passes with exact intervals before widening
EXACT = 8


def _widen(iv):
    """The smallest width's interval holding ``iv``, or TOP."""
    if iv is TOP:
        return iv
    return next((bounds for _, bounds in BOUNDS if bounds[0] <= iv[0] and iv[1] <= bounds[1]), TOP)


def _join(a, b):
    if a is TOP or b is TOP:
        return TOP
    return (min(a[0], b[0]), max(a[1], b[1]))


class Ranges:
    def __init__(self, ir: S.StrandIR):
        self.ir = ir
        kinds = {s.name: s.ty for s in ir.state}
        fixed = set(ir.params)
        #: the slots that may narrow (their interval so far): every row starts as zeros
        self.slots = {name: (0, 0) for name, ty in kinds.items() if ty in ("int", "bool") and name not in fixed}
        self.kinds = kinds
        self.locals: dict[int, dict[str, object]] = {}
        self.passes = 0

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
            if e.space in ("s", "n", "o"):
                return self.slots.get(e.name, TOP)
            return loc.get(e.name, TOP) if e.space == "l" else TOP
        if isinstance(e, S.Sel):
            a, b = self.ex(e.a, loc), self.ex(e.b, loc)
            return _join(a, b)
        if isinstance(e, S.Un) and e.op == "-":
            a = self.ex(e.a, loc)
            return TOP if a is TOP else (-a[1], -a[0])
        if isinstance(e, S.Bin) and e.op in ("+", "-", "*"):
            a, b = self.ex(e.a, loc), self.ex(e.b, loc)
            if a is TOP or b is TOP:
                return TOP
            if e.op == "+":
                return (a[0] + b[0], a[1] + b[1])
            if e.op == "-":
                return (a[0] - b[1], a[1] - b[0])
            ps = [x * y for x in a for y in b]
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
                elif st.space == "s" and st.name in self.slots:
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
        bodies = [b for b in (ir.create + ir.init, ir.init, ir.update, ir.stabilize, ir.global_block) if b]
        for self.passes in range(EXACT + 64):  # then each interval widens at most four times
            grew = False
            for k, b in enumerate(bodies):
                grew = self.body(b, self.locals.setdefault(k, {})) or grew
            if not grew:
                break
        else:
            self.slots = {}  # (no interval settled: nothing is bounded)
            return {}
        out = {}
        for name, iv in self.slots.items():
            if iv is not TOP:
                out[name] = next(bits for bits, (lo, hi) in BOUNDS if lo <= iv[0] and iv[1] <= hi)
        return out


    def bound(self, e) -> int | None:
        """After :meth:`solve`: the most ``|v|`` of the int expression ``e`` of a strand's
        state or its neighbours' (locals and inputs unbounded), or None."""
        iv = self.ex(e, {})
        return None if iv is TOP else max(-iv[0], iv[1])


def narrow_slots(ir: S.StrandIR) -> dict[str, int]:
    """The state slots that fit in fewer than 64 bits, with their width (8, 16 or 32)."""
    return Ranges(ir).solve()
