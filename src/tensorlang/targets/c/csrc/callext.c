// callext.c: the C-level call path, a CPython extension (callext.py); placeholders: docs/c-backend.md, "The C files".
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <string.h>
#include <time.h>

#define MAX_SLOTS TL_FILL_MAXSLOTS
#define MAX_RANK TL_FILL_MAXRANK
enum { R_IN = 0, R_OUT = 1, R_INOUT = 2, R_WORK = 3 };

/* what a nonzero status means: codegen.check_status, set by set_status_handler() */
static PyObject *status_handler = NULL;

static PyObject *set_status_handler(PyObject *module, PyObject *handler) {
    (void)module;
    if (!PyCallable_Check(handler)) {
        PyErr_SetString(PyExc_TypeError, "the status handler must be callable");
        return NULL;
    }
    Py_XSETREF(status_handler, Py_NewRef(handler));
    Py_RETURN_NONE;
}

static PyObject *install_entry(PyObject *module, PyObject *args);

static PyMethodDef module_methods[] = {
    {"set_status_handler", set_status_handler, METH_O,
     "set_status_handler(f): f(status) raises what a kernel's nonzero status means"},
    {"install_entry", install_entry, METH_VARARGS,
     "install_entry(cls, fallback): cls's instances call their C caller from the class's tp_call"},
    {NULL, NULL, 0, NULL}
};

static int call_function(void *fn, int n, void **p, int threads) {
    switch (n) {
TL_FILL_CASES
    default: return -1;
    }
}

typedef struct {
    PyObject_HEAD
    void *fn;
    int nslots, nrequired, norder, ndistinct;
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
    double last_seconds;                /* set from Python (last_seconds), when last_ticks is 0 */
    unsigned long long last_ticks;      /* the last call's ticks of tl_ticks() (0: see last_seconds) */
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

/* A call's clock: on x86 the time-stamp counter (clock_gettime costs a sixth of a small
   call), its ticks turned into seconds when last_seconds is read (docs/c-backend.md). */
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static unsigned long long tl_ticks(void) { return (unsigned long long)__rdtsc(); }
#define TL_TICKS_ARE_NS 0
#else
static unsigned long long tl_ticks(void) { return (unsigned long long)(now() * 1e9); }
#define TL_TICKS_ARE_NS 1
#endif
static unsigned long long ticks0;
static double seconds0;

static double tick_seconds(void) {  /* seconds per tick */
    unsigned long long t = tl_ticks();
    double s = now();
    return TL_TICKS_ARE_NS || t <= ticks0 || s <= seconds0 ? 1e-9 : (s - seconds0) / (double)(t - ticks0);
}

/* callext.fits, the rule's contract: o is exactly an ndarray of slot n's shape, the kernel's dtype, C-contiguous, aligned */
static int fits(Caller *c, PyObject *o, int n) {
    if (Py_TYPE(o) != &PyArray_Type) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_NDIM(a) != c->ndim[n]) return 0;
    if (PyArray_DESCR(a) != c->descr && !PyArray_EquivTypes(PyArray_DESCR(a), c->descr)) return 0;
    npy_intp *d = PyArray_DIMS(a);
    for (int k = 0; k < c->ndim[n]; k++)
        if (d[k] != c->dims[n][k]) return 0;
    return PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a);
}

/* A number for a 0-d input as a new 0-d array, or NULL (no error set) where it is none or does not convert */
static PyObject *number_array(Caller *c, PyObject *value) {
    if (!PyFloat_CheckExact(value) && !PyLong_CheckExact(value)) {
        if (!PyArray_IsScalar(value, Number)) return NULL;
        PyArray_Descr *d = PyArray_DescrFromScalar(value);
        if (d == NULL) { PyErr_Clear(); return NULL; }
        int real = d->kind == 'i' || d->kind == 'u' || d->kind == 'f';
        Py_DECREF(d);
        if (!real) return NULL;
    }
    Py_INCREF(c->descr);  /* stolen */
    PyObject *a = PyArray_FromAny(value, c->descr, 0, 0, NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST, NULL);
    if (a == NULL) PyErr_Clear();
    return a;
}

