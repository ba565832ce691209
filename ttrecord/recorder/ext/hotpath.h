/* What the parts of the C hot path share (one translation unit: hotpath.c includes them). */
#ifndef TTRECORD_HOTPATH_H
#define TTRECORD_HOTPATH_H

#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <stdint.h>
#include <time.h>

static PyObject *s_f_back, *s_f_lasti, *s_tensor_id, *s_buffer_address, *s_cq_id,
    *s_name, *s_module, *s_Tensor, *s_torch, *s_self, *s_shape, *s_dtype, *s_layout,
    *s_storage_type, *s_memory_config, *s_buffer_type, *s_memory_layout, *s_device, *s_host,
    *s_DEVICE, *s_INTERLEAVED, *s_buffer_num_pages, *s_buffer_aligned_page_size;

/* Py_SETREF is not part of the limited API */
#define SETREF(dst, src) do { PyObject *old_ = (dst); (dst) = (src); Py_DECREF(old_); } while (0)

#define BUFFER 6  /* records.TENSOR_BUFFER: a description's buffer field */

/* The tuple recorder.py's `_fast_context` builds for `call`, by position. */
enum {
    CTX_RECORDER, CTX_OP, CTX_TL, CTX_CAPTURING, CTX_LIVE, CTX_LEDGER, CTX_OWNER,
    CTX_ENTRIES, CTX_DEATHS, CTX_CACHE, CTX_BY_BUFFER, CTX_SEQ, CTX_T0, CTX_HERE, CTX_SCAN,
    CTX_DESCRIBE, CTX_LOG, CTX_GREW, CTX_PYCALL, CTX_NEW_STATE, CTX_TENSOR, CTX_KIND_TEXTS,
    CTX_CACHE_MISS_NOTE, CTX_DUMPS, CTX_RESERVE, CTX_RELEASE_EVERY, CTX_H2D, CTX_D2H, CTX_EXECUTE,
    CTX_SETTLE, CTX_ON_EXECUTE, CTX_QUEUE, CTX_SETTLED, CTX_AT_END, CTX_SIGNATURES, CTX_ACQUIRE,
    CTX_RELEASE, CTX_SIZE
};

static PyObject *s_off, *s_verifier, *s_regions, *s_per_call_snapshots, *s_callsites, *s_call,
    *s_tid, *s_phase, *s_trace, *s_acquire, *s_release, *s_drain, *s_enabled, *s_dirty,
    *s_generation, *s_defer_many, *s_buffer_unique_id, *s_is_allocated, *s_reconcile,
    *s_broken, *s_end_raised, *s_queue_id, *s_free, *s_alloc, *s_eager, *s_capture, *s_replay,
    *s_ok, *s_B, *s_E, *s_P, *s_trace_id, *s_popleft, *s_dot_record_event, *s_cq, *s_blocking,
    *s_empty,
    *s__entries, *s__devices, *s_objects, *s_num_entries, *zero, *s__lock, *s_write_many,
    *s_stopped, *s__pending, *s__map, *s__end, *s__released, *s__write_locked, *one;

static PyObject *build_bound(PyObject *bound, PyObject *t, PyObject *tid);

#endif
