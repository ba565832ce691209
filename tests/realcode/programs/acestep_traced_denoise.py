"""ACE-Step's traced denoise loop: every generate() call builds a tt_dit Tracer, captures the DiT
velocity step on the first ODE step (prep run, capture, execute), replays it on the later steps
with a new timestep tensor and the Euler-updated latent copied into the trace inputs, and releases
the trace at the end; generating song after song captures, replays and releases again and again
(with one step, a capture replayed once, then released). The Euler step runs eagerly on the
trace's outputs between replays.

Upstream: tenstorrent/tt-metal models/experimental/acestep/tt/pipeline.py@6857b9d0470826da890a1a47447708d2f0ba2edf
(AceStepPipeline.generate and _generate_traced, the no-CFG path), using
models/tt_dit/utils/tracing.py@02ff5fcc4ddf33f9f7f1b2673230535e2344034e (Tracer).
Changes:
  * Tracer as in dit_tracer_denoise.py (typing overloads, logging, multi-device warning and
    traced_function dropped) plus its `inputs` property, which this pipeline reads;
  * the DiT (AceStepDiTModel: patch embedding, 24 layers with rotary self-attention and
    cross-attention) -> a stand-in with the same forward signature: linear of the latent plus a
    linear of the context latents, scaled by the timestep (a float32 device tensor, or made from the
    torch scalar of the eager path as the DiT does), rotary-style cos/sin mix, one cross-attention
    over the encoder states (matmul, softmax, matmul), output linear; FlowMatchStep.euler_step ->
    xt - vt * dt; no sliding mask (short sequence); RoPE tables from torch instead of
    Qwen3RotaryEmbedding;
  * the CFG path, the high-level generate_song API, the encoders and the VAE decode dropped;
  * a driver in place of the tests: ttnn.open_device; three generations (2, 1 and 3 ODE steps), each
    traced and each also run eagerly (use_trace=False) on the same inputs; latents compared bit for
    bit, exit 1 on mismatch.
"""

import sys

import torch

import ttnn

SEQ, LATENT, CONTEXT, ENC, HIDDEN = 32, 64, 128, 32, 64


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
    def inputs(self):
        """Stored inputs from the most recent call (empty before the first call)."""
        return {**dict(enumerate(self._args)), **self._kwargs}

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


