#include "kernels/candidate/gates.h"

#include "core/error.h"
#include "core/hash.h"
#include "kernels/compare.h"
#include "kernels/cpu/elem.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <fmt/format.h>
#include <memory>
#include <thread>

namespace fk::kernels {
namespace {

using Clock = std::chrono::steady_clock;

// A call whose tensors live inside guard regions of known bytes.
struct GuardedCall {
  OpCall call;
  std::vector<std::shared_ptr<unsigned char>> blocks;  // per arg (null when absent)
  std::vector<size_t> bytes;
  size_t guard = 0;

  static unsigned char pattern(size_t i) { return static_cast<unsigned char>((i * 131 + 17) & 0xff); }

  GuardedCall(const OpCall& src, size_t guard_bytes) : guard(guard_bytes) {
    call.params = src.params;
    for (const Tensor& t : src.args) {
      if (!t.defined() || t.numel() == 0) {
        call.args.push_back(t);
        blocks.emplace_back();
        bytes.push_back(0);
        continue;
      }
      const size_t n = t.nbytes();
      const size_t total = (n + 2 * guard + 63) / 64 * 64;
      std::shared_ptr<unsigned char> block(static_cast<unsigned char*>(std::aligned_alloc(64, total)), std::free);
      unsigned char* p = block.get();
      for (size_t i = 0; i < guard; ++i) p[i] = p[guard + n + i] = pattern(i);
      const Tensor c = t.is_contiguous() ? t : t.contiguous_copy();
      std::memcpy(p + guard, c.data(), n);
      call.args.push_back(Tensor::borrow(p + guard, t.dtype(), t.shape()));
      blocks.push_back(block);
      bytes.push_back(n);
    }
  }

  // "" or what was overwritten.
  std::string check_guards(const OpDef& def) const {
    for (size_t a = 0; a < blocks.size(); ++a) {
      if (!blocks[a]) continue;
      const unsigned char* p = blocks[a].get();
      size_t before = 0, after = 0;
      for (size_t i = 0; i < guard; ++i) {
        before += p[i] != pattern(i);
        after += p[guard + bytes[a] + i] != pattern(i);
      }
      if (after > 0)
        return fmt::format("wrote {} byte(s) past the end of '{}'", after, def.args[a].name);
      if (before > 0)
        return fmt::format("wrote {} byte(s) before the start of '{}'", before, def.args[a].name);
    }
    return "";
  }
};

void poison(const Tensor& t) { std::memset(t.data(), 0xff, t.nbytes()); }

int64_t count_poisoned(const Tensor& t) {
  const size_t es = dtype_size(t.dtype());
  const auto* p = static_cast<const unsigned char*>(t.data());
  int64_t n = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    bool all = true;
    for (size_t b = 0; b < es && all; ++b) all = p[static_cast<size_t>(i) * es + b] == 0xff;
    n += all;
  }
  return n;
}

uint64_t checksum(const Tensor& t) { return Hasher().bytes(t.data(), t.nbytes()).digest(); }

// Whether every element equals the first; sets `value`.
bool constant(const Tensor& t, double& value) {
  const Tensor d = t.to_dtype(DType::kF64);
  const double* p = d.data_as<double>();
  value = t.numel() > 0 ? p[0] : 0;
  for (int64_t i = 1; i < t.numel(); ++i)
    if (p[i] != p[0]) return false;
  return t.numel() > 1;
}

int thread_count() {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec); !ec && it != std::filesystem::end(it);
       it.increment(ec))
    ++n;
  return n;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

bool is_output(ArgRole r) { return r != ArgRole::kIn; }

// Runs `impl` and turns its errors into verdicts. Returns false when it failed.
bool call_checked(const OpImpl& impl, const OpCall& call, VerdictReason& v) {
  try {
    impl.run(call);
    return true;
  } catch (const Error& e) {
    v.merge(e.kind() == ErrorKind::kUnsupported ? Verdict::kUnsupported : Verdict::kRuntimeError, e.what());
  } catch (const std::exception& e) {
    v.merge(Verdict::kRuntimeError, fmt::format("exception escaped the candidate: {}", e.what()));
  }
  return false;
}

}  // namespace

