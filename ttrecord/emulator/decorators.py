"""`FastOperation`: the callable object every ttnn op is (ttnn.decorators.FastOperation).

Real ttnn ops are FastOperation instances carrying `python_fully_qualified_name`;
a recorder names ops by that attribute, so the emulator's ops carry it too.
"""

from __future__ import annotations

import functools
from typing import Any
from collections.abc import Callable


class FastOperation:
    """A named ttnn operation; calling it runs the op."""

    def __init__(self, python_fully_qualified_name: str, function: Callable[..., Any]) -> None:
        self.python_fully_qualified_name = python_fully_qualified_name
        self.function = function
        self.__wrapped__ = function
        self.__doc__ = function.__doc__
        self.__name__ = python_fully_qualified_name.rsplit(".", 1)[-1]
        self.__qualname__ = self.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"FastOperation(python_fully_qualified_name='{self.python_fully_qualified_name}')"

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # Used as a class attribute (Tensor methods forwarding to ops) it binds like a function.
        if instance is None:
            return self
        return functools.partial(self.function, instance)


# Every op by its fully qualified name; the emulator package exports each one under that
# name (ttnn.x, ttnn.experimental.x, ttnn.transformer.x), so adding an op is one decorated
# function in one file of emulator/ops/.
REGISTRY: dict[str, FastOperation] = {}


def operation(python_fully_qualified_name: str) -> Callable[[Callable[..., Any]], FastOperation]:
    """Decorator registering a function as the op `python_fully_qualified_name`."""

    def wrap(function: Callable[..., Any]) -> FastOperation:
        op = FastOperation(python_fully_qualified_name, function)
        REGISTRY[python_fully_qualified_name] = op
        return op

    return wrap
