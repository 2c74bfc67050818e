#include "kube/process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace kfpbench::kube {

Result<pid_t> SpawnLogged(const SpawnOptions& options) {
  if (options.argv.empty()) return Error{"empty command"};
  SpawnRequest request;
  request.argv = options.argv;
  request.env = MergeEnv(CurrentEnv(), options.env);
  request.cwd = options.cwd;
  std::error_code ec;
  auto path = FindExecutable(options.argv[0], request.env,
                             options.cwd.empty() ? std::filesystem::current_path(ec) : options.cwd);
  if (!path.ok()) return path.error();
  request.path = std::move(*path);
  int log_fd = ::open(options.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return Error{fmt::format("cannot open {}: {}", options.log.string(), std::strerror(errno))};
  }
  request.stdout_fd = log_fd;
  auto pid = Spawn(request);
  ::close(log_fd);
  return pid;
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

}  // namespace kfpbench::kube
