"""tt_dit's @traced_function decorator on a model method: the method is called eagerly as
usual, and with traced=True a Tracer bound to the instance (functools.partial over self, the device
resolved by a callable) captures on the first call and replays on the next ones; tensor arguments
are copied into the captured inputs, scalar arguments must equal the captured ones.

Upstream: tenstorrent/tt-metal models/tt_dit/utils/tracing.py@02ff5fcc4ddf33f9f7f1b2673230535e2344034e
(traced_function, its context-bound path, and Tracer).
Changes:
  * traced_function keeps only the context-bound path (device=<callable>, first positional
    argument bound with functools.partial, one Tracer per instance in a WeakKeyDictionary); the
    auto-discovered and injected mesh-device paths and their validation dropped;
  * Tracer as in dit_tracer_denoise.py (typing overloads, logging and the multi-device warning
    dropped);
  * the decorated method (a tt_dit model's forward) -> a stand-in DiT block with the same shape of
    call: a latent tensor, a timestep-embedding tensor and a Python float guidance scale;
  * a driver in place of the pipeline: ttnn.open_device; four steps run eagerly (traced=False) and
    on a second instance with traced=True, each output read before the next call; traced == eager
    bit for bit, exit 1 on mismatch.
"""

import functools
import sys
import weakref

import torch

import ttnn

DIM, STEPS = 32, 4


