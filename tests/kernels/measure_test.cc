// The measurement driver (kernels/measure.h) against a scripted backend: its timer
// reports what the subject's run() says it took, its device state turns throttled on
// cue and its audit can complain, so the driver's order of calls, sample counts,
// interleaving, rotation plan, throttle marks, audit and budget are all checked exactly.
#include "kernels/measure.h"

#include "collectives/communicator.h"
#include "core/error.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace fk::kernels {
namespace {

struct Script {
  double next_call_s = 0;        // what the timer reports for the current timed window
  int state_readings = 0;
  int throttle_from_reading = -1;  // state() reports a slowdown from this reading on
  std::string audit;
  std::vector<std::string> log;  // every backend event, in order
};

class ScriptedTimer final : public Timer {
 public:
  explicit ScriptedTimer(Script& s) : s_(s) {}
  void start() override { s_.log.push_back("start"); }
  void stop() override { s_.log.push_back("stop"); }
  double seconds() override { return s_.next_call_s; }

 private:
  Script& s_;
};

class ScriptedBackend final : public Backend {
 public:
  explicit ScriptedBackend(Script& s, int64_t cache) : s_(s) { facts_.name = "scripted"; facts_.cache_bytes = cache; }
  DeviceKind kind() const override { return DeviceKind::kCpu; }
  Device device() const override { return Device::cpu(); }
  const DeviceFacts& facts() const override { return facts_; }
  DeviceState state() override {
    DeviceState st;
    st.sm_clock_mhz = 1000;
    st.throttled = s_.throttle_from_reading >= 0 && s_.state_readings >= s_.throttle_from_reading;
    ++s_.state_readings;
    return st;
  }
  void activate() override {}
  Tensor empty(DType d, const Shape& shape) override { return Tensor::empty(d, shape); }
  void upload(const Tensor&, const Tensor&) override {}
  void download(const Tensor&, const Tensor&) override {}
  void copy(const Tensor&, const Tensor&) override {}
  void copy_rows(const Tensor&, const Tensor&) override {}
  void memset(const Tensor&, uint8_t) override {}
  void fill(const Tensor&, double) override {}
  void* stream() const override { return nullptr; }
  void synchronize() override { s_.log.push_back("sync"); }
  std::unique_ptr<Timer> timer() override { return std::make_unique<ScriptedTimer>(s_); }
  void flush_cache() override { s_.log.push_back("flush"); }
  std::string audit() override { return s_.audit; }
  std::unique_ptr<collectives::Communicator> communicator(collectives::Communicator&) override { return nullptr; }

