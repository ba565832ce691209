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


def analysis_version() -> str:
    from ttrecord.analysis import catalog

    return _version(tuple(catalog.__path__))


@lru_cache(maxsize=4)
def _version(rule_path: tuple[str, ...]) -> str:
    """Also over the rule modules found outside the package (a folder added to the catalog's
    search path): a rule added there changes what the analysis finds."""
    import ttrecord

    digest = hashlib.sha256(ttrecord.__version__.encode())
    root = Path(ttrecord.__file__).parent
    files = sorted((root / "analysis").rglob("*.py"))  # without importing the detectors
    files += [root / "events.py", root / "findings.py"]
    # The analysis' queries and the buffer pairing live in the store, but decide findings too.
    files += [root / "store" / "queries.py", root / "store" / "lifetimes.py"]
    files += sorted(p for folder in rule_path if not Path(folder).is_relative_to(root)
                    for p in Path(folder).glob("*.py"))  # fmt: skip
    for path in files:
        name = path.relative_to(root) if path.is_relative_to(root) else path
        digest.update(name.as_posix().encode())
        try:
            digest.update(path.read_bytes())
        except OSError:  # a frozen install without sources: version alone
            pass
    return f"{ttrecord.__version__}+{digest.hexdigest()[:16]}"
