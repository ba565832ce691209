/* The recorder's per-call work that interpreted Python pays most for, in C (stable ABI).
 *
 * One translation unit: this file includes its parts (log_frames.c, call_sites.c, tensors.c,
 * helpers.c, ledger.c, queue_facts.c, calls.c) after hotpath.h, so every function stays static.
 *
 * append(view, end, reserve, records, dumps) -> int
 *     Frames `records` (a list: one record is written alone, several as a list, as
 *     log.py's writer does) as marshal data (see `encode`; `dumps`, marshal.dumps, for what
 *     it does not write itself), copies the frame into the writable
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
 *
 * call(ctx, name, kind, wrapped, instance, args, kwargs) -> the call's result
 *     Recorder.call, whole, for the commonest calls outside a capture: an eager op, a host
 *     transfer (h2d, d2h) and `execute_trace`, on a thread already recording. The same records
 *     in the same order as recorder.py's _begin/_end; Python is called back only for what is
 *     new or rare (a first sight of a tensor or a site, several frees at once, a compile, an
 *     event's queue facts). Anything else (a capture, another kind, a nested call, audit
 *     regions, replay verification) goes to ctx's Python `call`. `ctx` is the tuple
 *     recorder.py's `_fast_context` builds (hotpath.h's CTX_* positions).
 *
 * stash(obj, name, value) / unstash(obj, name)
 *     Sets / deletes `name` in obj's own instance dictionary, past its type's __setattr__ (a
 *     wrapt proxy forwards every set to the object it wraps): where the proxy's C attribute
 *     lookup finds it before the Python __getattr__ fallback (proxy.py's ModuleProxy).
 */
#include "hotpath.h"

#include "log_frames.c"
#include "call_sites.c"
#include "tensors.c"
#include "helpers.c"
#include "ledger.c"
#include "queue_facts.c"
#include "calls.c"

static PyObject *
hp_stash(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *obj, *name, *value = NULL;
    if (!PyArg_ParseTuple(args, "OU|O", &obj, &name, &value))
        return NULL;
    if (PyObject_GenericSetAttr(obj, name, value) < 0) {
        if (value != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
            return NULL;
        PyErr_Clear();  /* nothing stashed under that name */
    }
    Py_RETURN_NONE;
}

static PyObject *
hp_unstash(PyObject *self, PyObject *args)
{
    PyObject *obj, *name;
    if (!PyArg_ParseTuple(args, "OU", &obj, &name))
        return NULL;
    PyObject *two = PyTuple_Pack(2, obj, name);
    if (two == NULL)
        return NULL;
    PyObject *r = hp_stash(self, two);
    Py_DECREF(two);
    return r;
}

static PyMethodDef methods[] = {
    {"append", hp_append, METH_VARARGS, "Frame records into the shared log mapping."},
    {"here", hp_here, METH_VARARGS, "The call site id of a call made at a frame."},
    {"describe", hp_describe, METH_VARARGS, "A tensor's description, cached per tensor_id."},
    {"build", hp_build, METH_VARARGS, "A tensor's description, from its metadata."},
    {"scan", hp_scan, METH_VARARGS, "Tensors, scalars, device and cq of a call's arguments."},
    {"call", (PyCFunction)(void (*)(void))hp_call, METH_FASTCALL,
     "Recorder.call, for an eager op or a call of the replay loop."},
    {"stash", hp_stash, METH_VARARGS, "Set an attribute in an object's own dictionary."},
    {"queue_facts", hp_queue_facts, METH_VARARGS,
     "The queue facts `call` finds itself (\"ask\": the calls it leaves to queues.py)."},
    {"unstash", hp_unstash, METH_VARARGS, "Delete an attribute from an object's own dictionary."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ttrecord_hotpath", NULL, -1, methods,
    NULL, NULL, NULL, NULL,
};

static const struct { PyObject **slot; const char *text; } strings[] = {
    {&s_f_back, "f_back"},
    {&s_f_lasti, "f_lasti"},
    {&s_tensor_id, "tensor_id"},
    {&s_buffer_address, "buffer_address"},
    {&s_cq_id, "cq_id"},
    {&s_name, "__name__"},
    {&s_module, "__module__"},
    {&s_Tensor, "Tensor"},
    {&s_torch, "torch"},
    {&s_self, "self"},
    {&s_shape, "shape"},
    {&s_dtype, "dtype"},
    {&s_layout, "layout"},
    {&s_storage_type, "storage_type"},
    {&s_memory_config, "memory_config"},
    {&s_buffer_type, "buffer_type"},
    {&s_memory_layout, "memory_layout"},
    {&s_device, "device"},
    {&s_host, "host"},
    {&s_DEVICE, "DEVICE"},
    {&s_INTERLEAVED, "INTERLEAVED"},
    {&s_off, "off"},
    {&s_verifier, "verifier"},
    {&s_regions, "regions"},
    {&s_per_call_snapshots, "per_call_snapshots"},
    {&s_callsites, "callsites"},
    {&s_call, "call"},
    {&s_tid, "tid"},
    {&s_phase, "phase"},
    {&s_trace, "trace"},
    {&s_acquire, "acquire"},
    {&s_release, "release"},
    {&s_drain, "drain"},
    {&s_enabled, "enabled"},
    {&s_dirty, "dirty"},
    {&s_generation, "generation"},
    {&s_defer_many, "defer_many"},
    {&s_buffer_unique_id, "buffer_unique_id"},
    {&s_is_allocated, "is_allocated"},
    {&s_reconcile, "_reconcile"},
    {&s_broken, "_broken"},
    {&s_end_raised, "_end_raised"},
    {&s_queue_id, "queue_id"},
    {&s_free, "free"},
    {&s_alloc, "alloc"},
    {&s_eager, "eager"},
    {&s_capture, "capture"},
    {&s_replay, "replay"},
    {&s_ok, "ok"},
    {&s_B, "B"},
    {&s_E, "E"},
    {&s_P, "P"},
    {&s_trace_id, "trace_id"},
    {&s_popleft, "popleft"},
    {&s_buffer_num_pages, "buffer_num_pages"},
    {&s_buffer_aligned_page_size, "buffer_aligned_page_size"},
    {&s_dot_record_event, ".record_event"},
    {&s_cq, "cq"},
    {&s_blocking, "blocking"},
    {&s_empty, ""},
    {&s__entries, "_entries"},
    {&s__devices, "_devices"},
    {&s_objects, "objects"},
    {&s_num_entries, "num_program_cache_entries"},
    {&s__lock, "_lock"},
    {&s_stopped, "stopped"},
    {&s__pending, "_pending"},
    {&s_write_many, "write_many"},
    {&s__map, "_map"},
    {&s__end, "_end"},
    {&s__released, "_released"},
    {&s__write_locked, "_write_locked"},
};

PyMODINIT_FUNC
PyInit__ttrecord_hotpath(void)
{
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++)
        if ((*strings[i].slot = PyUnicode_InternFromString(strings[i].text)) == NULL)
            return NULL;
    if ((one = PyLong_FromLong(1)) == NULL || (zero = PyLong_FromLong(0)) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