 private:
  Script& s_;
  DeviceFacts facts_;
};

Subject logged(Script& s, const std::string& name, double seconds) {
  Subject sub;
  sub.name = name;
  sub.prepare = [&s, name](int64_t set) { s.log.push_back(name + ".prepare" + std::to_string(set)); };
  sub.run = [&s, name, seconds](int64_t set) {
    s.next_call_s = seconds;
    s.log.push_back(name + ".run" + std::to_string(set));
  };
  sub.check = [&s, name](int64_t set) { s.log.push_back(name + ".check" + std::to_string(set)); };
  return sub;
}

TEST(Measure, InterleavesSubjectsAlternatingTheirOrderAndRotatesSets) {
  Script s;
  ScriptedBackend b(s, 0);
  const std::vector<Subject> subjects = {logged(s, "A", 1e-3), logged(s, "B", 2e-3)};
  MeasureOptions o;
  o.warmup = 1;
  o.iterations = 3;
  const MeasureResult r = measure(b, subjects, RotationPlan{2, true}, o);
  const std::vector<std::string> want = {
      "A.prepare0", "A.run0", "B.prepare0", "B.run0", "sync",                                     // warm-up
      "A.prepare0", "flush", "start", "A.run0", "stop", "A.check0",                               // round 0: A B
      "B.prepare0", "flush", "start", "B.run0", "stop", "B.check0",
      "B.prepare1", "flush", "start", "B.run1", "stop", "B.check1",                               // round 1: B A
      "A.prepare1", "flush", "start", "A.run1", "stop", "A.check1",
      "A.prepare0", "flush", "start", "A.run0", "stop", "A.check0",                               // round 2: A B
      "B.prepare0", "flush", "start", "B.run0", "stop", "B.check0"};
  EXPECT_EQ(s.log, want);
  ASSERT_EQ(r.subjects.size(), 2u);
  EXPECT_EQ(r.subjects[0].name, "A");
  EXPECT_EQ(r.subjects[0].seconds, (std::vector<double>{1e-3, 1e-3, 1e-3}));
  EXPECT_EQ(r.subjects[1].seconds, (std::vector<double>{2e-3, 2e-3, 2e-3}));
  EXPECT_DOUBLE_EQ(r.subjects[1].summary.median, 2e-3);
  EXPECT_EQ(r.subjects[1].summary.n, 3);
  EXPECT_EQ(r.sets, 2);
  EXPECT_TRUE(r.flushed);
  EXPECT_EQ(r.audit, "");
}

TEST(Measure, NoFlushWhenThePlanSaysTheRotationSuffices) {
  Script s;
  ScriptedBackend b(s, 0);
  const std::vector<Subject> subjects = {logged(s, "A", 1e-3)};
  MeasureOptions o;
  o.warmup = 0;
  o.iterations = 4;
  measure(b, subjects, RotationPlan{3, false}, o);
  EXPECT_EQ(std::count(s.log.begin(), s.log.end(), "flush"), 0);
  const std::vector<std::string> runs = {"A.run0", "A.run1", "A.run2", "A.run0"};
  std::vector<std::string> got;
  for (const auto& e : s.log)
    if (e.find(".run") != std::string::npos) got.push_back(e);
  EXPECT_EQ(got, runs);
}

TEST(Measure, RotationPlanDefeatsTheCacheOrFlushes) {
  Script s;
  ScriptedBackend h200(s, 60'000'000);  // H200: 60 MB of L2
  ScriptedBackend none(s, 0);
  struct Row {
    const char* why;
    const ScriptedBackend* backend;
    double set_bytes, max_rotation_bytes;
    int64_t sets;
    bool flush;
  };
  const Row rows[] = {
      {"1 MB sets: 16 (the cap) leave 15 MB between uses, under twice the cache: flush", &h200, 1e6, 1e9, 16, true},
      {"8 MB sets: 16 leave 120 MB (twice the cache) between uses", &h200, 8e6, 1e9, 16, false},
      {"10 MB sets: 13 leave 120 MB", &h200, 1e7, 1e9, 13, false},
      {"100 MB sets: 3 suffice", &h200, 1e8, 1e9, 3, false},
      {"400 MB sets within 500 MB: one set, so flush", &h200, 4e8, 5e8, 1, true},
      {"no cache to defeat: one set, no flush", &none, 1e6, 1e9, 1, false},
  };
  for (const Row& r : rows) {
    const RotationPlan p = rotation_plan(*r.backend, r.set_bytes, r.max_rotation_bytes);
    EXPECT_EQ(p.sets, r.sets) << r.why;
    EXPECT_EQ(p.flush, r.flush) << r.why;
  }
}

TEST(Measure, MarksSamplesTakenWhileTheDeviceWasThrottled) {
  Script s;
  s.throttle_from_reading = 2;  // readings: 0 before the loop, 1 after round 4, 2 after round 8 (throttled), ...
  ScriptedBackend b(s, 0);
  const std::vector<Subject> subjects = {logged(s, "A", 1e-3)};
  MeasureOptions o;
  o.warmup = 0;
  o.iterations = 12;
  o.state_every = 4;
  const MeasureResult r = measure(b, subjects, RotationPlan{1, false}, o);
  // Rounds 0-3 clean (reading 1 clean), rounds 4-7 end in a throttled reading, and the
  // device stays throttled after: rounds 4-11 are marked.
  const std::vector<uint8_t> want = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(r.subjects[0].throttled, want);
  EXPECT_EQ(r.subjects[0].throttled_count, 8);
  EXPECT_FALSE(r.before.throttled);
  EXPECT_TRUE(r.after.throttled);
}

TEST(Measure, RecordsTheFirstAuditProblemWithTheSubjectsName) {
  Script s;
  s.audit = "the persisting-L2 limit is 4096 bytes";
  ScriptedBackend b(s, 0);
  const std::vector<Subject> subjects = {logged(s, "cand", 1e-3)};
  MeasureOptions o;
  o.iterations = 2;
  const MeasureResult r = measure(b, subjects, RotationPlan{}, o);
  EXPECT_EQ(r.audit, "cand: the persisting-L2 limit is 4096 bytes");
}

TEST(Measure, KeepsSamplingWhileTheBudgetLastsUpToTheCap) {
  Script s;
  ScriptedBackend b(s, 0);
  Subject sub;
  sub.name = "slow";
  sub.run = [](int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); };
  MeasureOptions o;
  o.warmup = 0;
  o.iterations = 3;
  o.max_iterations = 1000;
  o.budget_s = 0.05;
  const MeasureResult r = measure(b, std::span(&sub, 1), RotationPlan{}, o);
  EXPECT_GT(r.subjects[0].seconds.size(), 3u) << "the budget allows more than the minimum";
  EXPECT_LE(r.subjects[0].seconds.size(), 51u) << "each call sleeps at least 1 ms of the 50 ms budget";
  o.max_iterations = 5;
  const MeasureResult capped = measure(b, std::span(&sub, 1), RotationPlan{}, o);
  EXPECT_EQ(capped.subjects[0].seconds.size(), 5u);
}

TEST(Measure, RefusesNoSubjectsOrASubjectWithoutRun) {
  Script s;
  ScriptedBackend b(s, 0);
  EXPECT_THROW(measure(b, std::span<const Subject>(), RotationPlan{}, MeasureOptions{}), Error);
  Subject empty;
  empty.name = "nothing";
  EXPECT_THROW(measure(b, std::span(&empty, 1), RotationPlan{}, MeasureOptions{}), Error);
  Subject both = logged(s, "both", 1e-3);
  both.timed = [](int64_t) { return 1.0; };
  EXPECT_THROW(measure(b, std::span(&both, 1), RotationPlan{}, MeasureOptions{}), Error);
}

