"""A stand-in StrandProgram with the interface of docs/diderot.md (lang/diderot/program.py),
for testing the runner, the command line and the NRRD files without the front end.

``grid_program()``: a grid of ``size`` x ``size + 1`` strands; strand (i, j) runs
(i + j) % 3 + 1 super-steps and stabilizes; outputs ``val`` (real) = isoval + 10 i + j
+ the image's mean, and ``pos`` (vec2) = (i, j) + cmin.  ``collection_program()``: ``n``
strands; even ones stabilize after i // 2 + 1 steps, odd ones die; output ``x`` (real) = i.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import numpy as np


@dataclass(frozen=True)
class Input:
    name: str
    type: str
    kind: str
    shape: tuple[int, ...] = ()
    dim: int | None = None
    default: object | None = None
    description: str | None = None


@dataclass(frozen=True)
class Output:
    name: str
    type: str
    kind: str
    shape: tuple[int, ...] = ()


@dataclass(frozen=True)
class RunResult:
    outputs: dict[str, np.ndarray]
    grid_shape: tuple[int, ...] | None
    steps: int
    active: int
    stable: int
    printed: str


@dataclass
class FakeProgram:
    name: str
    inputs: tuple
    outputs: tuple
    grid: bool
    calls: list = field(default_factory=list)

    def run(self, values, *, limit=0, snapshot=0, on_snapshot=None, threads=1, progress=None):
        self.calls.append(dict(values=dict(values), limit=limit, snapshot=snapshot, threads=threads))
        given = {inp.name: values.get(inp.name, inp.default) for inp in self.inputs}
        for inp in self.inputs:
            if given[inp.name] is None:
                raise AssertionError(f"required input {inp.name} reached the program unset")
        if self.grid:
            return self._grid(given, limit, snapshot, on_snapshot, progress)
        return self._collection(given, limit, snapshot, on_snapshot, progress)

    def _grid(self, v, limit, snapshot, on_snapshot, progress):
        n = int(v["size"])
        shape = (n, n + 1)
        i, j = np.meshgrid(np.arange(n), np.arange(n + 1), indexing="ij")
        need = (i + j) % 3 + 1
        offset = float(np.mean(v["img"].data)) if "img" in v else 0.0
        cmin = np.asarray(v.get("cmin", np.zeros(2)), dtype=float)

        def state(step, final=False):
            val = np.where(need <= step, float(v["isoval"]) + 10 * i + j + offset, -1.0)
            pos = np.stack([i, j], axis=-1) + cmin
            outs = {"val": val, "pos": pos, "count": (i * j).astype(np.int64), "on": (i > j)}
            outs = {o.name: outs[o.name] for o in self.outputs}
            active = int(np.sum(need > step))
            return RunResult(outs, shape, step, active, need.size - active, "hello from the grid\n" if v.get("flag") else "")

        return self._loop(state, int(need.max()), limit, snapshot, on_snapshot, progress)

    def _collection(self, v, limit, snapshot, on_snapshot, progress):
        n = int(v["n"])
        idx = np.arange(n)
        need = idx // 2 + 1

        def state(step, final=False):
            done = need <= step
            stable = done & (idx % 2 == 0)
            keep = stable if final else ~done | stable  # a snapshot shows every strand alive
            outs = {"x": idx[keep].astype(float) * float(v["scale"])}
            return RunResult(outs, None, step, int(np.sum(~done)), int(np.sum(stable)), "")

        return self._loop(state, int(need.max()) if n else 0, limit, snapshot, on_snapshot, progress)

    def _loop(self, state, finish, limit, snapshot, on_snapshot, progress):
        if snapshot and on_snapshot:
            on_snapshot(0, state(0))
        step = 0
        while step < finish and step < limit:
            step += 1
            if progress:
                progress(step, state(step).active)
            if snapshot and on_snapshot and step % snapshot == 0 and state(step).active:
                on_snapshot(step, state(step))
        return state(step, final=True)


def grid_program(outputs=("val", "pos"), image=True) -> FakeProgram:
    inputs = [
        Input("isoval", "real", "real", default=0.5, description="isovalue to look for"),
        Input("size", "int", "int", description="grid size"),
        Input("cmin", "vec2", "tensor", (2,), default=np.array([-4.0, -4.0]), description="lower corner"),
        Input("flag", "bool", "bool", default=False),
        Input("label", "string", "string", default="iso"),
    ]
    if image:
        inputs.append(Input("img", "image(2)[]", "image", (), 2, default=None, description="the image"))
    every = {"val": Output("val", "real", "real"), "pos": Output("pos", "vec2", "tensor", (2,)),
             "count": Output("count", "int", "int"), "on": Output("on", "bool", "bool")}
    return FakeProgram("fakegrid", tuple(inputs), tuple(every[o] for o in outputs), True)


def collection_program() -> FakeProgram:
    inputs = (Input("n", "int", "int", default=7, description="strands"),
              Input("scale", "real", "real", default=1.0))
    return FakeProgram("fakecoll", inputs, (Output("x", "real", "real"),), False)


def program_with_images() -> FakeProgram:
    """Inputs of every image kind the runner checks: a 3-D vector image with a default path."""
    inputs = (Input("vol", "image(3)[3]", "image", (3,), 3, default="vol.nrrd"),
              Input("size", "int", "int", default=2), Input("isoval", "real", "real", default=0.0))
    return FakeProgram("fakeimg", inputs, (Output("val", "real", "real"),), True)
