/* The supervisor's read -> decode -> write of the event log, in C: log frames are unmarshalled
 * and their records bound straight into SQLite's prepared statements, with no Event, no row
 * tuple and no text copy in between (see ttrecord/recorder/pipeline.py, which drives it, and
 * the pure-Python path it must agree with: log.py's LogReader.read, decode.py's Decoder and
 * store/writer.py's SessionWriter.add).
 *
 * Pipeline(path, helpers)
 *     Opens its own connection to the session file `path` (made by SessionWriter, in WAL
 *     mode). `helpers` is the tuple pipeline.py's `_helpers()` builds (the H_* indices below):
 *     the vocabulary's text, storable(), the writer's JSON encoder, and callbacks for the
 *     records that are no event.
 * frames(data, base, committed) -> (consumed, [(offset, bytes) unreadable], broken)
 *     The frame loop of LogReader.read over `data` (file offset `base`), each record fed.
 * feed(records)        records already unmarshalled (another recorder's, as Decoder.feed).
 * release(store) -> n  the complete events below every running call, in seq order: written
 *                      in one transaction when `store` (else dropped, as the supervisor drops
 *                      events it cannot store).
 * close_open(status, error) -> seq | None   Decoder.close_open_calls.
 * open_calls, released, close()
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <marshal.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

/* ---- the few sqlite3 declarations used (sqlite3.h need not be installed; the library is
 * the libsqlite3.so.0 Python's _sqlite3 module links, so the process has one SQLite) ---- */
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
int sqlite3_open_v2(const char *, sqlite3 **, int, const char *);
int sqlite3_close_v2(sqlite3 *);
int sqlite3_prepare_v2(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
int sqlite3_bind_int64(sqlite3_stmt *, int, long long);
int sqlite3_bind_double(sqlite3_stmt *, int, double);
int sqlite3_bind_null(sqlite3_stmt *, int);
int sqlite3_bind_text(sqlite3_stmt *, int, const char *, int, void (*)(void *));
int sqlite3_bind_blob(sqlite3_stmt *, int, const void *, int, void (*)(void *));
int sqlite3_step(sqlite3_stmt *);
int sqlite3_reset(sqlite3_stmt *);
int sqlite3_finalize(sqlite3_stmt *);
int sqlite3_exec(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *,
                 char **);
const char *sqlite3_errmsg(sqlite3 *);
int sqlite3_errcode(sqlite3 *);
int sqlite3_busy_timeout(sqlite3 *, int);
#define SQLITE_OK 0
#define SQLITE_CORRUPT 11
#define SQLITE_TOOBIG 18
#define SQLITE_CONSTRAINT 19
#define SQLITE_MISMATCH 20
#define SQLITE_NOTADB 26
#define SQLITE_ROW 100
#define SQLITE_DONE 101
#define SQLITE_OPEN_READWRITE 0x00000002
#define SQLITE_OPEN_NOMUTEX 0x00008000
#define SQLITE_STATIC ((void (*)(void *))0)
#define SQLITE_TRANSIENT ((void (*)(void *))-1)

/* The helpers tuple (pipeline.py's _helpers) */
enum {
    H_KINDS, H_PHASES, H_STATUSES, H_STORABLE, H_JSON, H_OTHER, H_DEVICE_ROW, H_SQLITE3,
    H_COUNT
};

/* Statements, prepared once. */
enum {
    S_EVENT, S_TENSOR, S_BUFFER, S_FREED, S_EXECUTIONS, S_CALLSITE, S_TRACE, S_TRACE_END,
    S_TRACE_RELEASE, S_DEVICE, S_DEVICE_CLOSE, S_COUNT
};
static const char *SQL[S_COUNT] = {
    "INSERT OR REPLACE INTO events (seq, parent, t_ns, dur_ns, thread, kind, name, phase,"
    " device, cq, trace, callsite, status, error, args, region, buffer)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "INSERT INTO tensors (seq, role, pos, tensor_id, storage, shape, dtype, layout,"
    " memory_config, buffer, device, buffer_type, address, size)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "INSERT INTO buffers (id, device, buffer_type, address, size, page_size, num_pages,"
    " tensor_id, alloc_seq, alloc_phase, free_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "UPDATE buffers SET free_seq = ? WHERE id = ?",
    "UPDATE traces SET executions = ? WHERE id = ?",
    "INSERT INTO callsites (id, file, line, function, stack) VALUES (?, ?, ?, ?, ?)",
    "INSERT INTO traces (id, device, trace_id, cq, begin_seq, ops, executions)"
    " VALUES (?, ?, ?, ?, ?, 0, 0)",
    "UPDATE traces SET end_seq = ?, ops = ? WHERE id = ?",
    "UPDATE traces SET release_seq = ?, ops = ? WHERE id = ?",
    "INSERT OR REPLACE INTO devices (id, arch, num_dram_banks, num_l1_banks,"
    " trace_region_size, open_seq, info) VALUES (?, ?, ?, ?, ?, ?, ?)",
    "UPDATE devices SET close_seq = ? WHERE id = ?",
};

/* Field positions of the records (records.py; pipeline.py checks them against its
 * declarations at import). */
#define B_LEN 15  /* tag seq parent t_ns thread kind name phase device cq trace site args inputs region */
#define E_LEN 9   /* tag seq t_ns status error outputs device trace extra */
#define P_LEN 14  /* tag seq parent t_ns thread kind name phase device trace site args region buffer */
#define T_LEN 7   /* tensor_id storage shape dtype layout memory_config buffer */
#define D_LEN 6   /* device buffer_type address size page_size num_pages */

/* A complete event waiting for release: a call (begin, end or NULL) or a point. */
typedef struct {
    long long seq;
    unsigned long long order;  /* arrival: the sort is stable, as list.sort */
    PyObject *rec;     /* the Begin or Point record (owned) */
    PyObject *end;     /* the End record (owned) or NULL */
    PyObject *kind;    /* stored text (owned) */
    PyObject *phase;   /* stored text (owned) */
    PyObject *status;  /* stored text (owned) */
    PyObject *error;   /* stored text or NULL (owned) */
    PyObject *name;    /* stored text (owned) */
    PyObject *region;  /* stored text or NULL (owned) */
    PyObject *args;    /* the event's arguments (a dict, owned) or NULL */
    PyObject *dur;     /* owned or NULL */
    PyObject *device;  /* borrowed from rec/end */
    PyObject *trace;   /* borrowed from rec/end */
    Py_ssize_t site;   /* call-site slot, -1: none */
    int point;
} Entry;

/* A call site's row: written at the first event naming it. */
typedef struct {
    long long row;  /* callsites.id, 0 before the first use */
    PyObject *file, *line, *function, *stack;
} Site;

/* A buffer begun in this batch: inserted at its end, with its free if that came too. */
typedef struct {
    long long id;
    PyObject *v[7];  /* device buffer_type address size page_size num_pages tensor_id (owned) */
    long long alloc_seq;
    PyObject *phase; /* owned */
    long long free_seq;
    int freed;
} NewBuffer;

#define MAX_PARAMS 18

typedef struct {
    PyObject_HEAD
    sqlite3 *db;
    sqlite3_stmt *stmt[S_COUNT];
    /* What each parameter of the row statements holds (a strong reference, Py_None for NULL;
     * NULL: unknown): sqlite3_reset keeps bindings, so a value bound by identity last time
     * (the same kind, phase, dtype, memory config, device, ...) is not bound again. */
    PyObject *bound[S_COUNT][MAX_PARAMS + 1];
    char *shape_bound; Py_ssize_t shape_len, shape_cap;  /* the tensors.shape text bound */
    PyObject *helpers;
    PyObject *kinds, *phases, *statuses, *storable, *json, *other, *device_row, *sqlite3_mod;
    PyObject *t_alloc, *t_free, *t_op, *t_capture, *t_trace_begin, *t_trace_end,
        *t_trace_execute, *t_trace_release, *t_device_open, *t_device_close, *t_ok,
        *t_in, *t_out;
    PyObject *open;        /* seq -> Begin record */
    PyObject *site_slots;  /* site_id -> slot */
    Site *sites; Py_ssize_t nsites, capsites;
    long long next_site_row;
    Entry *pending; Py_ssize_t npending, cappending;
    int sorted; long long last_seq; unsigned long long order;
    long long released;
    /* buffer pairing (store/lifetimes.py's BufferPairing) */
    PyObject *live;        /* (device, buffer_type, address) -> (buffer id, size) */
    long long next_buffer;
    NewBuffer *newbuf; Py_ssize_t nnew, capnew;
    long long batch_first;  /* first buffer id begun in this batch */
    long long *freed; Py_ssize_t nfreed, capfreed;  /* (seq, id) pairs */
    /* traces and devices (SessionWriter._track) */
    PyObject *traces;      /* (device, trace_id) -> traces.id */
    long long next_trace;
    PyObject *trace_ops, *trace_runs, *executed;
} Pipeline;

/* ------------------------------------------------------------------ small helpers */

static int
grow(void **buf, Py_ssize_t *cap, Py_ssize_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    Py_ssize_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *p = PyMem_Realloc(*buf, (size_t)n * size);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = p;
    *cap = n;
    return 0;
}

/* The sqlite3 module's exception for a failed call, with SQLite's message. */
static void
db_error(Pipeline *self)
{
    if (PyErr_Occurred())
        return;
    int code = sqlite3_errcode(self->db) & 0xff;
    const char *name = "OperationalError";
    if (code == SQLITE_CONSTRAINT || code == SQLITE_MISMATCH)
        name = "IntegrityError";
    else if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
        name = "DatabaseError";
    else if (code == SQLITE_TOOBIG)
        name = "DataError";
    PyObject *cls = PyObject_GetAttrString(self->sqlite3_mod, name);
    if (cls == NULL)
        return;
    PyErr_SetString(cls, sqlite3_errmsg(self->db));
    Py_DECREF(cls);
}

static int
exec_sql(Pipeline *self, const char *sql)
{
    if (sqlite3_exec(self->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        db_error(self);
        return -1;
    }
    return 0;
}

/* Step a bound statement that returns no row, and reset it. */
static int
run(Pipeline *self, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        db_error(self);
        return -1;
    }
    return 0;
}

/* Bind a value as the sqlite3 module does: int, float, str, bytes-like, None; an int, float
 * or str subclass as its base type; anything else is refused. Text is not copied: the
 * object outlives the statement's step. */
static int
bind(Pipeline *self, sqlite3_stmt *st, int i, PyObject *v)
{
    int rc;
    if (v == NULL || v == Py_None) {
        rc = sqlite3_bind_null(st, i);
    } else if (PyLong_Check(v)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow) {
            PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to SQLite INTEGER");
            return -1;
        }
        if (x == -1 && PyErr_Occurred())
            return -1;
        rc = sqlite3_bind_int64(st, i, x);
    } else if (PyUnicode_Check(v)) {
        Py_ssize_t n;
        const char *s;
        if (PyUnicode_IS_COMPACT_ASCII(v)) {
            s = (const char *)PyUnicode_DATA(v);
            n = PyUnicode_GET_LENGTH(v);
        } else {
            s = PyUnicode_AsUTF8AndSize(v, &n);
            if (s == NULL)
                return -1;
        }
        if (n > INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "string longer than INT_MAX bytes");
            return -1;
        }
        rc = sqlite3_bind_text(st, i, s, (int)n, SQLITE_STATIC);
    } else if (PyFloat_Check(v)) {
        rc = sqlite3_bind_double(st, i, PyFloat_AsDouble(v));
    } else if (PyBytes_Check(v)) {
        rc = sqlite3_bind_blob(st, i, PyBytes_AS_STRING(v), (int)PyBytes_GET_SIZE(v), SQLITE_STATIC);
    } else if (PyObject_CheckBuffer(v)) {
        Py_buffer view;
        if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0)
            return -1;
        rc = sqlite3_bind_blob(st, i, view.buf, (int)view.len, SQLITE_TRANSIENT);
        PyBuffer_Release(&view);
    } else {
        PyObject *cls = PyObject_GetAttrString(self->sqlite3_mod, "ProgrammingError");
        if (cls != NULL) {
            PyErr_Format(cls, "Error binding parameter %d: type '%s' is not supported", i,
                         Py_TYPE(v)->tp_name);
            Py_DECREF(cls);
        }
        return -1;
    }
    if (rc != SQLITE_OK) {
        db_error(self);
        return -1;
    }
    return 0;
}

