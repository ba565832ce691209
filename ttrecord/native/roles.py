"""The hooked roles, each found in the installed tt-metal libraries by its demangled signature.

A role is one thing a finding needs to see (a device-to-host read, a trace phase, an
allocation). The native recorder defines a hook for each role under the mangled name found
here, so the calling convention of every hook is fixed by the signature it matched: a symbol
that was renamed or whose parameters changed does not match, its role is left out of the
build, and the session says what is not recorded ("device-to-host reads not recorded: ...
missing"). The order of ROLES is the role index in the binary log.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ttrecord.events import NoteKind

_DIST = "tt::tt_metal::distributed::"
_SUBS = "std::span<ttsl::StrongType<unsigned char, tt::tt_metal::SubDeviceIdTag> const, 18446744073709551615ul>"
_TRACE_ID = "ttsl::StrongType<unsigned int, tt::tt_metal::distributed::MeshTraceIdTag> const&"


@dataclass(frozen=True)
class Role:
    macro: str  # TTR_SYM_<macro> / TTR_ROLE_<macro> in recorder.cpp
    kind: str  # events.Kind value of the calls (or points) it records
    name: str  # the event name shown in findings
    signature: str  # the exact demangled signature the hook's parameters are written for
    what: str  # what is not recorded when the role is missing


ROLES: tuple[Role, ...] = (
    Role("BENCH", "note", NoteKind.NATIVE_BENCH.value, "", "(benchmark entry)"),
    Role("READ_SHARD", "d2h", "read_shard_from_device",
         f"{_DIST}FDMeshCommandQueue::read_shard_from_device({_DIST}MeshBuffer const&, "
         f"{_DIST}MeshCoordinate const&, void*, std::shared_ptr<tt::tt_metal::experimental::"
         "PinnedMemory>, std::optional<tt::tt_metal::BufferRegion> const&, std::unordered_map"
         "<tt::tt_metal::IDevice*, unsigned int, std::hash<tt::tt_metal::IDevice*>, std::equal_to"
         "<tt::tt_metal::IDevice*>, std::allocator<std::pair<tt::tt_metal::IDevice* const, "
         f"unsigned int> > >&, {_SUBS})",
         "device-to-host reads"),
    Role("WRITE_SHARD", "h2d", "write_shard_to_device",
         f"{_DIST}FDMeshCommandQueue::write_shard_to_device({_DIST}MeshBuffer const&, "
         f"{_DIST}MeshCoordinate const&, void const*, std::optional<tt::tt_metal::BufferRegion>"
         f" const&, {_SUBS}, std::shared_ptr<tt::tt_metal::experimental::PinnedMemory>, "
         "tt::tt_metal::CoreRangeSet const*)",
         "host-to-device writes"),
    Role("READ_CORE", "d2h", "enqueue_read_shard_from_core",
         f"{_DIST}FDMeshCommandQueue::enqueue_read_shard_from_core({_DIST}DeviceMemoryAddress,"
         f" void*, unsigned int, bool, {_SUBS})",
         "reads on core addresses"),
    Role("WRITE_CORE", "h2d", "enqueue_write_shard_to_core",
         f"{_DIST}FDMeshCommandQueue::enqueue_write_shard_to_core({_DIST}DeviceMemoryAddress,"
         f" void const*, unsigned int, bool, {_SUBS})",
         "writes on core addresses"),
    Role("TRACE_BEGIN", "trace_begin", "begin_mesh_trace",
         f"{_DIST}MeshDeviceImpl::begin_mesh_trace(unsigned char, {_TRACE_ID})",
         "trace captures (begin)"),
    Role("TRACE_END", "trace_end", "end_mesh_trace",
         f"{_DIST}MeshDeviceImpl::end_mesh_trace(unsigned char, {_TRACE_ID})",
         "trace captures (end)"),
    Role("TRACE_REPLAY", "trace_execute", "replay_mesh_trace",
         f"{_DIST}MeshDeviceImpl::replay_mesh_trace(unsigned char, {_TRACE_ID}, bool)",
         "trace replays"),
    Role("TRACE_RELEASE", "trace_release", "release_mesh_trace",
         f"{_DIST}MeshDeviceImpl::release_mesh_trace({_TRACE_ID})",
         "trace releases"),
    Role("FINISH", "sync", "finish", f"{_DIST}FDMeshCommandQueue::finish({_SUBS})",
         "command-queue finishes (synchronize)"),
    Role("WAIT_EVENT", "sync", "enqueue_wait_for_event",
         f"{_DIST}FDMeshCommandQueue::enqueue_wait_for_event({_DIST}MeshEvent const&)",
         "event waits"),
    Role("EVENT_SYNCHRONIZE", "sync", "EventSynchronize",
         f"{_DIST}EventSynchronize({_DIST}MeshEvent const&)", "event synchronizations"),
    Role("SYNCHRONIZE", "sync", "Synchronize",
         f"{_DIST}Synchronize({_DIST}MeshDevice*, std::optional<unsigned char>, {_SUBS})",
         "device synchronizations"),
    Role("WORKLOAD", "op", "enqueue_mesh_workload",
         f"{_DIST}FDMeshCommandQueue::enqueue_mesh_workload({_DIST}MeshWorkload&, bool)",
         "programs enqueued (ops)"),
    Role("COMPILE", "note", NoteKind.PROGRAM_CACHE_MISS.value,
         "tt::tt_metal::jit_build_once(unsigned long, std::function<void ()> const&)",
         "compiles (program-cache misses)"),
    Role("ALLOCATE", "alloc", "allocate",
         "tt::tt_metal::GraphTracker::track_allocate(tt::tt_metal::Buffer const*)",
         "buffer allocations"),
    Role("DEALLOCATE", "free", "deallocate",
         "tt::tt_metal::GraphTracker::track_deallocate(tt::tt_metal::Buffer*)",
         "buffer frees"),
)
ROLE_INDEX = {r.macro: i for i, r in enumerate(ROLES)}
BUFFER_ROLES = ("ALLOCATE", "DEALLOCATE")  # need the Buffer field offsets as well

# The Buffer accessors whose machine code gives the field offsets the allocation hooks read.
_ACCESSORS = {
    "size": "tt::tt_metal::Buffer::size() const",
    "type": "tt::tt_metal::Buffer::buffer_type() const",
    "address": "tt::tt_metal::Buffer::address() const",
    "page_size": "tt::tt_metal::Buffer::page_size() const",
}


@dataclass
class Resolution:
    """What one tt-metal library offers: role -> mangled symbol, and the Buffer layout."""

    found: dict[str, str]
    missing: list[str]
    buffer_layout: dict[str, int] | None
    lacking_buffer: str | None = None  # why the allocation roles are left out


def dynamic_symbols(library: Path) -> dict[str, str]:
    """demangled -> mangled, for the functions the library defines and exports."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    mangled = [line.split()[-1] for line in out.splitlines()
               if len(line.split()) == 3 and line.split()[1] in "TW"]  # fmt: skip
    demangled = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True,
                               text=True, check=True).stdout.splitlines()  # fmt: skip
    return dict(zip(demangled, mangled, strict=False))


