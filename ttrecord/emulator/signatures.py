"""Signature conformance: does the emulator accept every call ttnn 0.81.1's bindings accept?

docs/emulator-ttnn-signatures.json is read from the real library (written in the real-ttnn
lane by tests/realttnn/scripts/ttnn_signatures.py; a lane test checks it is current): every
exported name with the overloads of its call signature, every public attribute of its
classes (methods with their overloads), every member of its enums. `problems()` walks it
against the emulator and lists each place where a program written for ttnn 0.81.1 would get
something other than the real behaviour or the one-line NotEmulatedError:

* a name that fails to resolve with another error (or another message);
* an emulated callable (function, op, class constructor, method) that would raise a raw
  TypeError for a call one of the real overloads binds: every parameter passed (positional
  ones by position, then by keyword) and only the required ones;
* a real class attribute or enum member the emulated class lacks without raising
  NotEmulatedError.

    python -m ttrecord.emulator.signatures      # print the problems, exit 1 if any
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .errors import NotEmulatedAttributes, NotEmulatedError

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "emulator-ttnn-signatures.json"
Overload = list[list[Any]]  # [[name, kind, has_default], ...]
_VALUE = object()


def load_reference(path: Path = REFERENCE) -> dict[str, dict[str, Any]]:
    return dict(json.loads(path.read_text())["names"])


def resolve(qualified: str) -> Any:
    """The emulator's object for `ttnn.a.b` (raises what the emulator raises)."""
    from ttrecord import emulator

    target: Any = emulator
    for part in qualified.split(".")[1:]:
        target = getattr(target, part)
    return target


def emulated_signatures(obj: Any) -> list[inspect.Signature]:
    """The signatures an emulated callable accepts: its own, or, for a callable that
    dispatches between forms (`ttnn.pad`, `ttnn.Tensor(...)`), those listed in its
    `overloads` (functions or inspect.Signature objects; a class lists them on __init__)."""
    function = getattr(obj, "function", obj)  # a FastOperation runs .function
    drop_self = False
    init = getattr(function, "__init__", None) if isinstance(function, type) else None
    if getattr(init, "overloads", None):
        function, drop_self = init, True
    listed = getattr(function, "overloads", None)
    try:
        found = [f if isinstance(f, inspect.Signature) else inspect.signature(f) for f in listed] if listed else [
            inspect.signature(function)]
    except (TypeError, ValueError):
        return []
    if drop_self:  # __init__ itself takes self; the forms it lists need not
        found = [s.replace(parameters=list(s.parameters.values())[1:]) if "self" in s.parameters else s for s in found]
    return found


def _calls(overload: Overload) -> Iterator[tuple[str, tuple, dict]]:
    """The calls an overload binds: every parameter by position where it may be, every one by
    keyword where it may be, and the required ones only."""
    params = [p for p in overload if p[1] not in ("var_positional", "var_keyword")]
    positional = [p for p in params if p[1] in ("positional_only", "positional_or_keyword")]
    keyword = [p for p in params if p[1] == "keyword_only"]
    yield "every parameter by position", tuple(_VALUE for _ in positional), {p[0]: _VALUE for p in keyword}
    only_pos = [p for p in positional if p[1] == "positional_only"]
    by_name = {p[0]: _VALUE for p in params if p[1] != "positional_only"}
    yield "every parameter by keyword", tuple(_VALUE for _ in only_pos), by_name
    required_pos = [p for p in positional if not p[2]]
    required_kw = {p[0]: _VALUE for p in keyword if not p[2]}
    yield "the required parameters", tuple(_VALUE for _ in required_pos), required_kw


def unaccepted_calls(obj: Any, overloads: list[Overload], *, drop_self: bool = False) -> list[str]:
    """For each real overload call the emulated callable cannot bind, a description."""
    signatures = emulated_signatures(obj)
    if drop_self:
        signatures = [s.replace(parameters=list(s.parameters.values())[1:]) for s in signatures]
    if not signatures:
        return ["its signature cannot be read"]
    missing = []
    for overload in overloads:
        if all(p[1] in ("var_positional", "var_keyword") for p in overload) and overload:
            continue  # (*args, **kwargs): no constructor of its own, nothing to conform to
        for how, args, kwargs in _calls(overload):
            if not any(_binds(s, args, kwargs) for s in signatures):
                names = ", ".join(p[0] for p in overload if p[1] not in ("var_positional", "var_keyword"))
                missing.append(f"({names}) with {how}")
                break
    return missing


