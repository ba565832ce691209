"""ttrecord: a recording proxy and trace-diff debugger for TT-NN trace capture."""

__version__ = "0.1.0"
