// The commands the README and docs/ show are the first thing a new user
// types, so they must work as written. Every `kfpbench ...` line in a code
// block is checked: its command and every flag it names exist (`--help`
// lists them), and the ones that need nothing but this repository (no real
// cluster, no file the reader writes first, no placeholder) are run, from a
// scratch folder that holds the repository's examples/, and must exit 0.
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/e2e_support.h"

namespace kfpbench::cli {
namespace {

namespace fs = std::filesystem;
using namespace kfpbench::testing;

struct DocCommand {
  std::string where;  // file:line
  std::string args;   // after "kfpbench "
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
    if (auto hash = pending.find(" #"); hash != std::string::npos) pending.resize(hash);
    out.push_back({pending_where, pending});
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
      EXPECT_NE(help.output.find(name), std::string::npos)
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
    EXPECT_EQ(exit_code, 0) << c.where << ": kfpbench " << c.args << "\n" << output;
  }
  fs::remove_all(scratch);
  // The README's quick start, the capacity guide's simulate, profile and
  // orchestrate at least: a rule that skipped them all would test nothing.
  EXPECT_GE(ran, 4);
}

}  // namespace
}  // namespace kfpbench::cli
