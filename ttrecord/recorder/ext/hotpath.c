/* The recorder's per-call work that interpreted Python pays most for, in C (stable ABI).
 *
 * append(view, end, reserve, records, dumps) -> int
 *     Frames `records` (a list: one record is written alone, several as a list, as
 *     log.py's writer does) as marshal data (see `encode`; `dumps`, marshal.dumps, for what
 *     it does not write itself), copies the frame into the writable
 *     buffer `view` at `end` and commits it (the header's first 8 bytes become the new end,
 *     little-endian). Returns the new end; 0 when the frame does not fit before the last
 *     `reserve` bytes (the caller grows the mapping and calls again). A record marshal
 *     refuses raises its ValueError, with nothing written.
 *
 * here(internal, is_internal, by_offset, depth, on_miss, frame) -> int | None
 *     The call site of a call made at `frame`: the first frame whose code is not internal
 *     (`internal`: id(code) -> bool, filled through `is_internal(code)`), keyed by
 *     (id(code), f_lasti) plus the same for up to `depth` non-internal callers; the key's id
 *     comes from `by_offset`, else from `on_miss(frame, key)`. None when every frame is
 *     internal. The same walk and keys as callsite.py's `CallSites.here`.
 *
 * call(ctx, name, kind, wrapped, instance, args, kwargs) -> the call's result
 *     Recorder.call for the commonest call, an eager op on the recording thread: the same
 *     records in the same order as recorder.py's _begin/_end, built here; Python is called
 *     back only for what is new (a first sight of a tensor, a compile, a free only the ledger
 *     can work out). Anything else (a capture, another kind, a nested call, audit regions,
 *     replay verification, a queue argument) goes to ctx's Python `call` whole. `ctx` is the
 *     tuple recorder.py's `_fast_context` builds (the CTX_* indices below).
 *
 * stash(obj, name, value) / unstash(obj, name)
 *     Sets / deletes `name` in obj's own instance dictionary, past its type's __setattr__ (a
 *     wrapt proxy forwards every set to the object it wraps): where the proxy's C attribute
 *     lookup finds it before the Python __getattr__ fallback (proxy.py's ModuleProxy).
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

static PyObject *s_f_back, *s_f_lasti, *s_tensor_id, *s_buffer_address, *s_cq_id,
    *s_name, *s_module, *s_Tensor, *s_torch, *s_self, *s_shape, *s_dtype, *s_layout,
    *s_storage_type, *s_memory_config, *s_buffer_type, *s_memory_layout, *s_device, *s_host,
    *s_DEVICE, *s_INTERLEAVED, *s_buffer_num_pages, *s_buffer_aligned_page_size;

static PyObject *build_bound(PyObject *bound, PyObject *t, PyObject *tid);

/* Py_SETREF is not part of the limited API */
#define SETREF(dst, src) do { PyObject *old_ = (dst); (dst) = (src); Py_DECREF(old_); } while (0)

#define BUFFER 6  /* records.TENSOR_BUFFER: a description's buffer field */

/* ---- marshal data, written straight into the log ----
 * The records are plain tuples of None, bools, ints, floats, str, bytes, tuples, lists and
 * dicts (records.py). They are written as marshal format 4 without references (valid marshal
 * data: a reference is an option of the writer), so marshal.loads reads back equal values;
 * anything else (an int or str subclass, a huge int, deep nesting) goes to marshal.dumps. */

typedef struct {
    unsigned char *data;
    Py_ssize_t len, cap;
} Out;

enum { ENCODED = 0, FAILED = -1, UNSUPPORTED = 1 };

static int
out_room(Out *o, Py_ssize_t n)
{
    if (o->len + n <= o->cap)
        return 0;
    Py_ssize_t cap = o->cap ? o->cap : 512;
    while (cap < o->len + n)
        cap *= 2;
    unsigned char *data = PyMem_Realloc(o->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->data = data;
    o->cap = cap;
    return 0;
}

static int
out_byte(Out *o, unsigned char c)
{
    if (out_room(o, 1) < 0)
        return FAILED;
    o->data[o->len++] = c;
    return ENCODED;
}

static int
out_u32(Out *o, unsigned char code, uint32_t v)
{
    if (out_room(o, 5) < 0)
        return FAILED;
    o->data[o->len++] = code;
    for (int i = 0; i < 4; i++)
        o->data[o->len++] = (unsigned char)(v >> (8 * i));
    return ENCODED;
}

static int
out_bytes(Out *o, const char *data, Py_ssize_t n)
{
    if (out_room(o, n) < 0)
        return FAILED;
    memcpy(o->data + o->len, data, (size_t)n);
    o->len += n;
    return ENCODED;
}

static int
encode(Out *o, PyObject *v, int depth)
{
    int r;
    if (depth > 64)
        return UNSUPPORTED;
    if (v == Py_None)
        return out_byte(o, 'N');
    if (v == Py_True)
        return out_byte(o, 'T');
    if (v == Py_False)
        return out_byte(o, 'F');
    if (PyLong_CheckExact(v)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow)
            return UNSUPPORTED;
        if (x == -1 && PyErr_Occurred())
            return FAILED;
        if (x >= INT32_MIN && x <= INT32_MAX)
            return out_u32(o, 'i', (uint32_t)(int32_t)x);
        /* TYPE_LONG: signed count of 15-bit digits, then the digits, least significant first */
        unsigned long long m = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
        uint16_t digits[5];
        int n = 0;
        for (; m; m >>= 15)
            digits[n++] = (uint16_t)(m & 0x7FFF);
        if (out_u32(o, 'l', (uint32_t)(int32_t)(x < 0 ? -n : n)) < 0 || out_room(o, 2 * n) < 0)
            return FAILED;
        for (int i = 0; i < n; i++) {
            o->data[o->len++] = (unsigned char)(digits[i] & 0xFF);
            o->data[o->len++] = (unsigned char)(digits[i] >> 8);
        }
        return ENCODED;
    }
    if (PyFloat_CheckExact(v)) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        double d = PyFloat_AsDouble(v);
        if (out_byte(o, 'g') < 0)
            return FAILED;
        return out_bytes(o, (const char *)&d, 8);
#else
        return UNSUPPORTED;
#endif
    }
    if (PyUnicode_CheckExact(v)) {
        Py_ssize_t n;
        const char *utf8 = PyUnicode_AsUTF8AndSize(v, &n);
        if (utf8 == NULL) {  /* lone surrogates: marshal's own "surrogatepass" */
            PyErr_Clear();
            return UNSUPPORTED;
        }
        if (n > 0x7FFFFFFF)
            return UNSUPPORTED;
        int ascii = 1;
        for (Py_ssize_t i = 0; i < n && ascii; i++)
            ascii = (unsigned char)utf8[i] < 0x80;
        if (ascii && n < 256) {
            if (out_room(o, 2) < 0)
                return FAILED;
            o->data[o->len++] = 'z';
            o->data[o->len++] = (unsigned char)n;
        } else if (out_u32(o, ascii ? 'a' : 'u', (uint32_t)n) < 0) {
            return FAILED;
        }
        return out_bytes(o, utf8, n);
    }
    if (PyTuple_CheckExact(v)) {
        Py_ssize_t n = PyTuple_Size(v);
        if (n < 256) {
            if (out_room(o, 2) < 0)
                return FAILED;
            o->data[o->len++] = ')';
            o->data[o->len++] = (unsigned char)n;
        } else if (out_u32(o, '(', (uint32_t)n) < 0) {
            return FAILED;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            if ((r = encode(o, PyTuple_GetItem(v, i), depth + 1)) != ENCODED)
                return r;
        return ENCODED;
    }
    if (PyList_CheckExact(v)) {
        Py_ssize_t n = PyList_Size(v);
        if (out_u32(o, '[', (uint32_t)n) < 0)
            return FAILED;
        for (Py_ssize_t i = 0; i < n; i++)
            if ((r = encode(o, PyList_GetItem(v, i), depth + 1)) != ENCODED)
                return r;
        return ENCODED;
    }
    if (PyDict_CheckExact(v)) {
        Py_ssize_t at = 0;
        PyObject *k, *x;
        if (out_byte(o, '{') < 0)
            return FAILED;
        while (PyDict_Next(v, &at, &k, &x))
            if ((r = encode(o, k, depth + 1)) != ENCODED || (r = encode(o, x, depth + 1)) != ENCODED)
                return r;
        return out_byte(o, '0');
    }
    if (PyBytes_CheckExact(v)) {
        Py_ssize_t n = PyBytes_Size(v);
        if (n > 0x7FFFFFFF || out_u32(o, 's', (uint32_t)n) < 0)
            return FAILED;
        return out_bytes(o, PyBytes_AsString(v), n);
    }
    return UNSUPPORTED;
}

/* The new end after framing `records` into `view` at `end`; 0 when it does not fit before the
 * last `reserve` bytes, -1 with an error set (marshal's ValueError for a record it refuses). */
static Py_ssize_t
append_frame(PyObject *view, Py_ssize_t end, Py_ssize_t reserve, PyObject *records,
             PyObject *dumps)
{
    if (!PyList_Check(records)) {
        PyErr_SetString(PyExc_TypeError, "records must be a list");
        return -1;
    }
    Py_ssize_t n = PyList_Size(records);
    PyObject *what = n == 1 ? PyList_GetItem(records, 0) : records;  /* borrowed */
    Out out = {NULL, 0, 0};
    PyObject *data = NULL;
    char *bytes;
    Py_ssize_t size;
    int r = encode(&out, what, 0);
    if (r == FAILED) {
        PyMem_Free(out.data);
        return -1;
    }
    if (r == UNSUPPORTED) {
        PyMem_Free(out.data);
        out.data = NULL;
        data = PyObject_CallFunctionObjArgs(dumps, what, NULL);
        if (data == NULL)
            return -1;
        if (PyBytes_AsStringAndSize(data, &bytes, &size) < 0) {
            Py_DECREF(data);
            return -1;
        }
    } else {
        bytes = (char *)out.data;
        size = out.len;
    }
    Py_ssize_t new_end = -1;
    Py_buffer buf;
    if (PyObject_GetBuffer(view, &buf, PyBUF_WRITABLE) < 0)
        goto done;
    new_end = end + 4 + size;
    if (size > 0xFFFFFFFFLL || new_end + reserve > buf.len || end < 16) {
        PyBuffer_Release(&buf);
        new_end = 0;
        goto done;
    }
    unsigned char *m = (unsigned char *)buf.buf;
    uint32_t len = (uint32_t)size;
    for (int i = 0; i < 4; i++)
        m[end + i] = (unsigned char)(len >> (8 * i));
    memcpy(m + end + 4, bytes, (size_t)size);
    uint64_t committed = (uint64_t)new_end;
    for (int i = 0; i < 8; i++)
        m[i] = (unsigned char)(committed >> (8 * i));
    PyBuffer_Release(&buf);
done:
    PyMem_Free(out.data);
    Py_XDECREF(data);
    return new_end;
}

static PyObject *
hp_append(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *view, *records, *dumps;
    Py_ssize_t end, reserve;
    if (!PyArg_ParseTuple(args, "OnnOO", &view, &end, &reserve, &records, &dumps))
        return NULL;
    Py_ssize_t new_end = append_frame(view, end, reserve, records, dumps);
    return new_end < 0 ? NULL : PyLong_FromSsize_t(new_end);
}

/* 1 internal, 0 not, -1 error. */
static int
is_internal(PyObject *code, PyObject *internal, PyObject *check)
{
    PyObject *key = PyLong_FromVoidPtr(code);
    if (key == NULL)
        return -1;
    PyObject *flag = PyDict_GetItemWithError(internal, key);  /* borrowed */
    Py_DECREF(key);
    if (flag == NULL) {
        if (PyErr_Occurred())
            return -1;
        flag = PyObject_CallFunctionObjArgs(check, code, NULL);
        if (flag == NULL)
            return -1;
        int r = PyObject_IsTrue(flag);
        Py_DECREF(flag);
        return r;
    }
    return PyObject_IsTrue(flag);
}