static PyObject *empty(Caller *c, int n) {
    Py_INCREF(c->descr);  /* PyArray_Empty steals it */
    return PyArray_Empty(c->ndim[n], c->dims[n], c->descr, 0);
}

/* whether slot n takes an input (results = 0: in, inout) or gives a result (1: out, inout) */
static int takes(Caller *c, int n, int results) {
    return c->role[n] == R_INOUT || c->role[n] == (results ? R_OUT : R_IN);
}

/* whether key is a str equal to value, an interned one; an interned key: the pointers decided */
static int same_str(PyObject *key, PyObject *value) {
    if (key == value || !PyUnicode_Check(key) || PyUnicode_CHECK_INTERNED(key)) return key == value;
    int equal = PyUnicode_Compare(key, value) == 0;
    if (PyErr_Occurred()) PyErr_Clear();
    return equal;
}

/* the slot named key among the inputs or the results (takes), -1 if none: by the interned
   name's pointer, or (compared, the cold path where that found none) by its text */
static int slot_of(Caller *c, PyObject *key, int results, int compared) {
    for (int n = 0; n < c->nslots; n++)
        if (takes(c, n, results) && (compared ? same_str(key, c->name[n]) : c->name[n] == key)) return n;
    return -1;
}

/* The kernel's function over the buffers p (without the GIL where large): 0, or -1 and an exception */
static int call_kernel(Caller *c, void **p, int nargs) {
    PyThreadState *saved = c->release_gil ? PyEval_SaveThread() : NULL;
    int rc = call_function(c->fn, nargs, p, c->threads);
    if (saved != NULL) PyEval_RestoreThread(saved);
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

/* padded: a zeroed buffer of slot n's storage shape: its owner (uint8), in *data the aligned start */
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

/* padded: slot n's rows between the array at flat and the region [:n1, ..., :nk] of the
   padded buffer, into it (out = 0) or out of it (out = 1); with only the last dimension
   padded, one pass of short copies the compiler vectorizes (no memcpy call per row). */
static void copy_padded(Caller *c, int n, char *padded, char *flat, int out) {
    npy_intp size = c->itemsize, rows = 1, index[MAX_RANK] = {0};
    int nd = c->ndim[n], last_only = 1;  /* 0-d: a row of one item */
    npy_intp cols = nd ? c->dims[n][nd - 1] : 1, scols = nd ? c->sdims[n][nd - 1] : 1, row = cols * size;
    for (int k = 0; k < nd - 1; k++) {
        rows *= c->dims[n][k];
        last_only &= c->sdims[n][k] == c->dims[n][k];
    }
    /* the rows as unsigned integers of the item's size (bits as they are, NaN payloads too) */
#define TL_COPY_ROWS(T) do { \
        T *p = (T *)padded, *f = (T *)flat; \
        for (npy_intp r = 0; r < rows; r++, p += scols, f += cols) { \
            if (out) for (npy_intp i = 0; i < cols; i++) f[i] = p[i]; \
            else for (npy_intp i = 0; i < cols; i++) p[i] = f[i]; \
        } \
        return; \
    } while (0)
    if (last_only && size == 8) TL_COPY_ROWS(uint64_t);
    if (last_only && size == 4) TL_COPY_ROWS(uint32_t);
#undef TL_COPY_ROWS
    for (npy_intp r = 0; r < rows; r++) {
        npy_intp at = 0;
        for (int k = 0; k < nd - 1; k++) at = at * c->sdims[n][k] + index[k];
        at *= scols;
        if (out) memcpy(flat + r * row, padded + at * size, (size_t)row);
        else memcpy(padded + at * size, flat + r * row, (size_t)row);
        for (int k = nd - 2; k >= 0; k--) {
            if (++index[k] < c->dims[n][k]) break;
            index[k] = 0;
        }
    }
}