class Tracer:
    """Wrapper for capturing and executing a trace of a given function."""

    _traces_live = {}

    def __init__(self, function, /, *, device=None, devices=None, prep_run=True, clone_prep_inputs=True):
        if (device is None) == (devices is None):
            msg = "exactly one of 'device' or 'devices' must be provided"
            raise ValueError(msg)

        if devices is None:
            assert device is not None
            devices = (device,)

        for d in devices:
            if d.id() not in Tracer._traces_live:
                Tracer._traces_live[d.id()] = 0

        self._function = function
        self._devices = tuple(devices)
        self._prep_run = prep_run
        self._clone_prep_inputs = clone_prep_inputs
        self._args = ()
        self._kwargs = {}
        self._outputs = None
        self._trace_ids = None

    def __call__(self, *args, traced=True, tracer_cq_id=0, tracer_blocking_execution=True, tracer_execute_on_capture=True, **kwargs):
        if not traced:
            if self._function is None:
                msg = "untraced execution is not possible after the captured function has been released"
                raise RuntimeError(msg)
            if self._trace_ids is not None:
                msg = "untraced execution is not allowed after the trace has been captured"
                raise RuntimeError(msg)

            self._args = args
            self._kwargs = kwargs
            return self._function(*args, **kwargs)

        if self._trace_ids is None:
            self._capture(
                args,
                kwargs,
                cq_id=tracer_cq_id,
                blocking_execution=tracer_blocking_execution,
                execute=tracer_execute_on_capture,
            )
        else:
            self._execute(args, kwargs, cq_id=tracer_cq_id, blocking=tracer_blocking_execution)

        return self._outputs

    def _capture(self, args, kwargs, *, cq_id, blocking_execution, execute):
        if self._function is None:
            msg = "tracer cannot be reused after the trace was released"
            raise RuntimeError(msg)

        args = _tree_map(_verify_value, args, path_label="args")
        kwargs = _tree_map(_verify_value, kwargs, path_label="kwargs")
        self._args = _tree_map(self._tensor_to_device, args, path_label="args")
        self._kwargs = _tree_map(self._tensor_to_device, kwargs, path_label="kwargs")

        if self._prep_run:
            if self._clone_prep_inputs:
                prep_args = _tree_map(_clone_tensor, self._args, path_label="args")
                prep_kwargs = _tree_map(_clone_tensor, self._kwargs, path_label="kwargs")
            else:
                prep_args = self._args
                prep_kwargs = self._kwargs

            self._function(*prep_args, **prep_kwargs)
            del prep_args, prep_kwargs

        # capture trace
        trace_ids = tuple(ttnn.begin_trace_capture(d, cq_id=cq_id) for d in self._devices)
        try:
            try:
                outputs = self._function(*self._args, **self._kwargs)
            finally:
                for d, trace_id in zip(self._devices, trace_ids, strict=True):
                    ttnn.end_trace_capture(d, trace_id, cq_id=cq_id)

            outputs = _tree_map(_verify_value, outputs, path_label="outputs")
        except Exception:
            for d, trace_id in zip(self._devices, trace_ids, strict=True):
                ttnn.release_trace(d, trace_id)
            raise

        for d in self._devices:
            Tracer._traces_live[d.id()] += 1
        self._trace_ids = trace_ids
        self._outputs = outputs

        if execute:
            # Trace capture records commands but does not execute them. Execute the trace to
            # actually compute outputs.
            for d, trace_id in zip(self._devices, trace_ids, strict=True):
                ttnn.execute_trace(d, trace_id, cq_id=cq_id, blocking=blocking_execution)

    def _execute(self, args, kwargs, *, cq_id, blocking):
        trace_ids = self._trace_ids
        assert trace_ids is not None

        if len(args) != len(self._args):
            msg = f"expected {len(self._args)} positional args, got {len(args)}"
            raise TypeError(msg)

        if kwargs.keys() != self._kwargs.keys():
            msg = f"expected kwargs {sorted(self._kwargs)}, got {sorted(kwargs)}"
            raise TypeError(msg)

        _tree_map(self._update_input, self._args, args, path_label="args")
        for name, new in kwargs.items():
            _tree_map(self._update_input, self._kwargs[name], new, path_label=f'kwargs["{name}"]')

        for d, trace_id in zip(self._devices, trace_ids, strict=True):
            ttnn.execute_trace(d, trace_id, cq_id=cq_id, blocking=blocking)

    @property
    def trace_captured(self):
        """Whether a trace has been captured and is ready for execution."""
        return self._trace_ids is not None

    def release_trace(self):
        """Release the captured trace and clear inputs and outputs."""
        trace_ids = self._trace_ids
        if trace_ids is None:
            return

        self._trace_ids = None
        self._args = ()
        self._kwargs = {}
        self._outputs = None
        for d, trace_id in zip(self._devices, trace_ids, strict=True):
            Tracer._traces_live[d.id()] -= 1
            ttnn.release_trace(d, trace_id)

    def _tensor_to_device(self, value, *, path_label):
        if not isinstance(value, ttnn.Tensor):
            return value

        if value.device() is None:
            if len(self._devices) != 1:
                msg = f"input '{path_label}' is a host tensor; host tensors are not supported during capture when the tracer manages multiple devices"
                raise ValueError(msg)
            return value.to(self._devices[0])

        if any(value.device() == d for d in self._devices):
            return value

        msg = f"input '{path_label}' device {value.device()} does not match any tracer device"
        raise ValueError(msg)

    def _update_input(self, prev, new, *, path_label):
        """Copy ``new`` into the slot ``prev`` in place."""
        if new is None:
            return
        if type(new) is not type(prev):
            msg = f"input '{path_label}' type {type(new)} does not match the initial type {type(prev)}"
            raise TypeError(msg)

        if isinstance(new, ttnn.Tensor):
            if new.shape != prev.shape or new.dtype != prev.dtype or new.layout != prev.layout:
                msg = f"input '{path_label}' tensor properties do not match the initial value"
                raise ValueError(msg)

            if new.device() is None:
                ttnn.copy_host_to_device_tensor(new, prev)
            else:
                if new.device() != prev.device():
                    msg = f"input '{path_label}' tensor device does not match the initial device"
                    raise ValueError(msg)

                if new.buffer_address() != prev.buffer_address():
                    ttnn.copy(new, prev)

        elif new != prev:
            msg = f"input '{path_label}' does not match the initial value"
            raise ValueError(msg)


_TRACER_VALID_INPUT_TYPES = (ttnn.Tensor, int, float, str, bool, type(None))


def _verify_value(value, *, path_label):
    if not isinstance(value, _TRACER_VALID_INPUT_TYPES):
        msg = f"value '{path_label}' has unsupported type {type(value)}"
        raise TypeError(msg)

    return value


def _clone_tensor(value, *, path_label):
    """Clone a tensor, passing through non-tensor values unchanged."""
    del path_label
    return ttnn.clone(value) if isinstance(value, ttnn.Tensor) else value


