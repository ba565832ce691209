// A stand-in for libtt_metal.so with a few of the hooked roles, for hardware-free tests of the
// native recorder: the read refuses to run inside a capture as the real one does, and the
// write role is left out (its symbol is absent), so a session must say writes are unrecorded.
#include <cstdio>
#include <functional>
#include <memory>
#include <set>
#include <optional>
#include <span>
#include <stdexcept>
#include <unordered_map>

namespace ttsl {
template <typename T, typename Tag>
struct StrongType { T value; };
}  // namespace ttsl

namespace tt::tt_metal {
// Builds a kernel unless this process built it already (the real one caches by hash).
__attribute__((noinline)) void jit_build_once(unsigned long hash, const std::function<void()>& build) {
  static std::set<unsigned long> built;
  if (built.insert(hash).second) build();
}
struct SubDeviceIdTag;
class IDevice;
class BufferRegion;
namespace experimental { class PinnedMemory; }
namespace distributed {
struct MeshTraceIdTag;
class MeshBuffer;
class MeshCoordinate;
class MeshWorkload;
// Not trivially copyable, as the real one (a MeshCoordinate is a small vector).
struct DeviceMemoryAddress {
  std::unique_ptr<int> device_coord;
  unsigned long address;
};
using TraceId = ttsl::StrongType<unsigned int, MeshTraceIdTag>;
using SubDevices = std::span<const ttsl::StrongType<unsigned char, SubDeviceIdTag>>;

static bool capturing = false;

class FDMeshCommandQueue {
 public:
  void read_shard_from_device(const MeshBuffer&, const MeshCoordinate&, void*,
                              std::shared_ptr<experimental::PinnedMemory>,
                              const std::optional<BufferRegion>&,
                              std::unordered_map<IDevice*, unsigned int>&, SubDevices);
  void finish(SubDevices);
  void enqueue_mesh_workload(MeshWorkload&, bool);
  void enqueue_read_shard_from_core(DeviceMemoryAddress, void*, unsigned int, bool, SubDevices);
};

void FDMeshCommandQueue::enqueue_read_shard_from_core(DeviceMemoryAddress where, void* dst,
                                                      unsigned int size, bool, SubDevices) {
  if (capturing) throw std::runtime_error("TT_FATAL: Reads are not supported during trace capture.");
  if (dst && size >= sizeof(unsigned long)) *static_cast<unsigned long*>(dst) = where.address + size;
}

// A workload seen for the first time compiles its kernel (through the PLT, as in libtt_metal).
void FDMeshCommandQueue::enqueue_mesh_workload(MeshWorkload& workload, bool) {
  static std::set<void*> cached;
  if (cached.insert(&workload).second) {
    jit_build_once(reinterpret_cast<unsigned long>(&workload), [] {});
  }
}

void FDMeshCommandQueue::read_shard_from_device(const MeshBuffer&, const MeshCoordinate&, void* dst,
                                                std::shared_ptr<experimental::PinnedMemory>,
                                                const std::optional<BufferRegion>&,
                                                std::unordered_map<IDevice*, unsigned int>&,
                                                SubDevices subs) {
  if (capturing) {
    throw std::runtime_error(
        "TT_FATAL @ fake_tt_metal.cpp:51: !trace_id_.has_value()\ninfo:\nReads are not "
        "supported during trace capture.\nbacktrace:\n --- fake\n");
  }
  if (dst) *static_cast<int*>(dst) = int(subs.size()) + 42;
}

void FDMeshCommandQueue::finish(SubDevices) {}

class MeshDeviceImpl {
 public:
  void begin_mesh_trace(unsigned char, const TraceId&);
  void end_mesh_trace(unsigned char, const TraceId&);
  void replay_mesh_trace(unsigned char, const TraceId&, bool);
  void release_mesh_trace(const TraceId&);
};

void MeshDeviceImpl::begin_mesh_trace(unsigned char, const TraceId&) { capturing = true; }
void MeshDeviceImpl::end_mesh_trace(unsigned char, const TraceId&) { capturing = false; }
void MeshDeviceImpl::replay_mesh_trace(unsigned char, const TraceId&, bool) {
  if (capturing) throw std::runtime_error("TT_FATAL: replay during capture");
}
void MeshDeviceImpl::release_mesh_trace(const TraceId&) {}
}  // namespace distributed
}  // namespace tt::tt_metal

