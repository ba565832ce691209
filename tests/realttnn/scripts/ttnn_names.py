"""Every public name the installed ttnn exports (ttnn, ttnn.experimental, ttnn.transformer),
one `qualified name<TAB>kind` line each, sorted: the list docs/emulator.md's coverage table
is generated from (docs/emulator-ttnn-names.tsv). Kinds: op (a FastOperation), class, enum,
module, function, value."""
import enum
import sys
import types
import ttnn

NAMESPACES = ("ttnn", "ttnn.experimental", "ttnn.transformer")


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


rows = []
for ns in NAMESPACES:
    module = ttnn
    for part in ns.split(".")[1:]:
        module = getattr(module, part)
    for name in dir(module):
        if name.startswith("_"):
            continue
        rows.append(f"{ns}.{name}\t{kind(getattr(module, name))}")
sys.stdout.write("\n".join(sorted(rows)) + "\n")
