"""The C-level call path: a CPython extension that checks a call's arguments and calls a
kernel's C function without running any Python.

A 2×2 product is 16 flops; the generated Python fast call (:mod:`.fastcall`) still
spends about 2 µs on frames, attribute lookups and cffi's argument conversion.  This
module compiles, once per machine, Python version and numpy version (cached by
:mod:`.build` like the kernels), one small extension module whose ``Caller`` type is
configured per kernel with a *description*: the C function's address, and per slot its
role, name, shape and dtype.  ``caller(arrays, out)`` then does in C what the generated
Python fast call does, and *declines* (returns None) exactly where it does, so that the
general path, which reports errors precisely, stays the one source of truth:

* every required input given as an ndarray of exactly the declared shape, exactly the
  kernel's dtype (the same dtype object: byte order and all), C-contiguous (and aligned),
  no other keyword;
* ``out=`` absent, empty, or a dict naming only results, whose targets are ndarrays of
  the right shape and dtype that own their memory, are C-contiguous and writeable, and
  are not an input (except the in-place idiom: a variable's own input as its target) nor
  another target; with targets given, every input must own its memory (a view could
  alias a target without being it).

Anything else (a Python number for a scalar, a list, a Fortran-ordered array) declines to
the generated Python fast call and then the general path.  One extension serves every
kernel: a per-kernel module would cost a compile with ``Python.h`` (about a second) on
every kernel's first call, and the loop over a handful of slots costs nanoseconds.

Buffers: inputs are passed in place; results are fresh arrays or the ``out=`` targets;
temporaries and the scratch slot are *work buffers* the caller owns and reuses (nothing
returns them).  Large kernels release the GIL while the C function runs (as cffi did);
a second call that arrives meanwhile, from another thread, gets fresh work buffers.  Every
array is held (a reference) for the whole call, so a caller's dict changed by another
thread cannot free one under the C function.

``caller.ordered(a, b, ...)`` is the same call with the inputs positional in a fixed order
and no ``out=``, returning the one result (the einsum cache's hit path: its key has fixed
shapes and dtypes, but the caller still checks them, so a stale entry cannot misbehave).

A padded kernel (000 §4) uses the same type: its description also carries each slot's
storage (padded) shape and the alignment, and the plain call with no ``out=`` does what
:meth:`.runtime.CKernel.run_padded` does in Python: each input's region copied into a
padded, aligned buffer the caller keeps, temporaries in kept padded buffers, each result
a fresh zeroed padded buffer returned as the view of its true shape.  ``out=`` targets
decline to the Python path (as do ``padded_empty`` inputs, which are not C-contiguous and
are read in place there), and so does every call while ``caller.off`` is set (a test's
store hook: :attr:`.runtime.CKernel.store_hook`).

Where the headers are missing (``Python.h``, numpy's ``arrayobject.h``) or the extension
does not compile or load, :func:`extension` is None with the reason in
:func:`why_unavailable`, and kernels keep the Python fast call.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

import numpy as np

from ...errors import TensorLangError
from ...schedule.plan import SCRATCH
from . import build as c_build
from .padded import alignment as padded_alignment
from .codegen import check_status

#: The most slots (C function parameters) the caller passes; a kernel with more keeps the
#: Python fast call.
MAX_SLOTS = 24
#: The most dimensions a slot's shape may have here (numpy allows 64).
MAX_RANK = 16
#: Kernels whose buffers hold at least this many elements release the GIL while their C
#: function runs (other Python threads go on); below it, releasing and re-taking the GIL
#: would cost more than the kernel, and another thread's turn could delay the call by the
#: interpreter's switch interval (5 ms).
RELEASE_GIL_ELEMENTS = 1 << 14

#: Slot roles as the extension numbers them.
IN, OUT, INOUT, WORK = 0, 1, 2, 3
_ROLES = {"in": IN, "out": OUT, "inout": INOUT}

_MODULE = "tensorlang_callext"


def _call_switch() -> str:
    """The C ``switch`` calling a function of ``n`` buffer pointers and the thread count
    for every ``n`` up to :data:`MAX_SLOTS` (C cannot build an argument list at run time)."""
    cases = []
    for n in range(MAX_SLOTS + 1):
        types = ", ".join(["void *"] * n + ["int"])
        args = ", ".join([f"p[{k}]" for k in range(n)] + ["threads"])
        cases.append(f"    case {n}: return ((int (*)({types}))fn)({args});")
    return "\n".join(cases)


_SOURCE = r"""
/* generated by tensorlang: the C-level call path (targets/c/callext.py) */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>
#include <time.h>

