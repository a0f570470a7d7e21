#include "kernels/measure.h"

#include "core/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <utility>

namespace fk::kernels {

RotationPlan rotation_plan(const Backend& backend, double set_bytes, double max_rotation_bytes, int64_t max_sets) {
  RotationPlan p;
  const double cache = static_cast<double>(std::max<int64_t>(backend.facts().cache_bytes, 0));
  const double bytes = std::max(1.0, set_bytes);
  const double by_memory = std::floor(std::max(1.0, max_rotation_bytes) / bytes);
  const double cap = std::max(1.0, std::min(static_cast<double>(std::max<int64_t>(max_sets, 1)), by_memory));
  // Twice the cache between two uses of a set: caches are not strict LRU, so one
  // cache's worth of other traffic leaves some of a set's lines behind.
  const double wanted = cache > 0 ? std::ceil(2 * cache / bytes) + 1 : 1;
  p.sets = static_cast<int64_t>(std::min(wanted, cap));
  p.flush = cache > 0 && static_cast<double>(p.sets - 1) * bytes < 2 * cache;
  return p;
}

MeasureResult measure(Backend& backend, std::span<const Subject> subjects, const RotationPlan& plan,
                      const MeasureOptions& o) {
  using Clock = std::chrono::steady_clock;
  if (subjects.empty()) fail(ErrorKind::kInvalidArgument, "measure: no subjects");
  for (const Subject& s : subjects)
    if (!s.run == !s.timed)
      fail(ErrorKind::kInvalidArgument, "measure: subject '{}' needs exactly one of run and timed", s.name);
  const int64_t sets = std::max<int64_t>(plan.sets, 1);
  MeasureResult r;
  r.sets = sets;
  r.flushed = plan.flush;
  backend.activate();
  const auto t0 = Clock::now();
  std::vector<std::unique_ptr<Timer>> timers;
  for (const Subject& s : subjects) {
    timers.push_back(backend.timer());
    Measurement m;
    m.name = s.name;
    r.subjects.push_back(std::move(m));
  }

  for (int64_t w = 0; w < o.warmup; ++w) {
    const int64_t set = w % sets;
    for (const Subject& s : subjects) {
      if (s.prepare) s.prepare(set);
      if (s.run) {
        s.run(set);
      } else {
        backend.synchronize();
        s.timed(set);
      }
    }
    if (o.after_round) {
      backend.synchronize();
      o.after_round(set);
    }
  }
  backend.synchronize();

  r.before = backend.state();
  bool throttled_now = r.before.throttled;
  const int64_t max_iter = o.budget_s > 0 ? std::max(o.iterations, o.max_iterations > 0 ? o.max_iterations : 10 * o.iterations)
                                          : o.iterations;
  const int64_t every = std::max<int64_t>(o.state_every, 1);
  const auto loop_start = Clock::now();
  int64_t window_start = 0;  // first round since the last state reading
  for (int64_t i = 0; i < max_iter; ++i) {
    if (i >= o.iterations &&
        (o.budget_s <= 0 || std::chrono::duration<double>(Clock::now() - loop_start).count() >= o.budget_s))
      break;
    const int64_t set = i % sets;
    const size_t n = subjects.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t j = i % 2 == 0 ? k : n - 1 - k;  // A B, B A, ...
      const Subject& s = subjects[j];
      if (s.prepare) s.prepare(set);
      if (plan.flush) backend.flush_cache();
      if (s.timed) {
        backend.synchronize();  // the flush is done before the other process's call
        r.subjects[j].seconds.push_back(s.timed(set));
      } else {
        if (o.tracer != nullptr) o.tracer->begin();
        timers[j]->start();
        s.run(set);
        timers[j]->stop();
        if (o.tracer != nullptr) {
          const DeviceWork work = o.tracer->end();
          if (!work.error.empty()) fail(ErrorKind::kRuntime, "measure: {}: the device failed: {}", s.name, work.error);
          r.subjects[j].device_span.push_back(work.span_s);
          r.subjects[j].device_busy.push_back(work.busy_s);
          if (r.subjects[j].device_span.size() == 1) r.subjects[j].device_names = work.names;
          r.subjects[j].device_activities.push_back(work.activities);
        }
        r.subjects[j].seconds.push_back(timers[j]->seconds());
      }
      r.subjects[j].throttled.push_back(throttled_now ? 1 : 0);
      if (r.audit.empty()) {
        if (std::string a = backend.audit(); !a.empty()) r.audit = s.name + ": " + a;
      }
      if (s.check) s.check(set);
    }
    if (o.after_round) {
      backend.synchronize();
      o.after_round(set);
    }
    if ((i + 1) % every == 0) {
      const DeviceState st = backend.state();
      if (st.throttled && !throttled_now)  // the slowdown began somewhere in this window
        for (auto& m : r.subjects)
          for (size_t c = static_cast<size_t>(window_start); c < m.throttled.size(); ++c) m.throttled[c] = 1;
      throttled_now = st.throttled;
      window_start = i + 1;
    }
  }
  r.after = backend.state();
  if (r.after.throttled && !throttled_now)
    for (auto& m : r.subjects)
      for (size_t c = static_cast<size_t>(window_start); c < m.throttled.size(); ++c) m.throttled[c] = 1;
  for (auto& m : r.subjects) {
    m.throttled_count = std::count(m.throttled.begin(), m.throttled.end(), uint8_t{1});
    m.summary = stats::summarize(m.seconds);
    if (!m.device_span.empty()) m.span_summary = stats::summarize(m.device_span);
    if (!m.device_busy.empty()) m.busy_summary = stats::summarize(m.device_busy);
  }
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace fk::kernels
