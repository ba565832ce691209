// ttrecord's native recorder: preloaded (LD_PRELOAD) into a program that calls tt-metal/ttnn
// from C++, it defines the exported tt-metal functions of each hooked role under their own
// symbol names, so every call (from the program, from ttnn, from inside libtt_metal through its
// PLT or a vtable slot) lands here first. A hook appends one binary record to a memory-mapped
// log and calls the real function, found lazily with dlsym(RTLD_NEXT) or, when the libraries
// were dlopen'ed RTLD_LOCAL (Python), dlopen(RTLD_NOLOAD) + dlsym.
//
// Which roles exist is decided when the library is built: ttrecord/native/roles.py matches each
// role's demangled signature against the installed library's dynamic symbols and passes the
// mangled names found as TTR_SYM_<ROLE> macros (a role that is not found is not compiled, and
// the session says so). The record layout is declared once, in ttrecord/native/logformat.py,
// and mirrored by `Rec` below.
//
// Hot path: no system call and no symbolization per event. Time comes from the vDSO clock, the
// thread id is cached per thread, stacks are raw return addresses (symbolized after the run),
// and the file grows by fallocate in 4 MiB steps. Hooks read plain arguments only (calling
// tt-metal accessors from a hook has broken programs); the Buffer fields of an allocation are
// read at offsets taken from the accessors' own machine code at build time.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <pthread.h>
#include <stdexcept>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <csignal>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef TTR_ROLES_H
#include "roles.h"
#endif

