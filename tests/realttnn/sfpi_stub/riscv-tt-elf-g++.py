# Stand-in for the sfpi RISC-V compiler (riscv-tt-elf-g++) that tt-metal's JIT build insists
# on.  The real-ttnn contract lane runs ttnn on a *mock* device: nothing executes on a
# RISC-V core, but tt-metal still "builds" firmware and kernels before it opens the device or
# runs an op.  This script produces outputs that satisfy the build:
#   --version            -> prints a version, exits 0 (tt-metal probes it)
#   -c / .gch outputs    -> placeholder bytes; a -MF dependency file listing only the
#                           positional source files that exist (listing the -include'd header
#                           breaks tt-metal's dephash rename)
#   firmware links       -> a copy of the firmware ELF the wheel ships under
#                           ttnn/tt_metal/pre-compiled/<hash>/<target>/<target>.elf, chosen by
#                           the output's directory name (the file name has a temporary suffix)
#   kernel links         -> a real RV32 ELF with relocation sections: a two-instruction stub
#                           assembled and linked with Debian's binutils-riscv64-unknown-elf,
#                           passing through -T, -L and --just-symbols.
# setup installs it as <site-packages>/ttnn/runtime/sfpi/compiler/bin/riscv-tt-elf-g++ with a
# shebang naming the lane's python.  Set RTTNN_SFPI_LOG=<file> to log every invocation.
import os
import shutil
import subprocess
import sys
import tempfile

VERSION = "riscv-tt-elf-g++ (ttrecord realttnn stand-in, not a compiler) 0.0\n"
# options whose value is the next argument
TAKES_VALUE = {
    "-o", "-MF", "-MT", "-MQ", "-include", "-imacros", "-isystem", "-iquote", "-idirafter",
    "-x", "-I", "-L", "-T", "-D", "-U", "-Xlinker", "-e", "-u", "--param", "-iprefix",
    "-specs", "-march", "-mabi",
}
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".S", ".s", ".h", ".hpp", ".hh")
# two instructions; the jump to a global symbol leaves an R_RISCV_JAL relocation, and tt-metal
# rejects a kernel ELF without relocation sections ("there are no relocation sections")
STUB_ASM = ".section .text\n.globl _start\n.globl main\n_start:\nmain:\n  nop\n  j _start\n"
# firmware targets whose presence in a pre-compiled/<hash>/ folder tells the architecture
ARCH_MARKERS = {"blackhole": "subordinate_active_erisc", "wormhole": "erisc"}

HERE = os.path.dirname(os.path.realpath(__file__))
TTNN_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))  # bin/compiler/sfpi/runtime
PRECOMPILED = os.path.join(TTNN_DIR, "tt_metal", "pre-compiled")


def log(msg):
    path = os.environ.get("RTTNN_SFPI_LOG")
    if path:
        with open(path, "a") as f:
            f.write(msg + "\n")


def fail(msg):
    sys.stderr.write("riscv-tt-elf-g++ stand-in: " + msg + "\n")
    log("  FAILED: " + msg)
    sys.exit(1)


def parse(argv):
    out = dep = None
    positional, ldscripts, libdirs, ldflags = [], [], [], []
    compile_only = False
    i = 0
    while i < len(argv):
        a = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if a in TAKES_VALUE:
            if a == "-o":
                out = nxt
            elif a == "-MF":
                dep = nxt
            elif a == "-T":
                ldscripts.append(nxt)
            elif a == "-L":
                libdirs.append(nxt)
            elif a == "-Xlinker":
                ldflags.append(nxt)
            i += 2
            continue
        if a == "-c" or a == "-S" or a == "-E":
            compile_only = True
        elif a.startswith("-T") and len(a) > 2:
            ldscripts.append(a[2:])
        elif a.startswith("-L") and len(a) > 2:
            libdirs.append(a[2:])
        elif a.startswith("-Wl,"):
            ldflags.extend(x for x in a[4:].split(",") if x)
        elif not a.startswith("-"):
            positional.append(a)
        i += 1
    return out, dep, positional, ldscripts, libdirs, ldflags, compile_only


