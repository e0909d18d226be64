"""Tensor fields (paper 004, Diderot): images, reconstruction kernels, lifted operators,
derivatives and probes at batches of points.  See docs/fields.md.

    import tensorlang as tl
    F = tl.field(img, "bspln3")                      # V ⊛ h
    E = -tl.grad(tl.norm(tl.grad(F))) @ tl.normalize(tl.grad(F))   # Canny (004 §3)
    E.probe(points)                                   # (N,) values, ⊥ outside
"""

from .api import (Field, component, cos, curl, det, div, dot, exp, field, grad, hessian, identity, inside,
                  jacobian, log, norm, normalize, outer, sin, sqrt, tanh, trace, transpose)
from ..sampling.image import Image, image, load
from ..sampling.kernels import KERNELS, Kernel, kernel
from ..errors import signature_checked

__all__ = ["Field", "Image", "KERNELS", "Kernel", "component", "cos", "curl", "det", "div", "dot", "exp", "field",
           "grad", "hessian", "identity", "image", "inside", "jacobian", "kernel", "load", "log", "norm",
           "normalize", "outer", "sin", "sqrt", "tanh", "trace", "transpose"]
globals().update({n: signature_checked(f) for n, f in dict(globals()).items()  # docs/api.md, "Arguments"
                  if n in __all__ and callable(f) and not isinstance(f, type)})
