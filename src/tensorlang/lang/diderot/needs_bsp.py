"""Whether the strands count the strands as diderotc decides it (its NeedsBSP property, which makes it run the
program in super-steps): after its contraction (simple-contract.sml) and inlining, a count of the strands left in
a strand's state initializers or methods.  The contraction drops an assignment to a variable that no kept
statement reads (outputs are always read; a variable that reads itself is read), an if or a foreach left empty
and the branch a constant bool test skips (in an inlined function too); a function whose returns are not mixed
with code after an if is inlined (its counts stay where its value is kept), the calls of another are kept, and
so are the arguments of every call (docs/diderot.md, "Strand order and the first step")."""

from __future__ import annotations

from . import ast as A

COUNTS = ("numStrands", "numActive", "numStable")


def counts_kept(program: A.Program) -> bool:
    bools = {d.name: {d.init.value if isinstance(d.init, A.Bool) else None} for d in program.decls
             if isinstance(d, A.GlobalDecl)}  # (the values bool variables are given: a test that is constant)
    for s in A.walk(tuple(b for b in (program.start, program.update, program.initialize) if b is not None)):
        if isinstance(s, A.Assign):
            bools.setdefault(s.name, set()).add(None)
    funcs: dict = {}  # name -> (inlined, its declaration, counts at all); (name, bool args) -> _inline's answer
    for d in program.decls:
        if isinstance(d, A.FunctionDecl):
            anywhere = any(isinstance(n, A.Apply) and isinstance(n.func, A.Var) and (
                n.func.name in COUNTS or funcs.get(n.func.name, (0, 0, 0))[2]) for n in A.walk(d.body))
            funcs[d.name] = (_shape(d.stmts) != "mixed", d, anywhere)
    env: dict[str, object] = {p.name: id(p) for p in program.strand.params}  # (a parameter: its value unknown)
    nodes: list = []
    for sv in program.strand.state:
        env[sv.name] = id(sv)
        if sv.init is not None:
            nodes += _set(id(sv), sv.init, env, funcs, bools)
    for _, method in program.strand.methods:
        nodes += _tree(method.stmts, dict(env), funcs, bools)
    return _kept(nodes, {id(sv) for sv in program.strand.state if sv.output}, bools)[0]


def _inline(d: A.FunctionDecl, args: tuple, funcs: dict, bools: dict) -> tuple[bool, bool]:
    """An inlined function with the call's literal bools: (a count where its value is kept, a call not inlined)."""
    key = (d.name, tuple(a.value if isinstance(a, A.Bool) else None for a in args))
    if key not in funcs:
        funcs[key] = (False, False)  # (a function calling itself: what its body has, found once)
        given = {**bools, **{id(p): {v} for p, v in zip(d.params, key[1])}}
        funcs[key] = _kept(_tree(d.stmts, {p.name: id(p) for p in d.params}, funcs, given), set(), given)
    return funcs[key]


def _shape(stmts) -> str:
    """diderotc's inliner's view of a block: "cont" (no return inside an if), "ret" (an if all of whose ways
    return) or "mixed" (an if with one way that returns and one that goes on: not inlined)."""
    for s in stmts:
        if isinstance(s, A.If):
            ways = {_shape(_stmts(s.then)), _shape(_stmts(s.other))}
            found = ways.pop() if len(ways) == 1 else "mixed"
        else:
            found = _shape(_stmts(s.body)) if isinstance(s, A.Foreach) else "ret" if isinstance(s, A.Return) else "cont"
        if found != "cont":
            return found
    return "cont"


def _stmts(s) -> tuple:
    return () if s is None else s.stmts if isinstance(s, A.Block) else (s,)


