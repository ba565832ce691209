/* Call sites: the first frame outside ttnn and ttrecord, by instruction offset: `here` (part of hotpath.c) */

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
