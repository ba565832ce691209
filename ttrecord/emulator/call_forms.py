"""ttnn 0.81.1's parameter names and positions for ops whose emulated function spells them
differently (`ttnn.where(predicate=…)`, `ttnn.slice(t, starts=…, ends=…)`,
`ttnn.permute(t, dims, pad_value)`, `ttnn.typecast(t, input_dtype, output_dtype)`).

`adapt_ops()` (run when the package exports its ops) wraps each listed op once: positional
arguments beyond what the emulated function takes are named by ttnn's positional order,
ttnn's keyword names are renamed to the emulated ones (None: accepted and ignored, it does
not change what the emulator computes), then the emulated function runs; a ttnn form the
emulator does not have (`ttnn.slice` with tensor bounds) raises the one-line NotEmulatedError. The wrapper lists
the signatures it accepts in `overloads`, which tests/emulator/test_signature_conformance.py
checks against the real library's bindings.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NamedTuple, Optional

from .decorators import REGISTRY
from .errors import not_emulated

_P = inspect.Parameter


class Form(NamedTuple):
    positional: tuple[str, ...] = ()  # ttnn's positional parameter names, in order
    renames: dict[str, Optional[str]] = {}  # ttnn keyword -> the emulated one (None: ignored)
    # (args, kwargs) -> the name of a ttnn form the emulator does not have, else None
    unsupported: Optional[Callable[[tuple, dict], Optional[str]]] = None


def _slice_by_tensors(args: tuple, kwargs: dict) -> Optional[str]:
    from .tensor import Tensor

    bounds = list(args[1:3]) + [kwargs.get(k) for k in ("starts", "ends", "slice_start", "slice_end")]
    if any(isinstance(b, Tensor) for b in bounds):
        return "ttnn.slice(input_tensor, starts: ttnn.Tensor, ends: ttnn.Tensor)"
    return None


FORMS: dict[str, Form] = {
    "ttnn.maximum": Form(renames={"input_b": "input_tensor_b"}),
    "ttnn.minimum": Form(renames={"input_b": "input_tensor_b"}),
    "ttnn.pow": Form(renames={"input_tensor": "input_tensor_a", "exponent": "input_tensor_b"}),
    "ttnn.divide": Form(renames={"value": "input_tensor_b"}),
    "ttnn.where": Form(renames={"predicate": "condition"}),
    "ttnn.clone": Form(renames={"input": "input_tensor"}),
    "ttnn.repeat": Form(renames={"repeat_dims": "repetition_vector"}),
    "ttnn.slice": Form(renames={"starts": "slice_start", "ends": "slice_end", "steps": "slice_step"},
                       unsupported=_slice_by_tensors),
    "ttnn.update_cache": Form(renames={"cache": "cache_tensor", "input": "input_tensor", "update_idx": "update_index"}),
    "ttnn.experimental.nlp_create_qkv_heads": Form(renames={"input": "input_tensor", "input_kv": "input_tensor_kv"}),
    "ttnn.permute": Form(("input_tensor", "dims", "pad_value")),
    "ttnn.transpose": Form(("input_tensor", "dim1", "dim2", "pad_value")),
    "ttnn.argmax": Form(("input_tensor", "dim", "keepdim")),
    "ttnn.plus_one": Form(("input_tensor", "sub_core_grids", "skip_negative_entries")),
    "ttnn.to_layout": Form(("tensor", "layout", "dtype", "memory_config", "sub_core_grids", "pad_value")),
    "ttnn.reshape": Form(("input_tensor", "logical_shape", "padded_shape"),
                         {"logical_shape": "shape", "padded_shape": None}),
    "ttnn.typecast": Form(("input_tensor", "input_dtype", "output_dtype"),
                          {"input_dtype": None, "output_dtype": "dtype"}),
    "ttnn.create_sharded_memory_config_": Form(
        ("shape", "core_grid", "strategy", "orientation", "use_height_and_width_as_shard_shape", "tile_layout"),
        {"tile_layout": None}),
}


def _capacity(signature: inspect.Signature) -> int | None:
    """How many positional arguments the emulated function takes (None: any number)."""
    count = 0
    for p in signature.parameters.values():
        if p.kind is _P.VAR_POSITIONAL:
            return None
        if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
            count += 1
    return count


def wrap(function: Callable[..., Any], form: Form) -> Callable[..., Any]:
    """`function` taking ttnn's spelling of its arguments as well as its own."""
    signature = inspect.signature(function)
    capacity = _capacity(signature)

    def call(*args: Any, **kwargs: Any) -> Any:
        missing = form.unsupported(args, kwargs) if form.unsupported is not None else None
        if missing is not None:
            raise not_emulated(missing)
        if capacity is not None and len(args) > capacity and form.positional:
            named = dict(zip(form.positional, args))
            args, kwargs = (), {**named, **kwargs}
        for theirs, ours in form.renames.items():
            if theirs in kwargs:
                value = kwargs.pop(theirs)
                if ours is not None:
                    kwargs[ours] = value
        return function(*args, **kwargs)

    call.__name__ = getattr(function, "__name__", "op")
    call.__doc__ = function.__doc__
    call.__wrapped__ = function  # type: ignore[attr-defined]
    call.overloads = (signature, _their_signature(signature, form))  # type: ignore[attr-defined]
    return call


def _their_signature(signature: inspect.Signature, form: Form) -> inspect.Signature:
    """The calls the wrapper accepts beyond the emulated signature: ttnn's positional names
    (those past the emulated ones optional) and ttnn's keyword names."""
    own = list(signature.parameters.values())
    positional = [p for p in own if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]
    theirs = {ours: name for name, ours in form.renames.items() if ours is not None}
    params: list[inspect.Parameter] = []
    for i, name in enumerate(form.positional or [theirs.get(p.name, p.name) for p in positional]):
        required = i < len(positional) and positional[i].default is _P.empty
        params.append(_P(name, _P.POSITIONAL_OR_KEYWORD, default=_P.empty if required else None))
    taken = {p.name for p in params}
    for p in own:
        if p.kind is _P.KEYWORD_ONLY and p.name not in taken:
            params.append(p.replace(default=None if p.default is _P.empty else p.default))
            taken.add(p.name)
    for name in form.renames:
        if name not in taken:
            params.append(_P(name, _P.KEYWORD_ONLY, default=None))
            taken.add(name)
    params += [p for p in own if p.kind is _P.VAR_KEYWORD]
    return inspect.Signature(params)


def adapt_ops(package: Any) -> None:
    """Wrap every op of FORMS (once; the package runs this when it exports its ops); a
    listed name that is a plain function of the package is replaced by its wrapper."""
    for name, form in FORMS.items():
        op = REGISTRY.get(name)
        if op is not None:
            if not hasattr(op.function, "overloads"):
                op.function = wrap(op.function, form)
            continue
        short = name.split(".", 1)[1]
        function = getattr(package, short, None) if "." not in short else None
        if callable(function) and not hasattr(function, "overloads"):
            setattr(package, short, wrap(function, form))
