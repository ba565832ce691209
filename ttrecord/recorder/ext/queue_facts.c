/* The queue facts of a call (queues.py), for the calls that name no event (part of hotpath.c) */

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