/* Appends (id(code), f_lasti) of frame `f` with code `code` to list `parts`. */
static int
add_key(PyObject *parts, PyObject *f, PyObject *code)
{
    PyObject *id = PyLong_FromVoidPtr(code);
    if (id == NULL)
        return -1;
    int r = PyList_Append(parts, id);
    Py_DECREF(id);
    if (r < 0)
        return -1;
    PyObject *lasti = PyObject_GetAttr(f, s_f_lasti);
    if (lasti == NULL)
        return -1;
    r = PyList_Append(parts, lasti);
    Py_DECREF(lasti);
    return r;
}

static PyObject *
back(PyObject *f)  /* new reference to f.f_back, Py_None at the outermost frame */
{
    return PyObject_GetAttr(f, s_f_back);
}

static PyObject *
here(PyObject *internal, PyObject *check, PyObject *by_offset, Py_ssize_t depth,
     PyObject *on_miss, PyObject *frame)
{
    PyObject *f = frame, *code = NULL, *parts = NULL, *key = NULL, *result = NULL;
    Py_INCREF(f);
    for (;;) {
        if (f == Py_None) {
            Py_DECREF(f);
            Py_RETURN_NONE;
        }
        code = (PyObject *)PyFrame_GetCode((PyFrameObject *)f);
        int r = is_internal(code, internal, check);
        if (r < 0)
            goto fail;
        if (!r)
            break;
        Py_CLEAR(code);
        PyObject *b = back(f);
        if (b == NULL)
            goto fail;
        Py_DECREF(f);
        f = b;
    }
    parts = PyList_New(0);
    if (parts == NULL || add_key(parts, f, code) < 0)
        goto fail;
    Py_CLEAR(code);
    PyObject *g = back(f);
    if (g == NULL)
        goto fail;
    while (g != Py_None && depth) {
        PyObject *gc = (PyObject *)PyFrame_GetCode((PyFrameObject *)g);
        int r = is_internal(gc, internal, check);
        if (r < 0 || (!r && add_key(parts, g, gc) < 0)) {
            Py_DECREF(gc);
            Py_DECREF(g);
            goto fail;
        }
        if (!r)
            depth--;
        Py_DECREF(gc);
        PyObject *next = back(g);
        Py_DECREF(g);
        if (next == NULL)
            goto fail;
        g = next;
    }
    Py_DECREF(g);
    key = PyList_AsTuple(parts);
    if (key == NULL)
        goto fail;
    result = PyDict_GetItemWithError(by_offset, key);  /* borrowed */
    if (result != NULL) {
        Py_INCREF(result);
    } else if (!PyErr_Occurred()) {
        result = PyObject_CallFunctionObjArgs(on_miss, f, key, NULL);
    }
fail:
    Py_XDECREF(code);
    Py_XDECREF(parts);
    Py_XDECREF(key);
    Py_DECREF(f);
    return result;
}


static PyObject *
hp_here(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *frame, *internal, *check, *by_offset, *on_miss;
    Py_ssize_t depth;
    if (!PyArg_ParseTuple(args, "O!OO!nOO", &PyDict_Type, &internal, &check, &PyDict_Type,
                          &by_offset, &depth, &on_miss, &frame))
        return NULL;
    return here(internal, check, by_offset, depth, on_miss, frame);
}

/* here() with the arguments of CallSites.here's partial, `bound` (all but the frame). */
static PyObject *
here_bound(PyObject *bound, PyObject *frame)
{
    if (!PyTuple_Check(bound) || PyTuple_Size(bound) != 5) {
        PyErr_SetString(PyExc_TypeError, "here: the bound arguments are not CallSites.here's");
        return NULL;
    }
    Py_ssize_t depth = PyLong_AsSsize_t(PyTuple_GetItem(bound, 3));
    if (depth == -1 && PyErr_Occurred())
        return NULL;
    return here(PyTuple_GetItem(bound, 0), PyTuple_GetItem(bound, 1), PyTuple_GetItem(bound, 2),
                depth, PyTuple_GetItem(bound, 4), frame);
}

/* TensorDescriber.store: `desc` cached under `tid`, and `tid` under its buffer. */
static int
store(PyObject *cache, PyObject *by_buffer, PyObject *tid, PyObject *desc)
{
    if (tid == Py_None)
        return 0;
    if (!PyTuple_Check(desc) || PyTuple_Size(desc) <= BUFFER) {
        PyErr_SetString(PyExc_TypeError, "a tensor description is not a TensorDesc tuple");
        return -1;
    }
    PyObject *buf = PyTuple_GetItem(desc, BUFFER);
    int r;
    if (buf == Py_None) {
        PyObject *entry = PyTuple_Pack(2, Py_None, desc);
        r = entry == NULL ? -1 : PyDict_SetItem(cache, tid, entry);
        Py_XDECREF(entry);
    } else {
        PyObject *address = PySequence_GetItem(buf, 2), *entry = NULL, *key = NULL;
        r = -1;
        if (address != NULL && (entry = PyTuple_Pack(2, address, desc)) != NULL
            && PyDict_SetItem(cache, tid, entry) == 0
            && (key = PySequence_GetSlice(buf, 0, 3)) != NULL) {
            if (!PyTuple_Check(key))
                SETREF(key, PySequence_Tuple(key));
            PyObject *tids = key == NULL ? NULL : PyDict_GetItemWithError(by_buffer, key);
            if (key == NULL) {
                r = -1;
            } else if (tids == NULL) {
                PyObject *one_tid = PyErr_Occurred() ? NULL : PyList_New(1);
                if (one_tid != NULL) {
                    Py_INCREF(tid);
                    PyList_SetItem(one_tid, 0, tid);
                    r = PyDict_SetItem(by_buffer, key, one_tid);
                    Py_DECREF(one_tid);
                }
            } else {  /* views share their buffer */
                int in = PySequence_Contains(tids, tid);
                r = in < 0 ? -1 : in ? 0 : PyList_Append(tids, tid);
            }
        }
        Py_XDECREF(address);
        Py_XDECREF(entry);
        Py_XDECREF(key);
    }
    if (r == 0 && PyDict_Size(cache) > 100000) {
        PyDict_Clear(cache);
        PyDict_Clear(by_buffer);
    }
    return r;
}

/* TensorDescriber.describe; `describer` is its (cache, by_buffer, build). */
static PyObject *
describe(PyObject *describer, PyObject *t)
{
    PyObject *cache = PyTuple_GetItem(describer, 0);
    PyObject *tid = PyObject_GetAttr(t, s_tensor_id);
    if (tid == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return NULL;
        PyErr_Clear();
        tid = Py_None;
        Py_INCREF(tid);
    }
    if (tid != Py_None) {
        PyObject *hit = PyDict_GetItemWithError(cache, tid);  /* borrowed */
        if (hit == NULL && PyErr_Occurred()) {
            Py_DECREF(tid);
            return NULL;
        }
        if (hit != NULL && PyTuple_Check(hit) && PyTuple_Size(hit) == 2) {
            PyObject *address = PyTuple_GetItem(hit, 0), *desc = PyTuple_GetItem(hit, 1);
            if (address == Py_None) {
                Py_DECREF(tid);
                Py_INCREF(desc);
                return desc;
            }
            PyObject *now = PyObject_CallMethodObjArgs(t, s_buffer_address, NULL);
            if (now == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_Exception)) {
                    Py_DECREF(tid);
                    return NULL;
                }
                PyErr_Clear();  /* deallocated since: describe it afresh */
            } else {
                int same = PyObject_RichCompareBool(now, address, Py_EQ);
                Py_DECREF(now);
                if (same < 0) {
                    if (!PyErr_ExceptionMatches(PyExc_Exception)) {
                        Py_DECREF(tid);
                        return NULL;
                    }
                    PyErr_Clear();
                } else if (same) {
                    Py_DECREF(tid);
                    Py_INCREF(desc);
                    return desc;
                }
            }
        }
    }
    PyObject *desc = PyTuple_Size(describer) > 3
                     ? build_bound(PyTuple_GetItem(describer, 3), t, tid)
                     : PyObject_CallFunctionObjArgs(PyTuple_GetItem(describer, 2), t, tid, NULL);
    if (desc != NULL && store(cache, PyTuple_GetItem(describer, 1), tid, desc) < 0)
        Py_CLEAR(desc);
    Py_DECREF(tid);
    return desc;
}

static PyObject *
hp_describe(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *describer, *t;
    if (!PyArg_ParseTuple(args, "O!O", &PyTuple_Type, &describer, &t))
        return NULL;
    if (PyTuple_Size(describer) < 3 || !PyDict_Check(PyTuple_GetItem(describer, 0))
        || !PyDict_Check(PyTuple_GetItem(describer, 1))) {
        PyErr_SetString(PyExc_TypeError, "describe: the describer is (cache, by_buffer, build)");
        return NULL;
    }
    return describe(describer, t);
}

typedef struct {
    PyObject *T, *describer, *inputs, *held;
} Scan;

/* Describes tensor `t` into the scan's inputs (and held, when it has a buffer). */
static int
add_tensor(Scan *sc, PyObject *t)
{
    PyObject *d = describe(sc->describer, t);
    if (d == NULL)
        return -1;
    int r = PyList_Append(sc->inputs, d);
    if (r == 0) {
        if (!PyTuple_Check(d) || PyTuple_Size(d) <= BUFFER) {
            PyErr_SetString(PyExc_TypeError, "a tensor description is not a TensorDesc tuple");
            r = -1;
        } else {
            PyObject *buf = PyTuple_GetItem(d, BUFFER);  /* borrowed */
            if (buf != Py_None) {
                PyObject *pair = PyTuple_Pack(2, t, buf);
                r = pair == NULL ? -1 : PyList_Append(sc->held, pair);
                Py_XDECREF(pair);
            }
        }
    }
    Py_DECREF(d);
    return r;
}

static int
is_scalar(PyObject *a)
{
    return PyLong_CheckExact(a) || PyFloat_CheckExact(a) || PyBool_Check(a)
           || PyUnicode_CheckExact(a);
}

/* 1 when type `ta` is torch.Tensor (cached in `seen`), 0 not, -1 error. */
static int
is_torch_tensor(PyObject *seen, PyObject *ta)
{
    PyObject *flag = PyDict_GetItemWithError(seen, ta);  /* borrowed */
    if (flag != NULL)
        return flag == Py_True;
    if (PyErr_Occurred())
        return -1;
    int r = 0;
    PyObject *name = PyObject_GetAttr(ta, s_name);
    if (name == NULL)
        return -1;
    int eq = PyObject_RichCompareBool(name, s_Tensor, Py_EQ);
    Py_DECREF(name);
    if (eq < 0)
        return -1;
    if (eq) {
        PyObject *module = PyObject_GetAttr(ta, s_module);
        if (module == NULL)
            return -1;
        r = PyObject_RichCompareBool(module, s_torch, Py_EQ);
        Py_DECREF(module);
        if (r < 0)
            return -1;
    }
    if (PyDict_Size(seen) < 10000 && PyDict_SetItem(seen, ta, r ? Py_True : Py_False) < 0)
        return -1;
    return r;
}