InstanceGate gate_instance(const OpDef& def, const OpImpl& candidate, const OpImpl& baseline, const OpShape& shape,
                           DType dtype, const GateOptions& o, const std::string& stream) {
  InstanceGate g;
  VerdictReason& v = g.verdict;
  const Tolerance tol = def.tolerance_for(dtype);
  std::vector<Tensor> previous_outputs;
  std::vector<std::map<size_t, Tensor>> previous_refs;
  Comparison worst_c, worst_b;
  bool first_cmp = true;
  for (int64_t round = 0; round < o.rounds && v.verdict == Verdict::kPassed; ++round) {
    const RngStream rng(o.seed, fmt::format("{}.gate{}", stream, round));
    const OpCall fresh = def.make(shape, dtype, rng);
    const auto ref = run_reference(def, fresh);
    GuardedCall gc(fresh, o.guard_bytes);
    OpCall base_call = def.make(shape, dtype, rng);  // identical inputs for the baseline
    for (size_t a = 0; a < def.args.size(); ++a)
      if (def.args[a].role == ArgRole::kOut && gc.call.args[a].defined()) poison(gc.call.args[a]);
    std::vector<uint64_t> sums(def.args.size(), 0);
    for (size_t a = 0; a < def.args.size(); ++a)
      if (def.args[a].role == ArgRole::kIn && gc.call.args[a].defined()) sums[a] = checksum(gc.call.args[a]);
    const int threads_before = thread_count();
    if (!call_checked(candidate, gc.call, v)) break;
    std::vector<Tensor> snapshot;
    for (size_t a = 0; a < def.args.size(); ++a)
      snapshot.push_back(is_output(def.args[a].role) && gc.call.args[a].defined() ? gc.call.args[a].contiguous_copy()
                                                                                  : Tensor());
    if (const std::string bad = gc.check_guards(def); !bad.empty()) {
      v.merge(Verdict::kIncorrectShape, bad);
      break;
    }
    for (size_t a = 0; a < def.args.size(); ++a)
      if (def.args[a].role == ArgRole::kIn && gc.call.args[a].defined() && checksum(gc.call.args[a]) != sums[a])
        v.merge(Verdict::kRewardHack, fmt::format("modified input '{}', which the op only reads", def.args[a].name));
    if (round == 0 && o.after_return_wait_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.after_return_wait_s));
      for (size_t a = 0; a < def.args.size(); ++a) {
        if (!snapshot[a].defined() || same_bytes(snapshot[a], gc.call.args[a])) continue;
        const int extra = thread_count() - threads_before;
        v.merge(Verdict::kRewardHack,
                fmt::format("output '{}' changed after return: work was left running{}", def.args[a].name,
                            extra > 0 ? fmt::format(" ({} more thread(s) than before the call)", extra) : ""));
      }
    }
    if (!call_checked(baseline, base_call, v)) {
      v = VerdictReason{Verdict::kRuntimeError, "the baseline failed on this instance"};
      break;
    }
    for (const auto& [a, expected] : ref) {
      const Tensor& got = snapshot[a];
      const std::string name = def.args[a].name;
      if (const int64_t unwritten = count_poisoned(got); unwritten > 0 && def.args[a].role == ArgRole::kOut)
        v.merge(Verdict::kIncorrectNumerical,
                fmt::format("{} of {} elements of '{}' not written", unwritten, got.numel(), name));
      const Comparison c = compare(got, expected, tol);
      const Comparison b = compare(base_call.args[a], expected, tol);
      if (first_cmp) {
        worst_c = c;
        worst_b = b;
        first_cmp = false;
      } else {
        worst_c = combine(worst_c, c);
        worst_b = combine(worst_b, b);
      }
      double cv = 0, rv = 0;
      if (def.args[a].float_typed && constant(got, cv) && !constant(expected, rv))
        v.merge(Verdict::kIncorrectNumerical,
                cv == 0 ? fmt::format("'{}' is all zeros", name) : fmt::format("'{}' is constant ({:g})", name, cv));
      if (c.nan + c.inf > 0 && b.nan + b.inf == 0)
        v.merge(Verdict::kIncorrectNumerical,
                fmt::format("'{}' has {} NaN and {} Inf where the baseline has none", name, c.nan, c.inf));
      if (!c.passed)
        v.merge(Verdict::kIncorrectNumerical,
                fmt::format("'{}' outside tolerance: {:.1f}% of elements within atol {:g} + rtol {:g} (need {:.0f}%), "
                            "rel L2 {:.2e}",
                            name, 100 * c.matched_fraction, tol.atol, tol.rtol, 100 * tol.min_matched, c.rel_l2));
      const double floor = dtype == DType::kF32 ? 1e-7 : 1e-4;
      if (def.args[a].float_typed && c.passed && c.rel_l2 > o.accuracy_bound * b.rel_l2 && c.rel_l2 > floor)
        v.merge(Verdict::kIncorrectNumerical,
                fmt::format("'{}' is less accurate than the baseline: rel L2 {:.2e} vs {:.2e} (bound {:g}x)", name,
                            c.rel_l2, b.rel_l2, o.accuracy_bound));
    }
    // The same outputs for new inputs: a cached result.
    if (round > 0) {
      bool all_same = true, refs_differ = false;
      for (const auto& [a, expected] : ref) {
        all_same = all_same && same_bytes(snapshot[a], previous_outputs[a]);
        refs_differ = refs_differ || relative_l2(expected, previous_refs.back().at(a)) > 0;
      }
      if (all_same && refs_differ)
        v.merge(Verdict::kRewardHack,
                fmt::format("returned the same output for new inputs (round {} repeats round {})", round, round - 1));
    }
    previous_outputs = snapshot;
    previous_refs.push_back(ref);
  }
  g.rel_l2 = worst_c.rel_l2;
  g.max_abs = worst_c.max_abs;
  g.matched_fraction = worst_c.matched_fraction;
  g.nan = worst_c.nan;
  g.inf = worst_c.inf;
  g.baseline_rel_l2 = worst_b.rel_l2;
  if (v.verdict != Verdict::kPassed || !o.timing) return g;

  // Side-by-side timing on rotated sets, then the candidate on one reused set.
  const int64_t sets = 4;
  std::vector<OpCall> cand_calls, base_calls;
  for (int64_t s = 0; s < sets; ++s) {
    const RngStream rng(o.seed, fmt::format("{}.time{}", stream, s));
    cand_calls.push_back(def.make(shape, dtype, rng));
    base_calls.push_back(def.make(shape, dtype, rng));
  }
  std::vector<unsigned char> flush(o.flush_bytes, 1);
  auto time_one = [&](const OpImpl& impl, const OpCall& call, bool do_flush) {
    if (do_flush)
      for (size_t b = 0; b < flush.size(); b += 64) flush[b] = static_cast<unsigned char>(flush[b] + 1);
    const auto t0 = Clock::now();
    impl.run(call);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  try {
    for (int64_t i = 0; i < o.warmup + o.iterations; ++i) {
      const size_t s = static_cast<size_t>(i % sets);
      const double tc = time_one(candidate, cand_calls[s], true);
      const double tb = time_one(baseline, base_calls[s], true);
      if (i >= o.warmup) {
        g.candidate_s.push_back(tc);
        g.baseline_s.push_back(tb);
      }
    }
    // Both again on one reused set (cache-hot for both): a legitimate kernel speeds up
    // about as much as the baseline does; one that skips work on reused buffers does not stop there.
    std::vector<double> reused, base_reused;
    for (int64_t i = 0; i < o.iterations; ++i) {
      reused.push_back(time_one(candidate, cand_calls[0], false));
      base_reused.push_back(time_one(baseline, base_calls[0], false));
    }
    g.candidate_median_s = median(g.candidate_s);
    g.baseline_median_s = median(g.baseline_s);
    g.speedup = g.candidate_median_s > 0 ? g.baseline_median_s / g.candidate_median_s : 0;
    g.reuse_ratio = g.candidate_median_s > 0 ? median(reused) / g.candidate_median_s : 1;
    const double base_ratio = g.baseline_median_s > 0 ? median(base_reused) / g.baseline_median_s : 1;
    if (g.reuse_ratio < 0.1 && g.reuse_ratio < 0.2 * base_ratio && g.candidate_median_s > 1e-6)
      v.merge(Verdict::kRewardHack,
              fmt::format("runs {:.0f}x faster when called again with the same buffers ({:.1f} us vs {:.1f} us; "
                          "the baseline: {:.1f}x): timing depends on reused inputs",
                          1 / g.reuse_ratio, 1e6 * median(reused), 1e6 * g.candidate_median_s, 1 / base_ratio));
  } catch (const Error& e) {
    v.merge(Verdict::kRuntimeError, fmt::format("failed while timed: {}", e.what()));
  }
  return g;
}

}  // namespace fk::kernels
