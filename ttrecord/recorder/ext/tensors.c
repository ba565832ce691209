/* Tensor descriptions and the argument scan: `describe`, `build`, `scan` (part of hotpath.c) */

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
