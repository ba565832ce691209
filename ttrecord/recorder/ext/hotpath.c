/* The recorder's per-call work that interpreted Python pays most for, in C (stable ABI).
 *
 * append(view, end, reserve, records, dumps) -> int
 *     Frames `records` (a list: one record is written alone, several as a list, as
 *     log.py's writer does) with `dumps` (marshal.dumps), copies the frame into the writable
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
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <stdint.h>

static PyObject *s_f_back, *s_f_lasti, *s_tensor_id, *s_buffer_address, *s_cq_id,
    *s_name, *s_module, *s_Tensor, *s_torch, *s_self, *s_shape, *s_dtype, *s_layout,
    *s_storage_type, *s_memory_config, *s_buffer_type, *s_memory_layout, *s_device, *s_host,
    *s_DEVICE, *s_INTERLEAVED;

/* Py_SETREF is not part of the limited API */
#define SETREF(dst, src) do { PyObject *old_ = (dst); (dst) = (src); Py_DECREF(old_); } while (0)

#define BUFFER 6  /* records.TENSOR_BUFFER: a description's buffer field */

static PyObject *
hp_append(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *view, *records, *dumps;
    Py_ssize_t end, reserve;
    if (!PyArg_ParseTuple(args, "OnnOO", &view, &end, &reserve, &records, &dumps))
        return NULL;
    if (!PyList_Check(records)) {
        PyErr_SetString(PyExc_TypeError, "records must be a list");
        return NULL;
    }
    Py_ssize_t n = PyList_Size(records);
    PyObject *what = n == 1 ? PyList_GetItem(records, 0) : records;  /* borrowed */
    PyObject *data = PyObject_CallFunctionObjArgs(dumps, what, NULL);
    if (data == NULL)
        return NULL;
    char *bytes;
    Py_ssize_t size;
    if (PyBytes_AsStringAndSize(data, &bytes, &size) < 0) {
        Py_DECREF(data);
        return NULL;
    }
    Py_buffer buf;
    if (PyObject_GetBuffer(view, &buf, PyBUF_WRITABLE) < 0) {
        Py_DECREF(data);
        return NULL;
    }
    Py_ssize_t new_end = end + 4 + size;
    if (size > 0xFFFFFFFFLL || new_end + reserve > buf.len || end < 16) {
        PyBuffer_Release(&buf);
        Py_DECREF(data);
        return PyLong_FromLong(0);
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
    Py_DECREF(data);
    return PyLong_FromSsize_t(new_end);
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
hp_here(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *frame, *internal, *check, *by_offset, *on_miss;
    Py_ssize_t depth;
    if (!PyArg_ParseTuple(args, "O!OO!nOO", &PyDict_Type, &internal, &check, &PyDict_Type,
                          &by_offset, &depth, &on_miss, &frame))
        return NULL;
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
describe(PyObject *cache, PyObject *store, PyObject *t)
{
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
    PyObject *desc = PyObject_CallFunctionObjArgs(store, t, tid, NULL);
    Py_DECREF(tid);
    return desc;
}

static PyObject *
hp_describe(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *cache, *store, *t;
    if (!PyArg_ParseTuple(args, "O!OO", &PyDict_Type, &cache, &store, &t))
        return NULL;
    return describe(cache, store, t);
}

typedef struct {
    PyObject *T, *cache, *store, *inputs, *held;
} Scan;

/* Describes tensor `t` into the scan's inputs (and held, when it has a buffer). */
static int
add_tensor(Scan *sc, PyObject *t)
{
    PyObject *d = describe(sc->cache, sc->store, t);
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
hp_scan(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *T, *dev_types, *keys, *seen, *cache, *store, *describe_torch, *device_id;
    PyObject *instance, *pos, *kwargs;
    if (!PyArg_ParseTuple(args, "OO!O!O!O!OOOOOO", &T, &PySet_Type, &dev_types, &PyTuple_Type,
                          &keys, &PyDict_Type, &seen, &PyDict_Type, &cache, &store,
                          &describe_torch, &device_id, &instance, &pos, &kwargs))
        return NULL;
    if (!PyTuple_Check(pos)) {
        PyErr_SetString(PyExc_TypeError, "args must be a tuple");
        return NULL;
    }
    Scan sc = {T, cache, store, PyList_New(0), PyList_New(0)};
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
    result = Py_BuildValue("(OOOOOO)", sc.inputs, scalars ? scalars : Py_None, device, cq,
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
hp_build(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *names, *py_name, *configs, *device_id, *buffer_size, *num_banks, *pages, *fallback;
    PyObject *t, *tid;
    if (!PyArg_ParseTuple(args, "O!OO!OOOOOOO", &PyDict_Type, &names, &py_name, &PyDict_Type,
                          &configs, &device_id, &buffer_size, &num_banks, &pages, &fallback, &t,
                          &tid))
        return NULL;
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
        result = Py_BuildValue("(OOOOOOO)", tid, s_host, shape, dtype, layout, Py_None, Py_None);
        goto done;
    }
    address = PyObject_CallMethodObjArgs(t, s_buffer_address, NULL);
    if (address == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            goto done;
        PyErr_Clear();  /* a deallocated device tensor has no buffer */
        result = Py_BuildValue("(OOOOOOO)", tid, s_device, shape, dtype, layout, Py_None,
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
    if ((dev = PyObject_CallMethodObjArgs(t, s_device, NULL)) == NULL
        || (device = PyObject_CallFunctionObjArgs(device_id, dev, NULL)) == NULL)
        goto done;
    if (device == Py_None) {  /* perhaps deallocated already: the Python path decides */
        use_fallback = 1;
        goto done;
    }
    size = PyObject_CallFunctionObjArgs(buffer_size, device, btype, address, NULL);
    if (size == NULL)
        goto done;
    PyObject *page_size = Py_None, *num_pages = Py_None;
    if (size == Py_None) {
        np = PyObject_CallFunctionObjArgs(pages, t, NULL);
        if (np == NULL)
            goto done;
        if (!PyTuple_Check(np) || PyTuple_Size(np) != 2) {
            PyErr_SetString(PyExc_TypeError, "tensor_pages must return (pages, page size)");
            goto done;
        }
        num_pages = PyTuple_GetItem(np, 0);
        page_size = PyTuple_GetItem(np, 1);
        PyObject *banks = PyObject_CallFunctionObjArgs(num_banks, device, btype, NULL);
        if (banks == NULL)
            goto done;
        /* -(-num_pages // banks) * page_size */
        PyObject *neg = PyNumber_Negative(num_pages), *q = NULL, *ceil = NULL;
        if (neg != NULL)
            q = PyNumber_FloorDivide(neg, banks);
        if (q != NULL)
            ceil = PyNumber_Negative(q);
        Py_XDECREF(neg);
        Py_XDECREF(q);
        Py_DECREF(banks);
        if (ceil == NULL)
            goto done;
        Py_DECREF(size);
        size = PyNumber_Multiply(ceil, page_size);
        Py_DECREF(ceil);
        if (size == NULL)
            goto done;
    }
    PyObject *buffer = Py_BuildValue("(OOOOOO)", device, btype, address, size, page_size,
                                     num_pages);
    if (buffer == NULL)
        goto done;
    result = Py_BuildValue("(OOOOOOO)", tid, s_device, shape, dtype, layout, config, buffer);
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

static PyMethodDef methods[] = {
    {"append", hp_append, METH_VARARGS, "Frame records into the shared log mapping."},
    {"here", hp_here, METH_VARARGS, "The call site id of a call made at a frame."},
    {"describe", hp_describe, METH_VARARGS, "A tensor's description, cached per tensor_id."},
    {"build", hp_build, METH_VARARGS, "A tensor's description, from its metadata."},
    {"scan", hp_scan, METH_VARARGS, "Tensors, scalars, device and cq of a call's arguments."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ttrecord_hotpath", NULL, -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__ttrecord_hotpath(void)
{
    s_f_back = PyUnicode_InternFromString("f_back");
    s_f_lasti = PyUnicode_InternFromString("f_lasti");
    s_tensor_id = PyUnicode_InternFromString("tensor_id");
    s_buffer_address = PyUnicode_InternFromString("buffer_address");
    s_cq_id = PyUnicode_InternFromString("cq_id");
    s_name = PyUnicode_InternFromString("__name__");
    s_module = PyUnicode_InternFromString("__module__");
    s_Tensor = PyUnicode_InternFromString("Tensor");
    s_torch = PyUnicode_InternFromString("torch");
    s_self = PyUnicode_InternFromString("self");
    s_shape = PyUnicode_InternFromString("shape");
    s_dtype = PyUnicode_InternFromString("dtype");
    s_layout = PyUnicode_InternFromString("layout");
    s_storage_type = PyUnicode_InternFromString("storage_type");
    s_memory_config = PyUnicode_InternFromString("memory_config");
    s_buffer_type = PyUnicode_InternFromString("buffer_type");
    s_memory_layout = PyUnicode_InternFromString("memory_layout");
    s_device = PyUnicode_InternFromString("device");
    s_host = PyUnicode_InternFromString("host");
    s_DEVICE = PyUnicode_InternFromString("DEVICE");
    s_INTERLEAVED = PyUnicode_InternFromString("INTERLEAVED");
    if (s_f_back == NULL || s_f_lasti == NULL || s_tensor_id == NULL || s_buffer_address == NULL
        || s_cq_id == NULL || s_name == NULL || s_module == NULL || s_Tensor == NULL
        || s_torch == NULL || s_self == NULL || s_shape == NULL || s_dtype == NULL
        || s_layout == NULL || s_storage_type == NULL || s_memory_config == NULL
        || s_buffer_type == NULL || s_memory_layout == NULL || s_device == NULL || s_host == NULL
        || s_DEVICE == NULL || s_INTERLEAVED == NULL)
        return NULL;
    return PyModule_Create(&module);
}
