// The commands the README and docs/ show are the first thing a new user
// types, so they must work as written. Every `kfpbench ...` line in a code
// block is checked: its command and every flag it names exist (`--help`
// lists them), and the ones that need nothing but this repository (no real
// cluster, no file the reader writes first, no placeholder) are run, from a
// scratch folder that holds the repository's examples/, and must exit 0.
// Those lines, the inline synopses (`report DIR [--csv DIR]` in the README's
// command table, `kfpbench kube loadgen ...` in prose) and the `kfpbench`
// lines of example files' header comments are also read against the
// commands' own definitions (the ones cli-reference writes docs/CLI.md from):
// every flag that takes a value is given one, and every required argument
// and flag is there, unless the line elides with a lone `…`.
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/commands.h"
#include "harness/e2e_support.h"

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;
using namespace kfpbench::testing;

struct DocCommand {
  std::string where;  // file:line
  std::string args;   // after "kfpbench "
  // Inline code in prose: `run --repeat N` names a flag (and its value), not
  // a whole command line, so only what it says is checked, not what it omits.
  bool fragment = false;
  // A trailing `# exit N` says the line exits N (compare's A/B gate exits 1).
  int expected_exit = 0;
};

std::vector<std::string> Words(const std::string& args) {
  std::istringstream in(args);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// `kfpbench ...` lines inside fenced code blocks, with `\` continuations
// joined and trailing `# comments` dropped.
std::vector<DocCommand> CommandsIn(const fs::path& doc) {
  std::vector<DocCommand> out;
  std::ifstream in(doc);
  std::string line, pending, pending_where;
  bool in_block = false;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      continue;
    }
    if (!in_block) continue;
    if (!pending.empty()) {
      pending += " " + line;
    } else {
      static const std::regex start(R"(^\s*(build/)?kfpbench (.*)$)");
      std::smatch m;
      if (!std::regex_match(line, m, start)) continue;
      // "kfpbench run: ..." style lines (a word then a colon) are output, not commands.
      if (std::string first = Words(m[2]).empty() ? "" : Words(m[2])[0];
          !first.empty() && first.back() == ':') {
        continue;
      }
      pending = m[2];
      pending_where = fmt::format("{}:{}", doc.filename().string(), number);
    }
    if (!pending.empty() && pending.back() == '\\') {
      pending.pop_back();
      continue;
    }
    int expected_exit = 0;
    if (auto hash = pending.find(" #"); hash != std::string::npos) {
      static const std::regex exit_comment(R"(^\s*#\s*exit (\d+))");
      std::smatch m;
      std::string comment = pending.substr(hash + 1);
      if (std::regex_search(comment, m, exit_comment)) expected_exit = std::stoi(m[1]);
      pending.resize(hash);
    }
    out.push_back({pending_where, pending, false, expected_exit});
    pending.clear();
  }
  return out;
}

std::vector<DocCommand> AllDocCommands() {
  fs::path root(KFPBENCH_SOURCE_DIR);
  std::vector<fs::path> docs = {root / "README.md"};
  for (const auto& e : fs::directory_iterator(root / "docs")) {
    if (e.path().extension() == ".md") docs.push_back(e.path());
  }
  std::sort(docs.begin(), docs.end());
  std::vector<DocCommand> all;
  for (const auto& d : docs) {
    auto found = CommandsIn(d);
    all.insert(all.end(), found.begin(), found.end());
  }
  return all;
}