def _tree_map(f, x, /, *xs, path_label):
    """Apply a function to leaves of nested tuples, lists and dicts."""
    if not isinstance(x, (tuple, list, dict)):
        return f(x, *xs, path_label=path_label)
    if isinstance(x, dict):
        return {key: _tree_map(f, *(d[key] for d in (x, *xs)), path_label=f'{path_label}["{key}"]') for key in x}
    mapped = [_tree_map(f, *elts, path_label=f"{path_label}[{i}]") for i, elts in enumerate(zip(x, *xs, strict=True))]
    return tuple(mapped) if isinstance(x, tuple) else mapped


_TRACER_CALL_KWARGS = frozenset(("tracer_cq_id", "tracer_blocking_execution", "tracer_execute_on_capture"))


def traced_function(_fn=None, *, device=None, prep_run=True, clone_prep_inputs=True):
    """Decorator that adds optional tracing to any function or method via the ``Tracer`` class."""

    def _resolve_device(context):
        if device is None:
            msg = "device= must be provided to @traced_function."
            raise ValueError(msg)
        return device(context) if callable(device) else device

    def decorator(fn):
        _tracers = weakref.WeakKeyDictionary()

        def _needs_new_tracer(tracer):
            return tracer is None or (not tracer.trace_captured and tracer._function is None)

        @functools.wraps(fn)
        def wrapper(*args, traced=False, **kwargs):
            if not traced:
                for k in _TRACER_CALL_KWARGS:
                    kwargs.pop(k, None)
                return fn(*args, **kwargs)

            # Context-bound path: first arg is a non-tracer-valid context (e.g. self);
            # bind it away and track one Tracer per instance.
            if args and not isinstance(args[0], _TRACER_VALID_INPUT_TYPES):
                context, rest = args[0], args[1:]
                if _needs_new_tracer(_tracers.get(context)):
                    _tracers[context] = Tracer(
                        functools.partial(fn, context),
                        device=_resolve_device(context),
                        prep_run=prep_run,
                        clone_prep_inputs=clone_prep_inputs,
                    )
                return _tracers[context](*rest, **kwargs)

            msg = f"@traced_function: {fn.__qualname__} was called with traced=True without a bindable context"
            raise TypeError(msg)

        wrapper._tracers = _tracers
        return wrapper

    if _fn is not None:
        return decorator(_fn)

    return decorator


class DiTBlock:
    """Stand-in DiT block: adaptive scale from the timestep embedding, a linear, guidance mix."""

    def __init__(self, mesh_device):
        torch.manual_seed(1)
        self.mesh_device = mesh_device
        self.w = ttnn.from_torch(torch.randn(DIM, DIM) / 6, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh_device)
        self.w_t = ttnn.from_torch(torch.randn(DIM, DIM) / 6, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh_device)

    @traced_function(device=lambda self: self.mesh_device, clone_prep_inputs=False)
    def forward(self, latent, t_emb, guidance_scale):
        shift = ttnn.silu(ttnn.linear(t_emb, self.w_t))
        h = ttnn.add(ttnn.linear(latent, self.w), shift)
        return ttnn.add(latent, ttnn.multiply(h, guidance_scale))


def host(values):
    return ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=200000)
    torch.manual_seed(0)
    latents = [torch.randn(1, 1, DIM, DIM) for _ in range(STEPS)]
    embeddings = [torch.full((1, 1, DIM, DIM), float(s) / STEPS) for s in range(STEPS)]

    eager_block = DiTBlock(device)
    eager = [ttnn.to_torch(eager_block.forward(ttnn.to_device(host(x), device), ttnn.to_device(host(t), device), 0.5))
             for x, t in zip(latents, embeddings)]

    block = DiTBlock(device)
    traced = []
    for x, t in zip(latents, embeddings):
        out = block.forward(host(x), host(t), 0.5, traced=True)
        traced.append(ttnn.to_torch(out))
    DiTBlock.forward._tracers[block].release_trace()
    ttnn.close_device(device)

    same = all(torch.equal(a, b) for a, b in zip(traced, eager))
    print(f"traced == eager for {STEPS} calls: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