// A subject timed elsewhere (a call into a worker process): its own seconds are the
// samples, the backend's timer is not used, and the flush is waited for before the
// call; the round hook runs once every subject of the round has run.
TEST(Measure, TimedSubjectsReportTheirOwnSecondsAfterAWaitedFlush) {
  Script s;
  ScriptedBackend b(s, 0);
  Subject remote;
  remote.name = "R";
  double next = 1e-3;
  remote.prepare = [&s](int64_t set) { s.log.push_back("R.prepare" + std::to_string(set)); };
  remote.timed = [&s, &next](int64_t set) {
    s.log.push_back("R.call" + std::to_string(set));
    next += 1e-3;
    return next;
  };
  const std::vector<Subject> subjects = {remote, logged(s, "B", 5e-3)};
  MeasureOptions o;
  o.warmup = 1;
  o.iterations = 2;
  o.after_round = [&s](int64_t set) { s.log.push_back("round" + std::to_string(set)); };
  const MeasureResult r = measure(b, subjects, RotationPlan{2, true}, o);
  const std::vector<std::string> want = {
      "R.prepare0", "sync", "R.call0", "B.prepare0", "B.run0", "sync", "round0", "sync",  // warm-up
      "R.prepare0", "flush", "sync", "R.call0",                                           // round 0: R B
      "B.prepare0", "flush", "start", "B.run0", "stop", "B.check0", "sync", "round0",
      "B.prepare1", "flush", "start", "B.run1", "stop", "B.check1",                       // round 1: B R
      "R.prepare1", "flush", "sync", "R.call1", "sync", "round1"};
  EXPECT_EQ(s.log, want);
  EXPECT_EQ(r.subjects[0].seconds, (std::vector<double>{3e-3, 4e-3}));  // the warm-up's 2e-3 is left out
  EXPECT_EQ(r.subjects[1].seconds, (std::vector<double>{5e-3, 5e-3}));
}

// A tracer wraps each timed call of a run() subject (after the flush, around the
// marks); its spans are the subject's device_span, one per sample, summarised; a
// timed subject is not traced; a device fault the tracer saw stops the loop.
class ScriptedTracer final : public DeviceTracer {
 public:
  explicit ScriptedTracer(Script& s) : s_(s) {}
  DeviceWork begin() override {
    s_.log.push_back("trace.begin");
    return {};
  }
  DeviceWork end() override {
    s_.log.push_back("trace.end");
    DeviceWork w;
    w.span_s = s_.next_call_s / 2;  // the device work took half the window
    w.busy_s = s_.next_call_s / 4;  // and was busy for half of that
    w.activities = ++calls;
    w.names = {"kernel " + std::to_string(calls)};
    w.error = error;
    return w;
  }
  std::string error;
  int64_t calls = 0;

 private:
  Script& s_;
};

TEST(Measure, TracerSpansEachTimedCallOfARunSubject) {
  Script s;
  ScriptedBackend b(s, 0);
  ScriptedTracer tracer(s);
  Subject remote;
  remote.name = "R";
  remote.timed = [&s](int64_t) {
    s.log.push_back("R.call");
    return 1e-3;
  };
  const std::vector<Subject> subjects = {logged(s, "A", 4e-3), remote};
  MeasureOptions o;
  o.warmup = 0;
  o.iterations = 2;
  o.tracer = &tracer;
  const MeasureResult r = measure(b, subjects, RotationPlan{1, true}, o);
  const std::vector<std::string> want = {
      "sync",                                                                                   // after warm-up
      "A.prepare0", "flush", "trace.begin", "start", "A.run0", "stop", "trace.end", "A.check0",  // round 0: A R
      "flush", "sync", "R.call",
      "flush", "sync", "R.call",                                                                 // round 1: R A
      "A.prepare0", "flush", "trace.begin", "start", "A.run0", "stop", "trace.end", "A.check0"};
  EXPECT_EQ(s.log, want);
  EXPECT_EQ(r.subjects[0].device_span, (std::vector<double>{2e-3, 2e-3}));
  EXPECT_DOUBLE_EQ(r.subjects[0].span_summary.median, 2e-3);
  EXPECT_EQ(r.subjects[0].device_busy, (std::vector<double>{1e-3, 1e-3}));
  EXPECT_DOUBLE_EQ(r.subjects[0].busy_summary.median, 1e-3);
  EXPECT_EQ(r.subjects[0].device_activities, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r.subjects[0].device_names, (std::vector<std::string>{"kernel 1"}));  // the first call's
  EXPECT_EQ(r.subjects[0].seconds, (std::vector<double>{4e-3, 4e-3}));
  EXPECT_TRUE(r.subjects[1].device_span.empty());
  EXPECT_TRUE(r.subjects[1].device_busy.empty());

  tracer.error = "cudaErrorIllegalAddress (an illegal memory access was encountered)";
  try {
    measure(b, std::span(subjects.data(), 1), RotationPlan{}, o);
    ADD_FAILURE() << "a device fault seen by the tracer must stop the loop";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("A: the device failed: cudaErrorIllegalAddress"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fk::kernels