namespace {

enum RecType : uint16_t { BEGIN = 1, END = 2, POINT = 3, MODULE = 4, TERMINATE = 5, EXIT = 6 };

struct Rec {  // mirrored in logformat.py
  uint32_t size;     // whole record, 8-byte aligned
  uint16_t type;     // RecType
  uint16_t role;     // role index (roles.py order)
  uint64_t seq;
  uint64_t parent;   // seq of the enclosing hooked call, 0 if none
  uint64_t t_ns;     // CLOCK_MONOTONIC since the recorder started in the (first) process
  uint32_t tid;
  uint16_t nframes;
  uint16_t textlen;  // bytes of text after the frames
  uint64_t a[4];     // role-specific plain values
};
static_assert(sizeof(Rec) == 72, "record header layout");

constexpr size_t kHeader = 64;       // magic, committed end, pid, flags
constexpr size_t kStep = 4u << 20;   // file growth
constexpr size_t kMapSize = 1ull << 34;  // virtual room for the mapping (16 GiB, not reserved)
constexpr int kMaxFrames = 64;  // a Python program's stacks are deep (see g_depth)

std::mutex g_lock;
std::mutex g_modlock;  // one module-map refresh at a time
int g_fd = -1;
char* g_map = nullptr;
size_t g_end = kHeader, g_room = 0;
pid_t g_pid = 0;
bool g_failed = false, g_enabled = false, g_audit = false, g_all_stacks = false;
int g_depth = 24;  // frames kept per stack: the user's call is within them in a C++ program
std::atomic<uint64_t> g_seq{0};
std::atomic<int> g_capturing{0};  // begin seen without its end (real or virtual)
const char* g_prefix = nullptr;
uint64_t g_t0 = 0;  // CLOCK_MONOTONIC when the process started: records count from it

struct Module { uintptr_t lo, hi; };
Module g_modules[512];
int g_nmodules = 0;

struct Tls { uint32_t tid = 0; int depth = 0; uint64_t top = 0; };
thread_local Tls t_tls;

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

inline uint32_t tid() {
  if (t_tls.tid == 0) t_tls.tid = uint32_t(syscall(SYS_gettid));
  return t_tls.tid;
}

// Opened at the first record of each process (the JIT compiler's children inherit the preload
// and never record): <prefix>.<pid>.
bool open_log_locked() {
  if (g_map) return true;
  if (g_failed) return false;
  pid_t pid = getpid();
  g_pid = pid;
  char path[4096];
  snprintf(path, sizeof path, "%s.%d", g_prefix, int(pid));
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) { g_failed = true; return false; }
  if (posix_fallocate(fd, 0, kStep) != 0 && ftruncate(fd, kStep) != 0) {
    close(fd); g_failed = true; return false;
  }
  void* m = mmap(nullptr, kMapSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (m == MAP_FAILED) { close(fd); g_failed = true; return false; }
  g_fd = fd; g_map = static_cast<char*>(m); g_room = kStep;
  memcpy(g_map, "TTRNAT01", 8);
  uint64_t flags = (g_audit ? 1 : 0);
  memcpy(g_map + 16, &pid, sizeof pid);
  memcpy(g_map + 24, &flags, 8);
  __atomic_store_n(reinterpret_cast<uint64_t*>(g_map + 8), uint64_t(g_end), __ATOMIC_RELEASE);
  return true;
}

// Reserve `n` bytes under the lock; nullptr when the log cannot grow (recording stops).
char* reserve_locked(size_t n) {
  if (!open_log_locked()) return nullptr;
  if (g_end + n > g_room) {
    size_t want = g_room;
    while (g_end + n > want) want += kStep;
    if (want > kMapSize || posix_fallocate(g_fd, g_room, want - g_room) != 0) {
      g_failed = true;
      return nullptr;
    }
    g_room = want;
  }
  return g_map + g_end;
}

void commit_locked(size_t n) {
  g_end += n;
  __atomic_store_n(reinterpret_cast<uint64_t*>(g_map + 8), uint64_t(g_end), __ATOMIC_RELEASE);
}

void append(uint16_t type, uint16_t role, uint64_t seq, uint64_t parent, const uint64_t* a,
            void* const* frames, int nframes, const char* text, size_t textlen) {
  if (textlen > 4000) textlen = 4000;
  size_t n = sizeof(Rec) + size_t(nframes) * 8 + textlen;
  n = (n + 7) & ~size_t(7);
  Rec r{};
  r.size = uint32_t(n); r.type = type; r.role = role; r.seq = seq; r.parent = parent;
  r.t_ns = now_ns() - g_t0; r.tid = tid(); r.nframes = uint16_t(nframes); r.textlen = uint16_t(textlen);
  if (a) memcpy(r.a, a, sizeof r.a);
  std::lock_guard<std::mutex> guard(g_lock);
  char* p = reserve_locked(n);
  if (!p) return;
  memcpy(p, &r, sizeof r);
  if (nframes) memcpy(p + sizeof r, frames, size_t(nframes) * 8);
  if (textlen) memcpy(p + sizeof r + size_t(nframes) * 8, text, textlen);
  commit_locked(n);
}

// -- module map: written when a stack holds an address outside every module known so far ----

int add_module(dl_phdr_info* info, size_t, void*) {
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t s = info->dlpi_addr + ph.p_vaddr, e = s + ph.p_memsz;
    if (s < lo) lo = s;
    if (e > hi) hi = e;
  }
  if (hi == 0) return 0;
  for (int i = 0; i < g_nmodules; ++i)
    if (g_modules[i].lo == lo) return 0;
  if (g_nmodules < 512) g_modules[g_nmodules++] = {lo, hi};
  char exe[4096];
  const char* name = info->dlpi_name;
  if (!name || !*name) {
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[k > 0 ? k : 0] = 0;
    name = exe;
  }
  uint64_t a[4] = {uint64_t(info->dlpi_addr), uint64_t(lo), uint64_t(hi), 0};
  append(MODULE, 0, 0, 0, a, nullptr, 0, name, strlen(name));
  return 0;
}

bool known(uintptr_t pc) {
  for (int i = 0; i < g_nmodules; ++i)
    if (pc >= g_modules[i].lo && pc < g_modules[i].hi) return true;
  return false;
}