static PyObject *
scan(PyObject *T, PyObject *dev_types, PyObject *keys, PyObject *seen, PyObject *describer,
     PyObject *describe_torch, PyObject *device_id, PyObject *instance, PyObject *pos,
     PyObject *kwargs)
{
    if (!PySet_Check(dev_types) || !PyTuple_Check(keys) || !PyDict_Check(seen)
        || !PyTuple_Check(describer) || PyTuple_Size(describer) < 3) {
        PyErr_SetString(PyExc_TypeError, "scan: the bound arguments are not Recorder._scan's");
        return NULL;
    }
    if (!PyTuple_Check(pos)) {
        PyErr_SetString(PyExc_TypeError, "args must be a tuple");
        return NULL;
    }
    Scan sc = {T, describer, PyList_New(0), PyList_New(0)};
    PyObject *scalars = NULL, *device = Py_None, *cq = Py_None, *result = NULL;
    PyObject *items = NULL;
    int has_device_arg = 0;
    Py_INCREF(device);
    Py_INCREF(cq);
    if (sc.inputs == NULL || sc.held == NULL)
        goto done;
    /* (key, value) pairs in the order the Python scan takes them */
    items = PyList_New(0);
    if (items == NULL)
        goto done;
    if (instance != Py_None && (PyObject *)Py_TYPE(instance) == T) {
        PyObject *pair = PyTuple_Pack(2, s_self, instance);
        if (pair == NULL || PyList_Append(items, pair) < 0) {
            Py_XDECREF(pair);
            goto done;
        }
        Py_DECREF(pair);
    }
    Py_ssize_t npos = PyTuple_Size(pos), nkeys = PyTuple_Size(keys);
    for (Py_ssize_t i = 0; i < npos && i < nkeys; i++) {
        PyObject *pair = PyTuple_Pack(2, PyTuple_GetItem(keys, i), PyTuple_GetItem(pos, i));
        if (pair == NULL || PyList_Append(items, pair) < 0) {
            Py_XDECREF(pair);
            goto done;
        }
        Py_DECREF(pair);
    }
    if (kwargs != Py_None) {
        if (!PyDict_Check(kwargs)) {
            PyErr_SetString(PyExc_TypeError, "kwargs must be a dict");
            goto done;
        }
        Py_ssize_t at = 0;
        PyObject *k, *v;
        while (PyDict_Next(kwargs, &at, &k, &v)) {
            PyObject *pair = PyTuple_Pack(2, k, v);
            if (pair == NULL || PyList_Append(items, pair) < 0) {
                Py_XDECREF(pair);
                goto done;
            }
            Py_DECREF(pair);
        }
    }
    Py_ssize_t n = PyList_Size(items);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GetItem(items, i);
        PyObject *key = PyTuple_GetItem(pair, 0), *a = PyTuple_GetItem(pair, 1);
        PyObject *ta = (PyObject *)Py_TYPE(a);
        if (ta == T) {
            if (add_tensor(&sc, a) < 0)
                goto done;
        } else if (is_scalar(a)) {
            if (PyUnicode_Check(key) && PyUnicode_Compare(key, s_cq_id) == 0) {
                Py_INCREF(a);
                SETREF(cq, a);
            }
            if (scalars == NULL && (scalars = PyDict_New()) == NULL)
                goto done;
            if (PyDict_SetItem(scalars, key, a) < 0)
                goto done;
        } else {
            int dev = PySet_Contains(dev_types, ta);
            if (dev < 0)
                goto done;
            if (dev) {
                PyObject *id = PyObject_CallFunctionObjArgs(device_id, a, NULL);
                if (id == NULL)
                    goto done;
                SETREF(device, id);
                has_device_arg = 1;
            } else if (PyList_CheckExact(a) || PyTuple_CheckExact(a)) {
                PyObject *seq = PySequence_Tuple(a);  /* a snapshot, as the Python loop sees */
                if (seq == NULL)
                    goto done;
                Py_ssize_t m = PyTuple_Size(seq);
                if (m && (PyObject *)Py_TYPE(PyTuple_GetItem(seq, 0)) == T) {
                    for (Py_ssize_t j = 0; j < m; j++) {
                        PyObject *x = PyTuple_GetItem(seq, j);
                        if ((PyObject *)Py_TYPE(x) == T && add_tensor(&sc, x) < 0) {
                            Py_DECREF(seq);
                            goto done;
                        }
                    }
                } else if (m <= 16) {
                    int all = 1;
                    for (Py_ssize_t j = 0; j < m && all; j++)
                        all = is_scalar(PyTuple_GetItem(seq, j));
                    if (all) {
                        if (scalars == NULL && (scalars = PyDict_New()) == NULL) {
                            Py_DECREF(seq);
                            goto done;
                        }
                        if (PyDict_SetItem(scalars, key, seq) < 0) {
                            Py_DECREF(seq);
                            goto done;
                        }
                    }
                }
                Py_DECREF(seq);
            } else {
                int torch = is_torch_tensor(seen, ta);
                if (torch < 0)
                    goto done;
                if (torch) {
                    PyObject *d = PyObject_CallFunctionObjArgs(describe_torch, a, NULL);
                    if (d == NULL)
                        goto done;
                    int r = PyList_Append(sc.inputs, d);
                    Py_DECREF(d);
                    if (r < 0)
                        goto done;
                }
            }
        }
    }
    if (device == Py_None) {
        Py_ssize_t m = PyList_Size(sc.inputs);
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *d = PyList_GetItem(sc.inputs, j);
            PyObject *buf = PyTuple_Check(d) && PyTuple_Size(d) > BUFFER
                            ? PyTuple_GetItem(d, BUFFER) : Py_None;
            if (buf != Py_None) {
                PyObject *dev = PySequence_GetItem(buf, 0);
                if (dev == NULL)
                    goto done;
                SETREF(device, dev);
                break;
            }
        }
    }
    result = PyTuple_Pack(6, sc.inputs, scalars ? scalars : Py_None, device, cq,
                           has_device_arg ? Py_True : Py_False, sc.held);
done:
    Py_XDECREF(items);
    Py_XDECREF(sc.inputs);
    Py_XDECREF(sc.held);
    Py_XDECREF(scalars);
    Py_DECREF(device);
    Py_DECREF(cq);
    return result;
}

static PyObject *
hp_scan(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *T, *dev_types, *keys, *seen, *describer, *describe_torch, *device_id;
    PyObject *instance, *pos, *kwargs;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOO", &T, &dev_types, &keys, &seen, &describer,
                          &describe_torch, &device_id, &instance, &pos, &kwargs))
        return NULL;
    return scan(T, dev_types, keys, seen, describer, describe_torch, device_id, instance, pos,
                kwargs);
}

/* scan() with the arguments of Recorder._scan's partial, `bound` (all but the call's). */
static PyObject *
scan_bound(PyObject *bound, PyObject *instance, PyObject *pos, PyObject *kwargs)
{
    if (!PyTuple_Check(bound) || PyTuple_Size(bound) != 7) {
        PyErr_SetString(PyExc_TypeError, "scan: the bound arguments are not Recorder._scan's");
        return NULL;
    }
    PyObject *a[7];
    for (int i = 0; i < 7; i++)
        a[i] = PyTuple_GetItem(bound, i);
    return scan(a[0], a[1], a[2], a[3], a[4], a[5], a[6], instance, pos, kwargs);
}

/* enum_name(value): its cache (id -> (value, name)) first, else the Python function. */
static PyObject *
enum_name(PyObject *names, PyObject *py, PyObject *value)
{
    PyObject *key = PyLong_FromVoidPtr(value);
    if (key == NULL)
        return NULL;
    PyObject *hit = PyDict_GetItemWithError(names, key);  /* borrowed */
    Py_DECREF(key);
    if (hit != NULL && PyTuple_Check(hit) && PyTuple_Size(hit) == 2
        && PyTuple_GetItem(hit, 0) == value) {
        PyObject *name = PyTuple_GetItem(hit, 1);
        Py_INCREF(name);
        return name;
    }
    if (PyErr_Occurred())
        return NULL;
    return PyObject_CallFunctionObjArgs(py, value, NULL);
}

static PyObject *
attr_name(PyObject *names, PyObject *py, PyObject *obj, PyObject *attr, int call)
{
    PyObject *v = call ? PyObject_CallMethodObjArgs(obj, attr, NULL) : PyObject_GetAttr(obj, attr);
    if (v == NULL)
        return NULL;
    PyObject *name = enum_name(names, py, v);
    Py_DECREF(v);
    return name;
}

/* ttnn_versions.tensor_pages(t): (pages, aligned page size), asked of the tensor itself when it
 * has the page methods (every release since 0.66.0 but that one), else of `pages`. */
static PyObject *
pages_of(PyObject *pages, PyObject *t)
{
    PyObject *num = PyObject_GetAttr(t, s_buffer_num_pages);
    if (num == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return NULL;
        PyErr_Clear();
        return PyObject_CallFunctionObjArgs(pages, t, NULL);
    }
    PyObject *n = PyObject_CallNoArgs(num), *size = NULL, *result = NULL;
    Py_DECREF(num);
    PyObject *n_int = n == NULL ? NULL : PyNumber_Long(n);
    Py_XDECREF(n);
    if (n_int != NULL)
        size = PyObject_CallMethodObjArgs(t, s_buffer_aligned_page_size, NULL);
    PyObject *size_int = size == NULL ? NULL : PyNumber_Long(size);
    Py_XDECREF(size);
    if (n_int != NULL && size_int != NULL)
        result = PyTuple_Pack(2, n_int, size_int);
    Py_XDECREF(n_int);
    Py_XDECREF(size_int);
    return result;
}

/* tuple(map(int, t.shape)), or () when that raises an Exception. */
static PyObject *
shape_of(PyObject *t)
{
    PyObject *shape = PyObject_GetAttr(t, s_shape), *out = NULL;
    if (shape != NULL) {
        PyObject *seq = PySequence_Tuple(shape);
        Py_DECREF(shape);
        if (seq != NULL) {
            Py_ssize_t n = PyTuple_Size(seq);
            out = PyTuple_New(n);
            for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
                PyObject *d = PyNumber_Long(PyTuple_GetItem(seq, i));
                if (d == NULL || PyTuple_SetItem(out, i, d) < 0)
                    Py_CLEAR(out);
            }
            Py_DECREF(seq);
        }
    }
    if (out == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            return NULL;
        PyErr_Clear();
        out = PyTuple_New(0);
    }
    return out;
}

