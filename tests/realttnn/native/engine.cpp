// A small C++ inference engine driving tt-metal directly, for `ttrecord run --native`.
// The ttnn wheel ships no host headers, so the entry points it calls are declared here
// (their mangled names must match the exported ones; the layouts passed by pointer are the
// zero-initialised defaults: a replicated DRAM buffer, interleaved).
//
// Usage: engine [--read-in-capture] [--steps N]
// Decode step: write the token into the input buffer, read the logits back. Captured once
// with BeginTraceCapture/EndTraceCapture, then replayed; a step inside the capture reads back,
// which real tt-metal refuses with a TT_FATAL.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace ttsl {
template <typename T, typename Tag>
struct StrongType { T value; };
}  // namespace ttsl

namespace tt::tt_metal {
struct SubDeviceIdTag;
class DispatchCoreConfig;
// Only ever passed as an empty std::optional, whose engaged flag is at the real one's size.
struct BufferDistributionSpec {
  unsigned char opaque[0x110];
  ~BufferDistributionSpec() {}
};
// A pointer to its implementation, built by the exported constructor.
struct BufferShardingArgs {
  explicit BufferShardingArgs(std::optional<BufferDistributionSpec> spec);
  void* impl;
};
namespace distributed {
struct MeshTraceIdTag;
using MeshTraceId = ttsl::StrongType<unsigned int, MeshTraceIdTag>;
using SubDevices = std::span<const ttsl::StrongType<unsigned char, SubDeviceIdTag>>;
struct ReplicatedBufferConfig;
struct ShardedBufferConfig;
struct DeviceLocalBufferConfig;
class MeshCommandQueue;
class MeshBuffer {
 public:
  static std::shared_ptr<MeshBuffer> create(
      const std::variant<ReplicatedBufferConfig, ShardedBufferConfig>& config,
      const DeviceLocalBufferConfig& device_local, class MeshDevice* device,
      std::optional<unsigned long> address);
};
class MeshDevice {
 public:
  MeshCommandQueue& mesh_command_queue(std::optional<unsigned char> cq) const;
  void end_mesh_trace(unsigned char cq, const MeshTraceId& id);
  void replay_mesh_trace(unsigned char cq, const MeshTraceId& id, bool blocking);
  void release_mesh_trace(const MeshTraceId& id);
  bool close();
};
class MeshCommandQueueBase {
 public:
  void enqueue_write_mesh_buffer(const std::shared_ptr<MeshBuffer>& buffer, const void* src,
                                 bool blocking);
  void enqueue_read_mesh_buffer(void* dst, const std::shared_ptr<MeshBuffer>& buffer,
                                bool blocking);
};
MeshTraceId BeginTraceCapture(MeshDevice* device, unsigned char cq);
void Synchronize(MeshDevice* device, std::optional<unsigned char> cq, SubDevices subs);
}  // namespace distributed
}  // namespace tt::tt_metal

namespace ttnn::device {
std::shared_ptr<tt::tt_metal::distributed::MeshDevice> open_mesh_device(
    int device_id, unsigned long l1_small_size, unsigned long trace_region_size,
    unsigned long num_command_queues,
    const std::optional<tt::tt_metal::DispatchCoreConfig>& dispatch_core_config,
    unsigned long worker_l1_size);
}

namespace md = tt::tt_metal::distributed;

// The header-inline helpers of tt-metal's distributed API, as the headers define them.
static md::MeshCommandQueueBase& queue(md::MeshDevice& device) {
  return reinterpret_cast<md::MeshCommandQueueBase&>(device.mesh_command_queue(std::nullopt));
}

static std::shared_ptr<md::MeshBuffer> dram_buffer(md::MeshDevice& device, uint64_t size,
                                                   uint64_t page_size) {
  alignas(16) unsigned char config[256] = {};  // variant index 0: ReplicatedBufferConfig{size}
  std::memcpy(config, &size, sizeof size);
  // DeviceLocalBufferConfig: page_size, BufferType::DRAM, BufferShardingArgs (interleaved),
  // empty optionals.
  alignas(16) unsigned char local[512] = {};
  std::memcpy(local, &page_size, sizeof page_size);
  new (local + 16) tt::tt_metal::BufferShardingArgs(std::nullopt);
  return md::MeshBuffer::create(
      *reinterpret_cast<const std::variant<md::ReplicatedBufferConfig, md::ShardedBufferConfig>*>(config),
      *reinterpret_cast<const md::DeviceLocalBufferConfig*>(local), &device, std::nullopt);
}

struct Model {
  md::MeshDevice* device;
  std::shared_ptr<md::MeshBuffer> tokens, weights, logits;
  std::vector<float> host_tokens = std::vector<float>(1024, 1.0f);
  std::vector<float> host_logits = std::vector<float>(1024, 0.0f);
};

__attribute__((noinline)) static void upload_token(Model& m) {
  queue(*m.device).enqueue_write_mesh_buffer(m.tokens, m.host_tokens.data(), false);  // MARK:write
}

__attribute__((noinline)) static void read_logits(Model& m) {
  queue(*m.device).enqueue_read_mesh_buffer(m.host_logits.data(), m.logits, true);  // MARK:read
}

__attribute__((noinline)) static void wait_for_device(Model& m) {
  md::Synchronize(m.device, std::nullopt, {});  // MARK:sync
}

// One decode step: the token goes in, the logits come back.
__attribute__((noinline)) static void decode_step(Model& m, bool read_back) {
  upload_token(m);
  if (read_back) {
    read_logits(m);  // MARK:step_read
  }
}

int main(int argc, char** argv) {
  bool read_in_capture = false, sync_in_capture = false;
  int steps = 0;  // replays: the mock device cannot run one (its command queue is not set up)
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--read-in-capture") read_in_capture = true;
    else if (a == "--sync-in-capture") sync_in_capture = true;
    else if (a == "--steps" && i + 1 < argc) steps = std::atoi(argv[++i]);
  }
  alignas(16) static unsigned char no_dispatch_config[256] = {};  // an empty std::optional
  auto device = ttnn::device::open_mesh_device(
      0, 0, 1 << 20, 1,
      *reinterpret_cast<const std::optional<tt::tt_metal::DispatchCoreConfig>*>(no_dispatch_config), 0);
  Model m{device.get()};
  m.tokens = dram_buffer(*device, 4096, 2048);
  m.weights = dram_buffer(*device, 8192, 2048);
  m.logits = dram_buffer(*device, 4096, 2048);
  queue(*device).enqueue_write_mesh_buffer(m.weights, std::vector<float>(2048, 0.5f).data(), true);
  decode_step(m, true);  // warm-up, eager
  std::printf("warm-up done\n");
  auto trace = md::BeginTraceCapture(device.get(), 0);  // MARK:begin
  decode_step(m, read_in_capture);  // MARK:captured_step
  if (sync_in_capture) wait_for_device(m);
  device->end_mesh_trace(0, trace);
  std::printf("captured trace %u\n", trace.value);
  for (int s = 0; s < steps; ++s) {
    device->replay_mesh_trace(0, trace, false);
  }
  device->release_mesh_trace(trace);
  read_logits(m);
  m.tokens.reset();
  m.weights.reset();
  m.logits.reset();
  device->close();
  std::printf("done\n");
  return 0;
}
