"""ttrecord: a recording proxy and trace-diff debugger for TT-NN trace capture."""

__version__ = "0.1.0"

from ttrecord.audit import region  # noqa: E402 - the one public helper for recorded programs

__all__ = ["__version__", "region"]
