// CUPTI through dlopen (see cupti_trace.h). The CUPTI headers are included for types,
// enums and record layouts only: every entry point is resolved with dlsym, so nothing
// links against libcupti. CUPTI emits records of the newest struct version of the
// library loaded, and a new version only appends fields, so the fields read here
// (start, end, streamId, name, copyKind) sit at the same offsets in every version the
// static_asserts below name; records are cast by their `kind`.
//
// State shared with CUPTI's callbacks (the records, the dropped count, whether a tracer
// is live) lives in one heap object that is never destroyed, behind one mutex, because
// CUPTI may deliver a buffer on its own thread at any time, exit included. The mutex
// is never held while calling into CUPTI: cuptiActivityFlushAll runs the completion
// callback, which takes it.
#include "kernels/cuda/cupti_trace.h"

#include "core/error.h"
#include "kernels/cuda/dl.h"

#include <cupti_activity.h>
#include <cupti_result.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <utility>

namespace fk::cuda {
namespace {

// The current record structs (CUDA 13, CUPTI_API_VERSION 130001) and the oldest one
// of each kind: what is read must not have moved between them.
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using MemcpyPeerRecord = CUpti_ActivityMemcpyPtoP4;
using MemsetRecord = CUpti_ActivityMemset4;
#define FK_SAME_FIELD(New, Old, field) static_assert(offsetof(New, field) == offsetof(Old, field))
FK_SAME_FIELD(KernelRecord, CUpti_ActivityKernel4, start);
FK_SAME_FIELD(KernelRecord, CUpti_ActivityKernel4, end);
FK_SAME_FIELD(KernelRecord, CUpti_ActivityKernel4, streamId);
FK_SAME_FIELD(KernelRecord, CUpti_ActivityKernel4, name);
FK_SAME_FIELD(MemcpyRecord, CUpti_ActivityMemcpy, copyKind);
FK_SAME_FIELD(MemcpyRecord, CUpti_ActivityMemcpy, start);
FK_SAME_FIELD(MemcpyRecord, CUpti_ActivityMemcpy, end);
FK_SAME_FIELD(MemcpyRecord, CUpti_ActivityMemcpy, streamId);
FK_SAME_FIELD(MemcpyPeerRecord, CUpti_ActivityMemcpy, start);
FK_SAME_FIELD(MemcpyPeerRecord, CUpti_ActivityMemcpy, end);
FK_SAME_FIELD(MemcpyPeerRecord, CUpti_ActivityMemcpy, streamId);
FK_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset, start);
FK_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset, end);
FK_SAME_FIELD(MemsetRecord, CUpti_ActivityMemset, streamId);
#undef FK_SAME_FIELD

// CUPTI wants 8-byte aligned buffers (ALIGN_SIZE in its samples).
constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kBufferAlign = 8;

struct TracedKind {
  CUpti_ActivityKind kind;
  const char* name;
};
constexpr TracedKind kTracedKinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
};

// The entry points, typed from the headers' declarations (decltype does not reference
// the symbols). Optional ones may be null.
struct Cupti {
  decltype(&::cuptiActivityEnable) enable = nullptr;
  decltype(&::cuptiActivityDisable) disable = nullptr;
  decltype(&::cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&::cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&::cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&::cuptiActivityGetNumDroppedRecords) num_dropped = nullptr;  // optional
  decltype(&::cuptiGetTimestamp) timestamp = nullptr;
  decltype(&::cuptiGetStreamIdEx) stream_id = nullptr;
  decltype(&::cuptiGetResultString) result_string = nullptr;
  decltype(&::cuptiGetErrorMessage) error_message = nullptr;  // optional
  std::string library;                                        // the name dlopen accepted
  std::string error;                                          // why CUPTI is unusable; empty when loaded
};

