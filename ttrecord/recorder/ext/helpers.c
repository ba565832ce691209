/* Small helpers of the recorded call (part of hotpath.c) */

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