static PyObject *
build(PyObject *names, PyObject *py_name, PyObject *configs, PyObject *ids, PyObject *device_id,
      PyObject *entries, PyObject *banks, PyObject *pages, PyObject *fallback, PyObject *t,
      PyObject *tid)
{
    if (!PyDict_Check(names) || !PyDict_Check(configs) || !PyDict_Check(ids)
        || !PyDict_Check(entries) || !PyDict_Check(banks)) {
        PyErr_SetString(PyExc_TypeError, "build: the bound arguments are not TensorDescriber's");
        return NULL;
    }
    PyObject *shape = NULL, *dtype = NULL, *layout = NULL, *storage = NULL, *address = NULL;
    PyObject *mc = NULL, *btype = NULL, *mem_layout = NULL, *config = NULL, *dev = NULL;
    PyObject *device = NULL, *size = NULL, *np = NULL, *result = NULL;
    int use_fallback = 0;
    if ((shape = shape_of(t)) == NULL
        || (dtype = attr_name(names, py_name, t, s_dtype, 0)) == NULL
        || (layout = attr_name(names, py_name, t, s_layout, 0)) == NULL
        || (storage = attr_name(names, py_name, t, s_storage_type, 1)) == NULL)
        goto done;
    int is_device = PyObject_RichCompareBool(storage, s_DEVICE, Py_EQ);
    if (is_device < 0)
        goto done;
    if (!is_device) {
        result = PyTuple_Pack(7, tid, s_host, shape, dtype, layout, Py_None, Py_None);
        goto done;
    }
    address = PyObject_CallMethodObjArgs(t, s_buffer_address, NULL);
    if (address == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            goto done;
        PyErr_Clear();  /* a deallocated device tensor has no buffer */
        result = PyTuple_Pack(7, tid, s_device, shape, dtype, layout, Py_None,
                               Py_None);
        goto done;
    }
    if ((mc = PyObject_CallMethodObjArgs(t, s_memory_config, NULL)) == NULL
        || (btype = attr_name(names, py_name, mc, s_buffer_type, 0)) == NULL
        || (mem_layout = attr_name(names, py_name, mc, s_memory_layout, 0)) == NULL)
        goto done;
    int interleaved = PyObject_RichCompareBool(mem_layout, s_INTERLEAVED, Py_EQ);
    if (interleaved < 0)
        goto done;
    if (!interleaved) {
        use_fallback = 1;
        goto done;
    }
    PyObject *pair = PyTuple_Pack(2, btype, mem_layout);
    if (pair == NULL)
        goto done;
    config = PyDict_GetItemWithError(configs, pair);  /* borrowed */
    Py_DECREF(pair);
    if (config == NULL) {
        use_fallback = !PyErr_Occurred();
        goto done;
    }
    Py_INCREF(config);
    if ((dev = PyObject_CallMethodObjArgs(t, s_device, NULL)) == NULL)
        goto done;
    /* Devices.id_of: its dictionary first */
    PyObject *dev_key = PyLong_FromVoidPtr(dev);
    if (dev_key == NULL)
        goto done;
    device = PyDict_GetItemWithError(ids, dev_key);  /* borrowed */
    Py_DECREF(dev_key);
    if (device != NULL && device != Py_None)
        Py_INCREF(device);
    else if (PyErr_Occurred()
             || (device = PyObject_CallFunctionObjArgs(device_id, dev, NULL)) == NULL)
        goto done;
    if (device == Py_None) {  /* perhaps deallocated already: the Python path decides */
        use_fallback = 1;
        goto done;
    }
    /* Ledger.size_of: the size per bank of a buffer the ledger knows at that place */
    PyObject *place = PyTuple_Pack(3, device, btype, address);
    if (place == NULL)
        goto done;
    PyObject *entry = PyDict_GetItemWithError(entries, place);  /* borrowed */
    Py_DECREF(place);
    if (entry == NULL && PyErr_Occurred())
        goto done;
    size = entry != NULL ? PySequence_GetItem(entry, 1) : Py_None;
    if (size == NULL)
        goto done;
    if (entry == NULL)
        Py_INCREF(size);
    PyObject *page_size = Py_None, *num_pages = Py_None;
    if (size == Py_None) {
        np = pages_of(pages, t);
        if (np == NULL)
            goto done;
        if (!PyTuple_Check(np) || PyTuple_Size(np) != 2) {
            PyErr_SetString(PyExc_TypeError, "tensor_pages must return (pages, page size)");
            goto done;
        }
        num_pages = PyTuple_GetItem(np, 0);
        page_size = PyTuple_GetItem(np, 1);
        /* Devices.num_banks */
        PyObject *bank_key = PyTuple_Pack(2, device, btype), *n_banks;
        if (bank_key == NULL)
            goto done;
        n_banks = PyDict_GetItemWithError(banks, bank_key);  /* borrowed */
        Py_DECREF(bank_key);
        if (n_banks != NULL) {
            Py_INCREF(n_banks);
        } else if (PyErr_Occurred()) {
            goto done;
        } else {
            int l1 = PyUnicode_CompareWithASCIIString(btype, "L1") == 0;
            n_banks = PyLong_FromLong(l1 ? 130 : 8);
            if (n_banks == NULL)
                goto done;
        }
        /* -(-num_pages // banks) * page_size */
        PyObject *neg = PyNumber_Negative(num_pages), *q = NULL, *ceil = NULL;
        if (neg != NULL)
            q = PyNumber_FloorDivide(neg, n_banks);
        if (q != NULL)
            ceil = PyNumber_Negative(q);
        Py_XDECREF(neg);
        Py_XDECREF(q);
        Py_DECREF(n_banks);
        if (ceil == NULL)
            goto done;
        Py_DECREF(size);
        size = PyNumber_Multiply(ceil, page_size);
        Py_DECREF(ceil);
        if (size == NULL)
            goto done;
    }
    PyObject *buffer = PyTuple_Pack(6, device, btype, address, size, page_size,
                                     num_pages);
    if (buffer == NULL)
        goto done;
    result = PyTuple_Pack(7, tid, s_device, shape, dtype, layout, config, buffer);
    Py_DECREF(buffer);
done:
    Py_XDECREF(shape);
    Py_XDECREF(dtype);
    Py_XDECREF(layout);
    Py_XDECREF(storage);
    Py_XDECREF(address);
    Py_XDECREF(mc);
    Py_XDECREF(btype);
    Py_XDECREF(mem_layout);
    Py_XDECREF(config);
    Py_XDECREF(dev);
    Py_XDECREF(device);
    Py_XDECREF(size);
    Py_XDECREF(np);
    if (use_fallback)
        return PyObject_CallFunctionObjArgs(fallback, t, tid, NULL);
    return result;
}

static PyObject *
hp_build(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *a[11];
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOO", &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6],
                          &a[7], &a[8], &a[9], &a[10]))
        return NULL;
    return build(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
}

/* build() with the arguments TensorDescriber's partial binds, `bound` (all but t, tid). */
static PyObject *
build_bound(PyObject *bound, PyObject *t, PyObject *tid)
{
    if (!PyTuple_Check(bound) || PyTuple_Size(bound) != 9) {
        PyErr_SetString(PyExc_TypeError, "build: the bound arguments are not TensorDescriber's");
        return NULL;
    }
    PyObject *a[9];
    for (int i = 0; i < 9; i++)
        a[i] = PyTuple_GetItem(bound, i);
    return build(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], t, tid);
}

/* ---- Recorder.call for an eager op (see `call` at the top) ---- */

enum {
    CTX_RECORDER, CTX_OP, CTX_TL, CTX_CAPTURING, CTX_LIVE, CTX_LEDGER, CTX_OWNER,
    CTX_ENTRIES, CTX_DEATHS, CTX_CACHE, CTX_BY_BUFFER, CTX_SEQ, CTX_T0, CTX_HERE, CTX_SCAN,
    CTX_DESCRIBE, CTX_LOG, CTX_GREW, CTX_PYCALL, CTX_NEW_STATE, CTX_TENSOR, CTX_KIND_TEXTS,
    CTX_CACHE_MISS_NOTE, CTX_DUMPS, CTX_RESERVE, CTX_RELEASE_EVERY, CTX_H2D, CTX_D2H, CTX_EXECUTE,
    CTX_SETTLE, CTX_ON_EXECUTE, CTX_QUEUE, CTX_SETTLED, CTX_AT_END, CTX_SIGNATURES, CTX_ACQUIRE,
    CTX_RELEASE, CTX_SIZE
};

static PyObject *s_off, *s_verifier, *s_regions, *s_per_call_snapshots, *s_callsites, *s_call,
    *s_tid, *s_phase, *s_trace, *s_acquire, *s_release, *s_drain, *s_enabled, *s_dirty,
    *s_generation, *s_defer_many, *s_buffer_unique_id,
    *s_is_allocated, *s_reconcile, *s_broken, *s_end_raised, *s_queue_id, *s_free, *s_alloc,
    *s_eager, *s_capture, *s_replay, *s_ok, *s_B, *s_E, *s_P, *s_trace_id, *s_popleft, *s_dot_record_event, *s_cq, *s_blocking, *s_empty,
    *s__entries, *s__devices, *s_objects, *s_num_entries, *zero, *s__lock, *s_write_many,
    *s_stopped, *s__pending, *s__map, *s__end, *s__released, *s__write_locked, *one;

static int64_t
now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);  /* time.monotonic_ns's clock */
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* 1 when obj.name is true, 0 when false, -1 error. */
static int
attr_true(PyObject *obj, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL)
        return -1;
    int r = PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}

/* 1 when obj.name is None, 0 when not, -1 error. */
static int
attr_none(PyObject *obj, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL)
        return -1;
    int r = v == Py_None;
    Py_DECREF(v);
    return r;
}

