#include "kube/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

extern char** environ;

namespace kfpbench::kube {

Result<pid_t> Spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return Error{"empty command"};
  // Everything the child needs is built before fork: only async-signal-safe
  // calls happen between fork and exec.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : options.env) env[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = options.argv;
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  int log_fd = ::open(options.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return Error{"cannot open " + options.log.string() + ": " + std::strerror(errno)};
  std::string cwd = options.cwd.string();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return Error{std::string("fork: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(126);
    ::execvpe(argv[0], argv.data(), envp.data());
    const char* msg = "kfpbench: exec failed: ";
    [[maybe_unused]] auto n = ::write(2, msg, std::strlen(msg));
    n = ::write(2, argv[0], std::strlen(argv[0]));
    n = ::write(2, "\n", 1);
    _exit(127);
  }
  ::setpgid(pid, pid);  // also here: no race with an early KillGroup
  ::close(log_fd);
  return pid;
}

std::optional<int> Poll(pid_t pid) {
  int status = 0;
  pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == 0) return std::nullopt;
  if (r < 0) return 255;  // already reaped or not ours: treat as failed
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

void KillGroup(pid_t pid, std::chrono::milliseconds grace) {
  ::kill(-pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Poll(pid)) {
      ::kill(-pid, SIGKILL);  // stragglers the leader left behind
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

std::string ReadFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Tail(const std::string& text, int lines) {
  size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') --end;
  size_t pos = end;
  for (int n = 0; n < lines && pos > 0;) {
    --pos;
    if (text[pos] == '\n') {
      ++n;
      if (n == lines) {
        ++pos;
        break;
      }
    }
  }
  return text.substr(pos, end - pos);
}

Result<Captured> RunCapture(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout) {
  char dir_template[] = "/tmp/kfpbench-capture-XXXXXX";
  if (!::mkdtemp(dir_template)) return Error{std::string("mkdtemp: ") + std::strerror(errno)};
  std::filesystem::path dir = dir_template;
  // stdout and stderr go to separate files: kubectl's JSON must not mix with warnings.
  SpawnOptions spawn{argv, {}, {}, dir / "out"};
  auto cleanup = [&] {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  };
  std::vector<std::string> wrapped = {"/bin/sh", "-c", "exec \"$@\" 2>\"$0\"",
                                      (dir / "err").string()};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  spawn.argv = wrapped;
  auto pid = Spawn(spawn);
  if (!pid.ok()) {
    cleanup();
    return pid.error();
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<int> code;
  while (!(code = Poll(*pid))) {
    if (std::chrono::steady_clock::now() > deadline) {
      KillGroup(*pid, std::chrono::milliseconds(500));
      cleanup();
      return Error{argv[0] + " did not finish within " + std::to_string(timeout.count()) + " ms"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Captured out{*code, ReadFile(dir / "out"), ReadFile(dir / "err")};
  cleanup();
  if (out.exit_code == 127 && out.err.empty() && out.out.empty()) {
    return Error{"cannot run " + argv[0]};
  }
  return out;
}

}  // namespace kfpbench::kube