#define MAX_SLOTS @MAX_SLOTS@
#define MAX_RANK @MAX_RANK@
enum { R_IN = 0, R_OUT = 1, R_INOUT = 2, R_WORK = 3 };

/* what a nonzero status means: codegen.check_status, set by set_status_handler() */
static PyObject *status_handler = NULL;

static PyObject *set_status_handler(PyObject *module, PyObject *handler) {
    (void)module;
    if (!PyCallable_Check(handler)) {
        PyErr_SetString(PyExc_TypeError, "the status handler must be callable");
        return NULL;
    }
    Py_INCREF(handler);
    Py_XSETREF(status_handler, handler);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"set_status_handler", set_status_handler, METH_O,
     "set_status_handler(f): f(status) raises what a kernel's nonzero status means"},
    {NULL, NULL, 0, NULL}
};

static int call_function(void *fn, int n, void **p, int threads) {
    switch (n) {
@SWITCH@
    default: return -1;
    }
}

typedef struct {
    PyObject_HEAD
    void *fn;
    int nslots, nrequired, ntargets, norder;
    int role[MAX_SLOTS];
    PyObject *name[MAX_SLOTS];          /* str (interned) */
    int ndim[MAX_SLOTS];
    npy_intp dims[MAX_SLOTS][MAX_RANK];
    int order[MAX_SLOTS];               /* ordered(): the slot of each positional input */
    PyArray_Descr *descr;               /* the kernel's dtype, the canonical object */
    PyObject *work[MAX_SLOTS];          /* the work buffers, made on first use */
    int busy;                           /* a call is using work[] (the GIL is released) */
    int threads;
    int release_gil;
    double last_seconds;
    unsigned long long calls;           /* calls taken (tests: the C path is used) */
    int padded;                         /* 000 §4: every buffer padded to sdims, aligned to align bytes */
    npy_intp sdims[MAX_SLOTS][MAX_RANK];
    npy_intp align, itemsize;
    void *workp[MAX_SLOTS];             /* padded: the aligned data of work[n] (a uint8 owner) */
    int off;                            /* declines every call while set (a test's store hook) */
} Caller;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* o is exactly an ndarray of slot n's shape, the kernel's dtype, C-contiguous, aligned */
static int fits(Caller *c, PyObject *o, int n) {
    if (Py_TYPE(o) != &PyArray_Type) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_DESCR(a) != c->descr || PyArray_NDIM(a) != c->ndim[n]) return 0;
    npy_intp *d = PyArray_DIMS(a);
    for (int k = 0; k < c->ndim[n]; k++)
        if (d[k] != c->dims[n][k]) return 0;
    return PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a);
}

static PyObject *empty(Caller *c, int n) {
    Py_INCREF(c->descr);  /* PyArray_Empty steals it */
    return PyArray_Empty(c->ndim[n], c->dims[n], c->descr, 0);
}

/* the slot whose name is key, among the results; -1 if none (or key is no str) */
static int result_slot(Caller *c, PyObject *key) {
    for (int n = 0; n < c->nslots; n++)
        if ((c->role[n] == R_OUT || c->role[n] == R_INOUT) && c->name[n] == key) return n;
    if (!PyUnicode_Check(key)) return -1;
    for (int n = 0; n < c->nslots; n++)
        if ((c->role[n] == R_OUT || c->role[n] == R_INOUT) && PyUnicode_Compare(c->name[n], key) == 0) return n;
    if (PyErr_Occurred()) PyErr_Clear();
    return -1;
}

