// Damaged results files (issue 9 item 4, "bounded, checked reads"): real job files
// (job_result_write, as fk-runner writes them) and the campaign file fk collect makes
// of them are damaged many ways — bit flips at random offsets (fixed seed), zeroed
// 4 KiB blocks, truncation, two job files' names swapped — and every fk command must
// end within a time limit with a clear error naming the file, never crash or hang:
// fk collect leaves each damaged job file out (exit 1) and merges the others exactly;
// fk report and fk compare on a damaged campaign file exit 2 naming it.
// Also: file_check's restarts blame only the file a crashing or hanging checker was
// reading (a fake checker in sh); a flipped byte inside a chunk (behind an intact
// whole-file checksum) fails the read by the chunk's Fletcher32 checksum; a job file
// whose content hash is not the one fk run's journal recorded is left out.
#include "core/subprocess.h"
#include "reports_test_util.h"
#include "results/campaign/file_check.h"
#include "results/h5/h5.h"
#include "results/h5/file_sum.h"
#include "results/h5/verify.h"

#include <fmt/format.h>
#include <hdf5.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <random>

#ifndef FK_BIN
#error "FK_BIN (the fk executable) must be defined"
#endif

namespace fk::results {
namespace {

using testing::job_id;
namespace fs = std::filesystem;

constexpr double kCommandLimitS = 60;

SubprocessResult fk(const std::vector<std::string>& args) {
  std::vector<std::string> argv{FK_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  SubprocessOptions o;
  o.timeout_s = kCommandLimitS;
  o.merge_stderr = false;
  o.extra_env = {"FK_H5_CHECK_TIMEOUT_S=10"};
  return subprocess_run(argv, o);
}

std::string read_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_bytes(const std::string& p, const std::string& b) { std::ofstream(p, std::ios::binary) << b; }

struct Damage {
  std::string name;
  std::function<std::string(std::string)> apply;  // bytes -> damaged bytes
};

// The damage cases, from a fixed seed: flips of 1 to 3 bits, zeroed 4 KiB blocks and
// truncations at random places (some in the first 512 bytes, the checksum block).
std::vector<Damage> damages(size_t size, int count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<Damage> out;
  for (int i = 0; i < count; ++i) {
    const int kind = i % 4;
    const size_t at = i % 8 == 1 ? rng() % 512 : rng() % size;
    if (kind == 0 || kind == 3) {
      const int flips = 1 + static_cast<int>(rng() % 3);
      std::vector<std::pair<size_t, int>> bits{{at, static_cast<int>(rng() % 8)}};
      for (int f = 1; f < flips; ++f) bits.push_back({rng() % size, static_cast<int>(rng() % 8)});
      out.push_back({fmt::format("{} bit flip(s) from offset {}", flips, at), [bits](std::string b) {
                       for (auto [o, bit] : bits) b[o] = static_cast<char>(b[o] ^ (1 << bit));
                       return b;
                     }});
    } else if (kind == 1) {
      // Zeroing a block that is already zero would change nothing: the first block from
      // `at` that holds a non-zero byte is zeroed (wrapping round to the start).
      const size_t block = (at / 4096) * 4096;
      out.push_back({fmt::format("4 KiB zeroed at the first block from {} holding a non-zero byte", block),
                     [block](std::string b) {
                       auto zero_already = [&](size_t s) {
                         for (size_t o = s; o < std::min(b.size(), s + 4096); ++o)
                           if (b[o] != 0) return false;
                         return true;
                       };
                       size_t s = block;
                       for (size_t tried = 0; tried * 4096 < b.size() + 4096 && zero_already(s); ++tried)
                         s = s + 4096 < b.size() ? s + 4096 : 0;
                       for (size_t o = s; o < std::min(b.size(), s + 4096); ++o) b[o] = 0;
                       return b;
                     }});
    } else {
      const size_t keep = at;
      out.push_back({fmt::format("truncated to {} bytes", keep), [keep](std::string b) { return b.substr(0, keep); }});
    }
  }
  return out;
}

class DamagedFilesTest : public testing::ReportsTest {
 protected:
  // Four jobs (two with candidates) in `folder`; returns their ids.
  std::vector<std::string> write_four(const std::string& folder) {
    std::vector<std::string> ids;
    for (int n = 1; n <= 4; ++n) {
      SyntheticJobSpec s;
      s.id = job_id(n);
      s.tp = n % 2 + 1;
      if (n % 2 == 0) {
        s.candidate_set = "mine";
        s.candidate_verdicts = {"PASSED", "INCORRECT_NUMERICAL"};
      }
      write_job(folder, s);
      ids.push_back(s.id);
    }
    return ids;
  }

  static std::vector<std::string> merged_ids(const std::string& campaign) {
    return h5::File::open_read(campaign).open_group("jobs").children();
  }
};

void expect_bounded(const SubprocessResult& r, const std::string& what) {
  EXPECT_TRUE(r.started) << what << ": " << r.error;
  EXPECT_FALSE(r.timed_out) << what << ": fk hung";
  EXPECT_EQ(r.signal, 0) << what << ": fk crashed (" << r.describe() << ")\n" << r.error_output;
}

TEST_F(DamagedFilesTest, CollectLeavesOutEveryDamagedJobFileAndMergesTheRest) {
  const std::vector<std::string> ids = write_four("good");
  const SubprocessResult clean = fk({"collect", "-q", "--results", path("good")});
  ASSERT_EQ(clean.exit_code, 0) << clean.output << clean.error_output;
  EXPECT_EQ(merged_ids(path("good/campaign.h5")), ids);
  for (const std::string& id : ids) EXPECT_TRUE(h5::verify_file(path("good/" + id + ".h5")).ok) << id;

  const size_t size = fs::file_size(path("good/" + ids[0] + ".h5"));
  const std::vector<Damage> cases = damages(size, 24, 20261201);
  for (size_t k = 0; k < cases.size(); ++k) {
    const std::string dir = path(fmt::format("c{:02}", k));
    fs::create_directories(dir);
    for (const std::string& id : ids) fs::copy_file(path("good/" + id + ".h5"), dir + "/" + id + ".h5");
    const std::string victim = ids[k % ids.size()];
    const std::string file = dir + "/" + victim + ".h5";
    write_bytes(file, cases[k].apply(read_bytes(file)));
    const std::string what = fmt::format("job file {} with {}", victim, cases[k].name);
    const SubprocessResult r = fk({"collect", "-q", "--results", dir});
    expect_bounded(r, what);
    EXPECT_EQ(r.exit_code, 1) << what << "\n" << r.output << r.error_output;
    EXPECT_NE(r.error_output.find("left out " + file), std::string::npos) << what << "\n" << r.error_output;
    std::vector<std::string> rest;
    for (const std::string& id : ids)
      if (id != victim) rest.push_back(id);
    if (fs::exists(dir + "/campaign.h5")) {
      EXPECT_EQ(merged_ids(dir + "/campaign.h5"), rest) << what;
      EXPECT_EQ(h5::File::open_read(dir + "/campaign.h5").attr<int64_t>("files_left_out"), 1) << what;
    } else {
      ADD_FAILURE() << what << ": no campaign file";
    }
  }

  // Two job files' names swapped: both left out (each holds the other's job).
  const std::string dir = path("swap");
  fs::create_directories(dir);
  for (const std::string& id : ids) fs::copy_file(path("good/" + id + ".h5"), dir + "/" + id + ".h5");
  fs::rename(dir + "/" + ids[0] + ".h5", dir + "/x");
  fs::rename(dir + "/" + ids[1] + ".h5", dir + "/" + ids[0] + ".h5");
  fs::rename(dir + "/x", dir + "/" + ids[1] + ".h5");
  const SubprocessResult r = fk({"collect", "-q", "--results", dir});
  expect_bounded(r, "swapped names");
  EXPECT_EQ(r.exit_code, 1) << r.error_output;
  EXPECT_NE(r.error_output.find("renamed or swapped"), std::string::npos) << r.error_output;
  EXPECT_EQ(merged_ids(dir + "/campaign.h5"), (std::vector<std::string>{ids[2], ids[3]}));
}

TEST_F(DamagedFilesTest, ReportAndCompareNameADamagedCampaignFile) {
  write_four("good");
  ASSERT_EQ(fk({"collect", "-q", "--results", path("good")}).exit_code, 0);
  const std::string campaign = path("good/campaign.h5");
  const SubprocessResult ok = fk({"report", campaign});
  EXPECT_EQ(ok.exit_code, 0) << ok.error_output;
  EXPECT_EQ(fk({"compare", campaign, campaign}).exit_code, 0);

  const std::string bytes = read_bytes(campaign);
  const std::vector<Damage> cases = damages(bytes.size(), 16, 7);
  for (size_t k = 0; k < cases.size(); ++k) {
    const std::string file = path(fmt::format("damaged{:02}.h5", k));
    write_bytes(file, cases[k].apply(bytes));
    const std::string what = "campaign file with " + cases[k].name;
    const SubprocessResult report = fk({"report", file});
    expect_bounded(report, "fk report: " + what);
    EXPECT_EQ(report.exit_code, 2) << what << "\n" << report.output << report.error_output;
    EXPECT_NE(report.error_output.find(file), std::string::npos) << what << "\n" << report.error_output;
    const SubprocessResult compare = fk({"compare", campaign, file});
    expect_bounded(compare, "fk compare: " + what);
    EXPECT_EQ(compare.exit_code, 2) << what << "\n" << compare.output << compare.error_output;
    EXPECT_NE(compare.error_output.find(file), std::string::npos) << what << "\n" << compare.error_output;
  }
}

TEST_F(DamagedFilesTest, ReportOnAFolderLeavesOutDamagedJobFiles) {
  const std::vector<std::string> ids = write_four("r");
  const std::string file = path("r/" + ids[1] + ".h5");
  std::string b = read_bytes(file);
  b[b.size() / 2] = static_cast<char>(b[b.size() / 2] ^ 0x10);
  write_bytes(file, b);
  const SubprocessResult r = fk({"report", path("r")});
  expect_bounded(r, "fk report on a folder");
  EXPECT_EQ(r.exit_code, 1) << r.output << r.error_output;
  EXPECT_NE((r.output + r.error_output).find(file), std::string::npos) << r.output << r.error_output;
}

// file_check restarts its child after a crash or a hang and blames only the file the
// child was reading; a fake checker (sh) crashes on one file and hangs on another.
TEST_F(DamagedFilesTest, CollectCheckerBlamesOnlyTheFileItCrashedOrHungOn) {
  for (const char* name : {"a-ok", "b-crash", "c-ok", "d-hang", "e-bad", "f-ok"}) write_bytes(path(name), "x");
  const std::string script = R"(i=0
for f in "$@"; do
  echo "begin $i"
  case "$f" in
    *crash*) kill -SEGV $$ ;;
    *hang*) sleep 30 ;;
    *bad*) echo "bad $i broken inside" ;;
    *) echo "ok $i" ;;
  esac
  i=$((i+1))
