"""`ttrecord native doctor`: can this tt-metal build (and this program) be recorded natively?

The native recorder works by interposition, so it needs three things from the build, each
checked here from the files alone (nothing is loaded or run):
- the hooked functions are exported dynamic symbols (a role whose signature is not found is
  named, with what is then not recorded);
- calls to them, including calls from inside the library, go through a relocation (PLT slot,
  GOT entry or vtable slot) that the dynamic linker binds to the first definition in the
  preload order. A library linked with -Bsymbolic (DT_SYMBOLIC) binds its own calls to itself,
  and -Bsymbolic-functions leaves no relocation for them at all: the hooks would miss every
  call made inside tt-metal, so such a build is unsupported;
- the program loads tt-metal as a shared library. A statically linked program (or one with
  tt-metal linked into it) has no dynamic calls to intercept: unsupported.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ttrecord.native import roles
from ttrecord.native.build import NativeUnavailable, build_id, compiler, ensure_built


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    problems: int = 0

    def ok(self, text: str) -> None:
        self.lines.append(f"  ok       {text}")

    def bad(self, text: str) -> None:
        self.problems += 1
        self.lines.append(f"  PROBLEM  {text}")


def _readelf(args: list[str], path: Path) -> str:
    return subprocess.run(["readelf", *args, str(path)], capture_output=True, text=True,
                          check=False).stdout  # fmt: skip


def relocated_symbols(library: Path) -> set[str]:
    """Symbols the library reaches through a dynamic relocation (so a preload can take them)."""
    out = _readelf(["-rW"], library)
    names = set()
    for line in out.splitlines():
        m = re.search(r"R_X86_64_(?:JUMP_SLOT|GLOB_DAT|64)\s+[0-9a-f]+\s+(\S+)", line)
        if m:
            names.add(m.group(1).split("@", 1)[0])
    return names


def interposable(library: Path, found: dict[str, str], report: Report) -> None:
    dynamic = _readelf(["-d"], library)
    if "SYMBOLIC" in dynamic:
        report.bad(f"{library.name} is linked with -Bsymbolic (DT_SYMBOLIC): its own calls bind"
                   " to itself, so calls made inside tt-metal cannot be recorded (unsupported)")
        return
    relocated = relocated_symbols(library)
    own = set(roles.dynamic_symbols(library).values())
    if not own & relocated:
        report.bad(f"{library.name} calls none of its own exported functions through a"
                   " relocation (-Bsymbolic-functions or hidden aliases): calls made inside"
                   " tt-metal cannot be recorded (unsupported)")
        return
    inside = sorted(macro for macro, sym in found.items() if sym in relocated)
    report.ok(f"{library.name} is interposable: no DT_SYMBOLIC; {len(own & relocated)} of its"
              f" exported functions are called inside it through PLT, GOT or vtable"
              f" relocations, {len(inside)} of the {len(found)} hooked ones among them"
              " (the others have no caller inside it)")


def program_links(program: Path, report: Report) -> None:
    if not program.is_file():
        report.bad(f"{program}: no such file")
        return
    dynamic = _readelf(["-d"], program)
    header = _readelf(["-lW"], program)
    if "INTERP" not in header:
        report.bad(f"{program.name} is statically linked: it has no dynamic calls to intercept"
                   " (unsupported; link tt-metal as a shared library)")
        return
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    tt = [n for n in needed if "tt_metal" in n or "ttnn" in n]
    if tt:
        report.ok(f"{program.name} loads {', '.join(tt)} dynamically")
    else:
        report.ok(f"{program.name} does not link tt-metal directly (fine when it loads ttnn"
                  " at run time, as Python does)")


def diagnose(library: Path, program: Path | None = None, build: bool = True) -> Report:
    report = Report()
    report.lines.append(f"tt-metal library: {library}")
    report.lines.append(f"  build id {build_id(library)}")
    res = roles.resolve(library)
    report.lines.append("roles:")
    for role in roles.ROLES[1:]:
        shown = role.signature.split("(", 1)[0].replace("tt::tt_metal::distributed::", "")
        if role.macro in res.found:
            report.ok(f"{role.what}: {shown}")
        else:
            why = res.lacking_buffer if role.macro in roles.BUFFER_ROLES and \
                res.lacking_buffer else "signature not found"
            report.bad(f"{role.what} not recorded: {shown} missing ({why})")
    report.lines.append("interposition:")
    interposable(library, res.found, report)
    if program is not None:
        program_links(program, report)
    report.lines.append("native recorder:")
    cxx = compiler()
    if cxx is None:
        report.bad("no C++ compiler (g++): --native cannot build the recorder")
    elif build:
        try:
            built = ensure_built(library)
            report.ok(f"built with {Path(cxx).name}: {built.library}")
        except NativeUnavailable as exc:
            report.bad(str(exc))
    else:
        report.ok(f"compiler {shutil.which(cxx) or cxx}")
    return report
