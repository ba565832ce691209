"""Extract the version-dependent texts of one ttnn release into tests/data/ttnn_texts/X.Y.Z.txt.

    python scripts/ttnn_texts.py X.Y.Z <path to ttnn wheel or installed ttnn package dir>

The file keeps, sorted and de-duplicated, every printable string of the release's native
libraries (`_ttnn*.so`, `ttnn/build/lib/*.so`) and every line of its Python files that
mentions a trace-related keyword: the TT_FATAL texts, the trace-region message, the unsafe
allocation warning, the trace allocation tracker's names and environment variables. The
parsers in ttrecord.ttnn_versions are tested on these files (tests/test_ttnn_versions.py).
"""

from __future__ import annotations

import re
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

KEYWORDS = re.compile(
    rb"trace capture|trace buffers of size|active trace|Trace buffer at address|TT_METAL_TRACE_ALLOC"
    rb"|corruptible|allocation_tracker|num_program_cache_entries|get_buffers|MeshEvent\(|trace region"
)
_PRINTABLE = re.compile(rb"[\x20-\x7e\t]{6,}")


def _members(source: Path) -> Iterator[tuple[str, bytes]]:
    if source.is_file():
        with zipfile.ZipFile(source) as whl:
            for name in whl.namelist():
                if name.startswith("ttnn/") and _wanted(name):
                    yield name, whl.read(name)
        return
    for path in sorted(source.rglob("*")):
        name = "ttnn/" + path.relative_to(source).as_posix()
        if path.is_file() and _wanted(name):
            yield name, path.read_bytes()


def _wanted(name: str) -> bool:
    top_so = re.fullmatch(r"ttnn/_ttnn[^/]*\.so|ttnn/build/lib/(libtt_metal|_ttnncpp)\.so", name)
    python = name.endswith(".py") and "/tt_metal/" not in name and "/examples/" not in name
    return bool(top_so or python)


def texts(source: Path) -> list[str]:
    found: set[str] = set()
    for name, data in _members(source):
        runs = _PRINTABLE.findall(data) if name.endswith(".so") else data.splitlines()
        for run in runs:
            if KEYWORDS.search(run):
                found.add(run.decode("ascii", "replace").strip())
    return sorted(found)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python scripts/ttnn_texts.py X.Y.Z <ttnn wheel or package dir>", file=sys.stderr)
        return 2
    version, source = argv[0], Path(argv[1])
    if not source.exists():
        print(f"ttnn_texts: {source} does not exist", file=sys.stderr)
        return 2
    out = Path(__file__).resolve().parent.parent / "tests" / "data" / "ttnn_texts" / f"{version}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = texts(source)
    out.write_text(f"# ttnn {version}: trace-related texts of its libraries (scripts/ttnn_texts.py)\n"
                   + "\n".join(lines) + "\n")
    print(f"{out}: {len(lines)} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