/* The kernel's C function over the buffers p, without the GIL where the kernel is large;
   with use_own the work buffers are marked busy while it runs (a call from another
   thread meanwhile makes its own).  0, or -1 with an exception set when it failed. */
static int call_kernel(Caller *c, void **p, int use_own) {
    int rc;
    (void)use_own;  /* run() and run_padded() hold c->busy for the whole call */
    if (c->release_gil) {
        Py_BEGIN_ALLOW_THREADS
        rc = call_function(c->fn, c->nslots, p, c->threads);
        Py_END_ALLOW_THREADS
    } else {
        rc = call_function(c->fn, c->nslots, p, c->threads);
    }
    if (rc != 0) {  /* the function ran: check_status raises KernelFailed, which no path retries */
        PyObject *none = status_handler == NULL ? NULL : PyObject_CallFunction(status_handler, "i", rc);
        if (none != NULL || !PyErr_Occurred()) {
            Py_XDECREF(none);
            PyErr_Format(PyExc_RuntimeError, "tensorlang: the kernel's C function failed (status %d)", rc);
        }
        return -1;
    }
    return 0;
}

/* Run the function over the buffers: given[n] holds the input (in, inout) or the out=
   target (out, inout) of each slot, or NULL.  Returns the results dict (or, with
   `single`, the one result), NULL with an exception set on failure.  Holds a reference
   to every array it uses until it returns. */
static PyObject *run(Caller *c, PyObject **input, PyObject **target, int single) {
    PyObject *buffer[MAX_SLOTS] = {0};   /* owned references */
    PyObject *fresh[MAX_SLOTS] = {0};    /* work buffers of this call only (owned) */
    void *p[MAX_SLOTS];
    PyObject *result = NULL;
    int n, use_own = !c->busy;
    double start = now();
    if (use_own) c->busy = 1;  /* from here: numpy may release the GIL (a large calloc or copy) */
    for (n = 0; n < c->nslots; n++) {
        switch (c->role[n]) {
        case R_IN:
            Py_INCREF(input[n]);
            buffer[n] = input[n];
            break;
        case R_OUT:
            if (target[n] != NULL) { Py_INCREF(target[n]); buffer[n] = target[n]; }
            else if ((buffer[n] = empty(c, n)) == NULL) goto done;
            break;
        case R_INOUT:
            if (target[n] == NULL) {
                buffer[n] = PyArray_NewCopy((PyArrayObject *)input[n], NPY_CORDER);
                if (buffer[n] == NULL) goto done;
            } else {
                Py_INCREF(target[n]);
                buffer[n] = target[n];
                if (target[n] != input[n])  /* both own their memory: disjoint */
                    memcpy(PyArray_DATA((PyArrayObject *)target[n]), PyArray_DATA((PyArrayObject *)input[n]),
                           (size_t)PyArray_NBYTES((PyArrayObject *)input[n]));
            }
            break;
        default:
            if (use_own) {
                if (c->work[n] == NULL && (c->work[n] = empty(c, n)) == NULL) goto done;
                Py_INCREF(c->work[n]);
                buffer[n] = c->work[n];
            } else {
                if ((fresh[n] = empty(c, n)) == NULL) goto done;
                Py_INCREF(fresh[n]);
                buffer[n] = fresh[n];
            }
        }
        p[n] = PyArray_DATA((PyArrayObject *)buffer[n]);
    }
    if (call_kernel(c, p, use_own) < 0) goto done;
    if (single) {
        for (n = 0; n < c->nslots; n++)
            if (c->role[n] == R_OUT || c->role[n] == R_INOUT) {
                Py_INCREF(buffer[n]);
                result = PyArray_Return((PyArrayObject *)buffer[n]);  /* 0-d: a numpy scalar */
                break;
            }
        if (result == NULL && !PyErr_Occurred()) { Py_INCREF(Py_None); result = Py_None; }
    } else {
        if ((result = PyDict_New()) == NULL) goto done;
        for (n = 0; n < c->nslots; n++)
            if ((c->role[n] == R_OUT || c->role[n] == R_INOUT) && PyDict_SetItem(result, c->name[n], buffer[n]) < 0) {
                Py_CLEAR(result);
                goto done;
            }
    }
    c->calls++;
    c->last_seconds = now() - start;
done:
    if (use_own) c->busy = 0;
    for (n = 0; n < c->nslots; n++) {
        Py_XDECREF(buffer[n]);
        Py_XDECREF(fresh[n]);
    }
    return result;
}