int take_stack(void** frames) {
  int n = backtrace(frames, g_depth);
  for (int i = 0; i < n; ++i) {
    if (!known(uintptr_t(frames[i]))) {
      std::lock_guard<std::mutex> guard(g_modlock);
      dl_iterate_phdr(add_module, nullptr);
      break;
    }
  }
  return n;
}

// -- resolving the real functions ---------------------------------------------------------

struct Found { const char* sym; void* self; void* hit; };

int find_in(dl_phdr_info* info, size_t, void* data) {
  auto* f = static_cast<Found*>(data);
  if (f->hit || !info->dlpi_name || !*info->dlpi_name) return 0;
  if (!strstr(info->dlpi_name, "tt_metal") && !strstr(info->dlpi_name, "ttnn")) return 0;
  void* h = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);
  if (!h) return 0;
  void* p = dlsym(h, f->sym);
  if (p && p != f->self) f->hit = p;
  dlclose(h);
  return 0;
}

void* resolve(const char* sym, void* self) {
  void* p = dlsym(RTLD_NEXT, sym);
  if (p && p != self) return p;
  Found f{sym, self, nullptr};
  dl_iterate_phdr(find_in, &f);
  if (!f.hit) {
    fprintf(stderr, "ttrecord: native recorder: %s has no definition to call\n", sym);
    abort();
  }
  return f.hit;
}

// -- one hooked call ------------------------------------------------------------------------

enum Stack { NONE = 0, ALWAYS = 1, IN_CAPTURE = 2 };

bool wants_stack(Stack s) {
  return g_all_stacks || s == ALWAYS || (s == IN_CAPTURE && g_capturing.load() > 0);
}

struct Call {
  uint16_t role;
  uint64_t seq = 0;
  bool top;
  Call(uint16_t role_, Stack stack, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0,
       uint64_t a3 = 0)
      : role(role_), top(g_enabled && t_tls.depth == 0) {
    ++t_tls.depth;
    if (!top) return;
    seq = ++g_seq;
    t_tls.top = seq;
    void* frames[kMaxFrames];
    int n = wants_stack(stack) ? take_stack(frames) : 0;
    uint64_t a[4] = {a0, a1, a2, a3};
    append(BEGIN, role, seq, 0, a, frames, n, nullptr, 0);
  }
  void ok(uint64_t r0 = 0) {
    if (top) {
      uint64_t a[4] = {0, r0, 0, 0};
      append(END, role, seq, 0, a, nullptr, 0, nullptr, 0);
      top = false;
    }
  }
  void raised(const char* what) {
    if (top) {
      uint64_t a[4] = {1, 0, 0, 0};
      append(END, role, seq, 0, a, nullptr, 0, what, strlen(what));
      top = false;
    }
  }
  ~Call() {
    --t_tls.depth;
    if (t_tls.depth == 0) t_tls.top = 0;
  }
};

// Runs `body` (which calls the real function) as one recorded call: an exception is recorded
// with its message and passed on unchanged.
template <typename F>
auto recorded(Call& c, F body) -> decltype(body()) {
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      c.ok();
    } else {
      auto r = body();
      c.ok();
      return r;
    }
  } catch (const std::exception& e) {
    c.raised(e.what());
    throw;
  } catch (...) {
    c.raised("(a non-standard C++ exception)");
    throw;
  }
}

// A point event (allocation, free, note) under the current hooked call.
void point(uint16_t role, Stack stack, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3) {
  if (!g_enabled) return;
  void* frames[kMaxFrames];
  int n = wants_stack(stack) ? take_stack(frames) : 0;
  uint64_t a[4] = {a0, a1, a2, a3};
  append(POINT, role, ++g_seq, t_tls.top, a, frames, n, nullptr, 0);
}

struct Span { const void* data; size_t size; };

