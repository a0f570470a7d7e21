// fk_fuzz_job_h5_seeds FOLDER: writes the seed corpus of fk_fuzz_job_h5 (job_h5_fuzz.cc)
// into FOLDER — small job files as fk-runner writes them (job_result_write of
// results/campaign/synthetic_job.h: a baseline-only job, one with candidates, a failed
// one, all holding job f0220bb0f022) and damaged copies of the first (bit flips in the
// first and second half, a zeroed 4 KiB block, a truncation), as fk collect meets
// them. Deterministic; exit 0, or 1 naming what could not be written.
#include "core/error.h"
#include "results/campaign/synthetic_job.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::string read_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& p, const std::string& b) {
  std::ofstream out(p, std::ios::binary);
  out << b;
  if (!out) fk::fail(fk::ErrorKind::kIo, "{}: cannot write", p);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  try {
    std::filesystem::create_directories(dir);
    fk::results::SyntheticJobSpec base;
    base.id = "f0220bb0f022";
    base.instances = 3;
    base.iterations = 4;
    base.model_iterations = 1;
    base.layers = 1;
    base.decode_steps = 1;
    fk::results::SyntheticJobSpec cands = base;
    cands.tp = 2;
    cands.candidate_set = "mine";
    cands.candidate_verdicts = {"PASSED", "INCORRECT_NUMERICAL"};
    fk::results::SyntheticJobSpec failed = base;
    failed.status = "failed";
    failed.failing_instances = {1};
    const std::vector<std::pair<std::string, fk::results::SyntheticJobSpec>> jobs = {
        {"baseline", base}, {"candidates", cands}, {"failed", failed}};
    for (const auto& [name, spec] : jobs) fk::results::job_result_write(dir + "/" + name + ".h5", synthetic_job(spec));
    const std::string good = read_bytes(dir + "/baseline.h5");
    std::string flip_a = good, flip_b = good, zeroed = good;
    flip_a[good.size() / 4] = static_cast<char>(flip_a[good.size() / 4] ^ 0x01);
    flip_b[3 * good.size() / 4] = static_cast<char>(flip_b[3 * good.size() / 4] ^ 0x80);
    for (size_t i = good.size() / 2; i < std::min(good.size(), good.size() / 2 + 4096); ++i) zeroed[i] = 0;
    write_bytes(dir + "/flip-a.h5", flip_a);
    write_bytes(dir + "/flip-b.h5", flip_b);
    write_bytes(dir + "/zeroed.h5", zeroed);
    write_bytes(dir + "/truncated.h5", good.substr(0, good.size() * 2 / 3));
  } catch (const fk::Error& e) {
    std::fprintf(stderr, "fk_fuzz_job_h5_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