/* padded (000 §4): a zeroed buffer of slot n's storage shape aligned to c->align bytes:
   its owner (a uint8 array, a new reference) and, in *data, the aligned start */
static PyObject *padded_zeros(Caller *c, int n, void **data) {
    npy_intp bytes = c->itemsize, total;
    for (int k = 0; k < c->ndim[n]; k++) bytes *= c->sdims[n][k];
    total = bytes + c->align;
    PyObject *raw = PyArray_ZEROS(1, &total, NPY_UINT8, 0);
    if (raw == NULL) return NULL;
    uintptr_t start = (uintptr_t)PyArray_DATA((PyArrayObject *)raw);
    *data = (void *)(start + (uintptr_t)((c->align - (npy_intp)(start % (uintptr_t)c->align)) % c->align));
    return raw;
}

/* padded: the C-contiguous array of slot n's shape at src, copied into the region
   [:n1, ..., :nk] of the padded buffer at dst (its padding is left as it is: zero) */
static void copy_into_padded(Caller *c, int n, char *dst, const char *src) {
    npy_intp size = c->itemsize, rows = 1, index[MAX_RANK] = {0};
    int nd = c->ndim[n];
    if (nd == 0) { memcpy(dst, src, (size_t)size); return; }
    npy_intp row = c->dims[n][nd - 1] * size;
    for (int k = 0; k < nd - 1; k++) rows *= c->dims[n][k];
    for (npy_intp r = 0; r < rows; r++) {
        npy_intp at = 0;
        for (int k = 0; k < nd - 1; k++) at = at * c->sdims[n][k] + index[k];
        at *= c->sdims[n][nd - 1];
        memcpy(dst + at * size, src + r * row, (size_t)row);
        for (int k = nd - 2; k >= 0; k--) {
            if (++index[k] < c->dims[n][k]) break;
            index[k] = 0;
        }
    }
}

/* padded: the view [:n1, ..., :nk] of slot n's padded buffer at data, owned by raw (a
   new reference is taken), as CKernel.run_padded returns a result */
static PyObject *padded_view(Caller *c, int n, PyObject *raw, void *data) {
    npy_intp strides[MAX_RANK], step = c->itemsize;
    for (int k = c->ndim[n] - 1; k >= 0; k--) { strides[k] = step; step *= c->sdims[n][k]; }
    Py_INCREF(c->descr);  /* stolen */
    PyObject *view = PyArray_NewFromDescr(&PyArray_Type, c->descr, c->ndim[n], c->dims[n], strides, data,
                                          NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED, NULL);
    if (view == NULL) return NULL;
    Py_INCREF(raw);
    if (PyArray_SetBaseObject((PyArrayObject *)view, raw) < 0) {  /* steals raw */
        Py_DECREF(view);
        return NULL;
    }
    PyArray_UpdateFlags((PyArrayObject *)view, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS);
    return view;
}

/* padded (000 §4): every input copied into its padded buffer (kept between calls),
   results in fresh zeroed padded buffers returned as views of their true shape, the
   temporaries in kept padded buffers whose padding the kernel leaves zero: what
   CKernel.run_padded does for a plain call.  Inputs are copied before the call, so no
   reference to them is needed while it runs. */