// Why a documented command cannot run here as written; empty when it can.
std::string WhyNotRunnable(const DocCommand& c) {
  if (c.where.rfind("CLI.md", 0) == 0) return "a synopsis";
  static const std::regex placeholder(R"((^|[\s=])[A-Z][A-Z_]+([.\s]|$)|\[|\.\.\.|\|)");
  if (std::regex_search(c.args, placeholder)) return "has placeholders";
  for (const char* remote : {"example.com", "--driver kubernetes", "--kube-context"}) {
    if (c.args.find(remote) != std::string::npos) return "needs a real cluster";
  }
  if (!c.args.empty() && c.args.back() == '&') return "runs in the background";
  // A positional input named without a folder is one the docs asked the
  // reader to write (gets.json); a flag's value (--out sim.json) is an output.
  auto words = Words(c.args);
  for (size_t i = 1; i < words.size(); ++i) {
    static const std::regex file(R"(.*\.(json|yaml|csv)$)");
    const std::string& w = words[i];
    bool flag_value =
        words[i - 1].rfind("--", 0) == 0 && words[i - 1].find('=') == std::string::npos;
    if (!flag_value && std::regex_match(w, file) && w.find('/') == std::string::npos) {
      return w + " is a file the reader writes first";
    }
  }
  return "";
}

// The command path ("job render") of a documented command line.
std::string CommandPath(const std::string& args) {
  static const std::set<std::string> nested = {"job render", "kube loadgen"};
  auto words = Words(args);
  if (words.empty()) return "";
  if (words.size() > 1 && nested.count(words[0] + " " + words[1])) {
    return words[0] + " " + words[1];
  }
  return words[0];
}

// `kfpbench ...` (or `build/kfpbench ...`) and command synopses in inline
// code outside code blocks: a span whose first word is a command and which
// says more than the command's name.
std::vector<DocCommand> InlineCommandsIn(const fs::path& doc, const std::set<std::string>& names) {
  std::vector<DocCommand> out;
  std::ifstream in(doc);
  std::string line;
  bool in_block = false;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block;
      continue;
    }
    if (in_block) continue;
    static const std::regex span("`([^`]+)`");
    for (std::sregex_iterator it(line.begin(), line.end(), span), end; it != end; ++it) {
      std::string text = (*it)[1];
      static const std::regex prefix(R"(^(build/)?kfpbench\s+)");
      bool named = std::regex_search(text, prefix);
      text = std::regex_replace(text, prefix, "");
      auto words = Words(text);
      if (words.size() < 2 || !names.count(words[0])) continue;
      if (!named && words[1].rfind("--", 0) != 0 && !std::isupper(words[1][0]) && words[1] != "…" &&
          words[1].front() != '[') {
        continue;  // "run it" in prose, not a synopsis
      }
      out.push_back({fmt::format("{}:{}", doc.filename().string(), number), text, true});
    }
  }
  return out;
}

// `# kfpbench ...` lines in the header comments of the example files.
std::vector<DocCommand> ExampleHeaderCommands() {
  std::vector<DocCommand> out;
  fs::path examples = fs::path(KFPBENCH_SOURCE_DIR) / "examples";
  for (const auto& e : fs::recursive_directory_iterator(examples)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path());
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      static const std::regex command(R"(^#\s+(build/)?kfpbench\s+(.*)$)");
      std::smatch m;
      if (std::regex_match(line, m, command)) {
        out.push_back(
            {fmt::format("{}:{}", fs::relative(e.path(), examples).string(), number), m[2]});
      }
    }
  }
  return out;
}

