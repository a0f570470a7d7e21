// The worker's side of kernels/candidate/worker.h: fk-candidate-worker's main loop.
//
// Serving mode: maps the arena (fd 3); on a device, makes its backend of that device,
// maps the device arena the supervisor shared and starts the device tracer; enters the
// sandbox, answers the supervisor's hello with the sandbox report (no candidate code is
// mapped yet), loads the candidate on request (its constructors run here, inside the
// sandbox) and runs calls on arena tensors until told to quit or until its parent goes
// away. On a device each call runs inside a tracer window (kernels/backend.h
// DeviceTracer) whose figures go back with the reply; a device fault is answered with
// kReplyDeviceFault and ends the worker.
//
// Exec mode (--exec): enters the sandbox with processes allowed and execs a command
// (the candidate's compiler) with a scrubbed environment.
#include "kernels/candidate/worker_serve.h"

#include "core/error.h"
#include "kernels/blas_info.h"
#include "kernels/candidate/candidate_impl.h"
#include "kernels/candidate/channel.h"
#include "kernels/candidate/sandbox.h"
#include "kernels/backends.h"
#include "kernels/fk_kernel.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <omp.h>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <vector>

namespace fk::kernels {
namespace {

using sandbox::Channel;
using sandbox::RequestKind;

struct ServeArgs {
  size_t arena_bytes = 0;
  std::string scratch, library, name, op, entry;
  std::vector<std::string> also_read;  // e.g. compute-sanitizer's folder, when it runs us
  int threads = 1;
  bool baseline = false;
  // No device tracer: compute-sanitizer runs us, and CUPTI refuses a second subscriber.
  bool untraced = false;
};

// `s`, cut to fit, as a NUL-terminated string in the channel's field `dst`.
template <size_t N>
void put_text(char (&dst)[N], const std::string& s) {
  const size_t n = std::min(s.size(), N - 1);
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

void reply(Channel* ch, uint32_t seq, int32_t code, const std::string& message) {
  ch->reply_code = code;
  put_text(ch->reply_message, message);
  ch->reply_seq.store(seq);
  if (ch->supervisor_sleeping.load()) sandbox::futex_wake(&ch->reply_seq);
}

// Waits for a request after `last`, spinning for `spin` first; exits when the parent is gone.
uint32_t wait_request(Channel* ch, uint32_t last, pid_t parent,
                      std::chrono::microseconds spin = std::chrono::microseconds(50)) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const uint32_t s = ch->request_seq.load();
    if (s != last) return s;
    if (std::chrono::steady_clock::now() - t0 < spin) continue;
    ch->worker_sleeping.store(1);
    if (ch->request_seq.load() == last) sandbox::futex_wait(&ch->request_seq, last, 1.0);
    ch->worker_sleeping.store(0);
    if (getppid() != parent) std::_Exit(0);
  }
}

// Where tensor data lives: the memfd after the control block, or the device arena.
struct Arena {
  unsigned char* base = nullptr;
  size_t begin = 0, end = 0;  // valid offsets
  Device device;
};

// "" or what is wrong with the request's descriptors.
std::string build_call(const Channel* ch, const Arena& arena, OpCall& call) {
  if (ch->nargs > sandbox::kChannelArgs || ch->nparams > sandbox::kChannelArgs) return "too many arguments";
  for (uint32_t i = 0; i < ch->nargs; ++i) {
    const sandbox::ArgDesc& d = ch->args[i];
    if (!d.defined) {
      call.args.emplace_back();
      continue;
    }
    if (d.ndim < 0 || d.ndim > static_cast<int32_t>(sandbox::kChannelDims) || d.dtype < 0 ||
        d.dtype > static_cast<int32_t>(DType::kU8))
      return fmt::format("argument {}: bad dtype or rank", i);
    Shape shape;
    int64_t n = 1;
    for (int32_t k = 0; k < d.ndim; ++k) {
      if (d.shape[k] < 0 || (d.shape[k] > 0 && n > (int64_t{1} << 40) / d.shape[k]))
        return fmt::format("argument {}: bad shape", i);
      n *= d.shape[k];
      shape.push_back(d.shape[k]);
    }
    const auto dt = static_cast<DType>(d.dtype);
    if (static_cast<uint64_t>(n) * dtype_size(dt) != d.bytes || d.offset < arena.begin || d.offset > arena.end ||
        d.bytes > arena.end - d.offset)
      return fmt::format("argument {}: outside the arena", i);
    call.args.push_back(Tensor::borrow(arena.base + d.offset, dt, shape, arena.device));
  }
  for (uint32_t i = 0; i < ch->nparams; ++i) call.params.push_back(ch->params[i]);
  return "";
}

int serve(const ServeArgs& a) {
  void* p = mmap(nullptr, a.arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, 3, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "fk-candidate-worker: cannot map the arena: %s\n", std::strerror(errno));
    return 3;
  }
  close(3);
  auto* base = static_cast<unsigned char*>(p);
  auto* ch = reinterpret_cast<Channel*>(base);
  if (ch->magic != sandbox::kChannelMagic) {
    std::fprintf(stderr, "fk-candidate-worker: the arena is not a worker channel\n");
    return 3;
  }
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 0;
  ch->worker_pid = static_cast<uint32_t>(getpid());
  Arena arena{base, sandbox::kChannelBytes, a.arena_bytes, Device::cpu()};
  // The device, its arena and its tracer, before the sandbox: they open device files
  // and load CUDA's and CUPTI's libraries. An error is the answer to the hello.
  std::unique_ptr<Backend> device;
  std::unique_ptr<DeviceTracer> tracer;
  std::string device_error;
  if (ch->device_kind != static_cast<int32_t>(DeviceKind::kCpu)) {
    try {
      const auto kind = static_cast<DeviceKind>(ch->device_kind);
      device = backend_create(kind, ch->device_index);
      const size_t handle_bytes = std::min<size_t>(ch->device_handle_bytes, sizeof ch->device_handle);
      const std::string handle(reinterpret_cast<const char*>(ch->device_handle), handle_bytes);
      arena = Arena{static_cast<unsigned char*>(device->open_shared_memory(handle, ch->device_bytes)), 0,
                    ch->device_bytes, device->device()};
      // A memory checker (compute-sanitizer) learns that only a call's tensors are in use.
      device->mark_pool(arena.base, ch->device_bytes);
      if (!a.untraced) {
        tracer = device->tracer();
        if (!tracer) fail(ErrorKind::kUnsupported, "backend {} cannot trace its device work", device->name());
      }
    } catch (const std::exception& e) {
      device_error = e.what();
    }
  }
  uint32_t seq = wait_request(ch, 0, parent);
  if (!device_error.empty()) {
    reply(ch, seq, sandbox::kReplyBadRequest, "cannot start on the device: " + device_error);
    return 3;
  }
  sandbox::Policy policy;
  policy.read_paths = sandbox::system_read_paths();
  if (!a.library.empty()) policy.read_paths.push_back(a.library);
  for (const auto& dir : sandbox::library_path_dirs()) policy.read_paths.push_back(dir);
  policy.read_paths.insert(policy.read_paths.end(), a.also_read.begin(), a.also_read.end());
  policy.write_paths = {a.scratch, "/dev/null"};
  if (device) {
    // The driver opens its device files again for some calls (allocations, new streams).
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/dev", ec))
      if (e.path().filename().string().rfind("nvidia", 0) == 0) policy.write_paths.push_back(e.path().string());
    for (const char* r : {"/proc/driver/nvidia", "/sys/bus/pci", "/sys/devices", "/sys/module/nvidia"})
      policy.read_paths.push_back(r);
  }
  policy.max_file_bytes = size_t{64} << 20;
  try {
    const sandbox::Report report = sandbox::sandbox_enter(policy);
    if (chdir(a.scratch.c_str()) != 0) {
      // The scratch folder is the working directory; without it relative writes fail, which is fine.
    }
    reply(ch, seq, FK_OK, report.describe());
  } catch (const std::exception& e) {
    reply(ch, seq, sandbox::kReplyBadRequest, e.what());
    return 3;
  }
  omp_set_num_threads(a.threads);
  if (a.baseline) blas_set_threads(a.threads);
  std::shared_ptr<LoadedCandidate> loaded;
  bool pinged = false;
  for (;;) {
    seq = wait_request(ch, seq, parent, std::chrono::microseconds(pinged ? 50000 : 50));
    pinged = false;
    switch (ch->kind) {
      case RequestKind::kPing:
        pinged = true;
        reply(ch, seq, FK_OK, "");
        break;
      case RequestKind::kLoad: {
        if (a.baseline) {
          reply(ch, seq, FK_OK, "baseline");
          break;
        }
        try {
          CandidateManifest m;
          m.name = a.name;
          m.op = a.op;
          m.entry = a.entry;
          loaded = candidate_load(m, a.library);
          reply(ch, seq, FK_OK, "loaded");
        } catch (const std::exception& e) {
          reply(ch, seq, sandbox::kReplyLoadFailed, e.what());
        }
        break;
      }
      case RequestKind::kCall: {
        OpCall call;
        const std::string op(ch->op, strnlen(ch->op, sizeof ch->op));
        const OpDef* def = OpRegistry::global().find(op);
        std::string bad = def == nullptr ? fmt::format("unknown op '{}'", op) : build_call(ch, arena, call);
        if (bad.empty() && !a.baseline && (!loaded || op != a.op)) bad = "no candidate loaded for this op";
        const OpImpl* baseline = nullptr;
        if (bad.empty() && a.baseline) {
          baseline = device ? device->baseline(op) : &OpRegistry::global().impl(op, "cpu");
          if (baseline == nullptr) bad = fmt::format("backend {} has no baseline of '{}'", device->name(), op);
        }
        if (!bad.empty()) {
          reply(ch, seq, sandbox::kReplyBadRequest, bad);
          break;
        }
        int32_t code = FK_OK;
        std::string message;
        DeviceWork before;
        if (device) {
          std::vector<MemoryRange> in_use;
          for (const Tensor& t : call.args)
            if (t.defined()) in_use.push_back({t.data(), t.nbytes()});
          device->use_pool_regions(arena.base, in_use);
        }
        if (tracer) {
          device->activate();
          before = tracer->begin();
        }
        try {
          if (a.baseline) {
            baseline->run(call);
          } else {
            const CandidateStatus s =
                candidate_invoke(*loaded, *def, call, a.threads, device ? device->stream() : nullptr);
            code = s.code;
            message = s.message;
          }
        } catch (const std::exception& e) {
          code = sandbox::kReplyException;
          message = fmt::format("exception: {}", e.what());
        } catch (...) {
          code = sandbox::kReplyException;
          message = "an exception of unknown type escaped the call";
        }
        if (tracer) {
          const DeviceWork w = tracer->end();
          ch->work_traced = 1;
          ch->work_span_ns = static_cast<uint64_t>(w.span_s * 1e9);
          ch->work_activities = w.activities;
          ch->work_off_stream = w.off_stream;
          ch->work_late = w.late;
          ch->work_dropped = w.dropped + before.dropped;
          ch->work_between = before.activities;
          put_text(ch->work_note, before.activities > 0 ? before.example : w.example);
          const std::string fault = !before.error.empty() ? before.error : w.error;
          if (!fault.empty()) {
            reply(ch, seq, sandbox::kReplyDeviceFault, fault);
            std::_Exit(4);  // the context is lost
          }
          put_text(ch->work_audit, device->audit());
        } else if (device) {
          // Untraced: the stream's end shows a sticky error as the trace's would.
          ch->work_traced = 0;
          try {
            device->synchronize();
          } catch (const std::exception& e) {
            reply(ch, seq, sandbox::kReplyDeviceFault, e.what());
            std::_Exit(4);  // the context is lost
          }
          put_text(ch->work_audit, device->audit());
        }
        reply(ch, seq, code, message);
        break;
      }
      case RequestKind::kQuit: reply(ch, seq, FK_OK, ""); std::_Exit(0);
      default: reply(ch, seq, sandbox::kReplyBadRequest, "unknown request"); break;
    }
  }
}

