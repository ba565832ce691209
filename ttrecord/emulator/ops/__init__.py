"""The ops the emulator implements, grouped by kind (one module per group).

Importing this package imports every module in it, so each `@operation("ttnn.x")`
function registers itself (decorators.REGISTRY) and the emulator exports it.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
