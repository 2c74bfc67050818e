// docs/ARCHITECTURE.md stays true: every arrow of its part graph is an
// #include that exists, every part under src/ is in the graph and the parts
// table, and no part includes one that (transitively) includes it back.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kfpbench::cli {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;
const fs::path kSource = KFPBENCH_SOURCE_DIR;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> Parts() {
  std::set<std::string> parts;
  for (const auto& e : fs::directory_iterator(kSource / "src")) {
    if (e.is_directory()) parts.insert(e.path().filename().string());
  }
  return parts;
}

// part -> the parts its non-test sources include.
std::map<std::string, std::set<std::string>> Includes(const std::set<std::string>& parts) {
  std::map<std::string, std::set<std::string>> out;
  const std::regex include(R"(#include "(\w+)/)");
  for (const auto& part : parts) {
    for (const auto& e : fs::directory_iterator(kSource / "src" / part)) {
      std::string name = e.path().filename().string();
      if (name.find("_test") != std::string::npos || name.find("test_") != std::string::npos ||
          name.find("e2e_support") != std::string::npos) {
        continue;
      }
      std::string text = Read(e.path());
      for (std::sregex_iterator it(text.begin(), text.end(), include), end; it != end; ++it) {
        std::string to = (*it)[1];
        if (to != part && parts.count(to)) out[part].insert(to);
      }
    }
  }
  return out;
}

bool Reaches(const std::map<std::string, std::set<std::string>>& g, const std::string& from,
             const std::string& to, std::set<std::string>& seen) {
  auto it = g.find(from);
  if (it == g.end()) return false;
  for (const auto& next : it->second) {
    if (next == to) return true;
    if (seen.insert(next).second && Reaches(g, next, to, seen)) return true;
  }
  return false;
}

TEST(ArchitectureDoc, TheGraphIsTheIncludes) {
  std::string doc = Read(kSource / "docs" / "ARCHITECTURE.md");
  if (doc.empty()) GTEST_SKIP() << "no docs/ARCHITECTURE.md";
  auto parts = Parts();
  auto includes = Includes(parts);
  size_t start = doc.find("```mermaid");
  ASSERT_NE(start, std::string::npos);
  std::string graph = doc.substr(start, doc.find("```", start + 3) - start);
  const std::regex arrow(R"((\w+) --> (\w+))");
  std::set<std::string> drawn;
  for (std::sregex_iterator it(graph.begin(), graph.end(), arrow), end; it != end; ++it) {
    std::string from = (*it)[1], to = (*it)[2];
    drawn.insert(from);
    drawn.insert(to);
    EXPECT_TRUE(includes[from].count(to)) << from << " --> " << to << ": no such #include";
  }
  for (const auto& part : parts) {
    EXPECT_TRUE(drawn.count(part)) << part << " is not in the graph";
    EXPECT_THAT(doc, HasSubstr("| `" + part + "` |")) << part << " is not in the table";
    std::set<std::string> seen;
    EXPECT_FALSE(Reaches(includes, part, part, seen)) << part << " includes itself back";
    // Every include is drawn, or implied by a path of drawn arrows.
    for (const auto& to : includes[part]) {
      std::map<std::string, std::set<std::string>> drawn_graph;
      for (std::sregex_iterator it(graph.begin(), graph.end(), arrow), end; it != end; ++it) {
        drawn_graph[(*it)[1]].insert((*it)[2]);
      }
      std::set<std::string> seen_drawn;
      EXPECT_TRUE(Reaches(drawn_graph, part, to, seen_drawn))
          << part << " includes " << to << ", which the graph does not show";
    }
  }
}

// A part's tests and test support reach only the parts its code may: its
// own, and those below it in the graph (a lower part's test support, never a
// higher part's, e.g. harness/e2e_support.h from a report test).
TEST(ArchitectureDoc, TestsIncludeOnlyPartsBelowTheirOwn) {
  std::string doc = Read(kSource / "docs" / "ARCHITECTURE.md");
  if (doc.empty()) GTEST_SKIP() << "no docs/ARCHITECTURE.md";
  size_t start = doc.find("```mermaid");
  ASSERT_NE(start, std::string::npos);
  std::string graph = doc.substr(start, doc.find("```", start + 3) - start);
  std::map<std::string, std::set<std::string>> drawn;
  const std::regex arrow(R"((\w+) --> (\w+))");
  for (std::sregex_iterator it(graph.begin(), graph.end(), arrow), end; it != end; ++it) {
    drawn[(*it)[1]].insert((*it)[2]);
  }
  auto parts = Parts();
  const std::regex include(R"(#include "(\w+)/)");
  for (const auto& part : parts) {
    for (const auto& e : fs::directory_iterator(kSource / "src" / part)) {
      std::string name = e.path().filename().string();
      if (name.find("_test") == std::string::npos && name.find("test_") == std::string::npos &&
          name.find("e2e_support") == std::string::npos) {
        continue;
      }
      std::string text = Read(e.path());
      for (std::sregex_iterator it(text.begin(), text.end(), include), end; it != end; ++it) {
        std::string to = (*it)[1];
        if (to == part || !parts.count(to)) continue;
        std::set<std::string> seen;
        EXPECT_TRUE(Reaches(drawn, part, to, seen))
            << part << "/" << name << " includes " << to << ", a part above " << part;
      }
    }
  }
}

}  // namespace
}  // namespace kfpbench::cli
