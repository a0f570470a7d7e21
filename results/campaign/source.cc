#include "results/campaign/source.h"

#include "core/error.h"
#include "results/campaign/job_files.h"

#include <algorithm>
#include <filesystem>

namespace fk::results {
namespace fs = std::filesystem;

CampaignSource CampaignSource::open(const std::string& path, const SourceOptions& options) {
  CampaignSource s;
  s.path_ = path;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    s.folder_ = true;
    const std::vector<std::string> files = job_files_scan(path).files;
    const std::map<std::string, std::string> damaged =
        options.check_files ? file_check(files, options.check) : std::map<std::string, std::string>{};
    for (const std::string& file : files) {
      if (auto bad = damaged.find(file); bad != damaged.end()) {
        s.problems_.push_back(fmt::format("{}: {}", file, bad->second));
        continue;
      }
      try {
        h5::File f = h5::File::open_read(file);
        const std::string format = f.has_attr("format") ? f.attr<std::string>("format") : "";
        if (format == kCampaignFormat) continue;  // an earlier fk collect's output
        if (format != kJobFormat) {
          s.problems_.push_back(fmt::format("{}: not a FastKernels job file (format '{}')", file, format));
          continue;
        }
        std::string id = f.has_attr("job_id") ? f.attr<std::string>("job_id") : "";
        if (id.empty()) id = fs::path(file).stem().string();
        if (s.files_.count(id)) {
          s.problems_.push_back(fmt::format("{}: job {} again (also in {}); left out", file, id, s.files_[id]));
          continue;
        }
        s.files_[id] = file;
      } catch (const Error& e) {
        s.problems_.push_back(e.what());
      }
    }
    for (const auto& [id, file] : s.files_) s.ids_.push_back(id);
    return s;
  }
  if (!fs::exists(path, ec)) fail(ErrorKind::kNotFound, "{}: no such campaign file or results folder", path);
  if (options.check_files) {
    const auto damaged = file_check({path}, options.check);
    if (auto bad = damaged.find(path); bad != damaged.end())
      fail(ErrorKind::kIo, "{}: damaged or unreadable campaign file: {}", path, bad->second);
  }
  s.file_ = std::make_shared<h5::File>(h5::File::open_read(path));
  const std::string format = s.file_->has_attr("format") ? s.file_->attr<std::string>("format") : "";
  if (format == kJobFormat)
    fail(ErrorKind::kInvalidArgument, "{}: a single job file; run `fk collect --results DIR` or pass its folder", path);
  if (format != kCampaignFormat)
    fail(ErrorKind::kInvalidArgument, "{}: not a FastKernels campaign file (format '{}')", path, format);
  if (s.file_->exists("jobs")) s.ids_ = s.file_->open_group("jobs").children();
  return s;
}

std::string CampaignSource::describe() const {
  return fmt::format("{} {}", folder_ ? "results folder" : "campaign file", path_);
}

std::string CampaignSource::campaign_attr(const std::string& name) const {
  if (!file_ || !file_->has_attr(name)) return "";
  return file_->attr<std::string>(name);
}

bool CampaignSource::has_job(const std::string& id) const {
  return std::binary_search(ids_.begin(), ids_.end(), id);
}

JobView CampaignSource::job(const std::string& id) const {
  if (!has_job(id)) fail(ErrorKind::kNotFound, "{}: no job {}", describe(), id);
  if (folder_) {
    h5::File f = h5::File::open_read(files_.at(id));
    h5::Group root = f.open_group("/");
    return JobView{std::move(f), std::move(root)};
  }
  return JobView{std::nullopt, file_->open_group("jobs/" + id)};
}

}  // namespace fk::results