_LOAD = re.compile(r"mov\w*\s+(?:0x([0-9a-f]+))?\(%rdi\),%(\w+)")
_FIELD = re.compile(r"(mov\w*|cmpb)\s+\$?(?:0x0,)?(?:0x([0-9a-f]+))?\(%rax\),?%?(\w*)")


def _disassemble(library: Path, address: int) -> list[str]:
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={address:#x}",
                          f"--stop-address={address + 24:#x}", str(library)],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return [line.split("\t", 1)[1] for line in out.splitlines() if "\t" in line]


def buffer_layout(library: Path, symbols: dict[str, str]) -> tuple[dict[str, int] | None, str]:
    """Field offsets of tt::tt_metal::Buffer read from its accessors: each is
    `mov IMPL(%rdi),%rax; [cmpb $0,FLAG(%rax); je ...;] mov FIELD(%rax),%reg; ret`."""
    addresses = _symbol_addresses(library)
    layout: dict[str, int] = {}
    for field, signature in _ACCESSORS.items():
        mangled = symbols.get(signature)
        if mangled is None or mangled not in addresses:
            return None, f"{signature} is not exported"
        code = _disassemble(library, addresses[mangled])
        first = _LOAD.match(code[0]) if code else None
        if first is None or first.group(2) != "rax":
            return None, f"{signature} does not read the buffer's implementation as expected"
        layout["impl"] = int(first.group(1) or "0", 16)
        for line in code[1:]:
            m = _FIELD.match(line)
            if m is None:
                continue
            offset = int(m.group(2) or "0", 16)
            if m.group(1) == "cmpb":
                layout["has_address"] = offset
                continue
            layout[field] = offset
            if field == "address":
                layout["address_bytes"] = 8 if m.group(3).startswith("r") else 4
            break
        if field not in layout:
            return None, f"{signature} does not read one field as expected"
    if "has_address" not in layout:
        return None, "Buffer::address() does not test the allocation status as expected"
    return layout, ""


def _symbol_addresses(library: Path) -> dict[str, int]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    found: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            found[parts[2]] = int(parts[0], 16)
    return found


def resolve(library: Path) -> Resolution:
    """Match every role against `library`'s exported functions."""
    symbols = dynamic_symbols(library)
    found: dict[str, str] = {}
    missing: list[str] = []
    for role in ROLES[1:]:
        mangled = symbols.get(role.signature)
        if mangled is None:
            missing.append(role.macro)
        else:
            found[role.macro] = mangled
    layout, why = buffer_layout(library, symbols)
    if layout is None:
        for macro in BUFFER_ROLES:
            if macro in found:
                del found[macro]
                missing.append(macro)
    return Resolution(found, missing, layout, why or None)


def header(res: Resolution) -> str:
    """roles.h for recorder.cpp: one macro per role index, one per symbol found."""
    lines = ["// generated by ttrecord/native/roles.py", "#define TTR_ROLES_H 1"]
    for i, role in enumerate(ROLES):
        lines.append(f"#define TTR_ROLE_{role.macro} {i}")
    for macro, mangled in sorted(res.found.items()):
        lines.append(f'#define TTR_SYM_{macro} "{mangled}"')
    if res.buffer_layout is not None:
        b = res.buffer_layout
        lines += [f"#define TTR_BUF_IMPL {b['impl']}", f"#define TTR_BUF_SIZE {b['size']}",
                  f"#define TTR_BUF_TYPE {b['type']}", f"#define TTR_BUF_PAGE_SIZE {b['page_size']}",
                  f"#define TTR_BUF_HAS_ADDRESS {b['has_address']}",
                  f"#define TTR_BUF_ADDRESS {b['address']}",
                  f"#define TTR_BUF_ADDRESS_BYTES {b.get('address_bytes', 8)}"]  # fmt: skip
    return "\n".join(lines) + "\n"