def write_dep(dep, out, positional):
    srcs = [p for p in positional if p.endswith(SOURCE_SUFFIXES) and os.path.isfile(p)]
    with open(dep, "w") as f:
        f.write(f"{out or 'a.o'}: {' '.join(srcs)}\n")


def arch_of(ldscripts):
    """toolchain/<arch>/firmware_*.ld names the architecture being built."""
    for s in ldscripts:
        parts = os.path.normpath(s).split(os.sep)
        for arch in ARCH_MARKERS:
            if arch in parts:
                return arch
    return None


def firmware_for(out, ldscripts):
    """The shipped firmware ELF for a firmware link into .../firmware/<target>/<target>.<tmp>.elf.

    Chosen by the output's directory name (<target>); among the wheel's pre-compiled builds,
    one of the architecture named by the linker script's folder (sorted, so deterministic).
    Only firmware links qualify: their linker script is firmware_*.ld (kernels: kernel_*.ld).
    """
    if not any(os.path.basename(s).startswith("firmware_") for s in ldscripts):
        return None
    target = os.path.basename(os.path.dirname(os.path.abspath(out)))
    arch = arch_of(ldscripts)
    try:
        hashes = sorted(os.listdir(PRECOMPILED))
    except OSError:
        fail("no pre-compiled firmware folder at " + PRECOMPILED)
    for h in hashes:
        folder = os.path.join(PRECOMPILED, h)
        cand = os.path.join(folder, target, target + ".elf")
        if not os.path.isfile(cand):
            continue
        if arch == "blackhole" and not os.path.isdir(os.path.join(folder, ARCH_MARKERS["blackhole"])):
            continue
        if arch == "wormhole" and os.path.isdir(os.path.join(folder, ARCH_MARKERS["blackhole"])):
            continue
        return cand
    fail(f"no pre-compiled firmware for target {target!r} (arch {arch}) under {PRECOMPILED}")


def link_kernel(out, ldscripts, libdirs, ldflags):
    with tempfile.TemporaryDirectory(prefix="rttnn-sfpi-") as tmp:
        src, obj = os.path.join(tmp, "stub.s"), os.path.join(tmp, "stub.o")
        with open(src, "w") as f:
            f.write(STUB_ASM)
        r = subprocess.run(["riscv64-unknown-elf-as", "-march=rv32i", "-mabi=ilp32", "-o", obj, src],
                           capture_output=True, text=True)
        if r.returncode:
            fail("riscv64-unknown-elf-as failed: " + r.stderr)
        cmd = ["riscv64-unknown-elf-ld", "-m", "elf32lriscv", "--emit-relocs", "-o", out]
        for d in libdirs:
            cmd.append("-L" + d)
        for s in ldscripts:
            cmd.append("-T" + s)
        for fl in ldflags:
            if fl.startswith("--just-symbols") or fl.startswith("-R"):
                cmd.append(fl)
        cmd.append(obj)
        log("  ld: " + " ".join(cmd))
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            fail("riscv64-unknown-elf-ld failed: " + r.stderr)


def main(argv):
    log(f"CALL cwd={os.getcwd()} args={' '.join(argv)}")
    if "--version" in argv or "-dumpversion" in argv:
        sys.stdout.write(VERSION)
        return 0
    out, dep, positional, ldscripts, libdirs, ldflags, compile_only = parse(argv)
    if out is None:
        fail("no -o output in: " + " ".join(argv))
    if compile_only or out.endswith(".gch") or out.endswith(".o"):
        with open(out, "wb") as f:
            f.write(b"ttrecord realttnn stand-in object\n")
        if dep:
            write_dep(dep, out, positional)
        return 0
    # a link
    fw = firmware_for(out, ldscripts)
    if fw is not None:
        log("  firmware copy: " + fw)
        shutil.copyfile(fw, out)
    else:
        link_kernel(out, ldscripts, libdirs, ldflags)
    if dep:
        write_dep(dep, out, positional)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