/* padded: the view [:n1, ..., :nk] of slot n's buffer at data, owned by raw, as CKernel.run's */
static PyObject *padded_view(Caller *c, int n, PyObject *raw, void *data) {
    npy_intp strides[MAX_RANK], step = c->itemsize;
    for (int k = c->ndim[n] - 1; k >= 0; k--) { strides[k] = step; step *= c->sdims[n][k]; }
    Py_INCREF(c->descr);  /* stolen */
    PyObject *view = PyArray_NewFromDescr(&PyArray_Type, c->descr, c->ndim[n], c->dims[n], strides, data,
                                          NPY_ARRAY_WRITEABLE | NPY_ARRAY_ALIGNED, NULL);
    if (view == NULL) return NULL;
    if (PyArray_SetBaseObject((PyArrayObject *)view, Py_NewRef(raw)) < 0) {  /* steals raw */
        Py_DECREF(view);
        return NULL;
    }
    PyArray_UpdateFlags((PyArrayObject *)view, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS);
    return view;
}

/* One call: input[n] the input of each in and inout slot, target[n] a result slot's out=
   target or NULL.  Unpadded, inputs in place, results fresh or their targets, work slots
   kept; padded, every slot a zeroed padded buffer (docs/c-backend.md, "Calls" and
   "Padding"); a call while the kept buffers are in use makes its own.  The results dict
   (`single`: the one result), or NULL with an exception set. */
static PyObject *run(Caller *c, PyObject **input, PyObject **target, int single) {
    PyObject *own[MAX_SLOTS] = {0};  /* owned: each slot's array, or its padded buffer's owner */
    void *p[MAX_SLOTS];
    PyObject *result = NULL;
    int n, use_own = !c->busy;
    unsigned long long start = tl_ticks();
    if (use_own) c->busy = 1;  /* from here: numpy may release the GIL (a large calloc or copy) */
    for (n = 0; n < c->nslots; n++) {
        int role = c->role[n], given = takes(c, n, 1) && target[n] != NULL;
        if (c->padded) {
            if ((takes(c, n, 1) && !given) || !use_own) {
                if ((own[n] = padded_zeros(c, n, &p[n])) == NULL) goto done;
            } else {
                if (c->work[n] == NULL && (c->work[n] = padded_zeros(c, n, &c->workp[n])) == NULL) goto done;
                p[n] = c->workp[n];
            }
            if (takes(c, n, 0))
                copy_padded(c, n, (char *)p[n], (char *)PyArray_DATA((PyArrayObject *)input[n]), 0);
            continue;
        }
        if (given) {
            own[n] = Py_NewRef(target[n]);
        } else if (role == R_IN) {
            own[n] = Py_NewRef(input[n]);
        } else if (role == R_OUT || role == R_INOUT || !use_own) {  /* inout: the function reads its input */
            if ((own[n] = empty(c, n)) == NULL) goto done;
        } else {
            if (c->work[n] == NULL && (c->work[n] = empty(c, n)) == NULL) goto done;
            own[n] = Py_NewRef(c->work[n]);
        }
        p[n] = PyArray_DATA((PyArrayObject *)own[n]);
    }
    /* then each inout slot's input (the function reads it until it assigns the slot):
       the caller's array unpadded, padded the buffer holding its copy */
    int nargs = c->nslots;
    for (n = 0; n < c->nslots; n++)
        if (c->role[n] == R_INOUT)
            p[nargs++] = c->padded ? p[n] : PyArray_DATA((PyArrayObject *)input[n]);
    if (call_kernel(c, p, nargs) < 0) goto done;
    if (!single && (result = PyDict_New()) == NULL) goto done;
    for (n = 0; n < c->nslots; n++) {
        if (!takes(c, n, 1)) continue;
        PyObject *value;
        if (c->padded && target[n] != NULL) {
            copy_padded(c, n, (char *)p[n], (char *)PyArray_DATA((PyArrayObject *)target[n]), 1);
            value = Py_NewRef(target[n]);
        } else {
            value = c->padded ? padded_view(c, n, own[n], p[n]) : Py_NewRef(own[n]);
        }
        if (single) {  /* the first result; 0-d: a numpy scalar */
            if (value == NULL || (result = PyArray_Return((PyArrayObject *)value)) == NULL) goto done;
            break;
        }
        if (value == NULL || PyDict_SetItem(result, c->name[n], value) < 0) {
            Py_XDECREF(value);
            Py_CLEAR(result);
            goto done;
        }
        Py_DECREF(value);
    }
    if (result == NULL) result = Py_NewRef(Py_None);  /* single, and no result */
    c->calls++;
    c->last_ticks = tl_ticks() - start + 1;  /* never 0: 0 means "see last_seconds" */
done:
    if (use_own) c->busy = 0;
    for (n = 0; n < c->nslots; n++) Py_XDECREF(own[n]);
    return result;
}

