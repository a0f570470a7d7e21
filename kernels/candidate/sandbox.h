// The sandbox a process enters before candidate code (or a candidate's compiler) runs.
//
// sandbox_enter() is called by the process itself, single-threaded, after it has
// opened everything it needs (the arena memfd, its log) and before it loads or execs
// anything of the candidate's. In order, each layer where the kernel allows it:
//   1. a new user and network namespace: no network interface but a downed loopback;
//   2. rlimits: no core files, bounded file size and open files;
//   3. no_new_privs (required for the rest; setuid programs gain nothing);
//   4. Landlock: read/execute only below `read_paths`, write only below `write_paths`,
//      no TCP bind/connect (ABI >= 4), no signals or abstract sockets outside (ABI >= 6);
//   5. seccomp: the process is killed (SIGSYS) by execve, fork, vfork, clone without
//      CLONE_THREAD, ptrace, process_vm_*, mount/unshare/setns, bpf, perf_event_open,
//      io_uring, keyctl, module and reboot calls, sockets other than AF_UNIX, and
//      kill/tgkill aimed at another process; clone3 fails with ENOSYS so that threads
//      are still created through clone. With `allow_processes` (the compiler, which
//      runs cc1, as and ld) fork, exec and clone stay allowed.
// seccomp is required: when it cannot be installed sandbox_enter throws. The other
// layers are best effort and the report says which ones held.
#pragma once

#include <string>
#include <vector>

namespace fk::kernels::sandbox {

struct Policy {
  std::vector<std::string> read_paths;   // read and execute below these
  std::vector<std::string> write_paths;  // read, write, create and remove below these
  bool allow_processes = false;          // fork/exec allowed (compilers)
  size_t max_file_bytes = size_t{1} << 30;
  int max_open_files = 256;
};

struct Report {
  bool namespaces = false;  // user + network namespace
  int landlock_abi = 0;     // 0: not enforced
  bool seccomp = false;
  std::vector<std::string> notes;  // why a layer is missing
  std::string describe() const;    // "seccomp, landlock v7, netns" (+ notes)
};

// The read paths every sandboxed process needs: system libraries and the dynamic
// loader's cache, /dev/null and friends, CPU topology for OpenMP.
std::vector<std::string> system_read_paths();
// The folders of $LD_LIBRARY_PATH (the process's own libraries may live there).
std::vector<std::string> library_path_dirs();

// Throws fk::Error (kRuntime) when seccomp cannot be installed.
Report sandbox_enter(const Policy& policy);

}  // namespace fk::kernels::sandbox
