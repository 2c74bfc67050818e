#include "cli/common.h"

#include <csignal>
#include <iostream>
#include <sstream>

#include "util/secrets.h"

namespace kfpbench::cli {

std::atomic<bool> g_interrupted{false};

namespace {
extern "C" void OnSignal(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}
}  // namespace

void InstallSignalHandlers() {
  g_interrupted.store(false);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
}

int Fail(const std::string& message, int code) {
  // One "kfpbench: " per line: a file's problems come several at once.
  std::istringstream lines(Redact(message));
  for (std::string line; std::getline(lines, line);) std::cerr << "kfpbench: " << line << "\n";
  return code;
}

}  // namespace kfpbench::cli
