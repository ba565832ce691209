"""The call signatures of everything ttnn 0.81.1 exports (ttnn, ttnn.experimental,
ttnn.transformer), and the public attributes (with method signatures) of its classes and
the members of its enums, as JSON on stdout: docs/emulator-ttnn-signatures.json, which the
emulator's signature-conformance test (tests/emulator/test_signature_conformance.py) checks
the emulator against without the real library.

A signature is a list of overloads; an overload a list of [name, kind, has_default] with
kind one of positional_only, positional_or_keyword, var_positional, keyword_only,
var_keyword. nanobind functions give their overloads as text (__nb_signature__), parsed
here with ast; Python functions through inspect."""
import enum
import inspect
import json
import re
import sys
import types

import ttnn

NAMESPACES = ("ttnn", "ttnn.experimental", "ttnn.transformer")
KIND = {
    inspect.Parameter.POSITIONAL_ONLY: "positional_only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}


def _split_top(text):
    """Split at commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, None, []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _parse_nb(text, drop_self):
    """[name, kind, has_default] of one nanobind overload text 'def f(a: T, *, b: T = \\0) -> R'
    (nanobind texts need not be valid Python: a parameter may be named `from`, or lack a
    default after one that has it, so this is a small parser of its own)."""
    body = text[text.index("(") + 1:]
    depth, end = 1, 0
    for end, ch in enumerate(body):  # noqa: B007 - `end` is where the loop stops
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0:
            break
    out, keyword_only = [], False
    for item in _split_top(body[:end]):
        item = item.replace("\\*", "*")  # hand-written nanobind texts escape the star
        if item == "*":
            keyword_only = True
            continue
        if item == "/":
            for param in out:
                param[1] = "positional_only"
            continue
        if item.startswith("**"):
            out.append([item[2:].split(":")[0].strip(), "var_keyword", False])
            continue
        if item.startswith("*"):
            out.append([item[1:].split(":")[0].strip(), "var_positional", False])
            keyword_only = True
            continue
        name = re.split(r"[:=]", item, maxsplit=1)[0].strip()
        has_default = bool(re.search(r"(^|[^=!<>])=([^=]|$)", item.split(":", 1)[-1] if ":" in item else item))
        out.append([name, "keyword_only" if keyword_only else "positional_or_keyword", has_default])
    if drop_self and out and out[0][0] == "self":
        out = out[1:]
    return out


def _inspect(fn, drop_self):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = [[p.name, KIND[p.kind], p.default is not inspect.Parameter.empty] for p in sig.parameters.values()]
    if drop_self and params and params[0][0] == "self":
        params = params[1:]
    return [params]


def overloads(obj, drop_self=False):
    """The overloads of a callable, or None when they cannot be read."""
    nb = getattr(obj, "__nb_signature__", None)
    if nb is None and not isinstance(obj, type) and not inspect.isfunction(obj) and not inspect.ismethod(obj):
        nb = getattr(type(obj).__call__, "__nb_signature__", None)
        drop_self = True if nb is not None else drop_self
    if nb is not None:
        parsed = [_parse_nb(o[0], drop_self) for o in nb]
        return [p for p in parsed if p is not None] or None
    return _inspect(obj, drop_self)


def kind(obj):
    if isinstance(obj, types.ModuleType):
        return "module"
    if type(obj).__name__ == "FastOperation":
        return "op"
    if isinstance(obj, type):
        return "enum" if issubclass(obj, enum.Enum) or hasattr(obj, "__members__") else "class"
    if callable(obj):
        return "function"
    return "value"


def describe_class(cls):
    init = getattr(cls, "__init__", None)
    entry = {"init": overloads(init, drop_self=True) if init is not None and init is not object.__init__ else None,
             "attributes": {}}
    for name in dir(cls):
        if name.startswith("_") and name not in ("__getitem__", "__call__", "__len__", "__iter__"):
            continue
        try:
            attr = inspect.getattr_static(cls, name)
        except AttributeError:
            continue
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if isinstance(attr, property) or type(attr).__name__ in ("nb_property", "getset_descriptor", "member_descriptor"):
            entry["attributes"][name] = {"kind": "property"}
        elif callable(attr):
            entry["attributes"][name] = {"kind": "method", "overloads": overloads(attr, drop_self=True)}
        else:
            entry["attributes"][name] = {"kind": "value"}
    return entry


def main():
    names = {}
    for ns in NAMESPACES:
        module = ttnn
        for part in ns.split(".")[1:]:
            module = getattr(module, part)
        for name in dir(module):
            if name.startswith("_"):
                continue
            obj = getattr(module, name)
            k = kind(obj)
            entry = {"kind": k}
            if k == "op":
                entry["overloads"] = overloads(obj.function)
            elif k == "function":
                entry["overloads"] = overloads(obj)
            elif k == "enum":
                members = getattr(obj, "__members__", {})
                entry["members"] = sorted(members)
            elif k == "class":
                entry.update(describe_class(obj))
            names[f"{ns}.{name}"] = entry
    # One name per line, so a new ttnn release shows as a readable diff.
    lines = [f"{json.dumps(name)}: {json.dumps(entry, sort_keys=True)}" for name, entry in sorted(names.items())]
    sys.stdout.write('{"ttnn": "0.81.1", "names": {\n' + ",\n".join(lines) + "\n}}\n")


main()
