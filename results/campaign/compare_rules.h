// The decision rules of `fk compare` (docs/reports.md, "fk compare"): when a change
// between two runs of the same item counts as a regression or an improvement rather
// than noise. Pure functions of the figures; compare.h applies them to campaigns.
//
// Timing. One timing item is a pair of sample sets (old, new) — every timed iteration
// of every rank of one kernel instance, or every (iteration, rank) step time of one
// model-stage run and phase. Its shift s = ln(p10(new) / p10(old)) measures the fast
// end, which interference from other processes moves least (it lengthens some
// iterations; a real slowdown lengthens all of them). Items form packs (kernel-stage
// timings, candidate timings, model-stage step times): each pack's run-to-run noise is
// estimated from its own items: g = median(s) and sigma = p90(|s - g|) / 1.645 (the
// normal sigma with that 90th percentile; robust to a few real regressions, and larger
// than a MAD estimate when the noise has heavy tails, as it has on shared machines).
// A machine whose items vary by 30% between runs needs a change of several times
// that to flag one item; a quiet one flags 10%. An item is slower when ALL hold:
//   1. either median is at least min_time_s (tiny absolute times are timer noise);
//   2. the sample sizes can show significance at all (stats_mann_whitney_min_p <= alpha);
//   3. median(new) > (1 + threshold) x median(old) and s > ln(1 + threshold);
//   4. one-sided Mann-Whitney U: p(new not larger than old) < alpha;
//   5. s - g > noise_z x sigma (beyond the pack's run-to-run noise), and the
//      Mann-Whitney p of rule 4 is below alpha / (items in the pack) as well
//      (Bonferroni: many items are tested at once).
// Such an item counts only when its pack resolves single items: it has at least
// kMinPackForNoise items and sigma <= ln(1 + threshold) / 3, i.e. the items of this
// pair of runs scatter by less than a third of the threshold. Otherwise the machine is too
// noisy to tell one slower kernel from interference (on a shared 2-core machine whole
// timing windows of one instance run 1.5-4x slower now and then) and the item is
// reported as unresolved, not counted; pack-wide shifts are still judged.
// A pack as a whole is slower (everything moved: a slower library, driver, clock or
// machine) when it has at least kMinPackItems items, exp(g) > 1 + threshold, the
// one-sided Wilcoxon signed-rank test of the shifts gives p < alpha, and — when the
// items come from two or more jobs — at least two thirds of those jobs (rounded up)
// moved the same way: their own median shift is beyond ln(1 + threshold / 2). The items
// of one job share one process, and a process as a whole can run 30% slower than an
// identical one on a shared machine (measured on tests/reports' campaign: one job's
// four kernels all at x0.54-0.74 between two identical runs); the signed-rank test
// counts such a job's items as independent evidence. Faster: the mirror images. Items failing 1-2 are
// untestable and counted.
// Precision (an error that should stay small: rel L2, layer error, KL) — worse when
// new > factor x old AND new - old > floor, or when new is NaN and old was not.
// Agreement (top-1 fraction) — worse when it drops by more than top1_drop.
// Verdicts — worse when PASSED becomes anything else; better the other way round.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fk::results {

struct CompareOptions {
  double threshold = 0.10;         // relative slowdown of the median that matters
  double alpha = 0.01;             // significance level of the Mann-Whitney test
  double min_time_s = 2e-6;        // medians below this (both sides) are not compared
  double precision_factor = 2.0;   // error growth factor that matters
  double precision_floor = 1e-6;   // ... and absolute growth
  double top1_drop = 0.10;         // drop of top-1 agreement that matters
  double noise_z = 4.0;            // how many noise sigmas an item must stand out by
};

inline constexpr size_t kMinPackForNoise = 8;   // items needed to estimate a pack's noise
inline constexpr size_t kMinPackItems = 10;     // items needed to judge a pack as a whole

enum class Change { kSame, kWorse, kBetter, kUntestable };

struct SpeedTest {
  Change change = Change::kSame;  // by rules 1-4 (item alone); see compare_speed_in_pack
  double shift = 0;               // ln(p10 new / p10 old)
  double old_median = 0, new_median = 0;
  double ratio = 0;      // new median / old median
  double low_ratio = 0;  // new p10 / old p10
  double p_slower = 1, p_faster = 1;
  size_t n_old = 0, n_new = 0;
  std::string why;  // for kUntestable: "too fast", "too few samples", "no samples"
};

// Applies timing rules 1-4 to two sets of samples (seconds; NaN ignored).
SpeedTest compare_speed(const std::vector<double>& old_samples, const std::vector<double>& new_samples,
                        const CompareOptions& options);

// The run-to-run noise of a pack, from the shifts of its testable items.
struct PackNoise {
  size_t items = 0;
  double shift = 0;  // g: median shift (0 without items)
  double sigma = 0;  // p90(|s - g|) / 1.645 (0 below kMinPackForNoise items)
  size_t slower = 0, faster = 0;
  double p_slower = 1, p_faster = 1;  // one-sided signed-rank tests (1 below kMinPackItems)
  size_t jobs = 0;                         // distinct groups among the items (0 without groups)
  size_t jobs_slower = 0, jobs_faster = 0;  // groups whose median shift is beyond ln(1 + threshold / 2)
  Change change = Change::kSame;      // the pack as a whole
  bool resolves_items = false;        // single-item findings count (see above)
};
// groups, when given, holds one key per shift: the job the item belongs to.
PackNoise compare_pack_noise(const std::vector<double>& shifts, const CompareOptions& options,
                             const std::vector<std::string>& groups = {});

// Rule 5: the item's change once the pack's noise is known.
Change compare_speed_in_pack(const SpeedTest& item, const PackNoise& pack, const CompareOptions& options);

// Applies the precision rule to an error figure (smaller is better).
Change compare_error(double old_value, double new_value, const CompareOptions& options);

// Applies the agreement rule to a fraction in [0, 1] (larger is better).
Change compare_agreement(double old_value, double new_value, const CompareOptions& options);

// Applies the verdict rule.
Change compare_verdict(const std::string& old_verdict, const std::string& new_verdict);

}  // namespace fk::results
