// Batch scripts from templates: the shipped template renders into a valid bash script
// carrying the request, and template mistakes are refused with the line they are on.
#include "core/error.h"
#include "core/fs_util.h"
#include "core/subprocess.h"
#include "orchestrator/slurm/attempt_files.h"
#include "orchestrator/slurm/slurm_script.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace fk;
using namespace fk::orchestrator;

namespace {

const std::string kTemplate = std::string(FK_SOURCE_DIR) + "/slurm/templates/attempt.sbatch";

LaunchRequest request() {
  LaunchRequest r;
  r.attempt_id = "llama-3.1-8b.prefill-512.tp2.baseline.a1";
  r.job_ids = {"llama-3.1-8b.prefill-512.tp2.baseline"};
  r.jobs_file = "/shared/results/jobs.json";
  r.results_dir = "/shared/results";
  r.ranks = 2;
  r.time_limit_s = 90;
  r.log_file = "/shared/results/logs/llama.a1.log";
  r.runner_args = {"--quarantine", "it crashed: SIGSEGV"};
  return r;
}

}  // namespace

TEST(SlurmScript, ShellQuoting) {
  EXPECT_EQ(shell_quote("plain-word_1.2/x:y=z"), "plain-word_1.2/x:y=z");
  EXPECT_EQ(shell_quote("two words"), "'two words'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("$HOME;rm"), "'$HOME;rm'");
}

TEST(SlurmScript, TimeLimitsRoundUpToWholeMinutes) {
  EXPECT_EQ(slurm_time_limit(1), "0:01:00");
  EXPECT_EQ(slurm_time_limit(60), "0:01:00");
  EXPECT_EQ(slurm_time_limit(61), "0:02:00");
  EXPECT_EQ(slurm_time_limit(1800), "0:30:00");
  EXPECT_EQ(slurm_time_limit(5400), "1:30:00");
  EXPECT_EQ(slurm_time_limit(0), "UNLIMITED") << "no limit";
  EXPECT_EQ(slurm_job_name("a b/c.a1"), "fk-a_b_c.a1");
}

TEST(SlurmScript, ShippedTemplateRendersAValidScript) {
  const std::string text = fs_read_file(kTemplate);
  SlurmScriptSettings s;
  s.runner = "/opt/fk/fk-runner";
  s.slurm.partition = "gpu";
  s.srun_args = {"--cpu-bind=cores"};
  const std::string script =
      slurm_template_render(text, kTemplate, slurm_script_values(request(), s, "/shared/results/.fk-slurm/a1"));
  EXPECT_EQ(script.find("{{"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --ntasks=2\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --time=0:02:00\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --output=/shared/results/logs/llama.a1.log\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --partition=gpu\n#SBATCH --nodes=1\n#SBATCH --requeue\n"), std::string::npos)
      << script;
  EXPECT_NE(
      script.find("srun --mpi=pmix --ntasks=2 --kill-on-bad-exit=1 --cpu-bind=cores /bin/sh -c ': > \"$0/rank."
                  "${SLURM_PROCID:-0}\" && exec \"$@\"' /shared/results/.fk-slurm/a1/ranks /opt/fk/fk-runner --jobs "
                  "/shared/results/jobs.json --results /shared/results --only "
                  "llama-3.1-8b.prefill-512.tp2.baseline --attempt llama-3.1-8b.prefill-512.tp2.baseline.a1 "
                  "--quarantine 'it crashed: SIGSEGV'\n"),
      std::string::npos)
      << script;
  // Every #SBATCH line comes before the first command (sbatch stops reading them there).
  const size_t first_command = script.find("\nset -u");
  EXPECT_EQ(script.find("#SBATCH", first_command), std::string::npos);
  // bash accepts it.
  const std::string path = std::filesystem::temp_directory_path() / "fk_slurm_script_test.sbatch";
  std::ofstream(path) << script;
  const SubprocessResult r = subprocess_run({"bash", "-n", path});
  EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
}

// The shipped script run for real, with stand-ins for srun: one that starts every rank
// (as srun does), one that returns 0 without starting any (as Slurm 22.05's srun does
// when a PMIx step fails to launch) and one that starts one rank of two.
TEST(SlurmScript, StepThatStartsNoRankIsNotASuccess) {
  const std::filesystem::path dir = std::filesystem::path(FK_BINARY_DIR) / "tests" / "slurm" / "tmp" / "script_run";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "attempt");
  auto script_file = [&](const std::string& name, const std::string& body) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << "#!/bin/bash\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  };
  const std::string runner = script_file("runner.sh", "exit 0");
  struct Case {
    const char* name;
    const char* srun_body;
    int want_exit;
  };
  const Case cases[] = {
      // Drops its own options (--mpi=... --ntasks=N --kill-on-bad-exit=1), then runs
      // the command once per rank with SLURM_PROCID set.
      {"every rank", "while [[ $1 == --* ]]; do shift; done\nfor r in 0 1; do SLURM_PROCID=$r \"$@\" || exit $?; done",
       0},
      {"no rank", "echo 'srun: error: task 0 launch failed: Unspecified error' >&2; exit 0", kSlurmStepNotLaunchedExit},
      {"one rank of two", "while [[ $1 == --* ]]; do shift; done\nSLURM_PROCID=1 \"$@\"", kSlurmStepNotLaunchedExit},
      {"runner fails", "while [[ $1 == --* ]]; do shift; done\nfor r in 0 1; do SLURM_PROCID=$r \"$@\" 3; done; exit 3",
       3},
  };
  for (const Case& c : cases) {
    SlurmScriptSettings s;
    s.runner = runner;
    s.srun = script_file("srun.sh", c.srun_body);
    const std::string attempt_dir = (dir / "attempt").string();
    const std::string script = script_file(
        "job.sbatch",
        slurm_template_render(fs_read_file(kTemplate), kTemplate, slurm_script_values(request(), s, attempt_dir)));
    SubprocessOptions o;
    o.timeout_s = 30;
    o.extra_env = {"SLURM_JOB_ID=77"};
    const SubprocessResult r = subprocess_run({"bash", script}, o);
    EXPECT_EQ(r.exit_code, c.want_exit) << c.name << ": " << r.describe() << "\n" << r.output;
    const auto e = exit_record_read(AttemptFiles{attempt_dir});
    ASSERT_TRUE(e.has_value()) << c.name;
    EXPECT_EQ(e->exit_code, c.want_exit) << c.name;
    EXPECT_EQ(e->job_id, "77");
    if (c.want_exit == kSlurmStepNotLaunchedExit) {
      EXPECT_NE(r.output.find("rank(s) started: the job step did not launch"), std::string::npos) << r.output;
    }
  }
}

TEST(SlurmScript, TemplateMistakesNameTheLine) {
  auto error_of = [](const std::string& text) {
    try {
      slurm_template_check(text, "t.sbatch");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of("#!/bin/bash\n{{srun_sh}} {{runner_command_sh}}\n"), "");
  EXPECT_NE(error_of("#!/bin/bash\n\n{{nope}}\n").find("t.sbatch:3: unknown placeholder {{nope}}"), std::string::npos);
  EXPECT_NE(error_of("#!/bin/bash\n{{srun_sh\n}}").find("t.sbatch:2: '{{' without a closing '}}'"), std::string::npos);
  EXPECT_NE(error_of("echo hi\n").find("must start with #!"), std::string::npos);
}

TEST(SlurmScript, ValuesThatWouldBreakAnSbatchLineAreRefused) {
  SlurmScriptSettings s;
  s.runner = "/fk-runner";
  LaunchRequest r = request();
  r.log_file = "/path with spaces/log";
  const std::string text = "#!/bin/bash\n#SBATCH --output={{log_file}}\n";
  try {
    slurm_template_render(text, "t.sbatch", slurm_script_values(r, s, "/a"));
    FAIL() << "accepted a path with spaces in an #SBATCH line";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.sbatch:2: {{log_file}} is used in an #SBATCH line"), std::string::npos)
        << e.what();
  }
  // The same value is fine as a shell word.
  const std::string ok = slurm_template_render("#!/bin/bash\ncd {{attempt_dir_sh}}\n", "t.sbatch",
                                               slurm_script_values(r, s, "/dir with space"));
  EXPECT_NE(ok.find("cd '/dir with space'"), std::string::npos) << ok;
}

TEST(SlurmScript, EveryPlaceholderHasAValue) {
  SlurmScriptSettings s;
  s.runner = "/fk-runner";
  const auto v = slurm_script_values(request(), s, "/a");
  for (const auto& name : slurm_template_placeholders()) EXPECT_TRUE(v.values.count(name)) << name;
  EXPECT_EQ(v.values.size(), slurm_template_placeholders().size());
}