static int bind_int(Pipeline *self, sqlite3_stmt *st, int i, long long x);

/* bind() for a row statement, skipped when the parameter holds this very object already. */
static int
bindc(Pipeline *self, int sid, int i, PyObject *v)
{
    if (v == NULL)
        v = Py_None;
    PyObject **slot = &self->bound[sid][i];
    if (*slot == v)
        return 0;
    if (bind(self, self->stmt[sid], i, v) < 0) {
        Py_CLEAR(*slot);
        return -1;
    }
    Py_INCREF(v);
    Py_XSETREF(*slot, v);
    return 0;
}

static int
bindc_int(Pipeline *self, int sid, int i, long long x)
{
    Py_CLEAR(self->bound[sid][i]);
    return bind_int(self, self->stmt[sid], i, x);
}

static void
forget_bound(Pipeline *self)
{
    for (int s = 0; s < S_COUNT; s++)
        for (int i = 0; i <= MAX_PARAMS; i++)
            Py_CLEAR(self->bound[s][i]);
    self->shape_len = -1;
}

static int
bind_int(Pipeline *self, sqlite3_stmt *st, int i, long long x)
{
    if (sqlite3_bind_int64(st, i, x) != SQLITE_OK) {
        db_error(self);
        return -1;
    }
    return 0;
}

/* storable(value): ASCII text (nearly all) is its own storable form. New reference. */
static PyObject *
storable(Pipeline *self, PyObject *v)
{
    if (!PyUnicode_CheckExact(v) || PyUnicode_IS_ASCII(v)) {
        Py_INCREF(v);
        return v;
    }
    return PyObject_CallOneArg(self->storable, v);
}