Cupti load() {
  Cupti c;
  const DlOpened opened = dl_open_first({
#ifdef FK_CUPTI_LIBRARY
      FK_CUPTI_LIBRARY,
#endif
      "libcupti.so.13",
      "libcupti.so",
  });
  void* lib = opened.handle;
  const std::string& tried = opened.tried;
  c.library = opened.name;
  if (lib == nullptr) {
    c.error = fmt::format(
        "cannot load CUPTI, needed to trace device activity ({}); install the CUDA "
        "toolkit's CUPTI or put its lib directory on LD_LIBRARY_PATH",
        tried);
    return c;
  }
  dl_resolve(lib, c.num_dropped, "cuptiActivityGetNumDroppedRecords");
  dl_resolve(lib, c.error_message, "cuptiGetErrorMessage");
  const std::pair<bool, const char*> required[] = {
      {dl_resolve(lib, c.enable, "cuptiActivityEnable"), "cuptiActivityEnable"},
      {dl_resolve(lib, c.disable, "cuptiActivityDisable"), "cuptiActivityDisable"},
      {dl_resolve(lib, c.register_callbacks, "cuptiActivityRegisterCallbacks"), "cuptiActivityRegisterCallbacks"},
      {dl_resolve(lib, c.flush_all, "cuptiActivityFlushAll"), "cuptiActivityFlushAll"},
      {dl_resolve(lib, c.next_record, "cuptiActivityGetNextRecord"), "cuptiActivityGetNextRecord"},
      {dl_resolve(lib, c.timestamp, "cuptiGetTimestamp"), "cuptiGetTimestamp"},
      {dl_resolve(lib, c.stream_id, "cuptiGetStreamIdEx"), "cuptiGetStreamIdEx"},
      {dl_resolve(lib, c.result_string, "cuptiGetResultString"), "cuptiGetResultString"},
  };
  for (const auto& [found, symbol] : required) {
    if (!found) {
      c.error = fmt::format("CUPTI ({}) lacks {}; it is too old, use the CUDA toolkit's CUPTI", c.library, symbol);
      return c;
    }
  }
  return c;  // the handle is kept open for the life of the process
}

// Loaded once; never destroyed (CUPTI's threads may call back during exit).
const Cupti& cupti() {
  static const Cupti* c = new Cupti(load());
  return *c;
}

std::string describe(CUptiResult r) {
  const Cupti& api = cupti();
  const char* name = nullptr;
  const char* message = nullptr;
  if (api.result_string(r, &name) != CUPTI_SUCCESS || name == nullptr) name = "unknown CUptiResult";
  if (api.error_message == nullptr || api.error_message(r, &message) != CUPTI_SUCCESS) message = nullptr;
  if (message == nullptr || *message == '\0' || std::string_view(message) == name)
    return fmt::format("{} ({})", name, static_cast<int>(r));
  return fmt::format("{} ({}): {}", name, static_cast<int>(r), message);
}

void check(CUptiResult r, std::string_view call) {
  if (r != CUPTI_SUCCESS) fail(ErrorKind::kRuntime, "CUPTI ({}): {} failed: {}", cupti().library, call, describe(r));
}

// What the callbacks share with the tracer; guarded by `mu`.
struct Sink {
  std::mutex mu;
  bool live = false;        // an ActivityTrace exists; records are kept only then
  bool registered = false;  // the buffer callbacks are registered (once per process)
  std::vector<DeviceActivity> records;
  int64_t dropped = 0;
};

Sink& sink() {
  static Sink* s = new Sink;
  return *s;
}

const char* memcpy_name(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "memcpy PtoP";
    default:
      return "memcpy";
  }
}

template <typename Record>
DeviceActivity activity(DeviceActivity::Kind kind, const CUpti_Activity* r, std::string name) {
  const auto* rec = reinterpret_cast<const Record*>(r);
  return DeviceActivity{kind, rec->start, rec->end, rec->streamId, std::move(name)};
}

// The records of one delivered buffer that this tracer reports. Stops at the first
// record CUPTI calls incomplete or invalid (only a forced flush leaves such records).
std::vector<DeviceActivity> parse(uint8_t* buffer, size_t valid_bytes) {
  using Kind = DeviceActivity::Kind;
  std::vector<DeviceActivity> out;
  CUpti_Activity* r = nullptr;
  while (cupti().next_record(buffer, valid_bytes, &r) == CUPTI_SUCCESS) {
    switch (r->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const char* name = reinterpret_cast<const KernelRecord*>(r)->name;
        out.push_back(activity<KernelRecord>(Kind::kKernel, r, name != nullptr ? name : "kernel"));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        out.push_back(
            activity<MemcpyRecord>(Kind::kMemcpy, r, memcpy_name(reinterpret_cast<const MemcpyRecord*>(r)->copyKind)));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        out.push_back(activity<MemcpyPeerRecord>(Kind::kMemcpy, r, "memcpy PtoP"));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        out.push_back(activity<MemsetRecord>(Kind::kMemset, r, "memset"));
        break;
      default:
        break;
    }
  }
  return out;
}

