#include "results/model_time.h"

#include "core/stats.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

namespace fk::results {

ModelTimeIterations model_time_iterations(std::span<const StepTiming> steps, std::string_view run) {
  struct StepAcc {
    double max_total = 0, sum_total = 0, sum_compute = 0, sum_comm = 0;
    int64_t ranks = 0;
  };
  std::map<int64_t, std::map<std::string_view, StepAcc>> by_iter;  // iteration -> step -> over ranks
  for (const StepTiming& s : steps) {
    if (s.run != run) continue;
    StepAcc& a = by_iter[s.iteration][s.step];
    a.max_total = std::max(a.max_total, s.total_s);
    a.sum_total += s.total_s;
    a.sum_compute += s.compute_s;
    a.sum_comm += s.comm_s;
    ++a.ranks;
  }
  ModelTimeIterations out;
  for (const auto& [it, by_step] : by_iter) {
    double model = 0, mean_rank = 0, compute = 0, comm = 0;
    for (const auto& [name, a] : by_step) {
      const double r = static_cast<double>(std::max<int64_t>(1, a.ranks));
      model += a.max_total;
      mean_rank += a.sum_total / r;
      compute += a.sum_compute / r;
      comm += a.sum_comm / r;
    }
    out.iteration.push_back(it);
    out.model_s.push_back(model);
    out.mean_rank_s.push_back(mean_rank);
    out.compute_s.push_back(compute);
    out.comm_s.push_back(comm);
  }
  return out;
}

double model_time(std::span<const StepTiming> steps, std::string_view run) {
  return stats::median(model_time_iterations(steps, run).model_s);
}

double model_time_speedup(double baseline_s, double selected_s) {
  return selected_s > 0 ? baseline_s / selected_s : std::numeric_limits<double>::quiet_NaN();
}

double model_time_speedup(std::span<const StepTiming> steps) {
  return model_time_speedup(model_time(steps, "baseline"), model_time(steps, "selected"));
}

}  // namespace fk::results