/* The out= targets (a dict, None or absent) into target[], checked: 1 to go on, 0 to decline */
static int gather_targets(Caller *c, PyObject *out, PyObject **input, PyObject **target) {
    int n, m;
    if (out == NULL || out == Py_None) return 1;
    if (!PyDict_CheckExact(out)) return 0;
    if (PyDict_GET_SIZE(out) == 0) return 1;
    Py_ssize_t pos = 0;
    PyObject *key, *t;
    for (Py_ssize_t left = PyDict_GET_SIZE(out); left > 0 && PyDict_Next(out, &pos, &key, &t); left--) {
        if ((n = slot_of(c, key, 1, 0)) < 0) n = slot_of(c, key, 1, 1);
        if (n < 0 || target[n] != NULL) return 0;
        if (!fits(c, t, n) || PyArray_BASE((PyArrayObject *)t) != NULL
                || !PyArray_ISWRITEABLE((PyArrayObject *)t)) return 0;
        target[n] = t;
    }
    for (n = 0; n < c->nslots; n++) {
        if (input[n] != NULL && PyArray_BASE((PyArrayObject *)input[n]) != NULL) return 0;
        if (target[n] == NULL) continue;
        for (m = 0; m < c->nslots; m++)
            if (m != n && (input[m] == target[n] || target[m] == target[n])) return 0;
    }
    return 1;
}

static PyObject *str_out = NULL;  /* "out", interned */

/* The inputs from arrays into input[] (out != NULL: "out" to *out; made[n]: a number's array) */
static int gather_inputs(Caller *c, PyObject *arrays, PyObject **out, PyObject **input, PyObject **made) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int found = 0;
    for (Py_ssize_t left = PyDict_GET_SIZE(arrays); left > 0 && PyDict_Next(arrays, &pos, &key, &value); left--) {
        /* an input's interned name first (the common call), then "out", then names compared */
        int n = out != NULL && key == str_out ? -1 : slot_of(c, key, 0, 0);
        if (n < 0 && out != NULL && same_str(key, str_out)) {
            *out = value;
            continue;
        }
        if (n < 0 && (n = slot_of(c, key, 0, 1)) < 0) return 0;
        if (!fits(c, value, n)) {
            if (c->ndim[n] != 0 || made[n] != NULL || (made[n] = number_array(c, value)) == NULL) return 0;
            value = made[n];
        }
        input[n] = value;
        found++;
    }
    return found == c->nrequired;
}

/* A plain call: the results dict, or None where it is not one (out_key: "out" in arrays) */
static PyObject *call_plain(Caller *c, PyObject *arrays, PyObject *out, int out_key) {
    PyObject *input[MAX_SLOTS] = {0}, *target[MAX_SLOTS] = {0}, *made[MAX_SLOTS] = {0};
    PyObject *result = c->off || !gather_inputs(c, arrays, out_key ? &out : NULL, input, made)
        || !gather_targets(c, out, input, target) ? Py_NewRef(Py_None) : run(c, input, target, 0);
    for (int n = 0; n < c->nslots; n++) Py_XDECREF(made[n]);
    return result;
}