int exec_sandboxed(const std::vector<std::string>& read, const std::vector<std::string>& write,
                   const std::vector<std::string>& cmd) {
  sandbox::Policy policy;
  policy.read_paths = sandbox::system_read_paths();
  policy.read_paths.insert(policy.read_paths.end(), read.begin(), read.end());
  for (const auto& dir : sandbox::library_path_dirs()) policy.read_paths.push_back(dir);
  policy.write_paths = write;
  policy.write_paths.push_back("/dev/null");
  policy.allow_processes = true;
  try {
    sandbox::sandbox_enter(policy);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fk-candidate-worker: %s\n", e.what());
    return 3;
  }
  const char* path = std::getenv("PATH");
  const std::string keep_path = path ? path : "/usr/bin:/bin";
  clearenv();
  setenv("PATH", keep_path.c_str(), 1);
  setenv("LANG", "C", 1);
  if (!write.empty()) {
    setenv("TMPDIR", write.front().c_str(), 1);
    setenv("HOME", write.front().c_str(), 1);
  }
  std::vector<char*> argv;
  for (const auto& c : cmd) argv.push_back(const_cast<char*>(c.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "fk-candidate-worker: cannot run %s: %s\n", cmd[0].c_str(), std::strerror(errno));
  return 127;
}

}  // namespace

