"""Which analysis computed a set of findings, so stored findings are reused only when current.

The version is a digest of the analysis code itself (every module of `ttrecord.analysis`, the
store's analysis queries and buffer pairing, the event and finding models) and the package
version: any change to a detector changes it, with
nothing to remember to bump. Reading the ~20 small files costs about a millisecond.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def analysis_version() -> str:
    import ttrecord

    digest = hashlib.sha256(ttrecord.__version__.encode())
    root = Path(ttrecord.__file__).parent
    files = sorted((root / "analysis").rglob("*.py"))  # without importing the detectors
    files += [root / "events.py", root / "findings.py"]
    # The analysis' queries and the buffer pairing live in the store, but decide findings too.
    files += [root / "store" / "queries.py", root / "store" / "lifetimes.py"]
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode())
        try:
            digest.update(path.read_bytes())
        except OSError:  # a frozen install without sources: version alone
            pass
    return f"{ttrecord.__version__}+{digest.hexdigest()[:16]}"
