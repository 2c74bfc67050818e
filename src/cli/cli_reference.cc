#include "cli/cli_reference.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace kfpbench::cli {
namespace {

bool Hidden(const CLI::App* app) { return app->get_group().empty(); }

void Describe(const CLI::App& app, const std::string& path, std::string& out) {
  out += fmt::format("\n## `{}`\n\n{}\n", path, app.get_description());
  std::string usage = path;
  // Every command takes -h,--help: the header says so once.
  auto options = app.get_options(
      [](const CLI::Option* o) { return !o->get_group().empty() && o->get_name() != "--help"; });
  for (const auto* o : options) {
    if (o->get_positional()) {
      std::string name = o->get_name(true);
      usage += o->get_required() ? " " + name : " [" + name + "]";
    }
  }
  bool has_flags = false;
  for (const auto* o : options) has_flags = has_flags || !o->get_positional();
  auto commands = app.get_subcommands([](const CLI::App* a) { return !Hidden(a); });
  if (!commands.empty()) usage += " COMMAND";
  if (has_flags) usage += " [OPTIONS]";
  out += fmt::format("\nUsage: `{}`\n", usage);
  if (!app.get_footer().empty()) out += fmt::format("\n```\n{}\n```\n", app.get_footer());
  if (!commands.empty()) {
    out += "\n| command | what it does |\n|---|---|\n";
    for (const auto* c : commands) {
      out += fmt::format("| `{}` | {} |\n", c->get_name(), MarkdownCell(c->get_description()));
    }
  }
  if (!options.empty()) {
    out += "\n| argument or option | value | default | meaning |\n|---|---|---|---|\n";
    for (const auto* o : options) {
      std::string names = o->get_positional() ? o->get_name(true) : o->get_name(false, true);
      std::string value = o->get_type_name();
      if (o->get_items_expected_max() == 0) value = "";  // a flag
      if (o->get_required()) value += value.empty() ? "required" : " (required)";
      out += fmt::format("| `{}` | {} | {} | {} |\n", names, MarkdownCell(value),
                         o->get_default_str().empty() ? "" : "`" + o->get_default_str() + "`",
                         MarkdownCell(o->get_description()));
    }
  }
  for (const auto* c : commands) Describe(*c, path + " " + c->get_name(), out);
}

}  // namespace

std::string CliReference(const CLI::App& app) {
  std::string out =
      "# Command reference\n\n"
      "Every command and its options, written from the commands' own definitions by\n"
      "`kfpbench cli-reference > docs/CLI.md` (a test fails when this file is out of date), so\n"
      "it says what `kfpbench COMMAND --help` (or `-h`, which every command takes) says.\n"
      "Durations are written `500ms`, `30s`, `2m`, `1h30m`; percentages `5%`; sizes as\n"
      "Kubernetes quantities (`512Mi`, `2Gi`).\n";
  Describe(app, "kfpbench", out);
  return out;
}

}  // namespace kfpbench::cli