/* caller(arrays, out): as call_plain */
static PyObject *Caller_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *arrays, *out = Py_None;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "a Caller takes (arrays, out)");
        return NULL;
    }
    if (!PyArg_UnpackTuple(args, "Caller", 1, 2, &arrays, &out)) return NULL;
    if (!PyDict_CheckExact(arrays)) Py_RETURN_NONE;
    return call_plain((Caller *)self, arrays, out, 0);
}

/* caller.ordered(a, b, ...): the inputs in the description's order (a slot named twice
   takes one array object); the one result, or None where it is no plain call */
static PyObject *Caller_ordered(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Caller *c = (Caller *)self;
    PyObject *input[MAX_SLOTS] = {0}, *target[MAX_SLOTS] = {0};
    if (c->off || c->padded || nargs != c->norder || c->ndistinct != c->nrequired) Py_RETURN_NONE;
    for (Py_ssize_t k = 0; k < nargs; k++) {
        int n = c->order[k];  /* a slot given again: the same object */
        if (input[n] != NULL ? input[n] != args[k] : !fits(c, args[k], n)) Py_RETURN_NONE;
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

/* the ndim extents of the tuple t into to[], each at least least[k] (NULL: 0); -1 where one is not */
static int read_extents(PyObject *t, int ndim, npy_intp *to, const npy_intp *least) {
    for (int k = 0; k < ndim; k++)
        if ((to[k] = (npy_intp)PyLong_AsSsize_t(PyTuple_GET_ITEM(t, k))) < (least ? least[k] : 0)) return -1;
    return 0;
}

/* Caller(address, roles, names, shapes, dtype, order, threads, release_gil[, storage, align]):
   with storage (each slot's padded shape) and align (bytes), a padded kernel (000 §4);
   its refusals: the error (unless one is set already) and -1 */
#define FAIL(type, text) do { PyErr_SetString(type, text); return -1; } while (0)
#define FAIL_UNLESS_SET(type, text) do { if (!PyErr_Occurred()) PyErr_SetString(type, text); return -1; } while (0)
static int Caller_init(PyObject *self, PyObject *args, PyObject *kwargs) {
    Caller *c = (Caller *)self;
    unsigned long long address;
    PyObject *roles, *names, *shapes, *dtype, *order, *storage = NULL;
    int threads, release_gil;
    Py_ssize_t align = 0;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)
        FAIL(PyExc_TypeError, "a Caller takes its description positionally");
    if (c->nslots != 0 || c->descr != NULL) FAIL(PyExc_TypeError, "a Caller is configured once");
    if (!PyArg_ParseTuple(args, "KO!O!O!OO!ip|O!n", &address, &PyTuple_Type, &roles, &PyTuple_Type, &names,
                          &PyTuple_Type, &shapes, &dtype, &PyTuple_Type, &order, &threads, &release_gil,
                          &PyTuple_Type, &storage, &align))
        return -1;
    if (storage != NULL && (PyTuple_GET_SIZE(storage) != PyTuple_GET_SIZE(roles) || align <= 0))
        FAIL(PyExc_ValueError, "a padded Caller needs every slot's storage shape and an alignment");
    Py_ssize_t count = PyTuple_GET_SIZE(roles);
    if (count > MAX_SLOTS || PyTuple_GET_SIZE(names) != count || PyTuple_GET_SIZE(shapes) != count
            || PyTuple_GET_SIZE(order) > MAX_SLOTS || address == 0)
        FAIL(PyExc_ValueError, "a Caller's description does not fit");
    if (!PyArray_DescrConverter(dtype, &c->descr)) return -1;
    c->fn = (void *)(uintptr_t)address;
    for (Py_ssize_t n = 0; n < count; n++) {
        long role = PyLong_AsLong(PyTuple_GET_ITEM(roles, n));
        PyObject *name = PyTuple_GET_ITEM(names, n), *shape = PyTuple_GET_ITEM(shapes, n);
        if ((role == -1 && PyErr_Occurred()) || role < R_IN || role > R_WORK || !PyUnicode_CheckExact(name)
                || !PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) > MAX_RANK)
            FAIL_UNLESS_SET(PyExc_ValueError, "a Caller's slot does not fit");
        c->role[n] = (int)role;
        c->name[n] = Py_NewRef(name);
        PyUnicode_InternInPlace(&c->name[n]);
        c->nslots = (int)n + 1;
        c->ndim[n] = (int)PyTuple_GET_SIZE(shape);
        if (read_extents(shape, c->ndim[n], c->dims[n], NULL) < 0) FAIL_UNLESS_SET(PyExc_ValueError, "a negative extent");
        if (storage != NULL) {
            PyObject *padded = PyTuple_GET_ITEM(storage, n);
            if (!PyTuple_Check(padded) || PyTuple_GET_SIZE(padded) != c->ndim[n])
                FAIL(PyExc_ValueError, "a storage shape does not fit its slot");
            if (read_extents(padded, c->ndim[n], c->sdims[n], c->dims[n]) < 0)
                FAIL_UNLESS_SET(PyExc_ValueError, "a storage extent below the shape's");
        }
        c->nrequired += role == R_IN || role == R_INOUT;
    }
    c->norder = (int)PyTuple_GET_SIZE(order);
    for (int k = 0; k < c->norder; k++) {
        long n = PyLong_AsLong(PyTuple_GET_ITEM(order, k));
        if (n < 0 || n >= count || (c->role[n] != R_IN && c->role[n] != R_INOUT))
            FAIL_UNLESS_SET(PyExc_ValueError, "ordered inputs must be input slots");
        c->order[k] = (int)n;
        int again = 0;
        for (int q = 0; q < k; q++) again |= c->order[q] == (int)n;
        c->ndistinct += !again;
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
    if (c->itemsize <= 0) FAIL_UNLESS_SET(PyExc_ValueError, "a dtype without a size");
    return 0;
}

static PyMethodDef Caller_methods[] = {
    {"ordered", (PyCFunction)(void (*)(void))Caller_ordered, METH_FASTCALL,
     "ordered(*inputs): the inputs in the description's order; the one result, or None"},
    {NULL, NULL, 0, NULL}
};

static PyMemberDef Caller_members[] = {
    {"threads", T_INT, offsetof(Caller, threads), 0, "the threads each call asks for (0: OpenMP's default)"},
    {"calls", T_ULONGLONG, offsetof(Caller, calls), READONLY, "calls that took this path"},
    {"off", T_INT, offsetof(Caller, off), 0, "while nonzero, every call declines (a test's store hook)"},
    {"padded", T_INT, offsetof(Caller, padded), READONLY, "whether the kernel's buffers are padded (000 4)"},
    {NULL, 0, 0, 0, NULL}
};

static PyObject *Caller_get_last(PyObject *self, void *closure) {
    Caller *c = (Caller *)self;
    (void)closure;
    return PyFloat_FromDouble(c->last_ticks == 0 ? c->last_seconds : (double)(c->last_ticks - 1) * tick_seconds());
}

static int Caller_set_last(PyObject *self, PyObject *value, void *closure) {
    Caller *c = (Caller *)self;
    (void)closure;
    double v = value == NULL ? -1.0 : PyFloat_AsDouble(value);
    if (v == -1.0 && PyErr_Occurred()) return -1;
    c->last_seconds = v;
    c->last_ticks = 0;
    return 0;
}

static PyGetSetDef Caller_getset[] = {
    {"last_seconds", Caller_get_last, Caller_set_last, "the last call's seconds (-1: none yet)", NULL},
    {NULL, NULL, NULL, NULL, NULL}
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
    .tp_getset = Caller_getset,
};

/* A kernel class's own call (install_entry): k(A=a, out={...}) runs the instance's
   `_c_call` from the class's tp_call; what it declines goes to the Python __call__, what
   raised to `_c_call_raised(exc, kwargs)` (docs/c-backend.md, "Calls"). */
static PyObject *entry_fallback = NULL;   /* the class's Python __call__ */
static PyObject *str_c_call = NULL, *str_raised = NULL;
static PyTypeObject *entry_class = NULL;  /* the class, where `_c_call` is its slot (__slots__) */
static Py_ssize_t entry_offset = 0;       /* that slot's offset in an instance */

static PyObject *entry_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    if (PyTuple_GET_SIZE(args) == 0 && kwargs != NULL && PyDict_CheckExact(kwargs)) {
        /* the class's slot read at its offset, no look-up (NULL: never set); a subclass's instance: the attribute */
        PyObject *caller = Py_TYPE(self) == entry_class ? Py_XNewRef(*(PyObject **)((char *)self + entry_offset))
                                                        : PyObject_GetAttr(self, str_c_call);
        if (caller == NULL) PyErr_Clear();
        if (caller != NULL && Py_TYPE(caller) == &CallerType) {
            PyObject *result = call_plain((Caller *)caller, kwargs, NULL, 1);  /* "out" among them */
            Py_DECREF(caller);
            if (result == NULL) {  /* it raised: the class decides (KernelFailed is final) */
                PyObject *type, *value, *trace;
                PyErr_Fetch(&type, &value, &trace);
                PyErr_NormalizeException(&type, &value, &trace);
                if (trace != NULL && value != NULL) PyException_SetTraceback(value, trace);
                result = PyObject_CallMethodObjArgs(self, str_raised, value ? value : Py_None, kwargs, NULL);
                Py_XDECREF(type);
                Py_XDECREF(value);
                Py_XDECREF(trace);
                return result;
            }
            if (result != Py_None) return result;
            Py_DECREF(result);
        } else {
            Py_XDECREF(caller);
        }
    }
    PyObject *bound = PyMethod_New(entry_fallback, self);
    if (bound == NULL) return NULL;
    PyObject *result = PyObject_Call(bound, args, kwargs);
    Py_DECREF(bound);
    return result;
}

