// The subcommands of `fk`. Each register_* adds one subcommand to the app; its
// callback stores the command's exit status in `*status`. Exit statuses: 0 success,
// 1 the command ran and found problems (invalid specs, failed jobs), 2 usage errors.
#pragma once

#include <CLI/CLI.hpp>

namespace fk::orchestrator {

void register_validate(CLI::App& app, int* status);
void register_plan(CLI::App& app, int* status);
void register_check(CLI::App& app, int* status);
void register_run(CLI::App& app, int* status);      // orchestrator/cmd_run.cc
void register_status(CLI::App& app, int* status);   // orchestrator/cmd_status.cc
void register_collect(CLI::App& app, int* status);  // orchestrator/cmd_collect.cc
void register_report(CLI::App& app, int* status);   // orchestrator/cmd_report.cc
void register_compare(CLI::App& app, int* status);  // orchestrator/cmd_compare.cc
void register_forward(CLI::App& app, int* status);  // orchestrator/cmd_forward.cc
void register_import_hf(CLI::App& app, int* status);  // orchestrator/cmd_import_hf.cc

}  // namespace fk::orchestrator
