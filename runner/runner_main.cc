// fk-runner: the MPI program that runs jobs. Launched by mpirun or srun.
//
//   fk-runner --jobs jobs.json --results DIR [--only ID,...] [--force]
//   fk-runner --collectives [--min-bytes 8] [--max-bytes 64M] [--dtype fp32] ...
//   fk-runner --forward SPEC --inputs IN.safetensors [--weights CKPT] [--layout tp2pp2]
//             [--dtype fp32] [--forward-backend cuda] -o OUT.safetensors      (what `fk forward` launches)
//
// The world is split into job groups of tp*pp*dp ranks (jobs are taken in order of
// their size; consecutive world ranks form a group, so a TP group stays on a node when
// ranks are placed by node); groups take the jobs of that size in turn (group g runs
// jobs g, g + G, ...). Each finished job is on disk (its HDF5 file renamed into place)
// before the group starts the next; a job whose file exists is skipped unless --force.
//
// Exit status: 0 success; 2 bad input (arguments, job file, a job that needs more
// ranks than were launched); 3 a job failed at run time (every rank is stopped with
// MPI_Abort after the failing rank printed why); 4 a rank crashed (a signal: the rank
// prints which job it was on; mpirun stops the others); 5 the results folder is unusable;
// 6 an I/O error: writing a job's results (a full disk, a quota) or reading a file it
// needs failed — the machine's fault, not the job's or a candidate's (the orchestrator
// retries it and never quarantines for it).
#include "collectives/bandwidth_probe.h"
#include "collectives/mpi_communicator.h"
#include "collectives/probe_format.h"
#if FK_HAVE_NCCL
#include "collectives/nccl_communicator.h"
#endif
#include "core/error.h"
#include "core/spec/job.h"
#include "kernels/backend_space.h"
#include "kernels/backends.h"
#include "kernels/blas_info.h"
#include "kernels/op.h"
#include "runner/heartbeat.h"
#include "runner/forward.h"
#include "runner/job_runner.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <unistd.h>
#include <filesystem>
#include <map>
#include <thread>

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitJobFailed = 3;
constexpr int kExitResults = 5;
constexpr int kExitCrashed = 4;
constexpr int kExitIo = 6;

// What this rank is doing, for the crash handler (plain chars: async-signal-safe to read).
char g_current_job[256] = "no job";

void on_fatal_signal(int sig) {
  const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE"
                   : sig == SIGILL ? "SIGILL" : "SIGABRT";
  char buf[512];
  int n = 0;
  const char* job = g_current_job;
  for (const char* part : {"fk-runner: crashed with ", name, " while running ", job,
                           " (a candidate kernel inside the model stage, or a bug); exit status 4\n"})
    for (const char* c = part; *c != '\0' && n < static_cast<int>(sizeof buf) - 1; ++c) buf[n++] = *c;
  (void)!write(2, buf, static_cast<size_t>(n));
  _exit(kExitCrashed);
}

void install_crash_handlers() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, on_fatal_signal);
}

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// Every rank checked the same input; agree on the outcome so that all exit together.
// Returns the highest status; the lowest failing rank prints its message.
int agree(int status, const std::string& message) {
  int worst = 0;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == 0) return 0;
  int mine = status != 0 ? world_rank() : world_size();
  int first = 0;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == world_rank()) fmt::print(stderr, "fk-runner: error: {}\n", message);
  return worst;
}