done)";
  FileCheckOptions o;
  o.command = {"sh", "-c", script, "sh"};
  o.per_file_timeout_s = 1;
  std::vector<std::string> files;
  for (const char* name : {"a-ok", "b-crash", "c-ok", "d-hang", "e-bad", "f-ok"}) files.push_back(path(name));
  const std::map<std::string, std::string> p = file_check(files, o);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_NE(p.at(path("b-crash")).find("SIGSEGV"), std::string::npos) << p.at(path("b-crash"));
  EXPECT_NE(p.at(path("d-hang")).find("took over 1 s"), std::string::npos) << p.at(path("d-hang"));
  EXPECT_EQ(p.at(path("e-bad")), "broken inside");
}

// Where the first chunk of dataset `path` lies in `file`, as stored (compressed, with
// its Fletcher32 checksum): its bytes, read raw, found in the file's.
size_t first_chunk_offset(const std::string& file, const std::string& path) {
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  const hsize_t origin[1] = {0};
  hsize_t bytes = 0;
  H5Dget_chunk_storage_size(d, origin, &bytes);
  std::string chunk(static_cast<size_t>(bytes), '\0');
  uint32_t filters = 0;
  const herr_t rc = H5Dread_chunk(d, H5P_DEFAULT, origin, &filters, chunk.data());
  H5Dclose(d);
  H5Fclose(f);
  EXPECT_GE(rc, 0);
  EXPECT_GT(chunk.size(), 64u);
  const std::string all = read_bytes(file);
  const size_t at = all.find(chunk);
  EXPECT_NE(at, std::string::npos);
  EXPECT_EQ(all.find(chunk, at + 1), std::string::npos) << "the chunk's bytes are not unique";
  return at;
}

