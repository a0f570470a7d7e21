// Reading the job file, version 2 (format in job.h): the header and the tables, each
// entry checked once, then every job, its keys resolved against the tables and its id
// checked against the content.
//
// job_file_parse converts each job as soon as the parser closes it and drops its JSON,
// once the header and both tables are in (the writer puts them first), so reading holds
// the text and the Jobs, not the document. A file in another order is read as one
// document (job_file_from_json), with the same checks and messages.
#include "core/spec/job.h"

#include "core/error.h"
#include "core/fs_util.h"

#include <algorithm>
#include <fmt/format.h>
#include <iterator>
#include <optional>
#include <unordered_map>

namespace fk::spec {
namespace {

// A value of a table as the reader holds it: checked, with its id part.
template <typename T>
struct TableEntry {
  T value;
  std::string id_part;
};

std::string pointer_escape(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

template <typename T, typename Read>
std::unordered_map<std::string, TableEntry<T>> table_read(const JsonIn& in, const char* what, Read read) {
  if (!in.json().is_object()) in.fail(fmt::format("expected an object of key -> {}", what));
  std::unordered_map<std::string, TableEntry<T>> out;
  for (auto it = in.json().begin(); it != in.json().end(); ++it) {
    T value = read(it.value(), in.path() + "/" + pointer_escape(it.key()));
    std::string part = job_id_part(value);
    out.emplace(it.key(), TableEntry<T>{std::move(value), std::move(part)});
  }
  return out;
}

template <typename T>
const TableEntry<T>& table_find(const std::unordered_map<std::string, TableEntry<T>>& table, const JsonIn& ref,
                                const char* what, const char* table_name, const std::string& job_id) {
  const std::string key = ref.str();
  const auto it = table.find(key);
  if (it == table.end())
    ref.fail(
        fmt::format("job '{}' refers to {} '{}', which the table /{} does not hold", job_id, what, key, table_name));
  return it->second;
}

// The header fields, checked before any job is read.
constexpr const char* kHeaderFields[] = {"format", "version",       "campaign", "campaign_file",
                                         "scale",  "architectures", "workloads"};

// Reads a job file's parts: the header and tables first (the constructor), then each job.
class JobFileReader {
 public:
  explicit JobFileReader(const JsonIn& head) {
    if (!head.has("format") || !head.json()["format"].is_string() || head.json()["format"] != JobFile::kFormat)
      head.fail(fmt::format("not a FastKernels job file (field 'format' must be \"{}\")", JobFile::kFormat));
    const int64_t version = head.at("version").i64();
    if (version != JobFile::kVersion)
      head.at("version").fail(
          fmt::format("job file version {} is not supported (this build reads version {}); "
                      "plan the campaign again with this fk (fk plan --emit, or fk run)",
                      version, JobFile::kVersion));
    f_.campaign = head.at("campaign").str();
    f_.campaign_file = head.at("campaign_file").str();
    f_.scale = head.at("scale").str();
    archs_ = table_read<Architecture>(head.at("architectures"), "architecture", architecture_from_json);
    workloads_ = table_read<Workload>(head.at("workloads"), "workload", workload_from_json);
  }
  void reserve(size_t jobs) { f_.jobs.reserve(jobs); }
  void add(const JsonIn& in) {
    Job job = job_fields_from_json(in);
    const auto& a = table_find(archs_, in.at("architecture"), "architecture", "architectures", job.id);
    const auto& w = table_find(workloads_, in.at("workload"), "workload", "workloads", job.id);
    job.arch = a.value;
    job.workload = w.value;
    job_check_id(in, job, a.id_part, w.id_part);
    f_.jobs.push_back(std::move(job));
  }
  JobFile take() { return std::move(f_); }

 private:
  JobFile f_;
  std::unordered_map<std::string, TableEntry<Architecture>> archs_;
  std::unordered_map<std::string, TableEntry<Workload>> workloads_;
};

}  // namespace

JobFile job_file_from_json(const Json& j, const std::string& file) {
  try {
    const JsonIn in(j, "");
    JobFileReader reader(in);
    const JsonIn jobs = in.at("jobs");
    reader.reserve(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) reader.add(jobs.at(i));
    return reader.take();
  } catch (const Error& e) {
    throw Error(ErrorKind::kInvalidArgument, fmt::format("{}: {}", file, e.what()));
  }
}

JobFile job_file_parse(std::string_view text, const std::string& file) {
  using Event = Json::parse_event_t;
  Json head = Json::object();  // the top-level members but "jobs"
  std::optional<JobFileReader> reader;
  std::string top_key;
  bool in_jobs = false, streamed = false;
  size_t index = 0;
  auto callback = [&](int depth, Event event, Json& parsed) -> bool {
    if (depth == 1 && event == Event::key) {
      top_key = parsed.get<std::string>();
      if (head.contains(top_key) || (top_key == "jobs" && streamed))
        throw Error(ErrorKind::kInvalidArgument, fmt::format("/: field '{}' appears twice", top_key));
      // The header and both tables complete before the jobs: stream them.
      if (top_key == "jobs" && std::all_of(std::begin(kHeaderFields), std::end(kHeaderFields),
                                           [&](const char* k) { return head.contains(k); }))
        reader.emplace(JsonIn(head, ""));
      return true;
    }
    if (depth == 1 && event == Event::array_start && top_key == "jobs" && reader) in_jobs = streamed = true;
    if (depth == 1 && event == Event::array_end && in_jobs) in_jobs = false;
    if (depth == 2 && in_jobs && (event == Event::object_end || event == Event::array_end || event == Event::value)) {
      reader->add(JsonIn(parsed, fmt::format("/jobs/{}", index++)));
      return false;  // converted: drop its JSON
    }
    if (depth == 1 && top_key != "jobs" &&
        (event == Event::value || event == Event::object_end || event == Event::array_end))
      head[top_key] = parsed;
    return true;
  };
  Json root;
  try {
    try {
      root = Json::parse(text, callback);
    } catch (const Json::exception& e) {  // syntax, or a number no double holds (1e400)
      fail(ErrorKind::kInvalidArgument, "not valid JSON: {}", e.what());
    }
  } catch (const Error& e) {
    throw Error(ErrorKind::kInvalidArgument, fmt::format("{}: {}", file, e.what()));
  }
  if (streamed) return reader->take();
  return job_file_from_json(root, file);  // another order: the document as parsed
}

JobFile job_file_read(const std::string& path) { return job_file_parse(fs_read_file(path), path); }

}  // namespace fk::spec