#define REAL(role, type, name)                                              \
  static type real_##role = nullptr;                                        \
  if (!real_##role) real_##role = reinterpret_cast<type>(resolve(name, reinterpret_cast<void*>(&role)));

// Uncaught exceptions (a TT_FATAL the program does not catch): the message and the stack of
// the throw, before the default handler aborts.
std::terminate_handler g_previous_terminate = nullptr;

void on_terminate() {
  static std::atomic<bool> once{false};
  if (g_enabled && !once.exchange(true)) {
    const char* what = "terminate called without an active exception";
    std::string text;
    if (auto ex = std::current_exception()) {
      try {
        std::rethrow_exception(ex);
      } catch (const std::exception& e) {
        text = e.what();
        what = text.c_str();
      } catch (...) {
        what = "a non-standard C++ exception";
      }
    }
    void* frames[kMaxFrames];
    int n = take_stack(frames);
    append(TERMINATE, 0, ++g_seq, t_tls.top, nullptr, frames, n, what, strlen(what));
  }
  if (g_previous_terminate) g_previous_terminate();
  abort();
}

// A forked child records into a log of its own (the mapping is the parent's).
void after_fork_in_child() {
  if (g_map) munmap(g_map, kMapSize);
  if (g_fd >= 0) close(g_fd);
  new (&g_lock) std::mutex();
  g_map = nullptr; g_fd = -1; g_end = kHeader; g_room = 0; g_nmodules = 0; g_failed = false;
  t_tls = Tls();
}

__attribute__((constructor)) void start() {
  g_prefix = getenv("TTRECORD_NATIVE_LOG");
  if (!g_prefix || !*g_prefix) return;
  g_t0 = now_ns();
  // The program never outlives `ttrecord run` (as its Python child does not): asked of the
  // kernel only by the process the supervisor started, not by its children.
  const char* supervisor = getenv("TTRECORD_NATIVE_SUPERVISOR");
  if (supervisor && atoi(supervisor) == int(getppid())) prctl(PR_SET_PDEATHSIG, SIGTERM);
  const char* audit = getenv("TTRECORD_NATIVE_AUDIT");
  g_audit = audit && *audit == '1';
  const char* stacks = getenv("TTRECORD_NATIVE_STACKS");
  g_all_stacks = stacks && strcmp(stacks, "all") == 0;
  // Under Python, a call must be traced back to ttnn's bindings through tt-metal's and ttnn's
  // frames to be told apart from the program's own C++ calls.
  if (g_all_stacks) g_depth = kMaxFrames;
  void* warm[2];
  backtrace(warm, 2);  // loads the unwinder now, not inside the first hook
  g_previous_terminate = std::set_terminate(on_terminate);
  g_enabled = true;
  pthread_atfork(nullptr, nullptr, after_fork_in_child);
}

}  // namespace

// Fields of tt::tt_metal::Buffer read by the allocation hooks (see roles.py: buffer_layout).
#ifdef TTR_BUF_IMPL
static void buffer_fields(const void* buffer, uint64_t* out) {
  const char* impl = *reinterpret_cast<const char* const*>(static_cast<const char*>(buffer) + TTR_BUF_IMPL);
  uint64_t size = *reinterpret_cast<const uint64_t*>(impl + TTR_BUF_SIZE);
  uint32_t type = *reinterpret_cast<const uint32_t*>(impl + TTR_BUF_TYPE);
  bool has = *reinterpret_cast<const uint8_t*>(impl + TTR_BUF_HAS_ADDRESS) != 0;
  uint64_t addr = UINT64_MAX;
  if (has) {
    addr = TTR_BUF_ADDRESS_BYTES == 8 ? *reinterpret_cast<const uint64_t*>(impl + TTR_BUF_ADDRESS)
                                      : *reinterpret_cast<const uint32_t*>(impl + TTR_BUF_ADDRESS);
  }
  uint64_t page = *reinterpret_cast<const uint64_t*>(impl + TTR_BUF_PAGE_SIZE);
  out[0] = addr; out[1] = size; out[2] = page; out[3] = type;
}
#endif

