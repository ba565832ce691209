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

static PyObject *s_f_back, *s_f_lasti;

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

static PyMethodDef methods[] = {
    {"append", hp_append, METH_VARARGS, "Frame records into the shared log mapping."},
    {"here", hp_here, METH_VARARGS, "The call site id of a call made at a frame."},
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
    if (s_f_back == NULL || s_f_lasti == NULL)
        return NULL;
    return PyModule_Create(&module);
}