static PyObject *run_padded(Caller *c, PyObject **input) {
    PyObject *owner[MAX_SLOTS] = {0};   /* this call's own buffers (owned) */
    void *p[MAX_SLOTS];
    PyObject *result = NULL;
    int n, use_own = !c->busy;
    double start = now();
    if (use_own) c->busy = 1;  /* from here: numpy may release the GIL (a large calloc or copy) */
    for (n = 0; n < c->nslots; n++) {
        int fresh = c->role[n] == R_OUT || c->role[n] == R_INOUT || !use_own;
        if (fresh) {
            if ((owner[n] = padded_zeros(c, n, &p[n])) == NULL) goto done;
        } else {
            if (c->work[n] == NULL && (c->work[n] = padded_zeros(c, n, &c->workp[n])) == NULL) goto done;
            p[n] = c->workp[n];
        }
        if (c->role[n] == R_IN || c->role[n] == R_INOUT)
            copy_into_padded(c, n, (char *)p[n], (const char *)PyArray_DATA((PyArrayObject *)input[n]));
    }
    if (call_kernel(c, p, use_own) < 0) goto done;
    if ((result = PyDict_New()) == NULL) goto done;
    for (n = 0; n < c->nslots; n++) {
        if (c->role[n] != R_OUT && c->role[n] != R_INOUT) continue;
        PyObject *view = padded_view(c, n, owner[n], p[n]);
        if (view == NULL || PyDict_SetItem(result, c->name[n], view) < 0) {
            Py_XDECREF(view);
            Py_CLEAR(result);
            goto done;
        }
        Py_DECREF(view);
    }
    c->calls++;
    c->last_seconds = now() - start;
done:
    if (use_own) c->busy = 0;
    for (n = 0; n < c->nslots; n++) Py_XDECREF(owner[n]);
    return result;
}

/* caller(arrays, out): the results dict, or None where the plain case does not hold */
static PyObject *Caller_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    Caller *c = (Caller *)self;
    PyObject *arrays, *out = Py_None;
    PyObject *input[MAX_SLOTS] = {0}, *target[MAX_SLOTS] = {0};
    int n, m;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "a Caller takes (arrays, out)");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "Caller", 1, 2, &arrays, &out)) return NULL;
    if (c->off || !PyDict_CheckExact(arrays) || PyDict_GET_SIZE(arrays) != c->nrequired) Py_RETURN_NONE;
    if (c->padded && out != Py_None && !(PyDict_CheckExact(out) && PyDict_GET_SIZE(out) == 0))
        Py_RETURN_NONE;  /* padded: out= targets take the Python path (run_padded) */
    for (n = 0; n < c->nslots; n++) {
        if (c->role[n] != R_IN && c->role[n] != R_INOUT) continue;
        PyObject *a = PyDict_GetItemWithError(arrays, c->name[n]);
        if (a == NULL) {
            if (PyErr_Occurred()) PyErr_Clear();
            Py_RETURN_NONE;
        }
        if (!fits(c, a, n)) Py_RETURN_NONE;
        input[n] = a;
    }
    if (c->padded) return run_padded(c, input);
    if (out != Py_None) {
        if (!PyDict_CheckExact(out)) Py_RETURN_NONE;
        if (PyDict_GET_SIZE(out) != 0) {
            Py_ssize_t pos = 0;
            PyObject *key, *t;
            while (PyDict_Next(out, &pos, &key, &t)) {
                n = result_slot(c, key);
                if (n < 0 || target[n] != NULL) Py_RETURN_NONE;
                if (!fits(c, t, n) || PyArray_BASE((PyArrayObject *)t) != NULL
                        || !PyArray_ISWRITEABLE((PyArrayObject *)t)) Py_RETURN_NONE;
                target[n] = t;
            }
            for (n = 0; n < c->nslots; n++) {
                if (input[n] != NULL && PyArray_BASE((PyArrayObject *)input[n]) != NULL) Py_RETURN_NONE;
                if (target[n] == NULL) continue;
                for (m = 0; m < c->nslots; m++) {
                    if (m == n) continue;
                    if (input[m] == target[n] || target[m] == target[n]) Py_RETURN_NONE;
                }
            }
        }
    }
    return run(c, input, target, 0);
}

