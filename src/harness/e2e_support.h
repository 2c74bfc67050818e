// Test support for end-to-end tests of the real binaries: run kfpbench to
// completion, or keep a server process (kfpbench serve, prometheus) running
// for the length of a test and stop it by its pid. Helpers that tests of
// lower parts need too live in their parts (util/ and report/test_support.h).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/test_support.h"  // ChromiumDom, CountOf, Between, CommandOutput
#include "util/ids.h"

extern char** environ;

namespace kfpbench::testing {

// End-to-end tests name paths on every other line; `using namespace
// kfpbench::testing` brings the short name with the helpers.
namespace fs = std::filesystem;

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// A test with a scratch folder of its own (dir_), removed afterwards.
class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kfpbench-test-" + NewUuid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // Writes `text` to dir_/name and returns that path.
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  std::filesystem::path dir_;
};

// A file's JSON; discarded (is_discarded()) when it is not JSON.
inline nlohmann::json ReadJson(const std::filesystem::path& path) {
  return nlohmann::json::parse(ReadText(path), nullptr, false);
}

inline std::string KfpbenchBinary() { return std::string(KFPBENCH_BINARY_DIR) + "/kfpbench"; }

// `command` through /bin/sh, stdout and stderr together.
inline Outcome Shell(const std::string& command) {
  Outcome out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    out.output.append(buffer.data(), n);
  int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

inline Outcome Kfpbench(const std::string& args) { return Shell(KfpbenchBinary() + " " + args); }

// A child process whose stdout and stderr go to a pipe we read lines from.
// Its output is read only while a test waits for a line, so a server started
// here runs with `--access-log none`: a line per request would fill the pipe
// and block the server.
class ChildProcess {
 public:
  explicit ChildProcess(std::vector<std::string> argv) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~ChildProcess() { Stop(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0; }

  // Reads output until a line contains `needle`; returns that line, or ""
  // after `timeout` or when the process closes its output.
  std::string WaitForLine(const std::string& needle, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      size_t nl;
      while ((nl = pending_.find('\n')) != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        seen_ += line + "\n";
        if (line.find(needle) != std::string::npos) return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || out_ < 0) return "";
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      ssize_t n = ::read(out_, buf, sizeof(buf));
      if (n <= 0) return "";
      pending_.append(buf, static_cast<size_t>(n));
    }
  }
  const std::string& seen() const { return seen_; }

  void Signal(int signal) const {
    if (pid_ > 0) ::kill(pid_, signal);
  }

  // The exit code once the process has exited (128 + N when signal N ended
  // it), or -1 if it is still running after `timeout`. Output keeps being
  // read meanwhile, so a chatty child never blocks on a full pipe.
  int WaitExit(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (pid_ > 0) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        WaitForLine("\x01never\x01", std::chrono::milliseconds(200));  // the rest of the output
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (std::chrono::steady_clock::now() > deadline) return -1;
      WaitForLine("\x01never\x01", std::chrono::milliseconds(20));
    }
    return -1;
  }

  // SIGTERM, then SIGKILL if it has not exited within 10 s.
  void Stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      int status = 0;
      while (::waitpid(pid_, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          ::kill(pid_, SIGKILL);
          ::waitpid(pid_, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      pid_ = -1;
    }
    if (out_ >= 0) ::close(out_);
    out_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string pending_;
  std::string seen_;
};

// "https://127.0.0.1:43211/apis/v2beta1 (Ctrl-C stops)" -> "https://127.0.0.1:43211".
inline std::string UrlInLine(const std::string& line) {
  size_t start = line.find("http");
  if (start == std::string::npos) return "";
  size_t end = line.find("/apis", start);
  return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace kfpbench::testing