def _expr(e, env: dict, funcs: dict, bools: dict) -> tuple[frozenset, bool, bool, tuple]:
    """What ``e`` reads (keys of variables), whether it counts the strands or calls a function not inlined, and
    the arguments of the functions it calls."""
    reads, counts, kept, args = set(), False, False, tuple[A.Expr, ...]()
    for n in A.walk(e):
        if isinstance(n, A.Var):
            reads.add(env.get(n.name, n.name))
        elif isinstance(n, A.Apply) and isinstance(n.func, A.Var) and n.func.name in funcs:
            inlined, d, anywhere = funcs[n.func.name]
            live, inner = _inline(d, n.args, funcs, bools) if inlined else (anywhere, True)
            counts, kept, args = counts or live, kept or inner, args + n.args
        elif isinstance(n, A.Apply) and isinstance(n.func, A.Var) and n.func.name in COUNTS:
            counts = True
    return frozenset(reads), counts, kept, args


def _node(kind: str, key, e, env: dict, funcs: dict, bools: dict, kids: tuple = (), more: frozenset = frozenset()):
    """The node of ``e`` after an always kept "use" of the arguments of the functions it calls."""
    reads, counts, kept, args = _expr(e, env, funcs, bools)
    used = [("use", None, *_expr(args, env, funcs, bools)[:3], ())] if args else []
    return used + [(kind, key, reads | more, counts, kept, kids)]


def _set(key, value, env: dict, funcs: dict, bools: dict, op: str = "=") -> list:
    bools.setdefault(key, set()).add(value.value if isinstance(value, A.Bool) and op == "=" else None)
    return _node("set", key, value, env, funcs, bools, more=frozenset({key} if op != "=" else ()))


def _tree(stmts, env: dict, funcs: dict, bools: dict) -> list:
    """Statements as nodes (kind, key, reads, counts, kept, children): "set" a variable (key: the declaration's
    id), "if" (key: what its test is when it is a literal or a variable), "for", "use" (anything else)."""
    out: list = []
    for s in stmts:
        if isinstance(s, A.Block):
            out += _tree(s.stmts, dict(env), funcs, bools)
        elif isinstance(s, A.Decl):
            env[s.name] = id(s)
            if s.init is not None:
                out += _set(id(s), s.init, env, funcs, bools)
        elif isinstance(s, A.Assign):
            out += _set(env.get(s.name, s.name), s.value, env, funcs, bools, s.op)
        elif isinstance(s, A.If):
            test = ("lit", s.test.value) if isinstance(s.test, A.Bool) else env.get(s.test.name, s.test.name) \
                if isinstance(s.test, A.Var) else None
            ways = (_tree(_stmts(s.then), dict(env), funcs, bools), _tree(_stmts(s.other), dict(env), funcs, bools))
            out += _node("if", test, s.test, env, funcs, bools, ways)
        elif isinstance(s, A.Foreach):
            inner = dict(env, **{s.name: id(s)})
            out += _node("for", None, s.domain, env, funcs, bools, (_tree(_stmts(s.body), inner, funcs, bools),))
        else:  # print, new, return, stabilize, die, continue
            out += _node("use", None, tuple(A.children(s)), env, funcs, bools)
    return out


def _kept(nodes: list, outputs: set, bools: dict) -> tuple[bool, bool]:
    """Whether a count is left once what nothing reads is dropped (until nothing more is), and a call not inlined."""
    used: set | None = None
    while True:
        kept = _prune(nodes, used, outputs, bools)
        now = {r for _, _, reads, *_ in _all(kept) for r in reads}
        if now == used:
            return any(n[3] for n in _all(kept)), any(n[4] for n in _all(kept))
        used = now


def _prune(nodes: list, used: set | None, outputs: set, bools: dict) -> list:
    out = []
    for kind, key, reads, counts, kept, kids in nodes:
        if kind == "set" and used is not None and key not in used and key not in outputs and not kept:
            continue
        known = {key[1]} if isinstance(key, tuple) else bools.get(key, {None}) if kind == "if" else {None}
        if len(known) == 1 and None not in known:  # (a constant test: only its branch is left)
            out += _prune(kids[0] if True in known else kids[1], used, outputs, bools)
            continue
        kids = tuple(_prune(k, used, outputs, bools) for k in kids)
        if kind in ("if", "for") and not any(kids) and not kept:  # (a call not inlined in its test is kept)
            continue
        out.append((kind, key, reads, counts, kept, kids))
    return out


def _all(nodes: list):
    for node in nodes:
        yield node
        for kid in node[5]:
            yield from _all(kid)