/* install_entry(cls, fallback): cls's instances called by entry_call; once per process */
static PyObject *install_entry(PyObject *module, PyObject *args) {
    PyTypeObject *cls;
    PyObject *fallback;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!O", &PyType_Type, &cls, &fallback)) return NULL;
    if (!PyCallable_Check(fallback) || !(cls->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        PyErr_SetString(PyExc_TypeError, "install_entry takes a Python class and its __call__");
        return NULL;
    }
    if (entry_fallback != NULL && entry_fallback != fallback) Py_RETURN_FALSE;
    if (str_c_call == NULL) {
        str_c_call = PyUnicode_InternFromString("_c_call");
        str_raised = PyUnicode_InternFromString("_c_call_raised");
        if (str_c_call == NULL || str_raised == NULL) return NULL;
    }
    Py_XSETREF(entry_fallback, Py_NewRef(fallback));
    PyObject *member = PyDict_GetItemWithError(cls->tp_dict, str_c_call);  /* borrowed */
    if (member == NULL && PyErr_Occurred()) return NULL;
    if (member != NULL && Py_TYPE(member) == &PyMemberDescr_Type
            && ((PyMemberDescrObject *)member)->d_member->type == T_OBJECT_EX) {
        Py_XSETREF(entry_class, (PyTypeObject *)Py_NewRef(cls));
        entry_offset = ((PyMemberDescrObject *)member)->d_member->offset;
    }
    cls->tp_call = entry_call;
    PyType_Modified(cls);
    Py_RETURN_TRUE;
}

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "tensorlang_callext", "tensorlang's C-level call path", -1, module_methods, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit_tensorlang_callext(void) {
    import_array();
    ticks0 = tl_ticks();
    seconds0 = now();
    if ((str_out = PyUnicode_InternFromString("out")) == NULL) return NULL;
    if (PyType_Ready(&CallerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Caller", (PyObject *)&CallerType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
