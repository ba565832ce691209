"""tt_dit's Tracer driving a denoising loop: the first call captures (after a prep run on cloned
inputs) and executes, later calls copy new inputs into the captured ones (host tensors with
copy_host_to_device_tensor, device tensors with ttnn.copy) and replay; the output tensors are the
same objects every call, read before the next one.

Upstream: tenstorrent/tt-metal models/tt_dit/utils/tracing.py@02ff5fcc4ddf33f9f7f1b2673230535e2344034e
(class Tracer, _verify_value, _clone_tensor, _tree_map).
Changes:
  * Tracer kept as written except: the typing overloads, the loguru debug line, the multi-device
    `blocking` warning and the `inputs` property dropped; `traced_function` not used;
    _tree_map shortened to the tuple/list/dict walk it does (same behaviour for these inputs);
  * the traced function (a tt_dit transformer step) -> a small stand-in with the same ttnn call
    shape: linear, add of the timestep embedding, silu, linear, and the Euler update;
  * a driver in place of the pipeline: ttnn.open_device; 4 denoising steps, each step's output
    latent passed back as the next input (a device tensor: copied with ttnn.copy), the timestep
    embedding as a host tensor; eager steps (the function called directly) compared with the traced
    ones bit for bit, exit 1 on mismatch.
"""

import sys

import torch

import ttnn

DIM, STEPS, DT = 32, 4, 0.25


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


class DenoiseStep:
    """Stand-in transformer step: predicts the noise and takes one Euler step."""

    def __init__(self, device):
        torch.manual_seed(1)
        self.w1 = ttnn.from_torch(torch.randn(DIM, DIM) / 6, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        self.w2 = ttnn.from_torch(torch.randn(DIM, DIM) / 6, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

    def __call__(self, latent, t_emb):
        h = ttnn.silu(ttnn.add(ttnn.linear(latent, self.w1), t_emb))
        eps = ttnn.linear(h, self.w2)
        return ttnn.subtract(latent, ttnn.multiply(eps, DT))


def host(values):
    return ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=200000)
    step = DenoiseStep(device)
    torch.manual_seed(0)
    noise = torch.randn(1, 1, DIM, DIM)
    embeddings = [torch.full((1, 1, DIM, DIM), float(t) / STEPS) for t in range(STEPS, 0, -1)]

    latent = ttnn.to_device(host(noise), device)
    eager = []
    for t_emb in embeddings:
        latent = step(latent, ttnn.to_device(host(t_emb), device))
        eager.append(ttnn.to_torch(latent))

    tracer = Tracer(step, device=device)
    latent = host(noise)
    traced = []
    for t_emb in embeddings:
        latent = tracer(latent, host(t_emb))
        traced.append(ttnn.to_torch(latent))
    tracer.release_trace()
    ttnn.close_device(device)

    same = all(torch.equal(a, b) for a, b in zip(traced, eager))
    print(f"traced == eager for {STEPS} steps: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
