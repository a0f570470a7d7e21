// Writing the job file, version 2 (format in job.h): each distinct architecture and
// workload once, in tables, then the jobs one by one, so the writer holds the tables
// and one job's JSON beyond the JobFile it is given.
//
// Jobs come in runs that share an architecture and a workload (plan order), so finding
// a job's entry is one comparison (operator==) with the previous job's, else a look-up
// among the entries of the same name and preset; only a new entry is serialised.
// Equal values share an entry. == equates 0.0 and -0.0, which the JSON tells apart:
// two architectures differing only there would share the first one's entry and the
// reader would reject the second one's jobs for an id mismatch, a loud failure, never a
// job run with another value.
#include "core/spec/job.h"

#include "core/fs_util.h"
#include "core/hash.h"

#include <fmt/format.h>
#include <unordered_map>
#include <unordered_set>

namespace fk::spec {
namespace {

// The distinct values of one table in order of first use, with their keys.
template <typename T>
class TableBuilder {
 public:
  // Index of the entry equal to `v`, added if there is none.
  size_t index_of(const T& v) {
    if (last_ < values_.size() && values_[last_] == v) return last_;
    const std::string name = v.name + "@" + v.preset;
    auto [lo, hi] = by_name_.equal_range(name);
    for (auto it = lo; it != hi; ++it)
      if (values_[it->second] == v) return last_ = it->second;
    Json j = to_json(v);
    const std::string base = fmt::format("{}#{}", name, Hasher().str(j.dump()).hex(12));
    std::string key = base;
    for (int n = 2; keys_used_.count(key) != 0; ++n) key = fmt::format("{}~{}", base, n);  // 48-bit hashes collide
    keys_used_.insert(key);
    last_ = values_.size();
    by_name_.emplace(name, last_);
    values_.push_back(v);
    keys_.push_back(key);
    table_[key] = std::move(j);
    return last_;
  }
  const std::string& key(size_t index) const { return keys_[index]; }
  Json& table() { return table_; }

 private:
  std::vector<T> values_;
  std::vector<std::string> keys_;
  std::unordered_multimap<std::string, size_t> by_name_;
  std::unordered_set<std::string> keys_used_;
  Json table_ = Json::object();
  size_t last_ = 0;
};

}  // namespace

void job_file_write(const JobFile& f, const std::function<void(std::string_view)>& out) {
  // First pass: the tables, and each job's entries (8 bytes per job).
  TableBuilder<Architecture> archs;
  TableBuilder<Workload> workloads;
  std::vector<std::pair<uint32_t, uint32_t>> refs;
  refs.reserve(f.jobs.size());
  for (const auto& job : f.jobs)
    refs.emplace_back(static_cast<uint32_t>(archs.index_of(job.arch)),
                      static_cast<uint32_t>(workloads.index_of(job.workload)));
  // The header and the tables, indented, in this order (a reader streams the jobs once
  // it has them); the closing brace gives way to the jobs.
  nlohmann::ordered_json head_json = nlohmann::ordered_json::object();
  head_json["format"] = JobFile::kFormat;
  head_json["version"] = JobFile::kVersion;
  head_json["campaign"] = f.campaign;
  head_json["campaign_file"] = f.campaign_file;
  head_json["scale"] = f.scale;
  head_json["architectures"] = archs.table();
  head_json["workloads"] = workloads.table();
  std::string head = head_json.dump(1);
  head.resize(head.size() - 2);  // "\n}"
  out(head);
  out(",\n \"jobs\": [");
  for (size_t i = 0; i < f.jobs.size(); ++i) {
    const Job& job = f.jobs[i];
    const std::string line = job_to_json(job, archs.key(refs[i].first), workloads.key(refs[i].second)).dump();
    out(i == 0 ? "\n  " : ",\n  ");
    out(line);
  }
  out(f.jobs.empty() ? "]\n}\n" : "\n ]\n}\n");
}

void job_file_write(const std::string& path, const JobFile& f) {
  FsAtomicWriter w(path);
  job_file_write(f, [&](std::string_view bytes) { w.write(bytes); });
  w.commit();
}

Json job_file_to_json(const JobFile& f) {
  std::string text;
  job_file_write(f, [&](std::string_view bytes) { text += bytes; });
  return Json::parse(text);
}

}  // namespace fk::spec