static int
call_method_void(PyObject *obj, PyObject *name)
{
    PyObject *r = PyObject_CallMethodObjArgs(obj, name, NULL);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

static int
call_void(PyObject *fn)
{
    PyObject *r = PyObject_CallNoArgs(fn);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* The list item `i` of `lst` plus `delta` (an owner count). */
static int
list_add(PyObject *lst, Py_ssize_t i, long delta)
{
    PyObject *v = PyList_GetItem(lst, i);
    if (v == NULL)
        return -1;
    PyObject *d = PyLong_FromLong(delta);
    if (d == NULL)
        return -1;
    PyObject *sum = PyNumber_Add(v, d);
    Py_DECREF(d);
    if (sum == NULL)
        return -1;
    return PyList_SetItem(lst, i, sum);  /* steals sum */
}

/* changes.append((what, buf)) */
static int
add_change(PyObject *changes, PyObject *what, PyObject *buf)
{
    PyObject *pair = PyTuple_Pack(2, what, buf);
    if (pair == NULL)
        return -1;
    int r = PyList_Append(changes, pair);
    Py_DECREF(pair);
    return r;
}

/* Ledger._drop(entry): the entry's buffer is gone; its (device, type, address, size). */
static PyObject *
drop(PyObject **ctx, PyObject *entry)
{
    if (!PyList_Check(entry) || PyList_Size(entry) < 5) {
        PyErr_SetString(PyExc_TypeError, "a ledger entry is not a list");
        return NULL;
    }
    Py_INCREF(Py_False);
    if (PyList_SetItem(entry, 4, Py_False) < 0)  /* steals the reference */
        return NULL;
    PyObject *key = PyList_GetItem(entry, 0);
    PyObject *now = PyDict_GetItemWithError(ctx[CTX_ENTRIES], key);  /* borrowed */
    if (now == NULL && PyErr_Occurred())
        return NULL;
    if (now == entry && PyDict_DelItem(ctx[CTX_ENTRIES], key) < 0)
        return NULL;
    PyObject *gen = PyObject_GetAttr(ctx[CTX_LEDGER], s_generation), *next = NULL;
    if (gen != NULL) {
        next = PyNumber_Add(gen, one);
        Py_DECREF(gen);
    }
    int r = next == NULL ? -1 : PyObject_SetAttr(ctx[CTX_LEDGER], s_generation, next);
    Py_XDECREF(next);
    if (r < 0)
        return NULL;
    return PyTuple_Pack(4, PyTuple_GetItem(key, 0), PyTuple_GetItem(key, 1),
                         PyTuple_GetItem(key, 2), PyList_GetItem(entry, 1));
}

/* The frees by reference drop since the last call (Ledger.drain) appended to `changes`: one
 * death here, several (sorted by place) by the ledger's own drain. */
static int
add_deaths(PyObject **ctx, PyObject *changes)
{
    Py_ssize_t deaths = PyObject_Size(ctx[CTX_DEATHS]);
    if (deaths <= 0)
        return deaths < 0 ? -1 : 0;
    if (deaths == 1) {
        PyObject *entry = PyObject_CallMethodObjArgs(ctx[CTX_DEATHS], s_popleft, NULL);
        if (entry == NULL)
            return -1;
        int r = list_add(entry, 3, -1);
        PyObject *owners = r < 0 ? NULL : PyList_GetItem(entry, 3);
        int last = owners == NULL ? -1 : PyObject_RichCompareBool(owners, zero, Py_LE);
        int live = last <= 0 ? 0 : PyObject_IsTrue(PyList_GetItem(entry, 4));
        if (last < 0 || live < 0) {
            Py_DECREF(entry);
            return -1;
        }
        if (live) {
            PyObject *gone = drop(ctx, entry);
            r = gone == NULL ? -1 : add_change(changes, s_free, gone);
            Py_XDECREF(gone);
        }
        Py_DECREF(entry);
        return r;
    }
    PyObject *freed = PyObject_CallMethodObjArgs(ctx[CTX_LEDGER], s_drain, NULL);
    if (freed == NULL)
        return -1;
    Py_ssize_t n = PyList_Check(freed) ? PyList_Size(freed) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (add_change(changes, s_free, PyList_GetItem(freed, i)) < 0) {
            Py_DECREF(freed);
            return -1;
        }
    }
    Py_DECREF(freed);
    return 0;
}

/* Ledger.observe(t, buf, changes, output), the same steps. */
static int
observe(PyObject **ctx, PyObject *t, PyObject *buf, PyObject *changes, int output)
{
    PyObject *owner = ctx[CTX_OWNER], *entries = ctx[CTX_ENTRIES], *ledger = ctx[CTX_LEDGER];
    PyObject *ident = NULL, *key = NULL, *uid = NULL, *entry = NULL, *size = NULL;
    int rc = -1;
    if (!PyTuple_Check(buf) || PyTuple_Size(buf) < 4) {
        PyErr_SetString(PyExc_TypeError, "a buffer description is not a tuple");
        return -1;
    }
    size = PyTuple_GetItem(buf, 3);
    if ((ident = PyLong_FromVoidPtr(t)) == NULL
        || (key = PyTuple_GetSlice(buf, 0, 3)) == NULL)
        goto done;
    PyObject *known = PyDict_GetItemWithError(owner, ident);  /* borrowed */
    if (known == NULL && PyErr_Occurred())
        goto done;
    if (known != NULL) {
        int same = PyObject_RichCompareBool(PyList_GetItem(known, 0), key, Py_EQ);
        if (same < 0)
            goto done;
        if (same) {
            int live = PyObject_IsTrue(PyList_GetItem(known, 4));
            if (live < 0)
                goto done;
            if (live) {
                rc = 0;  /* the common case: an input seen before */
                goto done;
            }
        }
        Py_INCREF(known);
        int r = PyDict_DelItem(owner, ident) < 0 || list_add(known, 3, -1) < 0;
        Py_DECREF(known);
        if (r)
            goto done;
    }
    int enabled = attr_true(ledger, s_enabled);
    if (enabled <= 0) {
        rc = enabled;
        goto done;
    }
    PyObject *raw = PyObject_CallMethodObjArgs(t, s_buffer_unique_id, NULL);
    if (raw != NULL) {
        uid = PyNumber_Long(raw);
        Py_DECREF(raw);
    }
    if (uid == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            goto done;
        PyErr_Clear();
        uid = Py_None;
        Py_INCREF(uid);
    }
    entry = PyDict_GetItemWithError(entries, key);  /* borrowed, then owned below */
    if (entry == NULL && PyErr_Occurred())
        goto done;
    Py_XINCREF(entry);
    int keep = 0;
    if (entry != NULL) {
        PyObject *euid = PyList_GetItem(entry, 2);
        int eq = PyObject_RichCompareBool(euid, uid, Py_EQ);
        if (eq < 0)
            goto done;
        keep = eq || (euid == Py_None && !output) || uid == Py_None;
        if (keep && euid == Py_None) {
            Py_INCREF(uid);
            if (PyList_SetItem(entry, 2, uid) < 0)
                goto done;
        }
    }
    if (!keep) {
        if (entry != NULL) {
            PyObject *gone = drop(ctx, entry);
            int r = gone == NULL ? -1 : add_change(changes, s_free, gone);
            Py_XDECREF(gone);
            if (r < 0)
                goto done;
        }
        Py_XDECREF(entry);
        entry = Py_BuildValue("[OOOiO]", key, size, uid, 0, Py_True);
        if (entry == NULL || PyDict_SetItem(entries, key, entry) < 0)
            goto done;
        PyObject *gen = PyObject_GetAttr(ledger, s_generation), *next = NULL;
        if (gen != NULL) {
            next = PyNumber_Add(gen, one);
            Py_DECREF(gen);
        }
        int r = next == NULL ? -1 : PyObject_SetAttr(ledger, s_generation, next);
        Py_XDECREF(next);
        if (r < 0)
            goto done;
        PyObject *span = PyTuple_Pack(4, PyTuple_GetItem(key, 0), PyTuple_GetItem(key, 1),
                                       PyTuple_GetItem(key, 2), size);
        r = span == NULL ? -1 : add_change(changes, s_alloc, span);
        Py_XDECREF(span);
        if (r < 0)
            goto done;
    }
    if (list_add(entry, 3, 1) < 0 || PyDict_SetItem(owner, ident, entry) < 0)
        goto done;
    rc = 0;
done:
    Py_XDECREF(ident);
    Py_XDECREF(key);
    Py_XDECREF(uid);
    Py_XDECREF(entry);
    return rc;
}

/* Ledger.freed_inputs: the held inputs whose buffer the call freed, appended as frees. */
static int
freed_inputs(PyObject **ctx, PyObject *held, PyObject *changes)
{
    Py_ssize_t n = PyList_Size(held);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyTuple_GetItem(PyList_GetItem(held, i), 0);
        PyObject *ident = PyLong_FromVoidPtr(t);
        if (ident == NULL)
            return -1;
        PyObject *entry = PyDict_GetItemWithError(ctx[CTX_OWNER], ident);  /* borrowed */
        Py_DECREF(ident);
        if (entry == NULL) {
            if (PyErr_Occurred())
                return -1;
            continue;
        }
        int live = PyObject_IsTrue(PyList_GetItem(entry, 4));
        if (live < 0)
            return -1;
        if (!live)
            continue;
        int allocated = 1;
        PyObject *r = PyObject_CallMethodObjArgs(t, s_is_allocated, NULL);
        if (r == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_Exception))
                return -1;
            PyErr_Clear();  /* cannot tell: the tensors' deaths and snapshots will */
        } else {
            allocated = PyObject_IsTrue(r);
            Py_DECREF(r);
            if (allocated < 0)
                return -1;
        }
        if (!allocated) {
            PyObject *gone = drop(ctx, entry);
            int rr = gone == NULL ? -1 : add_change(changes, s_free, gone);
            Py_XDECREF(gone);
            if (rr < 0)
                return -1;
        }
    }
    return 0;
}

/* TensorDescriber.forget: the cached descriptions of tensors on the freed buffers. */
static int
forget(PyObject **ctx, PyObject *buf)
{
    PyObject *key = PyTuple_GetSlice(buf, 0, 3);
    if (key == NULL)
        return -1;
    PyObject *tids = PyDict_GetItemWithError(ctx[CTX_BY_BUFFER], key);  /* borrowed */
    if (tids == NULL) {
        Py_DECREF(key);
        return PyErr_Occurred() ? -1 : 0;
    }
    Py_INCREF(tids);
    int r = PyDict_DelItem(ctx[CTX_BY_BUFFER], key);
    Py_DECREF(key);
    Py_ssize_t n = r < 0 ? 0 : PySequence_Size(tids);
    for (Py_ssize_t i = 0; r == 0 && i < n; i++) {
        PyObject *tid = PySequence_GetItem(tids, i);
        if (tid == NULL) {
            r = -1;
            break;
        }
        if (PyDict_DelItem(ctx[CTX_CACHE], tid) < 0) {
            if (PyErr_ExceptionMatches(PyExc_KeyError))
                PyErr_Clear();
            else
                r = -1;
        }
        Py_DECREF(tid);
    }
    Py_DECREF(tids);
    return r;
}

/* MemoryRecords._change_records: ALLOC/FREE point records for `changes`. */
static PyObject *
change_records(PyObject **ctx, PyObject *changes, PyObject *parent, PyObject *phase,
               PyObject *trace, PyObject *tid, PyObject *region, int64_t t0)
{
    PyObject *t = PyLong_FromLongLong(now_ns() - t0);
    if (t == NULL)
        return NULL;
    PyObject *capturing = phase != s_replay && parent == Py_None ? ctx[CTX_CAPTURING] : NULL;
    Py_ssize_t n = PyList_Size(changes);
    PyObject *records = PyList_New(0);
    for (Py_ssize_t i = 0; records != NULL && i < n; i++) {
        PyObject *c = PyList_GetItem(changes, i);
        if (PyUnicode_Compare(PyTuple_GetItem(c, 0), s_free) == 0
            && forget(ctx, PyTuple_GetItem(c, 1)) < 0)
            Py_CLEAR(records);
    }
    for (Py_ssize_t i = 0; records != NULL && i < n; i++) {
        PyObject *c = PyList_GetItem(changes, i);
        PyObject *kind = PyTuple_GetItem(c, 0), *buf = PyTuple_GetItem(c, 1);
        PyObject *args = PyTuple_Size(c) > 2 ? PyTuple_GetItem(c, 2) : Py_None;
        PyObject *dev = PySequence_GetItem(buf, 0);
        PyObject *ph = phase, *tr = trace, *seq = NULL, *rec = NULL;
        if (dev == NULL) {
            Py_CLEAR(records);
            break;
        }
        if (capturing != NULL) {
            PyObject *hit = PyDict_GetItemWithError(capturing, dev);  /* borrowed */
            if (hit == NULL && PyErr_Occurred()) {
                Py_DECREF(dev);
                Py_CLEAR(records);
                break;
            }
            ph = hit != NULL && hit != Py_None ? s_capture : s_eager;
            tr = hit != NULL && hit != Py_None ? hit : Py_None;
        }
        seq = PyIter_Next(ctx[CTX_SEQ]);
        if (seq != NULL)
            rec = PyTuple_Pack(14, s_P, seq, parent, t, tid, kind, kind, ph,
                                dev, tr, Py_None, args, region, buf);
        if (rec == NULL || PyList_Append(records, rec) < 0)
            Py_CLEAR(records);
        Py_XDECREF(rec);
        Py_XDECREF(seq);
        Py_DECREF(dev);
    }
    Py_DECREF(t);
    return records;
}

/* The recorder's `_broken(exc)` for the error being raised, which is cleared: 0. An error
 * that is no Exception (KeyboardInterrupt, SystemExit) stays raised: -1, as the Python path's
 * `except Exception` lets it through. */
static int
report_bug(PyObject **ctx)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL)
        PyException_SetTraceback(value, tb);
    if (value != NULL && PyObject_IsInstance(value, PyExc_Exception) == 1) {
        PyObject *r = PyObject_CallMethodObjArgs(ctx[CTX_RECORDER], s_broken, value, NULL);
        Py_XDECREF(r);
        PyErr_Clear();
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return 0;
}

/* LogWriter.write_many(records): the same steps, its mapping appended to here when it has
 * room; mapping or growing it, a record marshal refuses, a closed log are log.py's. */
static int
log_write(PyObject **ctx, PyObject *records)
{
    PyObject *log = ctx[CTX_LOG], *map = PyObject_GetAttr(log, s__map);
    if (map == NULL)
        return -1;
    if (map == Py_None) {  /* not mapped yet, closed or detached: log.py decides */
        Py_DECREF(map);
        PyObject *r = PyObject_CallMethodObjArgs(log, s_write_many, records, NULL);
        Py_XDECREF(r);
        return r == NULL ? -1 : 0;
    }
    Py_DECREF(map);
    map = NULL;
    PyObject *lock = PyObject_GetAttr(log, s__lock), *stopped = NULL, *pending = NULL;
    PyObject *end_obj = NULL;
    int rc = -1;
    if (lock == NULL || call_method_void(lock, s_acquire) < 0) {
        Py_XDECREF(lock);
        return -1;
    }
    /* read again under the lock: another thread may have grown the mapping or stopped */
    if ((stopped = PyObject_GetAttr(log, s_stopped)) == NULL
        || (map = PyObject_GetAttr(log, s__map)) == NULL)
        goto done;
    if (stopped != Py_None) {  /* the program runs on unrecorded */
        rc = 0;
        goto done;
    }
    if ((pending = PyObject_GetAttr(log, s__pending)) == NULL || !PyList_Check(pending))
        goto done;
    Py_ssize_t n = PyList_Size(pending);
    if (PyList_SetSlice(pending, n, n, records) < 0)
        goto done;
    if ((end_obj = PyObject_GetAttr(log, s__end)) == NULL)
        goto done;
    if (map != Py_None) {
        Py_ssize_t start = PyLong_AsSsize_t(end_obj);
        if (start == -1 && PyErr_Occurred())
            goto done;
        Py_ssize_t end = append_frame(map, start, PyLong_AsSsize_t(ctx[CTX_RESERVE]), pending,
                                      ctx[CTX_DUMPS]);
        if (end < 0) {
            if (!PyErr_ExceptionMatches(PyExc_ValueError))
                goto done;
            PyErr_Clear();  /* a record marshal refuses: log.py drops it alone */
            end = 0;
        }
        if (end > 0) {
            PyObject *new_end = PyLong_FromSsize_t(end);
            if (new_end == NULL || PyList_SetSlice(pending, 0, PyList_Size(pending), NULL) < 0
                || PyObject_SetAttr(log, s__end, new_end) < 0) {
                Py_XDECREF(new_end);
                goto done;
            }
            Py_DECREF(new_end);
            PyObject *released = PyObject_GetAttr(log, s__released);
            if (released == NULL)
                goto done;
            Py_ssize_t below = PyLong_AsSsize_t(released);
            Py_DECREF(released);
            if (start - below >= PyLong_AsSsize_t(ctx[CTX_RELEASE_EVERY])) {
                PyObject *r = PyObject_CallMethod(log, "_release_below", "n", start);
                if (r == NULL)
                    goto done;
                Py_DECREF(r);
            }
            rc = 0;
            goto done;
        }
    }
    PyObject *r = PyObject_CallMethodObjArgs(log, s__write_locked, pending, NULL);
    if (r == NULL)
        goto done;
    Py_DECREF(r);
    rc = 0;
done:
    {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (call_method_void(lock, s_release) < 0)
            PyErr_Clear();
        PyErr_Restore(type, value, tb);
    }
    Py_DECREF(lock);
    Py_XDECREF(stopped);
    Py_XDECREF(pending);
    Py_XDECREF(map);
    Py_XDECREF(end_obj);
    return rc;
}

