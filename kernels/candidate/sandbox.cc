#include "kernels/candidate/sandbox.h"

#include "core/error.h"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define FK_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FK_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "the candidate sandbox knows the system call numbers of x86_64 and aarch64 only"
#endif

namespace fk::kernels::sandbox {
namespace {

// Landlock's UAPI (linux/landlock.h), spelled out because Debian 12's kernel headers
// predate network rules (ABI 4) and scopes (ABI 6). Values from the kernel's
// include/uapi/linux/landlock.h.
struct LandlockRulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct __attribute__((packed)) LandlockPathBeneath {
  uint64_t allowed_access;
  int32_t parent_fd;
};
constexpr uint32_t kLandlockVersionFlag = 1u << 0;  // LANDLOCK_CREATE_RULESET_VERSION
constexpr int kLandlockRulePathBeneath = 1;
constexpr uint64_t kFsExecute = 1u << 0, kFsWriteFile = 1u << 1, kFsReadFile = 1u << 2, kFsReadDir = 1u << 3;
constexpr uint64_t kFsRefer = 1u << 13, kFsTruncate = 1u << 14, kFsIoctlDev = 1u << 15;
constexpr uint64_t kNetBindTcp = 1u << 0, kNetConnectTcp = 1u << 1;
constexpr uint64_t kScopeAbstractUnix = 1u << 0, kScopeSignal = 1u << 1;

uint64_t fs_rights(int abi) {
  uint64_t all = (1u << 13) - 1;  // EXECUTE .. MAKE_SYM (ABI 1)
  if (abi >= 2) all |= kFsRefer;
  if (abi >= 3) all |= kFsTruncate;
  if (abi >= 5) all |= kFsIoctlDev;
  return all;
}

uint64_t file_rights(int abi) {
  uint64_t r = kFsExecute | kFsWriteFile | kFsReadFile;
  if (abi >= 3) r |= kFsTruncate;
  if (abi >= 5) r |= kFsIoctlDev;
  return r;
}

// Returns the ABI enforced (0: none) and adds a note when it could not.
int apply_landlock(const Policy& p, Report& report) {
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kLandlockVersionFlag);
  if (abi <= 0) {
    report.notes.push_back(fmt::format("landlock unavailable: {}", std::strerror(errno)));
    return 0;
  }
  const int v = static_cast<int>(abi);
  LandlockRulesetAttr attr{fs_rights(v), v >= 4 ? (kNetBindTcp | kNetConnectTcp) : 0,
                           v >= 6 ? (kScopeAbstractUnix | kScopeSignal) : 0};
  const size_t size = v >= 6 ? sizeof attr : v >= 4 ? offsetof(LandlockRulesetAttr, scoped)
                                                     : offsetof(LandlockRulesetAttr, handled_access_net);
  const int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) {
    report.notes.push_back(fmt::format("landlock ruleset refused: {}", std::strerror(errno)));
    return 0;
  }
  auto add = [&](const std::string& path, uint64_t rights) {
    const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return;  // a path this machine lacks grants nothing
    struct stat st {};
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= file_rights(v);
    LandlockPathBeneath rule{rights, fd};
    if (syscall(SYS_landlock_add_rule, ruleset, kLandlockRulePathBeneath, &rule, 0) != 0)
      report.notes.push_back(fmt::format("landlock rule for {} refused: {}", path, std::strerror(errno)));
    close(fd);
  };
  for (const auto& path : p.read_paths) add(path, kFsExecute | kFsReadFile | kFsReadDir);
  for (const auto& path : p.write_paths) add(path, fs_rights(v));
  const long rc = syscall(SYS_landlock_restrict_self, ruleset, 0);
  const int err = errno;
  close(ruleset);
  if (rc != 0) {
    report.notes.push_back(fmt::format("landlock not enforced: {}", std::strerror(err)));
    return 0;
  }
  return v;
}

// A seccomp-bpf program, appended instruction by instruction.
class Filter {
 public:
  void stmt(uint16_t code, uint32_t k) { prog_.push_back(BPF_STMT(code, k)); }
  void jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { prog_.push_back(BPF_JUMP(code, k, jt, jf)); }
  void load_nr() { stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)); }
  void load_arg0() { stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])); }
  // nr -> kill the process.
  void kill(long nr) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  }
  // nr -> fail with `err`.
  void error(long nr, int err) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | static_cast<uint32_t>(err));
  }
  // nr allowed only when the low word of args[0] has `bits` set; killed otherwise.
  void require_bits(long nr, uint32_t bits) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 4);
    load_arg0();
    jump(BPF_JMP | BPF_JSET | BPF_K, bits, 0, 1);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  }
  // nr allowed only when args[0] equals `a` or `b`; killed otherwise.
  void require_arg0(long nr, uint32_t a, uint32_t b) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 5);
    load_arg0();
    jump(BPF_JMP | BPF_JEQ | BPF_K, a, 2, 0);
    jump(BPF_JMP | BPF_JEQ | BPF_K, b, 1, 0);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  }
  std::vector<sock_filter>& prog() { return prog_; }

 private:
  std::vector<sock_filter> prog_;
};