/* A record's seq as a C integer (the pending events are sorted by it). */
static int
seq_of(PyObject *v, long long *out)
{
    if (!PyLong_Check(v)) {
        PyErr_Format(PyExc_TypeError, "a record's seq must be an int, not %s", Py_TYPE(v)->tp_name);
        return -1;
    }
    *out = PyLong_AsLongLong(v);
    return (*out == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* The stored text of a kind: its member's value (an unknown text is kept, decode.py's
 * vocabulary.kind); anything but text is refused as Kind(value) refuses it. New reference. */
static PyObject *
kind_text(Pipeline *self, PyObject *kind)
{
    PyObject *t = PyDict_GetItemWithError(self->kinds, kind);
    if (t != NULL) {
        Py_INCREF(t);
        return t;
    }
    if (PyErr_Occurred())
        return NULL;
    if (!PyUnicode_Check(kind)) {
        PyErr_Format(PyExc_ValueError, "%R is not a valid Kind", kind);
        return NULL;
    }
    Py_INCREF(kind);
    return kind;
}

/* The stored text of a phase or status (KeyError for any other value, as the dict lookup
 * in decode.py). New reference. */
static PyObject *
vocabulary_text(PyObject *table, PyObject *key)
{
    PyObject *t = PyDict_GetItemWithError(table, key);
    if (t == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    Py_INCREF(t);
    return t;
}

/* `dict(args) if args else None`. New reference or NULL without an error for None. */
static PyObject *
args_of(PyObject *args, int *failed)
{
    *failed = 0;
    if (args == Py_None)
        return NULL;
    int truth = PyObject_IsTrue(args);
    if (truth < 0) {
        *failed = 1;
        return NULL;
    }
    if (!truth)
        return NULL;
    if (PyDict_CheckExact(args)) {
        Py_INCREF(args);  /* never changed: no copy needed */
        return args;
    }
    PyObject *d = PyObject_CallOneArg((PyObject *)&PyDict_Type, args);
    if (d == NULL)
        *failed = 1;
    return d;
}

/* A call's inputs or outputs as decode.py's _tensor_list reads them: a tuple of
 * 7-field descriptions whose buffer is None or a 6-field description. */
static int
check_tensors(PyObject *descs)
{
    if (descs == Py_None)
        return 0;
    if (!PyTuple_Check(descs)) {
        int truth = PyObject_IsTrue(descs);
        if (truth <= 0)
            return truth;
        PyErr_SetString(PyExc_TypeError, "a call's tensors must be a tuple");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(descs);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyTuple_GET_ITEM(descs, i);
        if (!PyTuple_Check(d) || PyTuple_GET_SIZE(d) != T_LEN) {
            PyErr_SetString(PyExc_ValueError, "a tensor description must have 7 fields");
            return -1;
        }
        PyObject *shape = PyTuple_GET_ITEM(d, 2);
        if (!PyTuple_Check(shape) && !PyList_Check(shape)) {
            PyErr_SetString(PyExc_TypeError, "a tensor's shape must be a tuple");
            return -1;
        }
        PyObject *buf = PyTuple_GET_ITEM(d, 6);
        if (buf != Py_None && (!PyTuple_Check(buf) || PyTuple_GET_SIZE(buf) != D_LEN)) {
            PyErr_SetString(PyExc_ValueError, "a tensor's buffer must have 6 fields");
            return -1;
        }
    }
    return 0;
}

static void
entry_clear(Entry *e)
{
    Py_XDECREF(e->rec);
    Py_XDECREF(e->end);
    Py_XDECREF(e->kind);
    Py_XDECREF(e->phase);
    Py_XDECREF(e->status);
    Py_XDECREF(e->error);
    Py_XDECREF(e->name);
    Py_XDECREF(e->region);
    Py_XDECREF(e->args);
    Py_XDECREF(e->dur);
}

static Entry *
new_entry(Pipeline *self, long long seq)
{
    if (grow((void **)&self->pending, &self->cappending, self->npending + 1, sizeof(Entry)) < 0)
        return NULL;
    Entry *e = &self->pending[self->npending];
    memset(e, 0, sizeof(Entry));
    e->seq = seq;
    e->order = self->order++;
    e->site = -1;
    return e;
}

static void
entry_commit(Pipeline *self, Entry *e)
{
    if (self->npending && e->seq < self->last_seq)
        self->sorted = 0;
    self->last_seq = e->seq;
    self->npending++;
}

static Py_ssize_t
site_slot(Pipeline *self, PyObject *site_id, int *failed)
{
    *failed = 0;
    if (site_id == Py_None)
        return -1;
    PyObject *slot = PyDict_GetItemWithError(self->site_slots, site_id);
    if (slot == NULL) {
        if (PyErr_Occurred())
            *failed = 1;
        return -1;
    }
    return PyLong_AsSsize_t(slot);
}

/* ------------------------------------------------------------------ decoding */

/* A call's event from its Begin and End (NULL: it never ended; status and error given). */
static int
add_call(Pipeline *self, PyObject *b, PyObject *e, PyObject *status, PyObject *error)
{
    long long seq;
    if (seq_of(PyTuple_GET_ITEM(b, 1), &seq) < 0)
        return -1;
    PyObject *etuple = NULL;
    if (e != NULL && (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != E_LEN)) {
        PyErr_Format(PyExc_ValueError, "an end record must have %d fields", E_LEN);
        return -1;
    }
    etuple = e;
    int failed;
    Py_ssize_t site = site_slot(self, PyTuple_GET_ITEM(b, 11), &failed);
    if (failed)
        return -1;
    PyObject *args = args_of(PyTuple_GET_ITEM(b, 12), &failed);
    if (failed)
        return -1;
    PyObject *kind = NULL, *phase = NULL, *st = NULL, *err = NULL, *dur = NULL;
    if (check_tensors(PyTuple_GET_ITEM(b, 13)) < 0)
        goto fail;
    kind = kind_text(self, PyTuple_GET_ITEM(b, 5));
    if (kind == NULL)
        goto fail;
    phase = vocabulary_text(self->phases, PyTuple_GET_ITEM(b, 7));
    if (phase == NULL)
        goto fail;
    PyObject *device = PyTuple_GET_ITEM(b, 8), *trace = PyTuple_GET_ITEM(b, 10);
    if (etuple == NULL) {
        Py_INCREF(status);
        st = status;
        if (error != NULL && error != Py_None) {  /* kept as given (Decoder.close_open_calls) */
            Py_INCREF(error);
            err = error;
        }
    } else {
        PyObject *t_end = PyTuple_GET_ITEM(etuple, 2), *t_ns = PyTuple_GET_ITEM(b, 3);
        st = vocabulary_text(self->statuses, PyTuple_GET_ITEM(etuple, 3));
        if (st == NULL)
            goto fail;
        PyObject *raw_error = PyTuple_GET_ITEM(etuple, 4);
        if (raw_error != Py_None) {
            err = storable(self, raw_error);
            if (err == NULL)
                goto fail;
        }
        if (check_tensors(PyTuple_GET_ITEM(etuple, 5)) < 0)
            goto fail;
        if (PyTuple_GET_ITEM(etuple, 6) != Py_None)
            device = PyTuple_GET_ITEM(etuple, 6);
        if (PyTuple_GET_ITEM(etuple, 7) != Py_None)
            trace = PyTuple_GET_ITEM(etuple, 7);
        PyObject *extra = PyTuple_GET_ITEM(etuple, 8);
        int truth = extra == Py_None ? 0 : PyObject_IsTrue(extra);
        if (truth < 0)
            goto fail;
        if (truth) {  /* {**(args or {}), **extra} */
            PyObject *merged = PyDict_New();
            if (merged == NULL)
                goto fail;
            if ((args != NULL && PyDict_Update(merged, args) < 0) || PyDict_Update(merged, extra) < 0) {
                Py_DECREF(merged);
                goto fail;
            }
            Py_XSETREF(args, merged);
        }
        dur = PyNumber_Subtract(t_end, t_ns);
        if (dur == NULL)
            goto fail;
    }
    Entry *en = new_entry(self, seq);
    if (en == NULL)
        goto fail;
    Py_INCREF(b);
    en->rec = b;
    Py_XINCREF(etuple);
    en->end = etuple;
    en->kind = kind;
    en->phase = phase;
    en->status = st;
    en->error = err;
    en->name = PyTuple_GET_ITEM(b, 6);
    Py_INCREF(en->name);
    PyObject *region = PyTuple_GET_ITEM(b, 14);
    en->region = region == Py_None ? NULL : region;
    Py_XINCREF(en->region);
    en->args = args;
    en->dur = dur;
    en->device = device;
    en->trace = trace;
    en->site = site;
    en->point = 0;
    entry_commit(self, en);
    return 0;
fail:
    Py_XDECREF(args);
    Py_XDECREF(kind);
    Py_XDECREF(phase);
    Py_XDECREF(st);
    Py_XDECREF(err);
    Py_XDECREF(dur);
    return -1;
}

static int
add_point(Pipeline *self, PyObject *p)
{
    if (PyTuple_GET_SIZE(p) != P_LEN) {
        PyErr_Format(PyExc_ValueError, "a point record must have %d fields", P_LEN);
        return -1;
    }
    long long seq;
    if (seq_of(PyTuple_GET_ITEM(p, 1), &seq) < 0)
        return -1;
    PyObject *kind = NULL, *phase = NULL, *name = NULL, *region = NULL, *args = NULL;
    int failed;
    kind = kind_text(self, PyTuple_GET_ITEM(p, 5));
    if (kind == NULL)
        goto fail;
    name = storable(self, PyTuple_GET_ITEM(p, 6));
    if (name == NULL)
        goto fail;
    phase = vocabulary_text(self->phases, PyTuple_GET_ITEM(p, 7));
    if (phase == NULL)
        goto fail;
    Py_ssize_t site = site_slot(self, PyTuple_GET_ITEM(p, 10), &failed);
    if (failed)
        goto fail;
    args = args_of(PyTuple_GET_ITEM(p, 11), &failed);
    if (failed)
        goto fail;
    if (PyTuple_GET_ITEM(p, 12) != Py_None) {
        region = storable(self, PyTuple_GET_ITEM(p, 12));
        if (region == NULL)
            goto fail;
    }
    PyObject *buf = PyTuple_GET_ITEM(p, 13);
    if (buf != Py_None && (!PyTuple_Check(buf) || PyTuple_GET_SIZE(buf) < 4)) {
        PyErr_SetString(PyExc_IndexError, "a point's buffer must have 4 fields");
        goto fail;
    }
    Entry *en = new_entry(self, seq);
    if (en == NULL)
        goto fail;
    Py_INCREF(p);
    en->rec = p;
    en->kind = kind;
    en->phase = phase;
    Py_INCREF(self->t_ok);
    en->status = self->t_ok;
    en->name = name;
    en->region = region;
    en->args = args;
    en->device = PyTuple_GET_ITEM(p, 8);
    en->trace = PyTuple_GET_ITEM(p, 9);
    en->site = site;
    en->point = 1;
    entry_commit(self, en);
    return 0;
fail:
    Py_XDECREF(kind);
    Py_XDECREF(phase);
    Py_XDECREF(name);
    Py_XDECREF(region);
    Py_XDECREF(args);
    return -1;
}

/* A record that is no event (a call site, the header, the program's end): decoded by
 * pipeline.py; a call site comes back as (site_id, slot, file, line, function, stack). */
static int
add_other(Pipeline *self, PyObject *rec)
{
    PyObject *r = PyObject_CallOneArg(self->other, rec);
    if (r == NULL)
        return -1;
    if (r == Py_None) {
        Py_DECREF(r);
        return 0;
    }
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 6) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_TypeError, "other() must return None or a 6-tuple");
        return -1;
    }
    PyObject *slot = PyTuple_GET_ITEM(r, 1);
    Py_ssize_t n = PyLong_AsSsize_t(slot);
    if ((n == -1 && PyErr_Occurred()) || PyDict_SetItem(self->site_slots, PyTuple_GET_ITEM(r, 0), slot) < 0) {
        Py_DECREF(r);
        return -1;
    }
    if (n >= self->nsites) {
        if (grow((void **)&self->sites, &self->capsites, n + 1, sizeof(Site)) < 0) {
            Py_DECREF(r);
            return -1;
        }
        for (Py_ssize_t i = self->nsites; i <= n; i++)
            memset(&self->sites[i], 0, sizeof(Site));
        self->nsites = n + 1;
    }
    Site *s = &self->sites[n];
    if (s->file == NULL) {
        s->file = PyTuple_GET_ITEM(r, 2);
        s->line = PyTuple_GET_ITEM(r, 3);
        s->function = PyTuple_GET_ITEM(r, 4);
        s->stack = PyTuple_GET_ITEM(r, 5);
        Py_INCREF(s->file);
        Py_INCREF(s->line);
        Py_INCREF(s->function);
        Py_INCREF(s->stack);
    }
    Py_DECREF(r);
    return 0;
}