def _binds(signature: inspect.Signature, args: tuple, kwargs: dict) -> bool:
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _raises_not_emulated(get: Callable[[], Any], qualified: str) -> str | None:
    """None when `get()` succeeds or raises the one-line NotEmulatedError for `qualified`."""
    try:
        get()
    except NotEmulatedError as e:
        expected = f"ttnn emulator: {qualified} is not emulated (see docs/emulator.md)"
        return None if str(e) == expected else f"NotEmulatedError says {str(e)!r}, not {expected!r}"
    except Exception as e:  # noqa: BLE001 - any other error is the finding
        return f"{type(e).__name__}: {e}"
    return None


def _has_instance_attribute(cls: type, name: str) -> bool:
    """Whether instances of an emulated class carry `name` (a class attribute, a slot, a
    dataclass or NamedTuple field, or an annotated attribute)."""
    if hasattr(cls, name):
        return True
    for klass in cls.__mro__:
        slots = vars(klass).get("__slots__", ())
        if name in ((slots,) if isinstance(slots, str) else slots):
            return True
        if name in getattr(klass, "__dataclass_fields__", {}) or name in vars(klass).get("__annotations__", {}):
            return True
    return False


def _class_problems(qualified: str, cls: Any, entry: dict[str, Any]) -> list[str]:
    if getattr(cls, "__module__", None) == "builtins":
        return []  # the very Python type ttnn re-exports (ttnn.ModuleType)
    out = []
    if entry.get("init") and callable(cls):
        out += [f"{qualified}(...) does not accept {c}" for c in unaccepted_calls(cls, entry["init"])]
    if not isinstance(cls, type):
        return out
    for name, attr in sorted(entry.get("attributes", {}).items()):
        if name.startswith("__"):
            if attr["kind"] == "method" and name in vars(cls) or any(name in vars(k) for k in cls.__mro__[:-1]):
                continue
            if name in ("__getitem__", "__iter__", "__len__", "__call__") and not any(
                    name in vars(k) for k in cls.__mro__[:-1]):
                out.append(f"{qualified}.{name} is missing (a raw TypeError)")
            continue
        if not _has_instance_attribute(cls, name):
            if not issubclass(cls, NotEmulatedAttributes):
                out.append(f"{qualified}.{name} is missing without NotEmulatedError (a raw AttributeError)")
            continue
        member = inspect.getattr_static(cls, name, None)
        if attr["kind"] == "method" and attr.get("overloads") and callable(member) and not isinstance(member, type):
            if isinstance(member, (staticmethod, classmethod)):
                target, drop = member.__func__, isinstance(member, classmethod)
            else:
                target, drop = member, True
            out += [f"{qualified}.{name} does not accept {c}"
                    for c in unaccepted_calls(target, attr["overloads"], drop_self=drop)]
    return out


def _enum_problems(qualified: str, cls: Any, entry: dict[str, Any]) -> list[str]:
    out = []
    for member in entry.get("members", []):
        problem = _raises_not_emulated(functools.partial(getattr, cls, member), f"{qualified}.{member}")
        if problem:
            out.append(f"{qualified}.{member}: {problem}")
    return out


def problems(reference: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """Every place where the emulator departs from ttnn 0.81.1's surface other than with
    NotEmulatedError (empty when it conforms)."""
    reference = load_reference() if reference is None else reference
    out = []
    for qualified, entry in reference.items():
        problem = _raises_not_emulated(functools.partial(resolve, qualified), qualified)
        if problem:
            out.append(f"{qualified}: {problem}")
            continue
        try:
            obj = resolve(qualified)
        except NotEmulatedError:
            continue
        kind = entry["kind"]
        if kind in ("op", "function") and entry.get("overloads"):
            if not callable(obj):
                out.append(f"{qualified} is not callable in the emulator")
                continue
            out += [f"{qualified} does not accept {c}" for c in unaccepted_calls(obj, entry["overloads"])]
        elif kind == "class":
            out += _class_problems(qualified, obj, entry)
        elif kind == "enum" and isinstance(obj, type) and issubclass(obj, enum.Enum):
            out += _enum_problems(qualified, obj, entry)
    return out


def main(argv: list[str]) -> int:
    found = problems()
    for line in found:
        print(line)
    print(f"{len(found)} signature conformance problems against ttnn 0.81.1", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