int worker_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto usage = [](const std::string& why) {
    std::fprintf(stderr, "fk-candidate-worker: %s (it is started by fk-runner and fk check, not by hand)\n",
                 why.c_str());
    return 2;
  };
  if (!args.empty() && args[0] == "--exec") {
    std::vector<std::string> read, write, cmd;
    size_t i = 1;
    for (; i < args.size(); ++i) {
      if (args[i] == "--") break;
      if (i + 1 >= args.size()) return usage("missing value after " + args[i]);
      if (args[i] == "--read") read.push_back(args[++i]);
      else if (args[i] == "--write") write.push_back(args[++i]);
      else return usage("unknown option " + args[i]);
    }
    cmd.assign(args.begin() + static_cast<std::ptrdiff_t>(std::min(i + 1, args.size())), args.end());
    if (cmd.empty()) return usage("--exec needs a command after --");
    return exec_sandboxed(read, write, cmd);
  }
  ServeArgs a;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& k = args[i];
    if (k == "--baseline") {
      a.baseline = true;
      continue;
    }
    if (k == "--untraced") {
      a.untraced = true;
      continue;
    }
    if (i + 1 >= args.size()) return usage("missing value after " + k);
    const std::string& v = args[++i];
    if (k == "--arena-bytes") a.arena_bytes = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--scratch") a.scratch = v;
    else if (k == "--threads") a.threads = std::max(1, std::atoi(v.c_str()));
    else if (k == "--library") a.library = v;
    else if (k == "--name") a.name = v;
    else if (k == "--op") a.op = v;
    else if (k == "--entry") a.entry = v;
    else if (k == "--read-also") a.also_read.push_back(v);
    else return usage("unknown option " + k);
  }
  if (a.arena_bytes == 0 || a.scratch.empty() || (!a.baseline && (a.library.empty() || a.entry.empty())))
    return usage("needs --arena-bytes, --scratch and --baseline or --library/--entry");
  return serve(a);
}

}  // namespace fk::kernels