/* Stop the cycle collector from tracking a record made of atoms and tuples of atoms, as it
 * would itself at its first collection (_PyTuple_MaybeUntrack): the pending records are many
 * and long-lived, and traversing them again at every collection cost a fifth of the read.
 * Returns whether `o` may still be tracked. */
static int
untrack(PyObject *o, int depth)
{
    if (!PyObject_IS_GC(o))
        return 0;
    if (!PyTuple_CheckExact(o) || depth > 6)
        return PyObject_GC_IsTracked(o);
    if (!PyObject_GC_IsTracked(o))
        return 0;
    int tracked = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); i++)
        tracked |= untrack(PyTuple_GET_ITEM(o, i), depth + 1);
    if (!tracked)
        PyObject_GC_UnTrack(o);
    return tracked;
}

static int
feed_one(Pipeline *self, PyObject *raw)
{
    untrack(raw, 0);
    if (PyTuple_Check(raw) && PyTuple_GET_SIZE(raw) >= 2) {
        PyObject *tag = PyTuple_GET_ITEM(raw, 0);
        if (PyUnicode_Check(tag) && PyUnicode_GET_LENGTH(tag) == 1) {
            Py_UCS4 c = PyUnicode_READ_CHAR(tag, 0);
            if (c == 'P')
                return add_point(self, raw);
            if (c == 'E') {
                PyObject *begin = PyDict_GetItemWithError(self->open, PyTuple_GET_ITEM(raw, 1));
                if (begin == NULL)
                    return PyErr_Occurred() ? -1 : 0;
                Py_INCREF(begin);
                if (PyDict_DelItem(self->open, PyTuple_GET_ITEM(raw, 1)) < 0) {
                    Py_DECREF(begin);
                    return -1;
                }
                int rc = add_call(self, begin, raw, NULL, NULL);
                Py_DECREF(begin);
                return rc;
            }
            if (c == 'B') {
                if (PyTuple_GET_SIZE(raw) != B_LEN) {
                    PyErr_Format(PyExc_TypeError, "Expected %d arguments, got %zd", B_LEN,
                                 PyTuple_GET_SIZE(raw));
                    return -1;
                }
                return PyDict_SetItem(self->open, PyTuple_GET_ITEM(raw, 1), raw);
            }
        }
    }
    return add_other(self, raw);
}

