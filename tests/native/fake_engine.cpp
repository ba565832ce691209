// A C++ program driving the stand-in tt-metal: an eager read, a capture with a read and a
// finish inside, a replay and a release. `--catch` catches the read's TT_FATAL.
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <sys/wait.h>
#include <unistd.h>

namespace ttsl {
template <typename T, typename Tag>
struct StrongType { T value; };
}  // namespace ttsl

namespace tt::tt_metal {
struct SubDeviceIdTag;
class IDevice;
class BufferRegion;
namespace experimental { class PinnedMemory; }
namespace distributed {
struct MeshTraceIdTag;
class MeshBuffer;
class MeshCoordinate;
class MeshWorkload;
struct DeviceMemoryAddress {
  std::unique_ptr<int> device_coord;
  unsigned long address;
};
using TraceId = ttsl::StrongType<unsigned int, MeshTraceIdTag>;
using SubDevices = std::span<const ttsl::StrongType<unsigned char, SubDeviceIdTag>>;
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
class MeshDeviceImpl {
 public:
  void begin_mesh_trace(unsigned char, const TraceId&);
  void end_mesh_trace(unsigned char, const TraceId&);
  void replay_mesh_trace(unsigned char, const TraceId&, bool);
  void release_mesh_trace(const TraceId&);
};
}  // namespace distributed
}  // namespace tt::tt_metal

namespace md = tt::tt_metal::distributed;

static md::FDMeshCommandQueue queue;
static md::MeshDeviceImpl device;
static char storage[64];
static char warm_program[8], new_program[8];

__attribute__((noinline)) static void run_program(char* program) {
  queue.enqueue_mesh_workload(*reinterpret_cast<md::MeshWorkload*>(program), false);  // MARK:op
}

__attribute__((noinline)) static int read_result() {
  int value = 0;
  std::unordered_map<tt::tt_metal::IDevice*, unsigned int> map;
  const auto& buffer = *reinterpret_cast<const md::MeshBuffer*>(storage);
  const auto& coord = *reinterpret_cast<const md::MeshCoordinate*>(storage);
  const auto& region = *reinterpret_cast<const std::optional<tt::tt_metal::BufferRegion>*>(storage + 32);
  queue.read_shard_from_device(buffer, coord, &value, nullptr, region, map, {});  // MARK:read
  return value;
}

__attribute__((noinline)) static void step(bool catch_fatal) {
  if (!catch_fatal) {
    read_result();  // MARK:step_read
    return;
  }
  try {
    read_result();
  } catch (const std::exception& e) {
    std::printf("caught: %s\n", std::strstr(e.what(), "Reads are") ? "Reads are not supported" : "?");
  }
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--sleep") == 0) {  // until a signal ends it
    read_result();
    for (;;) pause();
  }
  if (argc > 1 && std::strcmp(argv[1], "--fork") == 0) {  // a child process reads as well
    read_result();
    std::fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      read_result();
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    read_result();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  bool catch_fatal = argc > 1 && std::strcmp(argv[1], "--catch") == 0;
  std::printf("eager read: %d\n", read_result());  // the stand-in returns 42
  unsigned long word = 0;
  queue.enqueue_read_shard_from_core({nullptr, 1000}, &word, sizeof word, true, {});  // MARK:core_read
  std::printf("core read: %lu\n", word);  // the stand-in returns address + size
  run_program(warm_program);  // warm-up: compiles
  md::TraceId id{7};
  device.begin_mesh_trace(0, id);  // MARK:begin
  run_program(warm_program);  // in the program cache
  if (catch_fatal) run_program(new_program);  // compiles inside the capture
  step(catch_fatal);
  queue.finish({});  // MARK:finish
  device.end_mesh_trace(0, id);
  device.replay_mesh_trace(0, id, false);
  device.release_mesh_trace(id);
  std::printf("done\n");
  return 0;
}