CLI::App* SubcommandNamed(CLI::App& app, const std::string& name) {
  for (CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

// What a documented command line lacks by the command's own definition:
// a value for a flag that takes one, a required argument or flag. Empty when
// nothing.
std::vector<std::string> ArityProblems(const std::string& args, bool fragment = false) {
  CLI::App app;
  std::string log_level;
  AddCommands(app, log_level);
  auto words = Words(args);
  std::vector<std::string> problems;
  if (words.empty()) return problems;
  CLI::App* cmd = SubcommandNamed(app, words[0]);
  if (cmd == nullptr) return {"no command " + words[0]};
  size_t i = 1;
  if (i < words.size()) {
    if (CLI::App* nested = SubcommandNamed(*cmd, words[i]); nested != nullptr) {
      cmd = nested;
      ++i;
    }
  }
  std::string path = cmd->get_parent() == &app
                         ? cmd->get_name()
                         : cmd->get_parent()->get_name() + " " + cmd->get_name();
  // `step` hands its flags to the workload it runs: they are not its own.
  if (cmd->get_allow_extras()) return problems;
  bool elided = false;
  size_t positionals = 0;
  std::set<const CLI::Option*> given;
  auto strip = [](std::string w, bool& closes) {
    closes = false;
    while (!w.empty() && (w.front() == '[' || w.front() == '(')) w.erase(0, 1);
    while (!w.empty() && (w.back() == ']' || w.back() == ')' || w.back() == ',')) {
      closes = true;
      w.pop_back();
    }
    return w;
  };
  for (; i < words.size(); ++i) {
    bool closes = false;
    std::string w = strip(words[i], closes);
    if (w == "…") elided = true;
    if (w.empty() || w == "…" || w == "..." || w == "|" || w == "\\|") continue;
    if (w.rfind("--", 0) != 0) {
      ++positionals;
      continue;
    }
    std::string name = w, value;
    bool inline_value = false;
    if (auto eq = w.find('='); eq != std::string::npos) {
      name = w.substr(0, eq);
      value = w.substr(eq + 1);
      inline_value = true;
    }
    const CLI::Option* option = cmd->get_option_no_throw(name);
    if (option == nullptr) option = app.get_option_no_throw(name);  // --log-level
    if (option == nullptr) {
      if (name != "--help") problems.push_back(name + " is not a flag of kfpbench " + path);
      continue;
    }
    given.insert(option);
    if (option->get_items_expected_min() == 0 || inline_value) continue;
    // `run --kube-context` in prose names the flag alone.
    if (fragment && words.size() == 2) continue;
    bool has_value = !closes && i + 1 < words.size();
    if (has_value) {
      bool value_closes = false;
      std::string next = strip(words[i + 1], value_closes);
      has_value = !next.empty() && next.rfind("--", 0) != 0 && next != "|" && next != "\\|";
    }
    if (!has_value) {
      problems.push_back(fmt::format("{} needs a value ({} {})", name,
                                     option->get_items_expected_min(), option->get_type_name()));
      continue;
    }
    ++i;  // its value
  }
  // A fragment that names no argument is about its flags only; one that
  // does (`kube loadgen SCENARIO --shards N`) is the command's synopsis.
  if (elided || (fragment && positionals == 0)) return problems;
  size_t required_positionals = 0;
  for (const auto* o : cmd->get_options()) {
    if (!o->get_required()) continue;
    if (o->get_positional()) {
      ++required_positionals;
    } else if (!given.count(o)) {
      problems.push_back(fmt::format("{} is required by kfpbench {}", o->get_name(), path));
    }
  }
  if (positionals < required_positionals) {
    problems.push_back(fmt::format("kfpbench {} needs {} argument(s), the line names {}", path,
                                   required_positionals, positionals));
  }
  return problems;
}

std::set<std::string> CommandNames() {
  CLI::App app;
  std::string log_level;
  AddCommands(app, log_level);
  std::set<std::string> out;
  for (const auto* c : app.get_subcommands({})) out.insert(c->get_name());
  return out;
}

TEST(DocsExamples, EveryDocumentedCommandGivesEachFlagItsValueAndEveryRequiredOne) {
  auto names = CommandNames();
  std::vector<DocCommand> all;
  for (const auto& c : AllDocCommands()) {
    if (c.where.rfind("CLI.md", 0) != 0) all.push_back(c);  // CLI.md's synopses are generated
  }
  fs::path root(KFPBENCH_SOURCE_DIR);
  std::vector<fs::path> docs = {root / "README.md"};
  for (const auto& e : fs::directory_iterator(root / "docs")) {
    if (e.path().extension() == ".md" && e.path().filename() != "CLI.md") docs.push_back(e.path());
  }
  size_t inline_spans = 0;
  for (const auto& d : docs) {
    auto found = InlineCommandsIn(d, names);
    inline_spans += found.size();
    all.insert(all.end(), found.begin(), found.end());
  }
  auto headers = ExampleHeaderCommands();
  all.insert(all.end(), headers.begin(), headers.end());
  // The README's command table alone holds a dozen synopses.
  EXPECT_GE(inline_spans, 12u);
  EXPECT_GE(headers.size(), 1u);
  for (const auto& c : all) {
    for (const auto& problem : ArityProblems(c.args, c.fragment)) {
      ADD_FAILURE() << c.where << ": kfpbench " << c.args << "\n  " << problem;
    }
  }
}

TEST(DocsExamples, TheArityCheckFindsWhatTheIssueFound) {
  // Issue 29: each of these failed as written.
  EXPECT_EQ(
      ArityProblems("report DIR [--html] [--csv] [--junit] [--markdown]"),
      std::vector<std::string>({"--csv needs a value (1 TEXT)", "--junit needs a value (1 TEXT)",
                                "--markdown needs a value (1 TEXT)"}));
  EXPECT_EQ(ArityProblems("kube loadgen SCENARIO --shards N"),
            std::vector<std::string>({"--host is required by kfpbench kube loadgen",
                                      "--image is required by kfpbench kube loadgen"}));
  EXPECT_EQ(ArityProblems("compare BASE"),
            std::vector<std::string>({"kfpbench compare needs 2 argument(s), the line names 1"}));
  EXPECT_TRUE(ArityProblems("report DIR [--html] [--csv DIR]").empty());
  EXPECT_TRUE(ArityProblems("run … --repeat N").empty());
  EXPECT_TRUE(
      ArityProblems("kube loadgen s.json --shards 4 --host=http://kfp:8888 --image=r/k:1").empty());
  // Prose naming a flag is no command line; a synopsis in prose is one.
  EXPECT_TRUE(ArityProblems("run --kube-context", true).empty());
  EXPECT_TRUE(ArityProblems("run --repeat N", true).empty());
  EXPECT_FALSE(ArityProblems("run --repeat", false).empty());
  EXPECT_FALSE(ArityProblems("kube loadgen SCENARIO --shards N", true).empty());
}

TEST(DocsExamples, EveryDocumentedFlagExists) {
  auto commands = AllDocCommands();
  ASSERT_GE(commands.size(), 20u) << "the docs show kfpbench commands; did the parser break?";
  for (const auto& c : commands) {
    std::string path = CommandPath(c.args);
    if (path == "COMMAND") continue;  // CLI.md's top synopsis
    auto help = Kfpbench(path + " --help");
    ASSERT_EQ(help.exit_code, 0) << c.where << ": kfpbench " << path << " --help\n" << help.output;
    static const std::regex flag(R"(--[a-z][a-z0-9-]*)");
    for (std::sregex_iterator it(c.args.begin(), c.args.end(), flag), end; it != end; ++it) {
      std::string name = it->str();
      if (name == "--help") continue;
      EXPECT_THAT(help.output, HasSubstr(name))
          << c.where << ": " << name << " is not a flag of kfpbench " << path;
    }
  }
}

TEST(DocsExamples, EveryRunnableDocumentedCommandRuns) {
  auto scratch = fs::temp_directory_path() / ("kfpbench-docs-" + NewUuid());
  fs::create_directories(scratch);
  fs::create_directory_symlink(fs::path(KFPBENCH_SOURCE_DIR) / "examples", scratch / "examples");
  int ran = 0;
  for (const auto& c : AllDocCommands()) {
    if (std::string why = WhyNotRunnable(c); !why.empty()) {
      std::cout << "[ skip     ] " << c.where << ": " << why << "\n";
      continue;
    }
    ++ran;
    std::string command =
        fmt::format("cd {} && {} {} 2>&1", scratch.string(), KfpbenchBinary(), c.args);
    std::string output;
    FILE* pipe = popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
    int status = pclose(pipe);
    int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::cout << "[ ran      ] " << c.where << ": kfpbench " << c.args << " -> " << exit_code
              << "\n";
    EXPECT_EQ(exit_code, c.expected_exit) << c.where << ": kfpbench " << c.args << "\n" << output;
  }
  fs::remove_all(scratch);
  // The README's quick start, the capacity guide's simulate, profile and
  // orchestrate at least: a rule that skipped them all would test nothing.
  EXPECT_GE(ran, 4);
}

}  // namespace
}  // namespace kfpbench::cli
