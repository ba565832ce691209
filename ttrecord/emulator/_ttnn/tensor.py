"""`ttnn._ttnn.tensor`: real ttnn's `Tensor` is `ttnn._ttnn.tensor.Tensor`."""

from ..tensor import Tensor  # noqa: F401
from ..types import DataType, Layout, MemoryConfig, StorageType, TensorMemoryLayout, BufferType  # noqa: F401