/* recorder.py's `_settle(kind, name, has_device_arg, inputs)`, remembered per (kind, name,
 * has_device_arg, has_device_input): refine() depends on nothing else. */
static PyObject *
settle(PyObject **ctx, PyObject *kind, PyObject *name, PyObject *has_dev, PyObject *inputs)
{
    int has_input = 0;
    Py_ssize_t n = PyList_Size(inputs);
    for (Py_ssize_t i = 0; i < n && !has_input; i++) {
        PyObject *d = PyList_GetItem(inputs, i);
        if (PyTuple_Check(d) && PyTuple_Size(d) > BUFFER) {
            has_input = PyObject_IsTrue(PyTuple_GetItem(d, BUFFER));
            if (has_input < 0)
                return NULL;
        }
    }
    PyObject *kind_id = PyLong_FromVoidPtr(kind);
    if (kind_id == NULL)
        return NULL;
    PyObject *key = PyTuple_Pack(4, kind_id, name, has_dev, has_input ? Py_True : Py_False);
    Py_DECREF(kind_id);
    if (key == NULL)
        return NULL;
    PyObject *hit = PyDict_GetItemWithError(ctx[CTX_SETTLED], key);  /* borrowed */
    if (hit != NULL) {
        Py_DECREF(key);
        Py_INCREF(hit);
        return hit;
    }
    PyObject *settled = PyErr_Occurred() ? NULL
                        : PyObject_CallFunctionObjArgs(ctx[CTX_SETTLE], kind, name, has_dev,
                                                       inputs, NULL);
    if (settled != NULL && PyDict_Size(ctx[CTX_SETTLED]) < 10000
        && PyDict_SetItem(ctx[CTX_SETTLED], key, settled) < 0)
        Py_CLEAR(settled);
    Py_DECREF(key);
    return settled;
}

/* traces.py's trace_id(value): int(value), None when that raises TypeError or ValueError. */
static PyObject *
trace_id(PyObject *value)
{
    PyObject *id = PyNumber_Long(value);
    if (id == NULL && (PyErr_ExceptionMatches(PyExc_TypeError)
                       || PyErr_ExceptionMatches(PyExc_ValueError))) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return id;
}

/* Traces.phase for a call outside any capture: (phase, trace), new references in `out`. */
static int
phase_of(PyObject **ctx, PyObject *kind, PyObject *pos, PyObject *kwargs, PyObject **phase,
         PyObject **trace)
{
    if (kind != ctx[CTX_EXECUTE]) {
        Py_INCREF(s_eager);
        Py_INCREF(Py_None);
        *phase = s_eager;
        *trace = Py_None;
        return 0;
    }
    PyObject *value = PyTuple_Size(pos) > 1 ? PyTuple_GetItem(pos, 1) : NULL;  /* borrowed */
    if (value == NULL && PyDict_Check(kwargs)) {
        value = PyDict_GetItemWithError(kwargs, s_trace_id);
        if (value == NULL && PyErr_Occurred())
            return -1;
    }
    *trace = trace_id(value != NULL ? value : Py_None);
    if (*trace == NULL)
        return -1;
    Py_INCREF(s_replay);
    *phase = s_replay;
    return 0;
}

/* 1 when the replay of (device, trace) needs Referrers.on_execute's look: buffers were
 * allocated or freed since its capture ended; 0 for the common replay loop; -1 error. */
static int
needs_referrers(PyObject **ctx, PyObject *device, PyObject *trace)
{
    PyObject *key = PyTuple_Pack(2, device, trace);
    if (key == NULL)
        return -1;
    PyObject *known = PyDict_GetItemWithError(ctx[CTX_AT_END], key);  /* borrowed */
    Py_DECREF(key);
    if (known == NULL)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *generation = PyObject_GetAttr(ctx[CTX_LEDGER], s_generation);
    if (generation == NULL)
        return -1;
    int same = PyObject_RichCompareBool(PyTuple_GetItem(known, 0), generation, Py_EQ);
    Py_DECREF(generation);
    return same < 0 ? -1 : !same;
}

/* 1 when this call takes the C path, 0 when the Python `call` takes it, -1 error. */
static int
eligible(PyObject **ctx, PyObject *kind)
{
    if (kind != ctx[CTX_OP] && kind != ctx[CTX_H2D] && kind != ctx[CTX_D2H]
        && kind != ctx[CTX_EXECUTE])
        return 0;
    PyObject *rec = ctx[CTX_RECORDER];
    int r;
    if ((r = attr_true(rec, s_off)) != 0 || (r = attr_none(rec, s_verifier)) != 1
        || (r = attr_none(rec, s_regions)) != 1 || (r = attr_true(rec, s_per_call_snapshots)) != 0)
        return r < 0 ? -1 : 0;
    if (PyDict_Size(ctx[CTX_CAPTURING]) != 0)
        return 0;
    PyObject *parent = PyObject_GetAttr(ctx[CTX_TL], s_call);
    if (parent == NULL) {  /* a thread's first call: the Python path sets its state up */
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(parent);
    if (parent != Py_None)
        return 0;
    PyObject *regions = PyObject_GetAttr(ctx[CTX_TL], s_regions);
    if (regions == NULL)
        return -1;
    r = PyObject_IsTrue(regions);
    Py_DECREF(regions);
    return r < 0 ? -1 : !r;
}

static int
set_thread_call(PyObject **ctx, PyObject *seq, PyObject *phase, PyObject *trace,
                PyObject *device)
{
    PyObject *tl = ctx[CTX_TL];
    return PyObject_SetAttr(tl, s_call, seq) < 0 || PyObject_SetAttr(tl, s_phase, phase) < 0
           || PyObject_SetAttr(tl, s_trace, trace) < 0
           || PyObject_SetAttr(tl, s_device, device) < 0 ? -1 : 0;
}

/* 1 when the call names a queue by keyword (cq_id / queue_id), 0 not, -1 error. */
static int
names_queue(PyObject *kwargs)
{
    if (kwargs == NULL)
        return 0;
    int r = PyDict_Contains(kwargs, s_cq_id);
    return r != 0 ? r : PyDict_Contains(kwargs, s_queue_id);
}

/* The outputs of `result` described (and each new buffer observed into `changes`). */
static PyObject *
outputs(PyObject **ctx, PyObject *result, PyObject *changes)
{
    PyObject *T = ctx[CTX_TENSOR], *tensors;
    if ((PyObject *)Py_TYPE(result) == T) {
        tensors = PyTuple_Pack(1, result);
    } else if ((PyList_CheckExact(result) || PyTuple_CheckExact(result))
               && PySequence_Size(result) > 0) {
        PyObject *seq = PySequence_Tuple(result);
        if (seq == NULL)
            return NULL;
        if ((PyObject *)Py_TYPE(PyTuple_GetItem(seq, 0)) != T) {
            Py_DECREF(seq);
            return PyTuple_New(0);
        }
        tensors = PyList_New(0);
        Py_ssize_t n = PyTuple_Size(seq);
        for (Py_ssize_t i = 0; tensors != NULL && i < n; i++) {
            PyObject *x = PyTuple_GetItem(seq, i);
            if ((PyObject *)Py_TYPE(x) == T && PyList_Append(tensors, x) < 0)
                Py_CLEAR(tensors);
        }
        Py_DECREF(seq);
        if (tensors != NULL)
            SETREF(tensors, PySequence_Tuple(tensors));
    } else {
        return PyTuple_New(0);
    }
    if (tensors == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_Size(tensors);
    PyObject *out = PyTuple_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *d = describe(ctx[CTX_DESCRIBE], PyTuple_GetItem(tensors, i));
        if (d == NULL || PyTuple_SetItem(out, i, d) < 0)
            Py_CLEAR(out);
    }
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *d = PyTuple_GetItem(out, i);
        PyObject *buf = PyTuple_Check(d) && PyTuple_Size(d) > BUFFER ? PyTuple_GetItem(d, BUFFER)
                                                                     : Py_None;
        if (buf != Py_None && observe(ctx, PyTuple_GetItem(tensors, i), buf, changes, 1) < 0)
            Py_CLEAR(out);
    }
    Py_DECREF(tensors);
    return out;
}

/* queues.py's _int: int(value), None for None, a bool, or what int() refuses. */
static PyObject *
as_queue_int(PyObject *value)
{
    if (value == NULL || value == Py_None || PyBool_Check(value))
        Py_RETURN_NONE;
    PyObject *v = PyNumber_Long(value);
    if (v == NULL && (PyErr_ExceptionMatches(PyExc_TypeError)
                      || PyErr_ExceptionMatches(PyExc_ValueError))) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return v;
}

/* kwargs.get(a, kwargs.get(b)), borrowed (NULL: neither); -1 on error in `err`. */
static PyObject *
kw_get2(PyObject *kwargs, PyObject *a, PyObject *b, int *err)
{
    *err = 0;
    if (!PyDict_Check(kwargs))
        return NULL;
    PyObject *v = PyDict_GetItemWithError(kwargs, a);
    if (v == NULL && !PyErr_Occurred() && b != NULL)
        v = PyDict_GetItemWithError(kwargs, b);
    if (v == NULL && PyErr_Occurred())
        *err = -1;
    return v;
}

/* queues.queue_facts for the calls that name no event (the replay loop's): {"cq", "blocking"}
 * or None, a new reference; NULL with an error; *ask = 1 (and NULL, no error) for the event
 * calls (record_event, wait_for_event, event_synchronize), which the Python one answers. */