# --- stand-ins for the DiT and the flow-matching solver -----------------------------------------
class DiT:
    def __init__(self, device):
        torch.manual_seed(5)
        self.device = device

        def w(rows, cols):
            return ttnn.from_torch(torch.randn(rows, cols) / 8, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)

        self.w_x, self.w_c, self.w_o = w(LATENT, HIDDEN), w(CONTEXT, HIDDEN), w(HIDDEN, LATENT)

    def forward(self, xt, context, timestep, timestep_r, cos, sin, encoder_hidden_states, sliding_mask=None):
        if isinstance(timestep, torch.Tensor):  # eager path: the embedding is made from the torch scalar
            timestep = ttnn.from_torch(timestep.reshape(1, 1, 1, 1), device=self.device, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
        h = ttnn.add(ttnn.linear(xt, self.w_x), ttnn.linear(context, self.w_c))
        h = ttnn.multiply(h, ttnn.typecast(timestep, ttnn.bfloat16))
        h = ttnn.add(ttnn.multiply(h, cos), ttnn.multiply(h, sin))
        scores = ttnn.softmax(ttnn.matmul(h, encoder_hidden_states, transpose_b=True), dim=-1)
        h = ttnn.add(h, ttnn.matmul(scores, encoder_hidden_states))
        return ttnn.linear(h, self.w_o)


class FlowMatchStep:
    def __init__(self, device):
        self.device = device

    def euler_step(self, xt, vt, dt):
        return ttnn.subtract(xt, ttnn.multiply(vt, dt))


def _shifted_timesteps(infer_steps, shift, device, dtype=torch.float32):
    t = torch.linspace(1.0, 0.0, infer_steps + 1, device=device, dtype=dtype)
    if shift != 1.0:
        t = shift * t / (1 + (shift - 1) * t)
    return t


class AceStepPipeline:
    def __init__(self, dit, mesh_device):
        self.dit = dit
        self.mesh_device = mesh_device

    def _rope_tables(self, t_prime):
        angles = torch.arange(t_prime).float().unsqueeze(1) / (100 ** (torch.arange(HIDDEN).float() / HIDDEN))
        cos_tt = ttnn.from_torch(angles.cos().reshape(1, 1, t_prime, HIDDEN), device=self.mesh_device, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        sin_tt = ttnn.from_torch(angles.sin().reshape(1, 1, t_prime, HIDDEN), device=self.mesh_device, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        return cos_tt, sin_tt

    def generate(self, hidden_noise, context_latents, encoder_hidden_states, *, infer_steps=30, shift=1.0, use_trace=False):
        seq_len = hidden_noise.shape[2]
        cos_tt, sin_tt = self._rope_tables(seq_len)
        sliding = None

        solver = FlowMatchStep(self.mesh_device)
        t = _shifted_timesteps(infer_steps, shift, torch.device("cpu"))

        if use_trace:
            return self._generate_traced(
                hidden_noise, context_latents, encoder_hidden_states, cos_tt, sin_tt, sliding, solver, t
            )

        xt = hidden_noise
        for step_idx in range(infer_steps):
            t_curr = float(t[step_idx].item())
            t_prev = float(t[step_idx + 1].item())
            t_scalar = torch.tensor([t_curr], dtype=torch.float32)
            vt = self.dit.forward(
                xt, context_latents, t_scalar, t_scalar, cos_tt, sin_tt, encoder_hidden_states, sliding_mask=sliding
            )
            xt_new = solver.euler_step(xt, vt, t_curr - t_prev)
            if step_idx > 0:
                ttnn.deallocate(xt)
            xt = xt_new
        return xt

    def _generate_traced(self, hidden_noise, context_latents, encoder_hidden_states, cos_tt, sin_tt, sliding, solver, t):
        infer_steps = t.numel() - 1

        def _ts(v):
            return ttnn.from_torch(
                torch.tensor([[[[float(v)]]]], dtype=torch.float32),
                device=self.mesh_device,
                dtype=ttnn.float32,
                layout=ttnn.TILE_LAYOUT,
            )

        def _dit_velocity(xt, ts, context, enc, cos, sin):
            return self.dit.forward(xt, context, ts, ts, cos, sin, enc, sliding_mask=sliding)

        tracer = Tracer(_dit_velocity, device=self.mesh_device, prep_run=True, clone_prep_inputs=False)

        xt = hidden_noise
        for step_idx in range(infer_steps):
            t_curr = float(t[step_idx].item())
            t_prev = float(t[step_idx + 1].item())
            first = step_idx == 0
            vt = tracer(
                xt=xt,
                ts=_ts(t_curr),
                context=context_latents if first else tracer.inputs["context"],
                enc=encoder_hidden_states if first else tracer.inputs["enc"],
                cos=cos_tt if first else tracer.inputs["cos"],
                sin=sin_tt if first else tracer.inputs["sin"],
                traced=True,
            )
            # Euler runs eager on the trace's velocity output; read xt back from the trace buffer
            # (trace execution may overwrite it). vt is the trace's resident output -> clone it.
            xt = solver.euler_step(tracer.inputs["xt"], ttnn.clone(vt), t_curr - t_prev)
        tracer.release_trace()
        return xt


def main():
    device = ttnn.open_device(device_id=0, trace_region_size=200000)
    pipeline = AceStepPipeline(DiT(device), device)

    def tt(values):
        return ttnn.from_torch(values, device=device, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)

    torch.manual_seed(0)
    same = True
    for infer_steps in (2, 1, 3):
        noise = torch.randn(1, 1, SEQ, LATENT)
        context = torch.randn(1, 1, SEQ, CONTEXT)
        enc = torch.randn(1, 1, ENC, HIDDEN) / 4
        eager = ttnn.to_torch(pipeline.generate(tt(noise), tt(context), tt(enc), infer_steps=infer_steps, shift=3.0))
        traced = ttnn.to_torch(pipeline.generate(tt(noise), tt(context), tt(enc), infer_steps=infer_steps, shift=3.0, use_trace=True))
        same = same and torch.equal(eager, traced)
    ttnn.close_device(device)
    print(f"traced == eager latents for 3 generations: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