/* caller.ordered(a, b, ...): the inputs in the description's order, no out=; the one
   result, or None where the plain case does not hold */
static PyObject *Caller_ordered(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Caller *c = (Caller *)self;
    PyObject *input[MAX_SLOTS] = {0}, *target[MAX_SLOTS] = {0};
    if (c->off || c->padded || nargs != c->norder || c->norder != c->nrequired) Py_RETURN_NONE;
    for (Py_ssize_t k = 0; k < nargs; k++) {
        int n = c->order[k];
        if (!fits(c, args[k], n)) Py_RETURN_NONE;
        input[n] = args[k];
    }
    return run(c, input, target, 1);
}

static void Caller_dealloc(PyObject *self) {
    Caller *c = (Caller *)self;
    for (int n = 0; n < MAX_SLOTS; n++) {
        Py_XDECREF(c->name[n]);
        Py_XDECREF(c->work[n]);
    }
    Py_XDECREF(c->descr);
    Py_TYPE(self)->tp_free(self);
}

/* Caller(address, roles, names, shapes, dtype, order, threads, release_gil[, storage, align]):
   with storage (each slot's padded shape) and align (bytes), a padded kernel (000 §4) */
static int Caller_init(PyObject *self, PyObject *args, PyObject *kwargs) {
    Caller *c = (Caller *)self;
    unsigned long long address;
    PyObject *roles, *names, *shapes, *dtype, *order, *storage = NULL;
    int threads, release_gil;
    Py_ssize_t align = 0;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "a Caller takes its description positionally");
        return -1;
    }
    if (c->nslots != 0 || c->descr != NULL) {
        PyErr_SetString(PyExc_TypeError, "a Caller is configured once");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "KO!O!O!OO!ip|O!n", &address, &PyTuple_Type, &roles, &PyTuple_Type, &names,
                          &PyTuple_Type, &shapes, &dtype, &PyTuple_Type, &order, &threads, &release_gil,
                          &PyTuple_Type, &storage, &align))
        return -1;
    if (storage != NULL && (PyTuple_GET_SIZE(storage) != PyTuple_GET_SIZE(roles) || align <= 0)) {
        PyErr_SetString(PyExc_ValueError, "a padded Caller needs every slot's storage shape and an alignment");
        return -1;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(roles);
    if (count > MAX_SLOTS || PyTuple_GET_SIZE(names) != count || PyTuple_GET_SIZE(shapes) != count
            || PyTuple_GET_SIZE(order) > count || address == 0) {
        PyErr_SetString(PyExc_ValueError, "a Caller's description does not fit");
        return -1;
    }
    if (!PyArray_DescrConverter(dtype, &c->descr)) return -1;
    c->fn = (void *)(uintptr_t)address;
    for (Py_ssize_t n = 0; n < count; n++) {
        long role = PyLong_AsLong(PyTuple_GET_ITEM(roles, n));
        PyObject *name = PyTuple_GET_ITEM(names, n), *shape = PyTuple_GET_ITEM(shapes, n);
        if ((role == -1 && PyErr_Occurred()) || role < R_IN || role > R_WORK || !PyUnicode_CheckExact(name)
                || !PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) > MAX_RANK) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a Caller's slot does not fit");
            return -1;
        }
        c->role[n] = (int)role;
        Py_INCREF(name);
        PyUnicode_InternInPlace(&name);
        c->name[n] = name;
        c->nslots = (int)n + 1;
        c->ndim[n] = (int)PyTuple_GET_SIZE(shape);
        for (int k = 0; k < c->ndim[n]; k++) {
            c->dims[n][k] = (npy_intp)PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, k));
            if (c->dims[n][k] < 0) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a negative extent");
                return -1;
            }
        }
        if (storage != NULL) {
            PyObject *padded = PyTuple_GET_ITEM(storage, n);
            if (!PyTuple_Check(padded) || PyTuple_GET_SIZE(padded) != c->ndim[n]) {
                PyErr_SetString(PyExc_ValueError, "a storage shape does not fit its slot");
                return -1;
            }
            for (int k = 0; k < c->ndim[n]; k++) {
                c->sdims[n][k] = (npy_intp)PyLong_AsSsize_t(PyTuple_GET_ITEM(padded, k));
                if (c->sdims[n][k] < c->dims[n][k]) {
                    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a storage extent below the shape's");
                    return -1;
                }
            }
        }
        c->nrequired += role == R_IN || role == R_INOUT;
        c->ntargets += role == R_OUT || role == R_INOUT;
    }
    c->norder = (int)PyTuple_GET_SIZE(order);
    for (int k = 0; k < c->norder; k++) {
        long n = PyLong_AsLong(PyTuple_GET_ITEM(order, k));
        if (n < 0 || n >= count || (c->role[n] != R_IN && c->role[n] != R_INOUT)) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "ordered inputs must be input slots");
            return -1;
        }
        c->order[k] = (int)n;
    }
    c->threads = threads;
    c->release_gil = release_gil;
    c->last_seconds = -1.0;
    c->padded = storage != NULL;
    c->align = (npy_intp)align;
    PyObject *itemsize = PyObject_GetAttrString((PyObject *)c->descr, "itemsize");
    if (itemsize == NULL) return -1;
    c->itemsize = (npy_intp)PyLong_AsSsize_t(itemsize);
    Py_DECREF(itemsize);
    if (c->itemsize <= 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a dtype without a size");
        return -1;
    }
    return 0;
}