// Writes the whole-file checksum of `file` again, as if the damage had happened before
// it was summed (in memory, in the writer): only HDF5's own checks are left.
void restamp(const std::string& file) {
  std::string b = read_bytes(file);
  std::fill(b.begin(), b.begin() + h5::kFileSumBlock, '\0');
  write_bytes(file, b);
  h5::file_sum_write(file);
}

TEST_F(DamagedFilesTest, AFlippedByteInAChunkFailsItsFletcher32Checksum) {
  const std::vector<std::string> ids = write_four("f");
  const std::string file = path("f/" + ids[0] + ".h5");
  const std::string table = "kernel_stage/instances";
  ASSERT_TRUE(h5::File::open_read(file).open_dataset(table).storage().checksummed);
  const size_t at = first_chunk_offset(file, "/" + table);
  std::string b = read_bytes(file);
  b[at + 20] = static_cast<char>(b[at + 20] ^ 0x04);
  write_bytes(file, b);
  restamp(file);

  // Reading the dataset fails, naming the file, the dataset and the checksum.
  const std::string what = testing::expect_error(ErrorKind::kIo, [&] { h5::File::open_read(file).read_table(table); });
  EXPECT_NE(what.find(file), std::string::npos) << what;
  EXPECT_NE(what.find("/" + table), std::string::npos) << what;
  EXPECT_NE(what.find("Fletcher32"), std::string::npos) << what;
  // So does copying it (fk collect's merge), leaving nothing behind.
  {
    h5::File in = h5::File::open_read(file);
    h5::Writer w(path("out.h5"));
    const std::string copy = testing::expect_error(ErrorKind::kIo, [&] { h5::copy_object(in, ".", w, "jobs/x"); });
    EXPECT_NE(copy.find(file + ": /" + table + ": cannot read dataset"), std::string::npos) << copy;
    EXPECT_NE(copy.find("Fletcher32"), std::string::npos) << copy;
    EXPECT_FALSE(w.exists("jobs/x"));
  }
  // The file checker names the file and fk collect leaves it out.
  const h5::VerifyResult v = h5::verify_file(file);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.problem.find("Fletcher32"), std::string::npos) << v.problem;
  const SubprocessResult r = fk({"collect", "-q", "--results", path("f")});
  expect_bounded(r, "fk collect");
  EXPECT_EQ(r.exit_code, 1) << r.output << r.error_output;
  EXPECT_NE(r.error_output.find("left out " + file + ": /" + table), std::string::npos) << r.error_output;
  EXPECT_NE(r.error_output.find("Fletcher32"), std::string::npos) << r.error_output;
  EXPECT_EQ(merged_ids(path("f/campaign.h5")), (std::vector<std::string>{ids[1], ids[2], ids[3]}));
}

