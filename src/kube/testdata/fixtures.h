// For tests: the hand-written kubectl outputs in this folder (see the header
// of each file: real format, not recordings) and the fake kubectl replaying them.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kfpbench::kube::testdata {

inline std::filesystem::path Dir() { return KFPBENCH_SOURCE_DIR "/src/kube/testdata"; }

// The file without its '#' header lines, parsed.
inline nlohmann::json Load(const std::string& name) {
  std::ifstream in(Dir() / name);
  std::stringstream body;
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("#")) body << line << "\n";
  }
  return nlohmann::json::parse(body.str());
}

inline std::string FakeKubectl() { return (Dir() / "fake-kubectl").string(); }

// Sets $FAKE_KUBECTL_LOG (and $FAKE_KUBECTL_FAIL) for the test's lifetime.
class FakeKubectlEnv {
 public:
  explicit FakeKubectlEnv(const std::string& fail = "") {
    log_ = std::filesystem::temp_directory_path() /
           ("kfpbench-fake-kubectl-" + std::to_string(::getpid()) + ".log");
    std::filesystem::remove(log_);
    ::setenv("FAKE_KUBECTL_LOG", log_.c_str(), 1);
    ::setenv("FAKE_KUBECTL_FAIL", fail.c_str(), 1);
  }
  ~FakeKubectlEnv() {
    ::unsetenv("FAKE_KUBECTL_LOG");
    ::unsetenv("FAKE_KUBECTL_FAIL");
    std::filesystem::remove(log_);
  }
  std::vector<std::string> Calls() const {
    std::vector<std::string> out;
    std::ifstream in(log_);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

 private:
  std::filesystem::path log_;
};

}  // namespace kfpbench::kube::testdata
