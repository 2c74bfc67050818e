// docs/CLI.md from the commands' own definitions, so that the reference and
// `--help` cannot disagree: `kfpbench cli-reference > docs/CLI.md`, and a
// test fails when the file is out of date.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace kfpbench::cli {

// Every command (and subcommand) with its arguments and options, in Markdown.
std::string CliReference(const CLI::App& app);

}  // namespace kfpbench::cli
