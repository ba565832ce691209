"""`import ttnn` in a process that a program recorded against the emulator starts itself
(multiprocessing's spawn and forkserver start a fresh interpreter that re-imports the
program): the same backend as the recorded process, not an ImportError. The recorder puts this
folder on PYTHONPATH only when it runs the emulator; such processes are not recorded."""

from ttrecord import emulator

emulator.install()  # replaces this module in sys.modules with the emulator