// fk run's journal records each accepted job file's content hash; fk collect leaves out
// a file that is no longer that one — here a valid job file of the same job, written
// again (another seed) — and keeps the hash of each merged file on /jobs/<id>.
TEST_F(DamagedFilesTest, CollectLeavesOutAJobFileWhoseHashIsNotTheJournals) {
  const std::vector<std::string> ids = write_four("j");
  {
    std::ofstream journal(path("j/.fk-journal.jsonl"));
    for (const std::string& id : ids)
      journal << nlohmann::json{{"event", "end"}, {"job", id}, {"decision", "done"},
                                {"hash", h5::file_sum_check(path("j/" + id + ".h5")).hash}}
                     .dump()
              << "\n";
  }
  SyntheticJobSpec other;
  other.id = ids[2];
  other.seed = 99;
  write_job("j", other);
  const std::string replaced = path("j/" + ids[2] + ".h5");
  ASSERT_TRUE(h5::verify_file(replaced).ok) << "a valid job file, only not the one fk run accepted";
  const SubprocessResult r = fk({"collect", "-q", "--results", path("j")});
  expect_bounded(r, "fk collect");
  EXPECT_EQ(r.exit_code, 1) << r.output << r.error_output;
  EXPECT_NE(r.error_output.find("left out " + replaced + ": content hash"), std::string::npos) << r.error_output;
  EXPECT_NE(r.error_output.find("replaced or damaged"), std::string::npos) << r.error_output;
  const std::string campaign = path("j/campaign.h5");
  EXPECT_EQ(merged_ids(campaign), (std::vector<std::string>{ids[0], ids[1], ids[3]}));
  h5::File c = h5::File::open_read(campaign);
  for (const std::string& id : {ids[0], ids[1], ids[3]})
    EXPECT_EQ(c.open_group("jobs/" + id).attr<std::string>("source_hash"),
              h5::file_sum_check(path("j/" + id + ".h5")).hash)
        << id;
}

}  // namespace
}  // namespace fk::results