static PyMethodDef Caller_methods[] = {
    {"ordered", (PyCFunction)(void (*)(void))Caller_ordered, METH_FASTCALL,
     "ordered(*inputs): the inputs in the description's order; the one result, or None"},
    {NULL, NULL, 0, NULL}
};

static PyMemberDef Caller_members[] = {
    {"threads", T_INT, offsetof(Caller, threads), 0, "the threads each call asks for (0: OpenMP's default)"},
    {"last_seconds", T_DOUBLE, offsetof(Caller, last_seconds), 0, "the last call's seconds (-1: none yet)"},
    {"calls", T_ULONGLONG, offsetof(Caller, calls), READONLY, "calls that took this path"},
    {"off", T_INT, offsetof(Caller, off), 0, "while nonzero, every call declines (a test's store hook)"},
    {"padded", T_INT, offsetof(Caller, padded), READONLY, "whether the kernel's buffers are padded (000 4)"},
    {NULL, 0, 0, 0, NULL}
};

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tensorlang_callext.Caller",
    .tp_basicsize = sizeof(Caller),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A kernel's C function with its argument checks (tensorlang/targets/c/callext.py)",
    .tp_new = PyType_GenericNew,
    .tp_init = Caller_init,
    .tp_dealloc = Caller_dealloc,
    .tp_call = Caller_call,
    .tp_methods = Caller_methods,
    .tp_members = Caller_members,
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "tensorlang_callext", "tensorlang's C-level call path", -1, module_methods, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit_tensorlang_callext(void) {
    import_array();
    if (PyType_Ready(&CallerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL) return NULL;
    Py_INCREF(&CallerType);
    if (PyModule_AddObject(m, "Caller", (PyObject *)&CallerType) < 0) {
        Py_DECREF(&CallerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
"""


def source() -> str:
    """The extension's C source, with the versions it is built for in its first line (the
    cache key is the source's hash: a new Python or numpy builds a new object)."""
    header = (f"/* python {sys.version.split()[0]} {sysconfig.get_config_var('SOABI')}; "
              f"numpy {np.__version__} */")
    text = _SOURCE.replace("@MAX_SLOTS@", str(MAX_SLOTS)).replace("@MAX_RANK@", str(MAX_RANK))
    return header + text.replace("@SWITCH@", _call_switch())


def include_dirs() -> tuple[str, ...] | None:
    """The directories holding ``Python.h`` and numpy's ``numpy/arrayobject.h``, or None
    where either is missing (a Python without its development headers)."""
    python = sysconfig.get_paths().get("include") or ""
    numpy_include = np.get_include()
    if not (Path(python, "Python.h").is_file() and Path(numpy_include, "numpy", "arrayobject.h").is_file()):
        return None
    return (python, numpy_include)


_why: list[str] = []


@lru_cache(maxsize=None)
def extension():
    """The loaded extension module, compiled on first use and cached; None where it cannot
    be had (no headers, no compiler, a failed compile or load: :func:`why_unavailable`)."""
    if os.environ.get("TENSORLANG_NO_CALLEXT", "").strip() not in ("", "0"):
        _why.append("switched off by $TENSORLANG_NO_CALLEXT")
        return None
    includes = include_dirs()
    if includes is None:
        _why.append("no Python.h or numpy/arrayobject.h (install the Python development headers)")
        return None
    compiler = c_build.find_compiler()
    if compiler is None:
        _why.append("no C compiler")
        return None
    try:
        path = c_build.build(source(), compiler, extra_flags=tuple(f"-I{d}" for d in includes))
        spec = importlib.util.spec_from_file_location(
            _MODULE, path, loader=importlib.machinery.ExtensionFileLoader(_MODULE, str(path)))
        assert spec is not None and spec.loader is not None
        c_build.prepare_openmp()  # the extension links OpenMP too (the compiler's flags)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.set_status_handler(check_status)
    except (TensorLangError, OSError, ImportError) as exc:
        _why.append(f"the extension did not build or load: {exc}")
        return None
    return module


def why_unavailable() -> str | None:
    """Why :func:`extension` is None (None when it is not)."""
    return None if extension() is not None else (_why[-1] if _why else "unknown")


def caller(kernel, roles: dict[str, str], order: tuple[str, ...] = ()):
    """The C caller of ``kernel`` (a CKernel) whose schedule is one C function, or None
    (several steps, optional inputs, too many slots or dimensions, no extension).
    ``order`` names the inputs :meth:`ordered` takes, in order."""
    if kernel._only is None or kernel.ffi is None:
        return None
    if any(role == "optional" for role in roles.values()):
        return None
    function, slots = kernel._only
    names = tuple(kernel.names[s] for s in slots)
    shapes = tuple(tuple(int(k) for k in kernel.shapes[s]) for s in slots)
    padded: tuple = ()
    if kernel.pad > 1:  # 000 §4: the storage shapes; a 0-d result is a numpy scalar there (run_padded's)
        if order or any(shape == () and roles.get(name) in ("out", "inout") for name, shape in zip(names, shapes)):
            return None
        storage = kernel.schedule.buffers.storage_shapes
        padded = (tuple(tuple(int(k) for k in storage[s]) for s in slots),
                  padded_alignment(kernel.pad, kernel.dtype.itemsize))
    if len(slots) > MAX_SLOTS or any(len(shape) > MAX_RANK for shape in shapes):
        return None
    if not set(order) <= set(names):
        return None
    module = extension()
    if module is None:
        return None
    codes = tuple(WORK if name == SCRATCH else _ROLES.get(roles.get(name, "temp"), WORK) for name in names)
    address = int(kernel.ffi.cast("uintptr_t", function))
    elements = sum(int(np.prod(shape)) for shape in shapes)
    positions = tuple(names.index(name) for name in order)
    return module.Caller(address, codes, names, shapes, kernel.dtype, positions, 0, elements >= RELEASE_GIL_ELEMENTS,
                         *padded)
