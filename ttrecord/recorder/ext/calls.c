/* Recorder.call in C: `call` (part of hotpath.c) */

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
