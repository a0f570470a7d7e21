// `fk`: the FastKernels command line. Subcommands live in cmd_*.cc.
#include "core/error.h"
#include "core/spec/diagnostics.h"
#include "orchestrator/commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

int main(int argc, char** argv) {
  CLI::App app{"FastKernels: judge GPU kernels inside real architectures, layouts and clusters", "fk"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "fk 0.1.0");
  int status = 0;
  fk::orchestrator::register_validate(app, &status);
  fk::orchestrator::register_plan(app, &status);
  fk::orchestrator::register_check(app, &status);
  fk::orchestrator::register_run(app, &status);
  fk::orchestrator::register_status(app, &status);
  fk::orchestrator::register_collect(app, &status);
  fk::orchestrator::register_report(app, &status);
  fk::orchestrator::register_compare(app, &status);
  fk::orchestrator::register_forward(app, &status);
  fk::orchestrator::register_import_hf(app, &status);
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const std::string hint = fk::spec::closest_match(argv[1], names);
      fmt::print(stderr, "fk: unknown command '{}'{}; commands: {} (fk --help)\n", argv[1],
                 hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint), fmt::join(names, ", "));
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const fk::Error& e) {
    fmt::print(stderr, "fk: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "fk: unexpected error: {}\n", e.what());
    return 1;
  }
  return status;
}
