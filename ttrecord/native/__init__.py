"""The native recorder: records C++ programs that call tt-metal/ttnn directly (see docs/native.md)."""