extern "C" {

// Roles: the index of each is its position in roles.py ROLES.

#ifdef TTR_SYM_READ_SHARD
void ttr_read_shard(void*, void*, void*, void*, void*, void*, void*, Span) __asm__(TTR_SYM_READ_SHARD);
void ttr_read_shard(void* self, void* buf, void* coord, void* dst, void* pinned, void* region,
                    void* map, Span subs) {
  using T = void (*)(void*, void*, void*, void*, void*, void*, void*, Span);
  REAL(ttr_read_shard, T, TTR_SYM_READ_SHARD);
  Call c(TTR_ROLE_READ_SHARD, ALWAYS, uint64_t(buf));
  recorded(c, [&] { real_ttr_read_shard(self, buf, coord, dst, pinned, region, map, subs); });
}
#endif

#ifdef TTR_SYM_WRITE_SHARD
void ttr_write_shard(void*, void*, void*, const void*, void*, Span, void*, void*) __asm__(TTR_SYM_WRITE_SHARD);
void ttr_write_shard(void* self, void* buf, void* coord, const void* src, void* region, Span subs,
                     void* pinned, void* cores) {
  using T = void (*)(void*, void*, void*, const void*, void*, Span, void*, void*);
  REAL(ttr_write_shard, T, TTR_SYM_WRITE_SHARD);
  Call c(TTR_ROLE_WRITE_SHARD, ALWAYS, uint64_t(buf));
  recorded(c, [&] { real_ttr_write_shard(self, buf, coord, src, region, subs, pinned, cores); });
}
#endif

// DeviceMemoryAddress holds a MeshCoordinate (a small vector): not trivially copyable, so it
// is passed by reference in a register, like the pointer declared here.
#ifdef TTR_SYM_READ_CORE
void ttr_read_core(void*, const void*, void*, uint32_t, bool, Span) __asm__(TTR_SYM_READ_CORE);
void ttr_read_core(void* self, const void* where, void* dst, uint32_t size, bool blocking, Span subs) {
  using T = void (*)(void*, const void*, void*, uint32_t, bool, Span);
  REAL(ttr_read_core, T, TTR_SYM_READ_CORE);
  Call c(TTR_ROLE_READ_CORE, ALWAYS, 0, size);
  recorded(c, [&] { real_ttr_read_core(self, where, dst, size, blocking, subs); });
}
#endif

#ifdef TTR_SYM_WRITE_CORE
void ttr_write_core(void*, const void*, const void*, uint32_t, bool, Span) __asm__(TTR_SYM_WRITE_CORE);
void ttr_write_core(void* self, const void* where, const void* src, uint32_t size, bool blocking,
                    Span subs) {
  using T = void (*)(void*, const void*, const void*, uint32_t, bool, Span);
  REAL(ttr_write_core, T, TTR_SYM_WRITE_CORE);
  Call c(TTR_ROLE_WRITE_CORE, ALWAYS, 0, size);
  recorded(c, [&] { real_ttr_write_core(self, where, src, size, blocking, subs); });
}
#endif

#ifdef TTR_SYM_TRACE_BEGIN
void ttr_trace_begin(void*, uint8_t, const uint32_t*) __asm__(TTR_SYM_TRACE_BEGIN);
void ttr_trace_begin(void* self, uint8_t cq, const uint32_t* id) {
  using T = void (*)(void*, uint8_t, const uint32_t*);
  REAL(ttr_trace_begin, T, TTR_SYM_TRACE_BEGIN);
  Call c(TTR_ROLE_TRACE_BEGIN, ALWAYS, uint64_t(self), cq, id ? *id : 0, g_audit ? 1 : 0);
  g_capturing.fetch_add(1);
  if (g_audit) { c.ok(); return; }  // virtual capture: the region runs eagerly
  try {
    recorded(c, [&] { real_ttr_trace_begin(self, cq, id); });
  } catch (...) {
    g_capturing.fetch_sub(1);
    throw;
  }
}
#endif

#ifdef TTR_SYM_TRACE_END
void ttr_trace_end(void*, uint8_t, const uint32_t*) __asm__(TTR_SYM_TRACE_END);
void ttr_trace_end(void* self, uint8_t cq, const uint32_t* id) {
  using T = void (*)(void*, uint8_t, const uint32_t*);
  REAL(ttr_trace_end, T, TTR_SYM_TRACE_END);
  Call c(TTR_ROLE_TRACE_END, ALWAYS, uint64_t(self), cq, id ? *id : 0, g_audit ? 1 : 0);
  if (g_capturing.load() > 0) g_capturing.fetch_sub(1);
  if (g_audit) { c.ok(); return; }
  recorded(c, [&] { real_ttr_trace_end(self, cq, id); });
}
#endif

#ifdef TTR_SYM_TRACE_REPLAY
void ttr_trace_replay(void*, uint8_t, const uint32_t*, bool) __asm__(TTR_SYM_TRACE_REPLAY);
void ttr_trace_replay(void* self, uint8_t cq, const uint32_t* id, bool blocking) {
  using T = void (*)(void*, uint8_t, const uint32_t*, bool);
  REAL(ttr_trace_replay, T, TTR_SYM_TRACE_REPLAY);
  Call c(TTR_ROLE_TRACE_REPLAY, ALWAYS, uint64_t(self), cq, id ? *id : 0, g_audit ? 1 : 0);
  if (g_audit) { c.ok(); return; }
  recorded(c, [&] { real_ttr_trace_replay(self, cq, id, blocking); });
}
#endif

#ifdef TTR_SYM_TRACE_RELEASE
void ttr_trace_release(void*, const uint32_t*) __asm__(TTR_SYM_TRACE_RELEASE);
void ttr_trace_release(void* self, const uint32_t* id) {
  using T = void (*)(void*, const uint32_t*);
  REAL(ttr_trace_release, T, TTR_SYM_TRACE_RELEASE);
  Call c(TTR_ROLE_TRACE_RELEASE, ALWAYS, uint64_t(self), 0, id ? *id : 0, g_audit ? 1 : 0);
  if (g_audit) { c.ok(); return; }
  recorded(c, [&] { real_ttr_trace_release(self, id); });
}
#endif

#ifdef TTR_SYM_FINISH
void ttr_finish(void*, Span) __asm__(TTR_SYM_FINISH);
void ttr_finish(void* self, Span subs) {
  using T = void (*)(void*, Span);
  REAL(ttr_finish, T, TTR_SYM_FINISH);
  Call c(TTR_ROLE_FINISH, ALWAYS);
  recorded(c, [&] { real_ttr_finish(self, subs); });
}
#endif

#ifdef TTR_SYM_WAIT_EVENT
void ttr_wait_event(void*, const void*) __asm__(TTR_SYM_WAIT_EVENT);
void ttr_wait_event(void* self, const void* event) {
  using T = void (*)(void*, const void*);
  REAL(ttr_wait_event, T, TTR_SYM_WAIT_EVENT);
  Call c(TTR_ROLE_WAIT_EVENT, ALWAYS);
  recorded(c, [&] { real_ttr_wait_event(self, event); });
}
#endif

#ifdef TTR_SYM_EVENT_SYNCHRONIZE
void ttr_event_synchronize(const void*) __asm__(TTR_SYM_EVENT_SYNCHRONIZE);
void ttr_event_synchronize(const void* event) {
  using T = void (*)(const void*);
  REAL(ttr_event_synchronize, T, TTR_SYM_EVENT_SYNCHRONIZE);
  Call c(TTR_ROLE_EVENT_SYNCHRONIZE, ALWAYS);
  recorded(c, [&] { real_ttr_event_synchronize(event); });
}
#endif

#ifdef TTR_SYM_SYNCHRONIZE
void ttr_synchronize(void*, uint16_t, Span) __asm__(TTR_SYM_SYNCHRONIZE);
void ttr_synchronize(void* device, uint16_t cq, Span subs) {
  using T = void (*)(void*, uint16_t, Span);
  REAL(ttr_synchronize, T, TTR_SYM_SYNCHRONIZE);
  Call c(TTR_ROLE_SYNCHRONIZE, ALWAYS, uint64_t(device));
  recorded(c, [&] { real_ttr_synchronize(device, cq, subs); });
}
#endif

#ifdef TTR_SYM_WORKLOAD
void ttr_workload(void*, void*, bool) __asm__(TTR_SYM_WORKLOAD);
void ttr_workload(void* self, void* workload, bool blocking) {
  using T = void (*)(void*, void*, bool);
  REAL(ttr_workload, T, TTR_SYM_WORKLOAD);
  Call c(TTR_ROLE_WORKLOAD, IN_CAPTURE, uint64_t(workload), blocking);
  recorded(c, [&] { real_ttr_workload(self, workload, blocking); });
}
#endif

#ifdef TTR_SYM_COMPILE
// A kernel built for a program the device's program cache did not hold: a note under the
// hooked call (an enqueued workload) that compiled it.
void ttr_compile(uint64_t, const void*) __asm__(TTR_SYM_COMPILE);
void ttr_compile(uint64_t hash, const void* build) {
  using T = void (*)(uint64_t, const void*);
  REAL(ttr_compile, T, TTR_SYM_COMPILE);
  point(TTR_ROLE_COMPILE, IN_CAPTURE, hash, 0, 0, 0);
  real_ttr_compile(hash, build);
}
#endif

#ifdef TTR_SYM_ALLOCATE
void ttr_allocate(void*, const void*) __asm__(TTR_SYM_ALLOCATE);
void ttr_allocate(void* self, const void* buffer) {
  using T = void (*)(void*, const void*);
  REAL(ttr_allocate, T, TTR_SYM_ALLOCATE);
  if (buffer) {
    uint64_t f[4];
    buffer_fields(buffer, f);
    point(TTR_ROLE_ALLOCATE, IN_CAPTURE, f[0], f[1], f[2], f[3]);
  }
  real_ttr_allocate(self, buffer);
}
#endif

#ifdef TTR_SYM_DEALLOCATE
void ttr_deallocate(void*, void*) __asm__(TTR_SYM_DEALLOCATE);
void ttr_deallocate(void* self, void* buffer) {
  using T = void (*)(void*, void*);
  REAL(ttr_deallocate, T, TTR_SYM_DEALLOCATE);
  if (buffer) {
    uint64_t f[4];
    buffer_fields(buffer, f);
    point(TTR_ROLE_DEALLOCATE, IN_CAPTURE, f[0], f[1], f[2], f[3]);
  }
  real_ttr_deallocate(self, buffer);
}
#endif

// The benchmark's entry point: `n` recorded calls (a begin and an end record each, with or
// without a stack) from a frame below this one, or `n` bare calls of the same function when
// `mode` is 2 (the baseline); returns this thread's CPU time for them in nanoseconds (the
// machine may be shared: wall time follows its load).
__attribute__((noinline)) static void bench_call(int mode) {
  if (mode == 2) {
    asm volatile("" ::: "memory");
    return;
  }
  Call c(0, mode == 1 ? ALWAYS : NONE);
  c.ok();
}

__attribute__((noinline)) static void bench_caller(int n, int mode) {
  for (int i = 0; i < n; ++i) bench_call(mode);
}

static uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

uint64_t ttrecord_native_bench(int n, int mode) {
  uint64_t start = thread_cpu_ns();
  bench_caller(n, mode);
  return thread_cpu_ns() - start;
}

int ttrecord_native_enabled(void) { return g_enabled ? 1 : 0; }

}  // extern "C"
