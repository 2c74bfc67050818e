#include "util/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

extern char** environ;

namespace kfpbench {
namespace {

// Owns posix_spawn's attribute and file-action objects so every error path
// destroys them.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// An anonymous file in memory for a child's output: the child writes as much
// as it likes with no reader to keep up (a pipe would need one), and nothing
// is left on disk.
class MemoryFile {
 public:
  MemoryFile() : fd_(::memfd_create("kfpbench-capture", MFD_CLOEXEC)) {}
  ~MemoryFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  std::string Read() const {
    std::string text;
    char buf[65536];
    for (off_t at = 0;;) {
      ssize_t n = ::pread(fd_, buf, sizeof buf, at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return text;
      text.append(buf, static_cast<size_t>(n));
      at += n;
    }
  }

 private:
  int fd_;
};

}  // namespace

std::vector<std::string> CurrentEnv() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

std::vector<std::string> MergeEnv(
    const std::vector<std::string>& parent,
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  std::unordered_map<std::string, size_t> index;  // name -> position in env
  auto set = [&](std::string name, std::string entry) {
    auto [it, inserted] = index.emplace(std::move(name), env.size());
    if (inserted) {
      env.push_back(std::move(entry));
    } else {
      env[it->second] = std::move(entry);
    }
  };
  for (const auto& entry : parent) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;  // malformed; execve would pass it, we drop it
    set(entry.substr(0, eq), entry);
  }
  for (const auto& [name, value] : overrides) set(name, name + "=" + value);
  return env;
}

Result<std::string> FindExecutable(const std::string& name, const std::vector<std::string>& env,
                                   const std::filesystem::path& cwd) {
  if (name.empty()) return Error{"empty command"};
  if (name.find('/') != std::string::npos) return name;
  // execvp's default when PATH is unset.
  std::string_view path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& entry : env) {
    if (entry.starts_with("PATH=")) path = std::string_view(entry).substr(5);
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string_view::npos) end = path.size();
    std::filesystem::path dir(path.substr(start, end - start));
    if (dir.empty()) dir = ".";
    if (dir.is_relative()) dir = cwd / dir;
    std::string candidate = (dir / name).string();
    if (IsExecutableFile(candidate)) return candidate;
    start = end + 1;
  }
  return Error{fmt::format("command not found: '{}' (PATH={})", name, path)};
}

Result<pid_t> Spawn(const SpawnRequest& request) {
  if (request.argv.empty()) return Error{"empty command"};
  // exec would silently end each string at its first NUL.
  for (size_t i = 0; i < request.argv.size(); ++i) {
    if (request.argv[i].find('\0') != std::string::npos) {
      return Error{
          fmt::format("cannot run '{}': argument {} holds a NUL byte", request.argv[0], i)};
    }
  }
  for (const std::string& variable : request.env) {
    if (variable.find('\0') != std::string::npos) {
      // The name only: values may be secrets.
      return Error{fmt::format("cannot run '{}': environment variable {} holds a NUL byte",
                               request.argv[0], variable.substr(0, variable.find_first_of("=\0")))};
    }
  }
  SpawnSetup setup;

  // Own process group, so Cancel can signal the step and everything it
  // started. Signal dispositions and masks are inherited across exec, and the
  // parent's (ignored SIGPIPE, signals blocked for a signal thread) must not
  // leak into a step.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setflags(&setup.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  posix_spawnattr_setsigdefault(&setup.attr, &all);

  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) return Error{fmt::format("cannot open /dev/null: {}", std::strerror(errno))};
  // dup2 clears close-on-exec on the copies; closefrom drops whatever else the
  // parent left inheritable (another thread's pipes, sockets).
  posix_spawn_file_actions_adddup2(&setup.actions, devnull, 0);
  posix_spawn_file_actions_adddup2(&setup.actions, request.stdout_fd, 1);
  posix_spawn_file_actions_adddup2(
      &setup.actions, request.stderr_fd >= 0 ? request.stderr_fd : request.stdout_fd, 2);
  posix_spawn_file_actions_addclosefrom_np(&setup.actions, 3);
  if (!request.cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(&setup.actions, request.cwd.c_str());
  }

  std::vector<char*> argv = CStrings(request.argv);
  std::vector<char*> envp = CStrings(request.env);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, request.path.c_str(), &setup.actions, &setup.attr, argv.data(),
                       envp.data());
  close(devnull);
  if (rc != 0) {
    return Error{fmt::format("cannot run '{}': {}", request.path, std::strerror(rc))};
  }
  return pid;
}

std::optional<int> PollExit(pid_t pid) {
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
    if (PollExit(pid)) {
      ::kill(-pid, SIGKILL);  // stragglers the leader left behind
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

Result<Captured> Capture(const CaptureRequest& request) {
  if (request.argv.empty()) return Error{"empty command"};
  const std::string& name = request.argv[0];
  SpawnRequest spawn;
  spawn.argv = request.argv;
  spawn.env = MergeEnv(CurrentEnv(), request.env);
  std::error_code ec;
  auto path = FindExecutable(name, spawn.env, std::filesystem::current_path(ec));
  if (!path.ok()) return path.error();
  spawn.path = std::move(*path);
  MemoryFile out, err;
  if (!out.ok() || !err.ok()) {
    return Error{fmt::format("cannot capture the output of '{}': {}", name, std::strerror(errno))};
  }
  spawn.stdout_fd = out.fd();
  spawn.stderr_fd = err.fd();
  auto pid = Spawn(spawn);
  if (!pid.ok()) return pid.error();
  const auto deadline = std::chrono::steady_clock::now() + request.timeout;
  std::optional<int> code;
  while (!(code = PollExit(*pid))) {
    if (std::chrono::steady_clock::now() > deadline) {
      KillGroup(*pid, std::chrono::milliseconds(500));
      return Captured{128 + SIGKILL, out.Read(), err.Read(), true};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Captured{*code, out.Read(), err.Read()};
}

Result<Captured> RunCapture(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout) {
  auto captured = Capture({argv, {}, timeout});
  if (captured.ok() && captured->timed_out) {
    return Error{fmt::format("{} did not finish within {} ms", argv[0], timeout.count())};
  }
  return captured;
}

}  // namespace kfpbench