static PyObject *
queue_facts(PyObject **ctx, PyObject *name, PyObject *pos, PyObject *kwargs, int *ask)
{
    *ask = 0;
    Py_ssize_t n = PyUnicode_GetLength(name);
    Py_ssize_t dot = n < 0 ? -2 : PyUnicode_FindChar(name, '.', 0, n, -1);
    if (dot == -2)
        return NULL;
    PyObject *shortname = PyUnicode_Substring(name, dot + 1, n);
    if (shortname == NULL)
        return NULL;
    PyObject *sig = PyDict_GetItemWithError(ctx[CTX_SIGNATURES], shortname);  /* borrowed */
    Py_DECREF(shortname);
    if (sig == NULL && PyErr_Occurred())
        return NULL;
    int err;
    PyObject *cq = kw_get2(kwargs, s_cq_id, s_queue_id, &err), *facts = NULL;
    if (err)
        return NULL;
    if (sig != NULL) {
        if (!PyTuple_Check(sig) || PyTuple_Size(sig) != 4 || PyTuple_GetItem(sig, 2) != Py_None
            || PyUnicode_CompareWithASCIIString(name, "record_event") == 0
            || (dot >= 0 && PyUnicode_Tailmatch(name, s_dot_record_event, 0, n, 1))) {
            *ask = 1;
            return NULL;
        }
        PyObject *cq_at = PyTuple_GetItem(sig, 0);
        if ((cq == NULL || cq == Py_None) && cq_at != Py_None) {
            Py_ssize_t at = PyLong_AsSsize_t(cq_at);
            if (at == -1 && PyErr_Occurred())
                return NULL;
            if (PyTuple_Size(pos) > at)
                cq = PyTuple_GetItem(pos, at);
        }
    }
    PyObject *cq_value = as_queue_int(cq);
    if (cq_value == NULL || (facts = PyDict_New()) == NULL)
        goto fail;
    if (cq_value != Py_None && PyDict_SetItem(facts, s_cq, cq_value) < 0)
        goto fail;
    PyObject *blocking_default = sig != NULL ? PyTuple_GetItem(sig, 3) : Py_None;
    if (blocking_default != Py_None) {
        PyObject *blocking = PyDict_Check(kwargs) ? PyDict_GetItemWithError(kwargs, s_blocking)
                                                  : NULL;
        if (blocking == NULL && PyErr_Occurred())
            goto fail;
        PyObject *blocking_at = PyTuple_GetItem(sig, 1);
        if ((blocking == NULL || blocking == Py_None) && blocking_at != Py_None) {
            Py_ssize_t at = PyLong_AsSsize_t(blocking_at);
            if (at == -1 && PyErr_Occurred())
                goto fail;
            if (PyTuple_Size(pos) > at)
                blocking = PyTuple_GetItem(pos, at);
        }
        int blocks = blocking == NULL || blocking == Py_None ? PyObject_IsTrue(blocking_default)
                                                             : PyObject_IsTrue(blocking);
        if (blocks < 0 || (!blocks && PyDict_SetItem(facts, s_blocking, Py_False) < 0))
            goto fail;
    }
    Py_DECREF(cq_value);
    if (PyDict_Size(facts) == 0) {
        Py_DECREF(facts);
        Py_RETURN_NONE;
    }
    return facts;
fail:
    Py_XDECREF(cq_value);
    Py_XDECREF(facts);
    return NULL;
}

static PyObject *
hp_queue_facts(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *signatures, *name, *pos, *kwargs;
    if (!PyArg_ParseTuple(args, "O!UO!O!", &PyDict_Type, &signatures, &name, &PyTuple_Type, &pos,
                          &PyDict_Type, &kwargs))
        return NULL;
    PyObject *ctx[CTX_SIZE] = {NULL};
    ctx[CTX_SIGNATURES] = signatures;
    int ask;
    PyObject *facts = queue_facts(ctx, name, pos, kwargs, &ask);
    if (ask)
        return PyUnicode_FromString("ask");
    return facts;
}

/* EntryCount.grew: how many program-cache entries the open devices gained since the last
 * look (0 once a device cannot say). */
static PyObject *
cache_grew(PyObject **ctx)
{
    PyObject *count = ctx[CTX_GREW], *devices = NULL, *objects = NULL, *seq = NULL;
    PyObject *before = PyObject_GetAttr(count, s__entries), *result = NULL;
    if (before == NULL)
        return NULL;
    long long was = PyLong_AsLongLong(before);
    Py_DECREF(before);
    if (was == -1 && PyErr_Occurred())
        return NULL;
    if (was == -2)  /* EntryCount._UNSUPPORTED */
        return PyLong_FromLong(0);
    if ((devices = PyObject_GetAttr(count, s__devices)) == NULL
        || (objects = PyObject_GetAttr(devices, s_objects)) == NULL
        || (seq = PySequence_Tuple(objects)) == NULL)
        goto done;
    long long total = 0;
    for (Py_ssize_t i = 0; i < PyTuple_Size(seq); i++) {
        PyObject *n = PyObject_CallMethodObjArgs(PyTuple_GetItem(seq, i), s_num_entries, NULL);
        PyObject *as_int = n == NULL ? NULL : PyNumber_Long(n);
        Py_XDECREF(n);
        long long v = as_int == NULL ? -1 : PyLong_AsLongLong(as_int);
        Py_XDECREF(as_int);
        if (v == -1 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_Exception))
                goto done;
            PyErr_Clear();  /* a backend without the count is not asked again */
            PyObject *unsupported = PyLong_FromLong(-2);
            if (unsupported != NULL && PyObject_SetAttr(count, s__entries, unsupported) == 0)
                result = PyLong_FromLong(0);
            Py_XDECREF(unsupported);
            goto done;
        }
        total += v;
    }
    PyObject *now = PyLong_FromLongLong(total);
    if (now == NULL || PyObject_SetAttr(count, s__entries, now) < 0) {
        Py_XDECREF(now);
        goto done;
    }
    Py_DECREF(now);
    long long grew = was >= 0 ? total - was : 0;
    result = PyLong_FromLongLong(grew > 0 ? grew : 0);
done:
    Py_XDECREF(devices);
    Py_XDECREF(objects);
    Py_XDECREF(seq);
    return result;
}

/* After the op returned: its frees, outputs and allocations, and the END record. */
typedef struct {
    PyObject *seq, *kind, *phase, *trace, *device, *tid, *held, *name, *kwargs;
} Call;

static int
end_returned(PyObject **ctx, Call *c, PyObject *result, PyObject *pos, PyObject *kw, int64_t t0)
{
    PyObject *changes = NULL, *out = NULL, *records = NULL, *end = NULL, *rec = NULL;
    PyObject *grew_obj = NULL, *queue = NULL, *extra = Py_None;
    PyObject *seq = c->seq, *device = c->device, *tid = c->tid, *held = c->held;
    int rc = -1, locked = 0, is_op = c->kind == ctx[CTX_OP];
    Py_INCREF(extra);
    if ((end = PyLong_FromLongLong(now_ns() - t0)) == NULL)
        goto done;
    int queued = is_op ? names_queue(kw) : 1;
    if (queued < 0)
        goto done;
    if (queued) {  /* TR012: the call's queue, blocking flag and event */
        int ask;
        queue = queue_facts(ctx, is_op ? s_empty : c->name, pos, c->kwargs, &ask);
        if (ask)
            queue = PyObject_CallFunctionObjArgs(ctx[CTX_QUEUE], c->kind, c->name, pos, c->kwargs,
                                                 result, NULL);
        if (queue == NULL)
            goto done;
        if (queue != Py_None) {
            PyObject *e = Py_BuildValue("{sO}", "queue", queue);
            if (e == NULL)
                goto done;
            SETREF(extra, e);
        }
    }
    if (call_void(ctx[CTX_ACQUIRE]) < 0)
        goto done;
    locked = 1;
    if ((changes = PyList_New(0)) == NULL || add_deaths(ctx, changes) < 0)
        goto done;
    if (PyList_Size(held) && freed_inputs(ctx, held, changes) < 0)
        goto done;
    if ((out = outputs(ctx, result, changes)) == NULL)
        goto done;
    grew_obj = is_op ? cache_grew(ctx) : PyLong_FromLong(0);
    if (grew_obj == NULL)
        goto done;
    int grew = PyObject_IsTrue(grew_obj);
    if (grew < 0)
        goto done;
    if (grew) {  /* kernel binaries: the allocator's view shows them */
        PyObject *r = PyObject_CallMethodObjArgs(ctx[CTX_RECORDER], s_reconcile, changes, NULL);
        if (r == NULL)
            goto done;
        Py_DECREF(r);
    }
    if (PyList_Size(changes)) {
        records = change_records(ctx, changes, seq, c->phase, c->trace, tid, Py_None, t0);
    } else {
        records = PyList_New(0);
    }
    if (records == NULL)
        goto done;
    if (grew && PyDict_Size(ctx[CTX_LIVE])) {
        PyObject *note_seq = PyIter_Next(ctx[CTX_SEQ]);
        if (note_seq == NULL)
            goto done;
        PyObject *note = PyObject_CallFunctionObjArgs(ctx[CTX_CACHE_MISS_NOTE], note_seq, seq, end,
                                                      tid, c->phase, device, c->trace, Py_None,
                                                      grew_obj, NULL);
        Py_DECREF(note_seq);
        int r = note == NULL ? -1 : PyList_Append(records, note);
        Py_XDECREF(note);
        if (r < 0)
            goto done;
    }
    rec = PyTuple_Pack(9, s_E, seq, end, s_ok, Py_None, out, device, c->trace,
                        extra);
    if (rec == NULL || PyList_Append(records, rec) < 0)
        goto done;
    if (log_write(ctx, records) < 0)
        goto done;
    rc = 0;
done:
    if (locked) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (call_void(ctx[CTX_RELEASE]) < 0)
            PyErr_Clear();
        PyErr_Restore(type, value, tb);
    }
    Py_XDECREF(changes);
    Py_XDECREF(out);
    Py_XDECREF(records);
    Py_XDECREF(end);
    Py_XDECREF(rec);
    Py_XDECREF(grew_obj);
    Py_XDECREF(queue);
    Py_DECREF(extra);
    return rc;
}