static PyObject *
Pipeline_feed(Pipeline *self, PyObject *records)
{
    PyObject *it = PyObject_GetIter(records);
    if (it == NULL)
        return NULL;
    PyObject *raw;
    while ((raw = PyIter_Next(it)) != NULL) {
        int rc = feed_one(self, raw);
        Py_DECREF(raw);
        if (rc < 0) {
            Py_DECREF(it);
            return NULL;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static int
undecodable(void)
{
    return PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_EOFError)
        || PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_MemoryError)
        || PyErr_ExceptionMatches(PyExc_RecursionError);
}

static int
note_unreadable(PyObject *list, long long offset, long long size)
{
    PyObject *t = Py_BuildValue("(LL)", offset, size);
    if (t == NULL)
        return -1;
    int rc = PyList_Append(list, t);
    Py_DECREF(t);
    return rc;
}

static PyObject *
Pipeline_frames(Pipeline *self, PyObject *args)
{
    Py_buffer view;
    long long base, committed;
    if (!PyArg_ParseTuple(args, "y*LL", &view, &base, &committed))
        return NULL;
    const unsigned char *data = view.buf;
    Py_ssize_t pos = 0, end = view.len;
    int broken = 0, collecting = 0;
    PyObject *unreadable = PyList_New(0);
    if (unreadable == NULL)
        goto fail;
    collecting = PyGC_Disable();  /* one collection after the loop, not one per 700 tuples */
    while (pos + 4 <= end) {
        uint32_t size = (uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8
            | (uint32_t)data[pos + 2] << 16 | (uint32_t)data[pos + 3] << 24;
        if (base + pos + 4 + (long long)size > committed) {  /* no frame boundary after it */
            if (note_unreadable(unreadable, base + pos, committed - base - pos) < 0)
                goto fail;
            broken = 1;
            pos = end;
            break;
        }
        if (pos + 4 + (Py_ssize_t)size > end)
            break;
        PyObject *rec = PyMarshal_ReadObjectFromString((const char *)data + pos + 4, size);
        if (rec == NULL) {
            if (!undecodable())
                goto fail;
            PyErr_Clear();
            if (note_unreadable(unreadable, base + pos, 4 + (long long)size) < 0)
                goto fail;
            pos += 4 + size;
            continue;
        }
        pos += 4 + size;
        int rc = 0;
        if (PyList_CheckExact(rec)) {
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(rec) && rc == 0; i++)
                rc = feed_one(self, PyList_GET_ITEM(rec, i));
        } else {
            rc = feed_one(self, rec);
        }
        Py_DECREF(rec);
        if (rc < 0)
            goto fail;
    }
    if (collecting)
        PyGC_Enable();
    PyBuffer_Release(&view);
    PyObject *out = Py_BuildValue("(nOO)", pos, unreadable, broken ? Py_True : Py_False);
    Py_DECREF(unreadable);
    return out;
fail:
    if (collecting)
        PyGC_Enable();
    Py_XDECREF(unreadable);
    PyBuffer_Release(&view);
    return NULL;
}

/* ------------------------------------------------------------------ writing */

/* The callsites row id of a slot, its row written at the first use. */
static int
callsite_row(Pipeline *self, Py_ssize_t slot, long long *row)
{
    Site *s = &self->sites[slot];
    if (s->row == 0) {
        sqlite3_stmt *st = self->stmt[S_CALLSITE];
        long long id = self->next_site_row;
        if (bind_int(self, st, 1, id) < 0 || bind(self, st, 2, s->file) < 0
            || bind(self, st, 3, s->line) < 0 || bind(self, st, 4, s->function) < 0
            || bind(self, st, 5, s->stack) < 0 || run(self, st) < 0)
            return -1;
        self->next_site_row++;
        s->row = id;
    }
    *row = s->row;
    return 0;
}

/* BufferPairing._opened for the writer: the buffer's row goes in at the end of the batch. */
static long long
begin_buffer(Pipeline *self, PyObject *place, PyObject *const *v, long long seq, PyObject *phase)
{
    long long id = self->next_buffer;
    PyObject *idobj = PyLong_FromLongLong(id);
    if (idobj == NULL)
        return -1;
    PyObject *value = PyTuple_Pack(2, idobj, v[3]);
    Py_DECREF(idobj);
    if (value == NULL)
        return -1;
    int rc = PyDict_SetItem(self->live, place, value);
    Py_DECREF(value);
    if (rc < 0)
        return -1;
    if (grow((void **)&self->newbuf, &self->capnew, self->nnew + 1, sizeof(NewBuffer)) < 0)
        return -1;
    NewBuffer *nb = &self->newbuf[self->nnew++];
    nb->id = id;
    for (int i = 0; i < 7; i++) {
        nb->v[i] = v[i] ? v[i] : Py_None;
        Py_INCREF(nb->v[i]);
    }
    nb->alloc_seq = seq;
    Py_INCREF(phase);
    nb->phase = phase;
    nb->freed = 0;
    self->next_buffer++;
    return id;
}

/* BufferPairing._ended: a buffer of this batch gets its free in its INSERT. */
static int
end_buffer(Pipeline *self, long long id, long long seq)
{
    if (id >= self->batch_first && id - self->batch_first < self->nnew) {
        NewBuffer *nb = &self->newbuf[id - self->batch_first];
        if (!nb->freed) {
            nb->freed = 1;
            nb->free_seq = seq;
            return 0;
        }
    }
    if (grow((void **)&self->freed, &self->capfreed, self->nfreed + 2, sizeof(long long)) < 0)
        return -1;
    self->freed[self->nfreed++] = seq;
    self->freed[self->nfreed++] = id;
    return 0;
}

static int
live_id(PyObject *value, long long *id)
{
    *id = PyLong_AsLongLong(PyTuple_GET_ITEM(value, 0));
    return (*id == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* An allocation (alloc) or a free (!alloc) at a point's buffer: its buffer id, 0 for none. */
static int
pair_point(Pipeline *self, Entry *e, int alloc, long long *out)
{
    PyObject *buf = PyTuple_GET_ITEM(e->rec, 13);
    PyObject *place = PyTuple_Pack(3, PyTuple_GET_ITEM(buf, 0), PyTuple_GET_ITEM(buf, 1),
                                   PyTuple_GET_ITEM(buf, 2));
    if (place == NULL)
        return -1;
    int rc = -1;
    long long id = 0;
    PyObject *live = PyDict_GetItemWithError(self->live, place);
    if (live == NULL && PyErr_Occurred())
        goto done;
    if (!alloc) {
        if (live != NULL) {
            if (live_id(live, &id) < 0 || end_buffer(self, id, e->seq) < 0
                || PyDict_DelItem(self->live, place) < 0)
                goto done;
        }
        rc = 0;
        goto done;
    }
    if (live != NULL) {
        int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(live, 1), PyTuple_GET_ITEM(buf, 3), Py_EQ);
        if (same < 0 || live_id(live, &id) < 0)
            goto done;
        if (same) {
            rc = 0;
            goto done;
        }
        if (end_buffer(self, id, e->seq) < 0)  /* a free never seen: this allocation took it */
            goto done;
    }
    PyObject *v[7] = {PyTuple_GET_ITEM(buf, 0), PyTuple_GET_ITEM(buf, 1), PyTuple_GET_ITEM(buf, 2),
                      PyTuple_GET_ITEM(buf, 3), NULL, NULL, NULL};
    id = begin_buffer(self, place, v, e->seq, e->phase);
    if (id >= 0)
        rc = 0;
done:
    Py_DECREF(place);
    *out = id;
    return rc;
}

/* `v` in decimal at `p`; returns the end (sprintf's positional parsing cost more than the
 * row's binding). */
static char *
format_int(char *p, long long v)
{
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *p++ = '-';
    while (n)
        *p++ = tmp[--n];
    return p;
}

static char *shape_buf;
static Py_ssize_t shape_cap;

/* `_encode(list(shape))`: ints written here, anything else through the JSON encoder. */
static PyObject *
shape_text(Pipeline *self, PyObject *shape, const char **s, Py_ssize_t *n)
{
    Py_ssize_t len = PySequence_Fast_GET_SIZE(shape);
    PyObject **items = PySequence_Fast_ITEMS(shape);
    if (grow((void **)&shape_buf, &shape_cap, len * 22 + 3, 1) < 0)
        return NULL;
    char *p = shape_buf;
    *p++ = '[';
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *x = items[i];
        if (!PyLong_CheckExact(x))
            goto slow;
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(x, &overflow);
        if (overflow || (v == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            goto slow;
        }
        if (i)
            *p++ = ',';
        p = format_int(p, v);
    }
    *p++ = ']';
    *s = shape_buf;
    *n = p - shape_buf;
    Py_RETURN_NONE;  /* nothing to keep alive */
slow:;
    PyObject *list = PySequence_List(shape);
    if (list == NULL)
        return NULL;
    PyObject *text = PyObject_CallOneArg(self->json, list);
    Py_DECREF(list);
    if (text == NULL)
        return NULL;
    *s = PyUnicode_AsUTF8AndSize(text, n);
    if (*s == NULL) {
        Py_DECREF(text);
        return NULL;
    }
    return text;
}

static int
write_tensors(Pipeline *self, Entry *e, PyObject *descs, PyObject *role)
{
    if (descs == Py_None || !PyTuple_Check(descs))
        return 0;
    sqlite3_stmt *st = self->stmt[S_TENSOR];
    Py_ssize_t n = PyTuple_GET_SIZE(descs);
    for (Py_ssize_t pos = 0; pos < n; pos++) {
        PyObject *d = PyTuple_GET_ITEM(descs, pos);
        PyObject *buf = PyTuple_GET_ITEM(d, 6);
        const char *s;
        Py_ssize_t slen;
        PyObject *keep = shape_text(self, PyTuple_GET_ITEM(d, 2), &s, &slen);
        if (keep == NULL)
            return -1;
        int rc = 0;
        if (self->shape_len != slen || memcmp(self->shape_bound, s, (size_t)slen) != 0) {
            /* a copy the statement keeps: the same shape is not bound again */
            if (grow((void **)&self->shape_bound, &self->shape_cap, slen + 1, 1) < 0) {
                Py_DECREF(keep);
                return -1;
            }
            memcpy(self->shape_bound, s, (size_t)slen);
            self->shape_len = -1;
            if (sqlite3_bind_text(st, 6, self->shape_bound, (int)slen, SQLITE_STATIC) != SQLITE_OK)
                rc = -1;
            else
                self->shape_len = slen;
        }
        if (rc < 0 || bindc_int(self, S_TENSOR, 1, e->seq) < 0 || bindc(self, S_TENSOR, 2, role) < 0
            || bindc_int(self, S_TENSOR, 3, pos) < 0 || bindc(self, S_TENSOR, 4, PyTuple_GET_ITEM(d, 0)) < 0
            || bindc(self, S_TENSOR, 5, PyTuple_GET_ITEM(d, 1)) < 0
            || bindc(self, S_TENSOR, 7, PyTuple_GET_ITEM(d, 3)) < 0
            || bindc(self, S_TENSOR, 8, PyTuple_GET_ITEM(d, 4)) < 0
            || bindc(self, S_TENSOR, 9, PyTuple_GET_ITEM(d, 5)) < 0)
            rc = -1;
        if (rc == 0 && buf == Py_None) {
            for (int i = 10; i <= 14 && rc == 0; i++)
                rc = bindc(self, S_TENSOR, i, NULL);
        } else if (rc == 0) {
            PyObject *place = PyTuple_Pack(3, PyTuple_GET_ITEM(buf, 0), PyTuple_GET_ITEM(buf, 1),
                                           PyTuple_GET_ITEM(buf, 2));
            long long id = -1;
            if (place == NULL) {
                rc = -1;
            } else {
                PyObject *live = PyDict_GetItemWithError(self->live, place);
                if (live != NULL) {
                    rc = live_id(live, &id);
                } else if (PyErr_Occurred()) {
                    rc = -1;
                } else {
                    PyObject *v[7] = {PyTuple_GET_ITEM(buf, 0), PyTuple_GET_ITEM(buf, 1),
                                      PyTuple_GET_ITEM(buf, 2), PyTuple_GET_ITEM(buf, 3),
                                      PyTuple_GET_ITEM(buf, 4), PyTuple_GET_ITEM(buf, 5),
                                      PyTuple_GET_ITEM(d, 0)};
                    id = begin_buffer(self, place, v, e->seq, e->phase);
                    rc = id < 0 ? -1 : 0;
                }
                Py_DECREF(place);
            }
            if (rc == 0 && (bindc_int(self, S_TENSOR, 10, id) < 0
                            || bindc(self, S_TENSOR, 11, PyTuple_GET_ITEM(buf, 0)) < 0
                            || bindc(self, S_TENSOR, 12, PyTuple_GET_ITEM(buf, 1)) < 0
                            || bindc(self, S_TENSOR, 13, PyTuple_GET_ITEM(buf, 2)) < 0
                            || bindc(self, S_TENSOR, 14, PyTuple_GET_ITEM(buf, 3)) < 0))
                rc = -1;
        }
        if (rc == 0)
            rc = run(self, st);
        Py_DECREF(keep);
        if (rc < 0) {
            sqlite3_reset(st);
            db_error(self);
            return -1;
        }
    }
    return 0;
}

/* (device, trace) -> traces.id, or NULL (borrowed) */
static PyObject *
trace_row(Pipeline *self, Entry *e, int *failed)
{
    *failed = 0;
    PyObject *key = PyTuple_Pack(2, e->device, e->trace);
    if (key == NULL) {
        *failed = 1;
        return NULL;
    }
    PyObject *row = PyDict_GetItemWithError(self->traces, key);
    Py_DECREF(key);
    if (row == NULL && PyErr_Occurred())
        *failed = 1;
    return row;
}

static int
count_up(PyObject *counts, PyObject *row)
{
    PyObject *n = PyDict_GetItemWithError(counts, row);
    if (n == NULL && PyErr_Occurred())
        return -1;
    long long v = n ? PyLong_AsLongLong(n) : 0;
    PyObject *m = PyLong_FromLongLong(v + 1);
    if (m == NULL)
        return -1;
    int rc = PyDict_SetItem(counts, row, m);
    Py_DECREF(m);
    return rc;
}

static int
set_trace(Pipeline *self, Entry *e, int stmt, int release)
{
    int failed;
    PyObject *row = trace_row(self, e, &failed);
    if (row == NULL)
        return failed ? -1 : 0;
    Py_INCREF(row);
    PyObject *ops = PyDict_GetItemWithError(self->trace_ops, row);
    int rc = -1;
    if (ops == NULL && PyErr_Occurred())
        goto done;
    sqlite3_stmt *st = self->stmt[stmt];
    if (bind_int(self, st, 1, e->seq) < 0 || (ops ? bind(self, st, 2, ops) : bind_int(self, st, 2, 0)) < 0
        || bind(self, st, 3, row) < 0 || run(self, st) < 0)
        goto done;
    if (release) {
        PyObject *key = PyTuple_Pack(2, e->device, e->trace);
        if (key == NULL)
            goto done;
        int del = PyDict_DelItem(self->traces, key);
        Py_DECREF(key);
        if (del < 0) {
            if (!PyErr_ExceptionMatches(PyExc_KeyError))
                goto done;
            PyErr_Clear();
        }
    }
    rc = 0;
done:
    Py_DECREF(row);
    return rc;
}

/* SessionWriter._track for the events that change traces or devices. */
static int
track(Pipeline *self, Entry *e)
{
    PyObject *k = e->kind;
    PyObject *cq = e->point ? Py_None : PyTuple_GET_ITEM(e->rec, 9);
    PyObject *parent = PyTuple_GET_ITEM(e->rec, 2);
    int failed;
    if (k == self->t_op) {
        if (e->phase == self->t_capture && parent == Py_None && e->device != Py_None) {
            PyObject *row = trace_row(self, e, &failed);
            if (row != NULL)
                return count_up(self->trace_ops, row);
            return failed ? -1 : 0;
        }
    } else if (k == self->t_trace_begin) {
        if (e->trace == Py_None)
            return 0;
        long long row = self->next_trace++;
        PyObject *rowobj = PyLong_FromLongLong(row);
        PyObject *key = PyTuple_Pack(2, e->device, e->trace);
        int rc = -1;
        if (rowobj != NULL && key != NULL && PyDict_SetItem(self->traces, key, rowobj) == 0) {
            sqlite3_stmt *st = self->stmt[S_TRACE];
            if (bind_int(self, st, 1, row) == 0 && bind(self, st, 2, e->device) == 0
                && bind(self, st, 3, e->trace) == 0 && bind(self, st, 4, cq) == 0
                && bind_int(self, st, 5, e->seq) == 0 && run(self, st) == 0)
                rc = 0;
        }
        Py_XDECREF(rowobj);
        Py_XDECREF(key);
        return rc;
    } else if (k == self->t_trace_end) {
        return set_trace(self, e, S_TRACE_END, 0);
    } else if (k == self->t_trace_execute) {
        PyObject *row = trace_row(self, e, &failed);
        if (row == NULL)
            return failed ? -1 : 0;
        if (count_up(self->trace_runs, row) < 0 || PySet_Add(self->executed, row) < 0)
            return -1;
    } else if (k == self->t_trace_release) {
        return set_trace(self, e, S_TRACE_RELEASE, 1);
    } else if (k == self->t_device_open && e->device != Py_None) {
        PyObject *args = e->args ? e->args : Py_None;
        PyObject *seq = PyLong_FromLongLong(e->seq);
        if (seq == NULL)
            return -1;
        PyObject *row = PyObject_CallFunctionObjArgs(self->device_row, e->device, seq, args, NULL);
        Py_DECREF(seq);
        if (row == NULL)
            return -1;
        int rc = 0;
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != 7) {
            PyErr_SetString(PyExc_TypeError, "device_row() must return a 7-tuple");
            rc = -1;
        }
        sqlite3_stmt *st = self->stmt[S_DEVICE];
        for (int i = 0; i < 7 && rc == 0; i++)
            rc = bind(self, st, i + 1, PyTuple_GET_ITEM(row, i));
        if (rc == 0)
            rc = run(self, st);
        Py_DECREF(row);
        return rc;
    } else if (k == self->t_device_close && e->device != Py_None) {
        sqlite3_stmt *st = self->stmt[S_DEVICE_CLOSE];
        if (bind_int(self, st, 1, e->seq) < 0 || bind(self, st, 2, e->device) < 0 || run(self, st) < 0)
            return -1;
    }
    return 0;
}

static int
write_entry(Pipeline *self, Entry *e)
{
    long long buffer = 0;
    int has_buffer = 0;
    PyObject *k = e->kind;
    if (e->point && (k == self->t_alloc || k == self->t_free) && PyTuple_GET_ITEM(e->rec, 13) != Py_None) {
        if (pair_point(self, e, k == self->t_alloc, &buffer) < 0)
            return -1;
        has_buffer = buffer != 0;
    } else if (!(k == self->t_op && e->phase != self->t_capture)) {
        if (track(self, e) < 0)
            return -1;
    }
    long long site = 0;
    if (e->site >= 0 && callsite_row(self, e->site, &site) < 0)
        return -1;
    PyObject *json = NULL;
    if (e->args != NULL && PyDict_GET_SIZE(e->args)) {
        json = PyObject_CallOneArg(self->json, e->args);
        if (json == NULL)
            return -1;
    }
    PyObject *r = e->rec;
    sqlite3_stmt *st = self->stmt[S_EVENT];
    int rc = -1;
    const int E = S_EVENT;
    if (bindc_int(self, E, 1, e->seq) < 0 || bindc(self, E, 2, PyTuple_GET_ITEM(r, 2)) < 0
        || bindc(self, E, 3, PyTuple_GET_ITEM(r, 3)) < 0 || bindc(self, E, 4, e->dur) < 0
        || bindc(self, E, 5, PyTuple_GET_ITEM(r, 4)) < 0 || bindc(self, E, 6, e->kind) < 0
        || bindc(self, E, 7, e->name) < 0 || bindc(self, E, 8, e->phase) < 0
        || bindc(self, E, 9, e->device) < 0
        || bindc(self, E, 10, e->point ? NULL : PyTuple_GET_ITEM(r, 9)) < 0
        || bindc(self, E, 11, e->trace) < 0
        || (site ? bindc_int(self, E, 12, site) : bindc(self, E, 12, NULL)) < 0
        || bindc(self, E, 13, e->status) < 0 || bindc(self, E, 14, e->error) < 0
        || bindc(self, E, 15, json) < 0 || bindc(self, E, 16, e->region) < 0
        || (has_buffer ? bindc_int(self, E, 17, buffer) : bindc(self, E, 17, NULL)) < 0
        || run(self, st) < 0)
        goto done;
    if (!e->point) {
        if (write_tensors(self, e, PyTuple_GET_ITEM(r, 13), self->t_in) < 0)
            goto done;
        if (e->end != NULL && write_tensors(self, e, PyTuple_GET_ITEM(e->end, 5), self->t_out) < 0)
            goto done;
    }
    rc = 0;
done:
    Py_XDECREF(json);
    return rc;
}

/* SessionWriter._flush_buffers */
static int
flush_buffers(Pipeline *self)
{
    sqlite3_stmt *st = self->stmt[S_BUFFER];
    for (Py_ssize_t i = 0; i < self->nnew; i++) {
        NewBuffer *nb = &self->newbuf[i];
        const int B = S_BUFFER;
        if (bindc_int(self, B, 1, nb->id) < 0)
            return -1;
        for (int j = 0; j < 7; j++)
            if (bindc(self, B, j + 2, nb->v[j]) < 0)
                return -1;
        if (bindc_int(self, B, 9, nb->alloc_seq) < 0 || bindc(self, B, 10, nb->phase) < 0
            || (nb->freed ? bindc_int(self, B, 11, nb->free_seq) : bindc(self, B, 11, NULL)) < 0
            || run(self, st) < 0)
            return -1;
    }
    st = self->stmt[S_FREED];
    for (Py_ssize_t i = 0; i < self->nfreed; i += 2)
        if (bind_int(self, st, 1, self->freed[i]) < 0 || bind_int(self, st, 2, self->freed[i + 1]) < 0
            || run(self, st) < 0)
            return -1;
    st = self->stmt[S_EXECUTIONS];
    PyObject *it = PyObject_GetIter(self->executed), *row;
    if (it == NULL)
        return -1;
    while ((row = PyIter_Next(it)) != NULL) {
        PyObject *runs = PyDict_GetItemWithError(self->trace_runs, row);
        int rc = (runs == NULL || bind(self, st, 1, runs) < 0 || bind(self, st, 2, row) < 0
                  || run(self, st) < 0) ? -1 : 0;
        Py_DECREF(row);
        if (rc < 0) {
            Py_DECREF(it);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_KeyError, "trace runs");
            return -1;
        }
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

static void
clear_batch(Pipeline *self)
{
    for (Py_ssize_t i = 0; i < self->nnew; i++) {
        for (int j = 0; j < 7; j++)
            Py_DECREF(self->newbuf[i].v[j]);
        Py_DECREF(self->newbuf[i].phase);
    }
    self->nnew = 0;
    self->nfreed = 0;
    PySet_Clear(self->executed);
}

static int
by_seq(const void *a, const void *b)
{
    const Entry *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

static PyObject *
Pipeline_release(Pipeline *self, PyObject *arg)
{
    int store = PyObject_IsTrue(arg);
    if (store < 0)
        return NULL;
    if (self->npending == 0)
        return PyLong_FromLong(0);
    if (!self->sorted) {
        qsort(self->pending, (size_t)self->npending, sizeof(Entry), by_seq);
        self->sorted = 1;
    }
    Py_ssize_t cut = self->npending;
    if (PyDict_GET_SIZE(self->open)) {  /* below every running call */
        PyObject *key, *value;
        Py_ssize_t i = 0;
        long long low = 0;
        int first = 1;
        while (PyDict_Next(self->open, &i, &key, &value)) {
            long long s;
            if (seq_of(key, &s) < 0)
                return NULL;
            if (first || s < low)
                low = s;
            first = 0;
        }
        Py_ssize_t lo = 0, hi = self->npending;
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (self->pending[mid].seq < low)
                lo = mid + 1;
            else
                hi = mid;
        }
        cut = lo;
    }
    int failed = 0;
    if (store && cut > 0 && self->db != NULL) {
        self->batch_first = self->next_buffer;
        if (exec_sql(self, "BEGIN") < 0) {
            failed = 1;
        } else {
            for (Py_ssize_t i = 0; i < cut && !failed; i++)
                failed = write_entry(self, &self->pending[i]) < 0;
            if (!failed)
                failed = flush_buffers(self) < 0;
            if (!failed)
                failed = exec_sql(self, "COMMIT") < 0;
            if (failed) {
                PyObject *type, *value, *tb;
                PyErr_Fetch(&type, &value, &tb);
                sqlite3_exec(self->db, "ROLLBACK", NULL, NULL, NULL);  /* may be rolled back already */
                PyErr_Restore(type, value, tb);
            }
        }
        clear_batch(self);
    } else if (store && cut > 0) {
        PyErr_SetString(PyExc_ValueError, "the pipeline's connection is closed");
        failed = 1;
    }
    for (Py_ssize_t i = 0; i < cut; i++)
        entry_clear(&self->pending[i]);
    memmove(self->pending, self->pending + cut, (size_t)(self->npending - cut) * sizeof(Entry));
    self->npending -= cut;
    self->released += cut;
    if (failed)
        return NULL;
    return PyLong_FromSsize_t(cut);
}

static PyObject *
Pipeline_close_open(Pipeline *self, PyObject *args)
{
    PyObject *status, *error;
    if (!PyArg_ParseTuple(args, "OO", &status, &error))
        return NULL;
    PyObject *st = vocabulary_text(self->statuses, status);
    if (st == NULL)
        return NULL;
    PyObject *keys = PyDict_Keys(self->open);
    if (keys == NULL || PyList_Sort(keys) < 0) {
        Py_XDECREF(keys);
        Py_DECREF(st);
        return NULL;
    }
    PyObject *last_user = Py_None, *last_any = Py_None;
    Py_ssize_t n = PyList_GET_SIZE(keys);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *seq = PyList_GET_ITEM(keys, i);
        PyObject *begin = PyDict_GetItemWithError(self->open, seq);
        if (begin == NULL || add_call(self, begin, NULL, st, error) < 0) {
            Py_DECREF(keys);
            Py_DECREF(st);
            if (!PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, seq);
            return NULL;
        }
        last_any = seq;
        if (PyTuple_GET_ITEM(begin, 2) == Py_None)
            last_user = seq;
    }
    PyObject *out = last_user != Py_None ? last_user : last_any;
    Py_INCREF(out);
    Py_DECREF(keys);
    Py_DECREF(st);
    PyDict_Clear(self->open);
    return out;
}

static void
close_db(Pipeline *self)
{
    forget_bound(self);
    for (int i = 0; i < S_COUNT; i++) {
        if (self->stmt[i] != NULL)
            sqlite3_finalize(self->stmt[i]);
        self->stmt[i] = NULL;
    }
    if (self->db != NULL)
        sqlite3_close_v2(self->db);
    self->db = NULL;
}

static PyObject *
Pipeline_close(Pipeline *self, PyObject *unused)
{
    close_db(self);
    Py_RETURN_NONE;
}

static int
Pipeline_init(Pipeline *self, PyObject *args, PyObject *kwds)
{
    PyObject *path_obj, *helpers;
    if (!PyArg_ParseTuple(args, "O&O!", PyUnicode_FSConverter, &path_obj, &PyTuple_Type, &helpers))
        return -1;
    if (PyTuple_GET_SIZE(helpers) != H_COUNT) {
        Py_DECREF(path_obj);
        PyErr_SetString(PyExc_TypeError, "helpers has the wrong length");
        return -1;
    }
    Py_INCREF(helpers);
    self->helpers = helpers;
    self->kinds = PyTuple_GET_ITEM(helpers, H_KINDS);
    self->phases = PyTuple_GET_ITEM(helpers, H_PHASES);
    self->statuses = PyTuple_GET_ITEM(helpers, H_STATUSES);
    self->storable = PyTuple_GET_ITEM(helpers, H_STORABLE);
    self->json = PyTuple_GET_ITEM(helpers, H_JSON);
    self->other = PyTuple_GET_ITEM(helpers, H_OTHER);
    self->device_row = PyTuple_GET_ITEM(helpers, H_DEVICE_ROW);
    self->sqlite3_mod = PyTuple_GET_ITEM(helpers, H_SQLITE3);
    if (!PyDict_Check(self->kinds) || !PyDict_Check(self->phases) || !PyDict_Check(self->statuses)) {
        Py_DECREF(path_obj);
        PyErr_SetString(PyExc_TypeError, "the vocabulary must be dicts");
        return -1;
    }
#define TEXT(field, table, key)                                                     \
    if ((self->field = PyDict_GetItemString(self->table, key)) == NULL) {           \
        Py_DECREF(path_obj);                                                        \
        PyErr_Format(PyExc_KeyError, "%s", key);                                    \
        return -1;                                                                  \
    }
    TEXT(t_alloc, kinds, "alloc") TEXT(t_free, kinds, "free") TEXT(t_op, kinds, "op")
    TEXT(t_trace_begin, kinds, "trace_begin") TEXT(t_trace_end, kinds, "trace_end")
    TEXT(t_trace_execute, kinds, "trace_execute") TEXT(t_trace_release, kinds, "trace_release")
    TEXT(t_device_open, kinds, "device_open") TEXT(t_device_close, kinds, "device_close")
    TEXT(t_capture, phases, "capture") TEXT(t_ok, statuses, "ok")
#undef TEXT
    self->t_in = PyUnicode_InternFromString("in");
    self->t_out = PyUnicode_InternFromString("out");
    self->open = PyDict_New();
    self->site_slots = PyDict_New();
    self->live = PyDict_New();
    self->traces = PyDict_New();
    self->trace_ops = PyDict_New();
    self->trace_runs = PyDict_New();
    self->executed = PySet_New(NULL);
    self->sorted = 1;
    self->shape_len = -1;
    self->next_site_row = 1;
    self->next_buffer = 1;
    self->next_trace = 1;
    if (!self->t_in || !self->t_out || !self->open || !self->site_slots || !self->live
        || !self->traces || !self->trace_ops || !self->trace_runs || !self->executed) {
        Py_DECREF(path_obj);
        return -1;
    }
    int rc = sqlite3_open_v2(PyBytes_AS_STRING(path_obj), &self->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    Py_DECREF(path_obj);
    if (rc != SQLITE_OK) {
        if (self->db != NULL)
            db_error(self);
        else
            PyErr_NoMemory();
        close_db(self);
        return -1;
    }
    /* As SessionWriter's connection: wait for another process's lock, WAL (the file's),
     * NORMAL. No mutex of its own (NOMUTEX): the GIL serialises every use, and taking and
     * dropping one per bind cost more than the binding. */
    sqlite3_busy_timeout(self->db, 120000);
    if (exec_sql(self, "PRAGMA synchronous = NORMAL") < 0) {
        close_db(self);
        return -1;
    }
    for (int i = 0; i < S_COUNT; i++) {
        if (sqlite3_prepare_v2(self->db, SQL[i], -1, &self->stmt[i], NULL) != SQLITE_OK) {
            db_error(self);
            close_db(self);
            return -1;
        }
    }
    return 0;
}

static void
Pipeline_dealloc(Pipeline *self)
{
    close_db(self);
    for (Py_ssize_t i = 0; i < self->npending; i++)
        entry_clear(&self->pending[i]);
    PyMem_Free(self->pending);
    for (Py_ssize_t i = 0; i < self->nsites; i++) {
        Py_XDECREF(self->sites[i].file);
        Py_XDECREF(self->sites[i].line);
        Py_XDECREF(self->sites[i].function);
        Py_XDECREF(self->sites[i].stack);
    }
    PyMem_Free(self->sites);
    if (self->executed != NULL)
        clear_batch(self);
    PyMem_Free(self->newbuf);
    PyMem_Free(self->freed);
    PyMem_Free(self->shape_bound);
    Py_XDECREF(self->helpers);
    Py_XDECREF(self->t_in);
    Py_XDECREF(self->t_out);
    Py_XDECREF(self->open);
    Py_XDECREF(self->site_slots);
    Py_XDECREF(self->live);
    Py_XDECREF(self->traces);
    Py_XDECREF(self->trace_ops);
    Py_XDECREF(self->trace_runs);
    Py_XDECREF(self->executed);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Pipeline_get_open(Pipeline *self, void *unused)
{
    Py_INCREF(self->open);
    return self->open;
}

static PyObject *
Pipeline_get_released(Pipeline *self, void *unused)
{
    return PyLong_FromLongLong(self->released);
}

static PyObject *
Pipeline_get_pending(Pipeline *self, void *unused)
{
    return PyLong_FromSsize_t(self->npending);
}

static PyMethodDef Pipeline_methods[] = {
    {"frames", (PyCFunction)Pipeline_frames, METH_VARARGS, "frames(data, base, committed)"},
    {"feed", (PyCFunction)Pipeline_feed, METH_O, "feed(records)"},
    {"release", (PyCFunction)Pipeline_release, METH_O, "release(store) -> events released"},
    {"close_open", (PyCFunction)Pipeline_close_open, METH_VARARGS, "close_open(status, error)"},
    {"close", (PyCFunction)Pipeline_close, METH_NOARGS, "close the connection"},
    {NULL},
};

static PyGetSetDef Pipeline_getset[] = {
    {"open_calls", (getter)Pipeline_get_open, NULL, "seq -> Begin record of running calls", NULL},
    {"released", (getter)Pipeline_get_released, NULL, "events released so far", NULL},
    {"pending", (getter)Pipeline_get_pending, NULL, "complete events not yet released", NULL},
    {NULL},
};

static PyTypeObject PipelineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_ttrecord_pipeline.Pipeline",
    .tp_basicsize = sizeof(Pipeline),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Pipeline_init,
    .tp_dealloc = (destructor)Pipeline_dealloc,
    .tp_methods = Pipeline_methods,
    .tp_getset = Pipeline_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ttrecord_pipeline", NULL, -1, NULL,
};

PyMODINIT_FUNC
PyInit__ttrecord_pipeline(void)
{
    if (PyType_Ready(&PipelineType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&PipelineType);
    if (PyModule_AddObject(m, "Pipeline", (PyObject *)&PipelineType) < 0) {
        Py_DECREF(&PipelineType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