void apply_seccomp(const Policy& p) {
  Filter f;
  f.stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  f.jump(BPF_JMP | BPF_JEQ | BPF_K, FK_AUDIT_ARCH, 1, 0);
  f.stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  f.load_nr();
#if defined(__x86_64__)
  // x32 system calls carry bit 30: refuse the whole second table.
  f.jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
  f.stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
  for (long nr : {
#define FK_NR(name) __NR_##name
         FK_NR(ptrace), FK_NR(process_vm_readv), FK_NR(process_vm_writev), FK_NR(mount), FK_NR(umount2),
         FK_NR(pivot_root), FK_NR(chroot), FK_NR(unshare), FK_NR(setns), FK_NR(bpf), FK_NR(perf_event_open),
         FK_NR(kexec_load), FK_NR(init_module), FK_NR(finit_module), FK_NR(delete_module), FK_NR(reboot),
         FK_NR(swapon), FK_NR(swapoff), FK_NR(io_uring_setup), FK_NR(io_uring_enter), FK_NR(io_uring_register),
         FK_NR(keyctl), FK_NR(add_key), FK_NR(request_key), FK_NR(userfaultfd), FK_NR(open_by_handle_at),
         FK_NR(name_to_handle_at), FK_NR(fanotify_init), FK_NR(acct), FK_NR(settimeofday), FK_NR(clock_settime),
         FK_NR(clock_adjtime), FK_NR(adjtimex), FK_NR(syslog), FK_NR(quotactl), FK_NR(pidfd_getfd),
         FK_NR(pidfd_send_signal), FK_NR(fsopen), FK_NR(fsmount), FK_NR(move_mount), FK_NR(open_tree),
         FK_NR(mount_setattr), FK_NR(kexec_file_load)
#undef FK_NR
       })
    f.kill(nr);
  f.require_arg0(__NR_socket, AF_UNIX, AF_UNIX);
  if (!p.allow_processes) {
    f.kill(__NR_execve);
    f.kill(__NR_execveat);
#ifdef __NR_fork
    f.kill(__NR_fork);
#endif
#ifdef __NR_vfork
    f.kill(__NR_vfork);
#endif
    f.error(__NR_clone3, ENOSYS);  // glibc then creates threads with clone
    f.require_bits(__NR_clone, CLONE_THREAD);
    const auto self = static_cast<uint32_t>(getpid());
    f.require_arg0(__NR_kill, self, 0);  // 0: its own process group, which holds only itself
    f.require_arg0(__NR_tgkill, self, self);
    f.require_arg0(__NR_rt_sigqueueinfo, self, self);
    f.require_arg0(__NR_rt_tgsigqueueinfo, self, self);
    f.error(__NR_tkill, EPERM);
  }
  f.stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  sock_fprog prog{static_cast<unsigned short>(f.prog().size()), f.prog().data()};
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
    fail(ErrorKind::kRuntime, "cannot install the candidate sandbox's seccomp filter: {}", std::strerror(errno));
}

void limit(int resource, rlim_t value) {
  rlimit r{};
  if (getrlimit(resource, &r) != 0) return;
  r.rlim_cur = std::min(r.rlim_max, value);
  if (r.rlim_max != RLIM_INFINITY && value > r.rlim_max) r.rlim_cur = r.rlim_max;
  setrlimit(resource, &r);
}

}  // namespace

std::string Report::describe() const {
  std::string s = seccomp ? "seccomp" : "no seccomp";
  s += landlock_abi > 0 ? fmt::format(", landlock v{}", landlock_abi) : ", no landlock";
  s += namespaces ? ", user+net namespace" : ", no namespaces";
  for (const auto& n : notes) s += "; " + n;
  return s;
}

std::vector<std::string> system_read_paths() {
  return {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/opt", "/etc/ld.so.cache", "/etc/ld.so.conf",
          "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime", "/dev/null", "/dev/zero", "/dev/urandom",
          "/dev/random", "/sys/devices/system/cpu", "/sys/devices/system/node",
          // Its own /proc entry only (resolved to the caller's pid when the rule is added).
          "/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat"};
}

std::vector<std::string> library_path_dirs() {
  std::vector<std::string> out;
  const char* v = std::getenv("LD_LIBRARY_PATH");
  std::string s = v ? v : "";
  size_t start = 0;
  while (start <= s.size()) {
    const size_t colon = s.find(':', start);
    const std::string dir = s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!dir.empty() && dir[0] == '/') out.push_back(dir);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

Report sandbox_enter(const Policy& p) {
  Report report;
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
    report.namespaces = true;
  } else {
    report.notes.push_back(fmt::format("no user/network namespace: {}", std::strerror(errno)));
  }
  limit(RLIMIT_CORE, 0);
  limit(RLIMIT_FSIZE, p.max_file_bytes);
  limit(RLIMIT_NOFILE, static_cast<rlim_t>(p.max_open_files));
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    fail(ErrorKind::kRuntime, "cannot set no_new_privs for the candidate sandbox: {}", std::strerror(errno));
  report.landlock_abi = apply_landlock(p, report);
  apply_seccomp(p);
  report.seccomp = true;
  return report;
}

}  // namespace fk::kernels::sandbox