static PyObject *
hp_call(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError,
                        "call(ctx, name, kind, wrapped, instance, args: tuple, kwargs)");
        return NULL;
    }
    PyObject *ctx_tuple = args[0], *name = args[1], *kind = args[2], *wrapped = args[3];
    PyObject *instance = args[4], *pos = args[5], *kwargs = args[6];
    if (PyTuple_Size(ctx_tuple) != CTX_SIZE) {
        PyErr_SetString(PyExc_TypeError, "call: the context is not recorder.py's");
        return NULL;
    }
    PyObject *ctx[CTX_SIZE];
    for (int i = 0; i < CTX_SIZE; i++)
        ctx[i] = PyTuple_GetItem(ctx_tuple, i);
    PyObject *kw = kwargs == Py_None || (PyDict_Check(kwargs) && PyDict_Size(kwargs) == 0)
                   ? NULL : kwargs;
    int fast = eligible(ctx, kind);
    if (fast < 0) {
        if (report_bug(ctx) < 0)
            return NULL;
        fast = 0;
    }
    if (!fast)
        return PyObject_CallFunctionObjArgs(ctx[CTX_PYCALL], name, kind, wrapped, instance, pos,
                                            kwargs, NULL);
    int64_t t0 = PyLong_AsLongLong(ctx[CTX_T0]);
    PyObject *tid = NULL, *site = Py_None, *changes = NULL, *scanned = NULL, *seq = NULL;
    PyObject *inputs = NULL, *begin = NULL, *held = NULL, *device = Py_None, *result = NULL;
    PyObject *phase = s_eager, *trace = Py_None;
    int locked = 0, began = 0, was_op = kind == ctx[CTX_OP];
    Py_INCREF(site);
    Py_INCREF(device);
    Py_INCREF(kind);
    Py_INCREF(phase);
    Py_INCREF(trace);
    if ((tid = PyObject_GetAttr(ctx[CTX_TL], s_tid)) == NULL)
        goto begun;
    int callsites = attr_true(ctx[CTX_RECORDER], s_callsites);
    if (callsites < 0)
        goto begun;
    if (callsites) {
        PyObject *frame = (PyObject *)PyEval_GetFrame();  /* borrowed: the caller's frame */
        PyObject *sid = here_bound(ctx[CTX_HERE], frame ? frame : Py_None);
        if (sid == NULL)
            goto begun;
        SETREF(site, sid);
    }
    if (call_void(ctx[CTX_ACQUIRE]) < 0)
        goto begun;
    locked = 1;
    if ((changes = PyList_New(0)) == NULL || add_deaths(ctx, changes) < 0)
        goto begun;
    scanned = scan_bound(ctx[CTX_SCAN], instance, pos, kw ? kw : Py_None);
    if (scanned == NULL)
        goto begun;
    if (!PyTuple_Check(scanned) || PyTuple_Size(scanned) != 6) {
        PyErr_SetString(PyExc_TypeError, "the argument scan returned no 6-tuple");
        goto begun;
    }
    held = PyTuple_GetItem(scanned, 5);
    Py_INCREF(held);
    SETREF(device, PyTuple_GetItem(scanned, 2));
    Py_INCREF(device);
    Py_ssize_t nheld = PyList_Size(held);
    if (nheld) {
        Py_ssize_t before = PyList_Size(changes);
        for (Py_ssize_t i = 0; i < nheld; i++) {
            PyObject *pair = PyList_GetItem(held, i);
            if (observe(ctx, PyTuple_GetItem(pair, 0), PyTuple_GetItem(pair, 1), changes, 0) < 0)
                goto begun;
        }
        if (PyList_Size(changes) > before  /* a buffer no recorded call returned */
            && PyObject_SetAttr(ctx[CTX_LEDGER], s_dirty, Py_True) < 0)
            goto begun;
    }
    if (!was_op) {
        PyObject *settled = settle(ctx, kind, name, PyTuple_GetItem(scanned, 4),
                                   PyTuple_GetItem(scanned, 0));
        if (settled == NULL)
            goto begun;
        SETREF(kind, settled);
        if (kind == ctx[CTX_EXECUTE]) {  /* something happened the tensors cannot show */
            int dirty = attr_true(ctx[CTX_LEDGER], s_dirty);
            if (dirty < 0)
                goto begun;
            if (dirty) {
                PyObject *r = PyObject_CallMethodObjArgs(ctx[CTX_RECORDER], s_reconcile, changes,
                                                         NULL);
                if (r == NULL)
                    goto begun;
                Py_DECREF(r);
            }
        }
    }
    if (PyList_Size(changes)) {
        PyObject *records = change_records(ctx, changes, Py_None, s_eager, Py_None, tid, Py_None,
                                           t0);
        if (records == NULL)
            goto begun;
        PyObject *r = PyObject_CallMethodObjArgs(ctx[CTX_LOG], s_defer_many, records, NULL);
        Py_DECREF(records);
        if (r == NULL)
            goto begun;
        Py_DECREF(r);
    }
    if (!was_op) {  /* Traces.phase, outside any capture */
        Py_DECREF(phase);
        Py_DECREF(trace);
        phase = trace = NULL;
        if (phase_of(ctx, kind, pos, kwargs, &phase, &trace) < 0) {
            phase = s_eager;  /* for the cleanup below */
            trace = Py_None;
            Py_INCREF(phase);
            Py_INCREF(trace);
            goto begun;
        }
    }
    PyObject *kind_id = PyLong_FromVoidPtr(kind);
    if (kind_id == NULL)
        goto begun;
    PyObject *kind_text = PyDict_GetItemWithError(ctx[CTX_KIND_TEXTS], kind_id);  /* borrowed */
    Py_DECREF(kind_id);
    if (kind_text == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_KeyError, "a kind with no stored text");
        goto begun;
    }
    if ((seq = PyIter_Next(ctx[CTX_SEQ])) == NULL)
        goto begun;
    if ((inputs = PySequence_Tuple(PyTuple_GetItem(scanned, 0))) == NULL)
        goto begun;
    PyObject *t = PyLong_FromLongLong(now_ns() - t0);
    if (t == NULL)
        goto begun;
    begin = PyTuple_Pack(15, s_B, seq, Py_None, t, tid, kind_text, name, phase,
                          device, PyTuple_GetItem(scanned, 3), trace, site,
                          PyTuple_GetItem(scanned, 1), inputs, Py_None);
    Py_DECREF(t);
    if (begin == NULL)
        goto begun;
    PyObject *one_record = PyList_New(1);
    if (one_record == NULL)
        goto begun;
    Py_INCREF(begin);
    PyList_SetItem(one_record, 0, begin);
    int w = log_write(ctx, one_record);
    Py_DECREF(one_record);
    if (w < 0)
        goto begun;
    began = 1;
begun:
    if (locked) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (call_void(ctx[CTX_RELEASE]) < 0 && type == NULL) {
            PyErr_Fetch(&type, &value, &tb);
            began = 0;
        }
        PyErr_Restore(type, value, tb);
    }
    if (began && set_thread_call(ctx, seq, phase, trace, device) < 0)
        began = 0;
    if (began && kind == ctx[CTX_EXECUTE]) {  /* who holds buffers allocated since its capture */
        int look = needs_referrers(ctx, device, trace);
        PyObject *r = look == 0 ? Py_None
                      : look < 0 ? NULL
                      : PyObject_CallFunctionObjArgs(ctx[CTX_ON_EXECUTE], device, trace, NULL);
        if (r == NULL && report_bug(ctx) < 0)
            goto done;
        if (look > 0)
            Py_XDECREF(r);
    }
    if (!began) {  /* a recorder bug must not break the program */
        if (report_bug(ctx) == 0)
            result = PyObject_Call(wrapped, pos, kw);
        goto done;
    }
    result = PyObject_Call(wrapped, pos, kw);
    if (result == NULL) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb != NULL)
            PyException_SetTraceback(value, tb);
        if (PyObject_SetAttr(ctx[CTX_TL], s_call, Py_None) < 0)
            PyErr_Clear();
        PyObject *state = PyObject_CallFunction(ctx[CTX_NEW_STATE], "((OOOOOOOOOO))", seq,
                                                kind, phase, trace, device, tid, Py_None,
                                                Py_False, held, name);
        PyObject *r = state == NULL ? NULL
                      : PyObject_CallMethodObjArgs(ctx[CTX_RECORDER], s_end_raised, state, value,
                                                   NULL);
        int interrupted = r == NULL && report_bug(ctx) < 0;
        Py_XDECREF(r);
        Py_XDECREF(state);
        if (interrupted) {  /* raised instead of the program's error, as in Python */
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
        } else {
            PyErr_Restore(type, value, tb);
        }
        goto done;
    }
    Call c = {seq, kind, phase, trace, device, tid, held, name, kwargs};
    if ((PyObject_SetAttr(ctx[CTX_TL], s_call, Py_None) < 0
         || end_returned(ctx, &c, result, pos, kw, t0) < 0)
        && report_bug(ctx) < 0)
        Py_CLEAR(result);
done:
    Py_XDECREF(tid);
    Py_XDECREF(site);
    Py_XDECREF(changes);
    Py_XDECREF(scanned);
    Py_XDECREF(seq);
    Py_XDECREF(inputs);
    Py_XDECREF(begin);
    Py_XDECREF(held);
    Py_XDECREF(device);
    Py_DECREF(kind);
    Py_DECREF(phase);
    Py_DECREF(trace);
    return result;
}

static PyObject *
hp_stash(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *obj, *name, *value = NULL;
    if (!PyArg_ParseTuple(args, "OU|O", &obj, &name, &value))
        return NULL;
    if (PyObject_GenericSetAttr(obj, name, value) < 0) {
        if (value != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
            return NULL;
        PyErr_Clear();  /* nothing stashed under that name */
    }
    Py_RETURN_NONE;
}

static PyObject *
hp_unstash(PyObject *self, PyObject *args)
{
    PyObject *obj, *name;
    if (!PyArg_ParseTuple(args, "OU", &obj, &name))
        return NULL;
    PyObject *two = PyTuple_Pack(2, obj, name);
    if (two == NULL)
        return NULL;
    PyObject *r = hp_stash(self, two);
    Py_DECREF(two);
    return r;
}

static PyMethodDef methods[] = {
    {"append", hp_append, METH_VARARGS, "Frame records into the shared log mapping."},
    {"here", hp_here, METH_VARARGS, "The call site id of a call made at a frame."},
    {"describe", hp_describe, METH_VARARGS, "A tensor's description, cached per tensor_id."},
    {"build", hp_build, METH_VARARGS, "A tensor's description, from its metadata."},
    {"scan", hp_scan, METH_VARARGS, "Tensors, scalars, device and cq of a call's arguments."},
    {"call", (PyCFunction)(void (*)(void))hp_call, METH_FASTCALL,
     "Recorder.call, for an eager op or a call of the replay loop."},
    {"stash", hp_stash, METH_VARARGS, "Set an attribute in an object's own dictionary."},
    {"queue_facts", hp_queue_facts, METH_VARARGS,
     "The queue facts `call` finds itself (\"ask\": the calls it leaves to queues.py)."},
    {"unstash", hp_unstash, METH_VARARGS, "Delete an attribute from an object's own dictionary."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ttrecord_hotpath", NULL, -1, methods,
    NULL, NULL, NULL, NULL,
};

static const struct { PyObject **slot; const char *text; } strings[] = {
    {&s_f_back, "f_back"},
    {&s_f_lasti, "f_lasti"},
    {&s_tensor_id, "tensor_id"},
    {&s_buffer_address, "buffer_address"},
    {&s_cq_id, "cq_id"},
    {&s_name, "__name__"},
    {&s_module, "__module__"},
    {&s_Tensor, "Tensor"},
    {&s_torch, "torch"},
    {&s_self, "self"},
    {&s_shape, "shape"},
    {&s_dtype, "dtype"},
    {&s_layout, "layout"},
    {&s_storage_type, "storage_type"},
    {&s_memory_config, "memory_config"},
    {&s_buffer_type, "buffer_type"},
    {&s_memory_layout, "memory_layout"},
    {&s_device, "device"},
    {&s_host, "host"},
    {&s_DEVICE, "DEVICE"},
    {&s_INTERLEAVED, "INTERLEAVED"},
    {&s_off, "off"},
    {&s_verifier, "verifier"},
    {&s_regions, "regions"},
    {&s_per_call_snapshots, "per_call_snapshots"},
    {&s_callsites, "callsites"},
    {&s_call, "call"},
    {&s_tid, "tid"},
    {&s_phase, "phase"},
    {&s_trace, "trace"},
    {&s_acquire, "acquire"},
    {&s_release, "release"},
    {&s_drain, "drain"},
    {&s_enabled, "enabled"},
    {&s_dirty, "dirty"},
    {&s_generation, "generation"},
    {&s_defer_many, "defer_many"},
    {&s_buffer_unique_id, "buffer_unique_id"},
    {&s_is_allocated, "is_allocated"},
    {&s_reconcile, "_reconcile"},
    {&s_broken, "_broken"},
    {&s_end_raised, "_end_raised"},
    {&s_queue_id, "queue_id"},
    {&s_free, "free"},
    {&s_alloc, "alloc"},
    {&s_eager, "eager"},
    {&s_capture, "capture"},
    {&s_replay, "replay"},
    {&s_ok, "ok"},
    {&s_B, "B"},
    {&s_E, "E"},
    {&s_P, "P"},
    {&s_trace_id, "trace_id"},
    {&s_popleft, "popleft"},
    {&s_buffer_num_pages, "buffer_num_pages"},
    {&s_buffer_aligned_page_size, "buffer_aligned_page_size"},
    {&s_dot_record_event, ".record_event"},
    {&s_cq, "cq"},
    {&s_blocking, "blocking"},
    {&s_empty, ""},
    {&s__entries, "_entries"},
    {&s__devices, "_devices"},
    {&s_objects, "objects"},
    {&s_num_entries, "num_program_cache_entries"},
    {&s__lock, "_lock"},
    {&s_stopped, "stopped"},
    {&s__pending, "_pending"},
    {&s_write_many, "write_many"},
    {&s__map, "_map"},
    {&s__end, "_end"},
    {&s__released, "_released"},
    {&s__write_locked, "_write_locked"},
};

PyMODINIT_FUNC
PyInit__ttrecord_hotpath(void)
{
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        if ((*strings[i].slot = PyUnicode_InternFromString(strings[i].text)) == NULL)
            return NULL;
    if ((one = PyLong_FromLong(1)) == NULL || (zero = PyLong_FromLong(0)) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
