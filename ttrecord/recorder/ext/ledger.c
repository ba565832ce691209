/* The ledger's per-call steps and the ALLOC/FREE records (ledger.py, memory_records.py) (part of hotpath.c) */

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
