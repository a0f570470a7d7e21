// The worker's side of kernels/candidate/worker.h: fk-candidate-worker's main loop.
//
// Serving mode: maps the arena (fd 3), enters the sandbox, answers the supervisor's
// hello with the sandbox report (no candidate code is mapped yet), loads the candidate
// on request (its constructors run here, inside the sandbox) and runs calls on arena
// tensors until told to quit or until its parent goes away.
//
// Exec mode (--exec): enters the sandbox with processes allowed and execs a command
// (the candidate's compiler) with a scrubbed environment.
#include "kernels/candidate/worker_serve.h"

#include "core/error.h"
#include "kernels/blas_info.h"
#include "kernels/candidate/candidate_impl.h"
#include "kernels/candidate/channel.h"
#include "kernels/candidate/sandbox.h"
#include "kernels/fk_kernel.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  int threads = 1;
  bool baseline = false;
};

void set_message(Channel* ch, const std::string& m) {
  const size_t n = std::min(m.size(), sandbox::kChannelMessage - 1);
  std::memcpy(ch->reply_message, m.data(), n);
  ch->reply_message[n] = '\0';
}

void reply(Channel* ch, uint32_t seq, int32_t code, const std::string& message) {
  ch->reply_code = code;
  set_message(ch, message);
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

// "" or what is wrong with the request's descriptors.
std::string build_call(const Channel* ch, unsigned char* base, size_t arena, OpCall& call) {
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
    if (static_cast<uint64_t>(n) * dtype_size(dt) != d.bytes || d.offset < sandbox::kChannelBytes ||
        d.offset > arena || d.bytes > arena - d.offset)
      return fmt::format("argument {}: outside the arena", i);
    call.args.push_back(Tensor::borrow(base + d.offset, dt, shape));
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
  uint32_t seq = wait_request(ch, 0, parent);
  sandbox::Policy policy;
  policy.read_paths = sandbox::system_read_paths();
  if (!a.library.empty()) policy.read_paths.push_back(a.library);
  for (const auto& dir : sandbox::library_path_dirs()) policy.read_paths.push_back(dir);
  policy.write_paths = {a.scratch, "/dev/null"};
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
        std::string bad = def == nullptr ? fmt::format("unknown op '{}'", op) : build_call(ch, base, a.arena_bytes, call);
        if (bad.empty() && !a.baseline && (!loaded || op != a.op)) bad = "no candidate loaded for this op";
        if (!bad.empty()) {
          reply(ch, seq, sandbox::kReplyBadRequest, bad);
          break;
        }
        try {
          if (a.baseline) {
            OpRegistry::global().impl(op, "cpu").run(call);
            reply(ch, seq, FK_OK, "");
          } else {
            const CandidateStatus s = candidate_invoke(*loaded, *def, call, a.threads);
            reply(ch, seq, s.code, s.message);
          }
        } catch (const std::exception& e) {
          reply(ch, seq, sandbox::kReplyException, fmt::format("exception: {}", e.what()));
        } catch (...) {
          reply(ch, seq, sandbox::kReplyException, "an exception of unknown type escaped the call");
        }
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
    if (i + 1 >= args.size()) return usage("missing value after " + k);
    const std::string& v = args[++i];
    if (k == "--arena-bytes") a.arena_bytes = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--scratch") a.scratch = v;
    else if (k == "--threads") a.threads = std::max(1, std::atoi(v.c_str()));
    else if (k == "--library") a.library = v;
    else if (k == "--name") a.name = v;
    else if (k == "--op") a.op = v;
    else if (k == "--entry") a.entry = v;
    else return usage("unknown option " + k);
  }
  if (a.arena_bytes == 0 || a.scratch.empty() || (!a.baseline && (a.library.empty() || a.entry.empty())))
    return usage("needs --arena-bytes, --scratch and --baseline or --library/--entry");
  return serve(a);
}

}  // namespace fk::kernels