[[noreturn]] void abort_all(const std::string& where, const std::string& message, int code) {
  fmt::print(stderr, "fk-runner: rank {}: {}: {}\n", world_rank(), where, message);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

std::string mpi_library_version() {
  char v[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int n = 0;
  MPI_Get_library_version(v, &n);
  (void)n;
  const std::string s(v);  // NUL-terminated; n may count the terminator
  return s.substr(0, s.find('\n'));
}

int local_ranks() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int n = 1;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return n;
}

// Thrown on every rank when agree() found a failure (the failing rank printed it).
struct AgreedFailure {
  int status;
};

struct Options {
  std::string jobs, results;
  std::vector<std::string> only;
  bool force = false;
  bool collectives = false;
  std::string min_bytes = "8", max_bytes = "16M", dtype = "fp32", backend = "mpi", forward_backend = "cpu";
  int64_t warmup = 5, iterations = 20;
  std::string flush = "16M";
  std::string heartbeat, attempt = "manual", quarantine;
  double heartbeat_interval = 2.0;
  int64_t threads = 0;
  std::string forward, weights, inputs, layout = "tp1", output, preset = "full";
  uint64_t seed = 0;
};

std::optional<size_t> parse_size(const std::string& s) {
  if (s.empty()) return std::nullopt;
  size_t mult = 1, end = s.size();
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  if (last == 'K' || last == 'M' || last == 'G') {
    mult = last == 'K' ? 1024 : last == 'M' ? (1u << 20) : (size_t{1} << 30);
    --end;
  }
  size_t v = 0;
  for (size_t i = 0; i < end; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    v = v * 10 + static_cast<size_t>(s[i] - '0');
  }
  return end == 0 ? std::nullopt : std::optional<size_t>(v * mult);
}

int run_collectives(const Options& o) {
  std::string problem;
  auto lo = parse_size(o.min_bytes), hi = parse_size(o.max_bytes);
  auto dt = fk::dtype_parse(o.dtype);
  if (!lo || !hi || *lo > *hi) problem = fmt::format("--min-bytes {} / --max-bytes {}: expected sizes like 8, 64K, 16M with min <= max", o.min_bytes, o.max_bytes);
  else if (!dt) problem = fmt::format("--dtype {}: expected fp32, fp16 or bf16", o.dtype);
  if (problem.empty() && o.backend != "mpi" && o.backend != "nccl")
    problem = fmt::format("--backend {}: expected mpi or nccl", o.backend);
#if !FK_HAVE_NCCL
  if (problem.empty() && o.backend == "nccl") problem = "--backend nccl: this fk-runner was built without NCCL";
#else
  if (problem.empty() && o.backend == "nccl")
    if (const std::string why = fk::kernels::backend_unavailable(fk::DeviceKind::kCuda, fk::kernels::node_local_rank());
        !why.empty())
      problem = fmt::format("--backend nccl: rank {} cannot use a GPU: {}", world_rank(), why);
#endif
  if (int s = agree(problem.empty() ? 0 : kExitBadInput, problem); s != 0) return s;
  auto world = fk::collectives::mpi_world();
  fk::collectives::ProbeOptions po;
  po.min_bytes = *lo;
  po.max_bytes = *hi;
  po.dtype = *dt;
  po.warmup_iters = static_cast<int>(o.warmup);
  po.iters = static_cast<int>(o.iterations);
  std::vector<fk::collectives::ProbeRow> rows;
  std::string backend = world->backend();
#if FK_HAVE_NCCL
  if (o.backend == "nccl") {  // the CUDA backend of this rank (one GPU per node-local rank), device buffers
    auto device = fk::kernels::backend_create(fk::DeviceKind::kCuda, fk::kernels::node_local_rank());
    auto nccl = device->communicator(*world);
    auto space = fk::kernels::backend_buffer_space(*device);
    rows = fk::collectives::probe_run(*nccl, po, *space);
    backend = nccl->backend();
  }
#endif
  if (rows.empty()) rows = fk::collectives::probe_run(*world, po);
  if (world->rank() == 0) {
    fmt::print("# fk-runner --collectives: {} ranks, backend {}, {}\n", world->size(), backend, mpi_library_version());
    fmt::print("{}", fk::collectives::probe_format_table(rows));
  }
  return 0;
}

int run_forward(const Options& o) {
  fk::runner::ForwardOptions fo;
  fo.spec_file = o.forward;
  fo.preset = o.preset;
  fo.weights = o.weights;
  fo.inputs = o.inputs;
  fo.layout = o.layout;
  fo.dtype = o.dtype;
  fo.output = o.output;
  fo.seed = o.seed;
  fo.backend = o.forward_backend;
  fk::runner::ForwardPlan plan;
  std::string problem;
  try {
    plan = fk::runner::forward_prepare(fo, world_size());
  } catch (const fk::Error& e) {
    problem = e.what();
  }
  if (int s = agree(problem.empty() ? 0 : kExitBadInput, problem); s != 0) return s;
  auto world = fk::collectives::mpi_world();
  int status = 0;
  try {
    const std::string line = fk::runner::forward_execute(plan, *world, [](const std::string& p) {
      if (const int s = agree(p.empty() ? 0 : kExitBadInput, p); s != 0) throw AgreedFailure{s};
    });
    if (!line.empty()) fmt::print("{}\n", line);
  } catch (const AgreedFailure& f) {
    status = f.status;
  }
  return status;
}

int run_jobs(const Options& o) {
  // Read and check the job file on every rank; agree before any collective.
  fk::spec::JobFile file;
  std::string problem;
  int status = 0;
  try {
    if (o.jobs.empty()) throw fk::Error(fk::ErrorKind::kInvalidArgument, "--jobs is required (a job file from fk plan --emit)");
    if (o.results.empty()) throw fk::Error(fk::ErrorKind::kInvalidArgument, "--results is required (the folder for job files)");
    file = fk::spec::job_file_read(o.jobs);
    for (const auto& id : o.only)
      if (std::none_of(file.jobs.begin(), file.jobs.end(), [&](const fk::spec::Job& j) { return j.id == id; }))
        throw fk::Error(fk::ErrorKind::kInvalidArgument, fmt::format("--only {}: no such job in {}", id, o.jobs));
    if (!o.only.empty())
      std::erase_if(file.jobs, [&](const fk::spec::Job& j) {
        return std::find(o.only.begin(), o.only.end(), j.id) == o.only.end();
      });
    const int world = world_size();
    for (const auto& j : file.jobs) {
      if (j.layout.ranks() > world)
        throw fk::Error(fk::ErrorKind::kInvalidArgument,
                        fmt::format("{}: job {} ({} {} {}) needs {} ranks ({}), but fk-runner was started with {}; "
                                    "launch with mpirun -np {} or more",
                                    o.jobs, j.id, j.arch.name, j.layout.name(), j.workload.name, j.layout.ranks(),
                                    j.layout.name(), world, j.layout.ranks()));
      const auto misfit = fk::spec::layout_misfits(j.arch, j.workload, j.layout);
      if (!misfit.empty())
        throw fk::Error(fk::ErrorKind::kInvalidArgument,
                        fmt::format("{}: job {}: layout {} does not fit: {}", o.jobs, j.id, j.layout.name(), misfit[0]));
      if (const std::string why = fk::kernels::backend_unavailable(j.backend, fk::kernels::node_local_rank()); !why.empty())
        throw fk::Error(fk::ErrorKind::kUnsupported,
                        fmt::format("{}: job {} asks for the {} backend, which this rank ({}) cannot run: {}", o.jobs,
                                    j.id, fk::device_kind_name(j.backend), fmt::format("rank {}", world_rank()), why));
    }
  } catch (const fk::Error& e) {
    problem = e.what();
    status = kExitBadInput;
  }
  if (int s = agree(status, problem); s != 0) return s;

  std::error_code ec;
  if (world_rank() == 0) std::filesystem::create_directories(o.results, ec);
  problem = ec ? fmt::format("--results {}: cannot create: {}", o.results, ec.message()) : "";
  if (int s = agree(problem.empty() ? 0 : kExitResults, problem); s != 0) return s;

  fk::runner::RunnerOptions ro;
  ro.results_dir = o.results;
  ro.campaign = file.campaign;
  ro.backend.cpu_flush_bytes = *parse_size(o.flush);
  ro.mpi_library = mpi_library_version();
  ro.threads_per_rank = omp_get_max_threads();
  ro.quarantine_reason = o.quarantine;
  ro.attempt = o.attempt;
  std::unique_ptr<fk::runner::Heartbeat> heartbeat;
  if (!o.heartbeat.empty())
    heartbeat = std::make_unique<fk::runner::Heartbeat>(o.heartbeat, o.attempt, world_rank(), o.heartbeat_interval);

  std::vector<const fk::spec::Job*> selected;
  for (const auto& j : file.jobs) selected.push_back(&j);
  // Job sizes in order of first appearance.
  std::vector<int64_t> sizes;
  for (const auto* j : selected)
    if (std::find(sizes.begin(), sizes.end(), j->layout.ranks()) == sizes.end()) sizes.push_back(j->layout.ranks());

  const int rank = world_rank(), world = world_size();
  size_t done = 0;
  for (int64_t size : sizes) {
    std::vector<const fk::spec::Job*> jobs;
    for (const auto* j : selected)
      if (j->layout.ranks() == size) jobs.push_back(j);
    const int groups = world / static_cast<int>(size);
    const int my_group = rank / static_cast<int>(size) < groups ? rank / static_cast<int>(size) : -1;
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, my_group < 0 ? MPI_UNDEFINED : my_group, rank, &comm);
    if (comm != MPI_COMM_NULL) {
      auto group = fk::collectives::mpi_wrap(comm);
      for (size_t i = static_cast<size_t>(my_group); i < jobs.size(); i += static_cast<size_t>(groups)) {
        const auto& job = *jobs[i];
        const std::string path = fk::runner::job_result_path(o.results, job.id);
        if (!o.force && std::filesystem::exists(path)) {
          if (group->rank() == 0) fmt::print("fk-runner: job {} already done ({}), skipped\n", job.id, path);
          continue;
        }
        std::snprintf(g_current_job, sizeof g_current_job, "job %s (%s %s %s, candidate set %s)", job.id.c_str(),
                      job.arch.name.c_str(), job.layout.name().c_str(), job.workload.name.c_str(),
                      job.candidates.name.c_str());
        if (heartbeat && group->rank() == 0) heartbeat->event("job_started", job.id);
        try {
          const fk::runner::JobSummary summary = fk::runner::job_run(job, *group, ro);
          if (heartbeat && group->rank() == 0) heartbeat->event("job_finished", job.id);
          if (group->rank() == 0)
            fmt::print("fk-runner: job {} {} ({}) {} {}: {} -> {}\n", job.id, job.arch.name, job.arch.preset,
                       job.layout.name(), job.workload.name, summary.line(), path);
        } catch (const std::exception& e) {
          const auto* error = dynamic_cast<const fk::Error*>(&e);
          const bool io = error != nullptr && error->kind() == fk::ErrorKind::kIo;
          abort_all(fmt::format("job {} ({} {} {})", job.id, job.arch.name, job.layout.name(), job.workload.name),
                    io ? fmt::format("I/O error: {}", e.what()) : e.what(), io ? kExitIo : kExitJobFailed);
        }
        std::fflush(stdout);
      }
      group.reset();
      MPI_Comm_free(&comm);
    }
    done += jobs.size();
    MPI_Barrier(MPI_COMM_WORLD);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  Options o;
  CLI::App app{"fk-runner: runs FastKernels jobs under mpirun/srun", "fk-runner"};
  app.add_option("--jobs", o.jobs, "Job file (fk plan --emit)");
  app.add_option("--results", o.results, "Folder for the per-job HDF5 files");
  app.add_option("--only", o.only, "Run only these job ids")->delimiter(',');
  app.add_flag("--force", o.force, "Rerun jobs whose result file exists");
  app.add_option("--flush-bytes", o.flush, "Cache-flush buffer of the kernel stage (e.g. 16M)");
  app.add_option("--threads", o.threads, "Threads per rank (default: cores / ranks on the node)");
  app.add_option("--heartbeat", o.heartbeat, "host:port of the orchestrator's heartbeat listener");
  app.add_option("--attempt", o.attempt, "Attempt id to report in heartbeats");
  app.add_option("--heartbeat-interval", o.heartbeat_interval, "Seconds between heartbeats (default 2)")
      ->check(CLI::Range(0.05, 3600.0));
  app.add_option("--quarantine", o.quarantine, "Report the jobs' candidates CRASHED with this reason; do not load them");
  app.add_flag("--collectives", o.collectives, "Run the collectives bandwidth probe instead of jobs");
  app.add_option("--min-bytes", o.min_bytes, "Probe: smallest message (e.g. 8, 1K)");
  app.add_option("--max-bytes", o.max_bytes, "Probe: largest message (e.g. 64M)");
  app.add_option("--dtype", o.dtype, "Probe: element type (fp32, fp16, bf16)");
  app.add_option("--backend", o.backend, "Probe: mpi (host buffers) or nccl (one GPU per rank)");
  app.add_option("--warmup", o.warmup, "Probe: warm-up iterations per size");
  app.add_option("--iters", o.iterations, "Probe: timed iterations per size");
  app.add_option("--forward", o.forward, "Run one forward pass of this architecture spec (fk forward)");
  app.add_option("--preset", o.preset, "Forward: the spec's preset (default full)");
  app.add_option("--weights", o.weights, "Forward: checkpoint (.safetensors or folder; default: the spec's)");
  app.add_option("--inputs", o.inputs, "Forward: safetensors file with input_ids [batch, seq]");
  app.add_option("--layout", o.layout, "Forward: tpNppNdpN (default tp1)");
  app.add_option("--seed", o.seed, "Forward: seed of random weights when there is no checkpoint");
  app.add_option("--forward-backend", o.forward_backend, "Forward: cpu, or cuda (one GPU per node-local rank)");
  app.add_option("-o,--output", o.output, "Forward: safetensors file to write");
  int status = 0;
  std::string problem;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    if (world_rank() == 0) app.exit(e);
    MPI_Finalize();
    return 0;
  } catch (const CLI::ParseError& e) {
    problem = e.what();
    status = kExitBadInput;
  }
  if ((status = agree(status, problem)) != 0) {
    MPI_Finalize();
    return status;
  }
  const int threads = o.threads > 0 ? static_cast<int>(o.threads)
                                    : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local_ranks());
  omp_set_num_threads(threads);
  install_crash_handlers();
  fk::kernels::blas_set_threads(threads);
  try {
    status = o.collectives ? run_collectives(o) : !o.forward.empty() ? run_forward(o) : run_jobs(o);
  } catch (const std::exception& e) {
    abort_all("fk-runner", e.what(), kExitJobFailed);
  }
  MPI_Finalize();
  return status;
}
