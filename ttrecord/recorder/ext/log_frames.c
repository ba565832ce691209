/* Records framed as marshal data straight into the log mapping: `append` (part of hotpath.c) */

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