// CUPTI's callbacks. They run on CUPTI's thread or inside cuptiActivityFlushAll.
void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;  // no buffer: CUPTI drops and counts
  *max_records = 0;                               // as many as fit
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  std::vector<DeviceActivity> parsed;
  if (buffer != nullptr) parsed = parse(buffer, valid_bytes);
  std::free(buffer);
  size_t dropped = 0;
  const Cupti& api = cupti();
  if (api.num_dropped == nullptr || api.num_dropped(nullptr, 0, &dropped) != CUPTI_SUCCESS) dropped = 0;
  Sink& s = sink();
  std::lock_guard lock(s.mu);
  if (!s.live) return;
  s.records.insert(s.records.end(), std::make_move_iterator(parsed.begin()), std::make_move_iterator(parsed.end()));
  s.dropped += static_cast<int64_t>(dropped);
}

void disable_all() {
  for (const TracedKind& k : kTracedKinds) cupti().disable(k.kind);  // errors: nothing to undo
}

}  // namespace

std::unique_ptr<ActivityTrace> ActivityTrace::start() {
  const Cupti& api = cupti();
  if (!api.error.empty()) fail(ErrorKind::kRuntime, "{}", api.error);
  Sink& s = sink();
  bool register_callbacks = false;
  {
    std::lock_guard lock(s.mu);
    if (s.live)
      fail(ErrorKind::kUnsupported, "a CUPTI activity trace is already active in this process; there can be only one");
    s.live = true;
    s.records.clear();
    s.dropped = 0;
    register_callbacks = !s.registered;
  }
  try {
    if (register_callbacks) {
      check(api.register_callbacks(on_buffer_requested, on_buffer_completed), "cuptiActivityRegisterCallbacks");
      std::lock_guard lock(s.mu);
      s.registered = true;
    }
    for (const TracedKind& k : kTracedKinds) check(api.enable(k.kind), fmt::format("cuptiActivityEnable({})", k.name));
  } catch (...) {
    disable_all();
    std::lock_guard lock(s.mu);
    s.live = false;
    throw;
  }
  return std::unique_ptr<ActivityTrace>(new ActivityTrace());
}

ActivityTrace::~ActivityTrace() {
  disable_all();
  cupti().flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // hand the buffers back to free them
  Sink& s = sink();
  std::lock_guard lock(s.mu);
  s.live = false;
  s.records = {};
}

uint64_t ActivityTrace::now_ns() const {
  uint64_t t = 0;
  check(cupti().timestamp(&t), "cuptiGetTimestamp");
  return t;
}

uint32_t ActivityTrace::stream_id(void* cuda_stream) const {
  auto stream = static_cast<CUstream>(cuda_stream);
  uint8_t per_thread = 0;
  if (stream == CU_STREAM_LEGACY) {
    stream = nullptr;
  } else if (stream == CU_STREAM_PER_THREAD) {
    stream = nullptr;
    per_thread = 1;
  }
  uint32_t id = 0;
  check(cupti().stream_id(nullptr, stream, per_thread, &id), "cuptiGetStreamIdEx");
  return id;
}

std::vector<DeviceActivity> ActivityTrace::collect() {
  // FLUSH_FORCED: a default flush (0) holds back any buffer that also holds a record of
  // work still running elsewhere, which would hide finished work from this collect().
  const Cupti& api = cupti();
  check(api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll(FLUSH_FORCED)");
  size_t dropped = 0;
  if (api.num_dropped == nullptr || api.num_dropped(nullptr, 0, &dropped) != CUPTI_SUCCESS) dropped = 0;
  std::vector<DeviceActivity> out;
  {
    Sink& s = sink();
    std::lock_guard lock(s.mu);
    out.swap(s.records);
    s.dropped += static_cast<int64_t>(dropped);
  }
  std::stable_sort(out.begin(), out.end(), [](const DeviceActivity& a, const DeviceActivity& b) {
    return std::pair(a.start_ns == 0, a.start_ns) < std::pair(b.start_ns == 0, b.start_ns);
  });
  return out;
}

int64_t ActivityTrace::dropped() const {
  Sink& s = sink();
  std::lock_guard lock(s.mu);
  return s.dropped;
}

}  // namespace fk::cuda
