// CampaignSource: the jobs of a campaign, read from a campaign file (fk collect) or
// straight from a results folder of job files — report and compare accept either.
//
// Jobs are named by id: in a campaign file the groups under /jobs, in a folder the
// job_id attribute of each readable "*.h5" job file (temporary files and campaign
// files skipped). A folder's unreadable files are not fatal: they are listed in
// problems() and left out. A JobView keeps what it needs open (its own file for a
// folder) and is valid on its own; open one job at a time to keep memory flat.
#pragma once

#include "results/campaign/file_check.h"
#include "results/h5/file.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fk::results {

inline constexpr const char* kCampaignFormat = "fastkernels-campaign";
inline constexpr const char* kJobFormat = "fastkernels-job";
inline constexpr int kCampaignSchemaVersion = 1;

struct JobView {
  std::optional<h5::File> file;  // set when the job is its own file
  h5::Group root;                // the job's root group
};

struct SourceOptions {
  // Read every file in full in a child process first (file_check.h): a damaged
  // campaign file fails open() with kIo naming it; a folder's damaged job files are
  // left out (problems()). fk report and fk compare set it.
  bool check_files = false;
  FileCheckOptions check;
};

class CampaignSource {
 public:
  // Opens `path`: a folder, or a file whose format attribute is kCampaignFormat.
  // kNotFound when it does not exist; kInvalidArgument when it is an HDF5 file of
  // another format (a single job file: "run fk collect, or pass its folder"); kIo when
  // a campaign file cannot be read.
  static CampaignSource open(const std::string& path, const SourceOptions& options = {});

  const std::string& path() const { return path_; }
  bool is_folder() const { return folder_; }
  // "campaign file X" or "results folder X".
  std::string describe() const;
  // Root attribute `name` of the campaign file; "" for folders or when absent.
  std::string campaign_attr(const std::string& name) const;

  // Job ids, ascending.
  const std::vector<std::string>& job_ids() const { return ids_; }
  bool has_job(const std::string& id) const;
  // Opens job `id`; kNotFound for an unknown id.
  JobView job(const std::string& id) const;
  // "file: reason" for every file of a folder that was left out.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::string path_;
  bool folder_ = false;
  std::shared_ptr<h5::File> file_;            // campaign file
  std::map<std::string, std::string> files_;  // folder: id -> file
  std::vector<std::string> ids_;
  std::vector<std::string> problems_;
};

}  // namespace fk::results
