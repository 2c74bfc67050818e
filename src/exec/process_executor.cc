#include "exec/process_executor.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "exec/peak_rss.h"
#include "exec/task_files.h"
#include "util/process.h"

namespace kfpbench::exec {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::filesystem::path SelfBinary() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path("/proc/self/exe") : path;
}

// glibc 2.36's <sys/pidfd.h> lacks extern "C" guards, so C++ cannot link
// its wrapper; the raw syscall is the same thing.
int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

double Seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; }

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("SIG{} ({})", abbrev, sig) : fmt::format("{}", sig);
}

// What execve would refuse, said the way Spawn says it.
Status CheckRunnable(const std::string& path, const std::filesystem::path& cwd) {
  std::filesystem::path full(path);
  if (full.is_relative()) full = cwd / full;
  struct stat st;
  if (stat(full.c_str(), &st) != 0) {
    return Error{fmt::format("cannot run '{}': {}", path, strerror(errno))};
  }
  if (!S_ISREG(st.st_mode) || access(full.c_str(), X_OK) != 0) {
    return Error{fmt::format("cannot run '{}': {}", path, strerror(EACCES))};
  }
  return Ok();
}

std::string WithLogTail(std::string what, const std::filesystem::path& log, size_t max_bytes) {
  std::string tail = ReadLogTail(log, max_bytes);
  if (tail.empty()) return what + "; the log is empty";
  return fmt::format("{}; last log lines:\n{}", what, tail);
}

}  // namespace

struct ProcessExecutor::Impl {
  // A launched task whose main process has not been reaped yet.
  struct Child {
    std::string task_id;
    pid_t pid = -1;  // also its process group id
    int pidfd = -1;
    std::map<std::string, std::filesystem::path> output_files;
    std::filesystem::path log_path;
    engine::TaskDone done;
    bool canceled = false;
    std::string forced_error;                        // fails the task whatever its exit status
    std::optional<SteadyClock::time_point> kill_at;  // SIGKILL due (after Cancel)
    int64_t inherited_rss = 0;                       // our peak RSS when it was spawned
    int64_t sampled_rss = 0;  // largest sampled VmHWM; written by the reaper only
    TaskCgroup cgroup;        // empty when cgroups are not in use
  };

  engine::EventLoop& loop;
  ProcessExecutorOptions options;
  Limiter limiter;
  int epoll_fd = -1;
  int wake_fd = -1;  // eventfd: wakes the reaper for a new deadline or shutdown

  mutable std::mutex mu;  // guards everything below
  std::unordered_map<int, std::unique_ptr<Child>> by_pidfd;
  std::unordered_map<std::string, int> by_task;  // task id -> pidfd
  bool stopping = false;

  std::thread reaper;
  SteadyClock::time_point next_sample;  // reaper thread only

  Impl(engine::EventLoop& l, ProcessExecutorOptions o)
      : loop(l), options(std::move(o)), limiter(options.limits) {}

  void Wake() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake_fd, &one, sizeof one);
  }

  void Fail(engine::TaskDone done, std::string error, std::string log_path = "") {
    engine::TaskResult result;
    result.error = std::move(error);
    result.log_path = std::move(log_path);
    loop.Post([done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
  }

  Result<pid_t> SpawnWithLimits(SpawnRequest& request, const engine::TaskLaunch& launch, int log_fd,
                                Child& child);
  void Watch(std::unique_ptr<Child> child);
  void ReaperLoop();
  std::optional<int> NextTimeoutMs();
  void KillOverdue();
  void SampleRss();
  void Reap(int pidfd);
  engine::TaskResult Finish(const Child& child, int status, const rusage& usage,
                            const TaskUsage& cgroup_usage);
};

ProcessExecutor::ProcessExecutor(engine::EventLoop& loop, ProcessExecutorOptions options)
    : impl_(std::make_unique<Impl>(loop, std::move(options))) {
  if (impl_->options.self_binary.empty()) impl_->options.self_binary = SelfBinary();
  impl_->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  impl_->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl_->epoll_fd < 0 || impl_->wake_fd < 0) {
    // Out of descriptors at startup: nothing sensible to run with.
    fmt::print(stderr, "kfpbench: process executor: epoll/eventfd: {}\n", strerror(errno));
    std::abort();
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = impl_->wake_fd;
  epoll_ctl(impl_->epoll_fd, EPOLL_CTL_ADD, impl_->wake_fd, &ev);
  impl_->reaper = std::thread([impl = impl_.get()] { impl->ReaperLoop(); });
}

ProcessExecutor::~ProcessExecutor() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
    for (const auto& [fd, child] : impl_->by_pidfd) kill(-child->pid, SIGKILL);
  }
  impl_->Wake();
  impl_->reaper.join();
  // Reap what was killed so no zombies outlive us.
  for (const auto& [fd, child] : impl_->by_pidfd) {
    int status;
    while (waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
    }
    close(fd);
    impl_->limiter.Remove(child->cgroup);
  }
  close(impl_->wake_fd);
  close(impl_->epoll_fd);
}

// The step found and checked, its cgroup prepared and the limits wrapper
// around it spawned; the cgroup is the child's even when the spawn fails.
Result<pid_t> ProcessExecutor::Impl::SpawnWithLimits(SpawnRequest& request,
                                                     const engine::TaskLaunch& launch, int log_fd,
                                                     Child& child) {
  const std::filesystem::path& work_dir = request.cwd;
  auto path = FindExecutable(request.argv[0], request.env, work_dir);
  if (!path.ok()) return path.error();
  // posix_spawn would say this itself, but the limits wrapper execs the
  // step later, where the reason would only reach the log.
  if (auto runnable = CheckRunnable(*path, work_dir); !runnable.ok()) return runnable.error();
  std::string limits_note;
  auto cgroup = limiter.Prepare(launch.task_id, launch.resources, limits_note);
  if (!cgroup.ok()) return cgroup.error();
  child.cgroup = std::move(*cgroup);
  if (!limits_note.empty()) {
    // Before the step starts, so it is the log's first line.
    limits_note += "\n";
    [[maybe_unused]] ssize_t n = write(log_fd, limits_note.data(), limits_note.size());
  }
  WrappedCommand command = WrapForLimits(child.cgroup, std::move(*path), std::move(request.argv));
  request.path = std::move(command.path);
  request.argv = std::move(command.argv);
  return Spawn(request);
}

// Hands the child to the reaper, which waits on its pidfd.
void ProcessExecutor::Impl::Watch(std::unique_ptr<Child> child) {
  std::lock_guard lock(mu);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = child->pidfd;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, child->pidfd, &ev);
  by_task[child->task_id] = child->pidfd;
  by_pidfd.emplace(child->pidfd, std::move(child));
  Wake();  // the reaper may be idle, with no RSS sampling scheduled
}

void ProcessExecutor::Launch(engine::TaskLaunch launch, engine::TaskDone done) {
  Impl& impl = *impl_;
  std::error_code ec;
  std::filesystem::path work_dir = std::filesystem::absolute(launch.work_dir, ec);
  if (ec || !std::filesystem::is_directory(work_dir, ec)) {
    return impl.Fail(std::move(done),
                     fmt::format("work dir {} does not exist", launch.work_dir.string()));
  }
  if (launch.argv.empty()) return impl.Fail(std::move(done), "empty command");
  if (auto prepared = PrepareOutputFiles(launch.output_parameter_files); !prepared.ok()) {
    return impl.Fail(std::move(done), prepared.error().message);
  }

  // Parent env, then what KFP's pod would see, then the task's own env.
  std::vector<std::pair<std::string, std::string>> overrides = {
      {"KFP_POD_NAME", launch.pod_name},
      {"KFP_RUN_ID", launch.run_id},
      {"KFP_TASK_ID", launch.task_id},
  };
  overrides.insert(overrides.end(), launch.env.begin(), launch.env.end());

  SpawnRequest request;
  request.argv = std::move(launch.argv);
  if (request.argv[0] == "kfpbench") request.argv[0] = impl.options.self_binary.string();
  request.env = MergeEnv(CurrentEnv(), overrides);
  request.cwd = work_dir;

  const std::filesystem::path log_path = work_dir / "log.txt";
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return impl.Fail(std::move(done),
                     fmt::format("cannot create log {}: {}", log_path.string(), strerror(errno)));
  }
  request.stdout_fd = log_fd;

  auto child = std::make_unique<Impl::Child>();
  Result<pid_t> pid = impl.SpawnWithLimits(request, launch, log_fd, *child);
  if (!pid.ok()) {
    // Also into the log, where someone reading task logs will look.
    std::string line = "kfpbench: " + pid.error().message + "\n";
    [[maybe_unused]] ssize_t n = write(log_fd, line.data(), line.size());
    close(log_fd);
    impl.limiter.Remove(child->cgroup);
    return impl.Fail(std::move(done), pid.error().message, log_path.string());
  }
  close(log_fd);

  // posix_spawn returns after the exec, so nothing it inherits can exceed this.
  child->inherited_rss = SelfPeakRss();
  child->task_id = launch.task_id;
  child->pid = *pid;
  child->output_files = std::move(launch.output_parameter_files);
  child->log_path = log_path;
  child->done = std::move(done);

  // The child cannot be reaped by anyone but us before this (it stays a
  // zombie), so the pidfd always refers to it.
  child->pidfd = PidfdOpen(*pid);
  if (child->pidfd < 0) {
    std::string error = fmt::format("pidfd_open: {}", strerror(errno));
    kill(-*pid, SIGKILL);
    int status;
    while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
    }
    impl.limiter.Remove(child->cgroup);
    return impl.Fail(std::move(child->done), error, log_path.string());
  }

  impl.Watch(std::move(child));
}

Status ProcessExecutor::CanRun(const ir::PipelineSpec& spec) const {
  return CheckRunsAsProcesses(spec);
}

Status CheckRunsAsProcesses(const ir::PipelineSpec& spec) {
  for (const auto& [label, executor] : spec.executors) {
    if (executor.runs_in_driver()) continue;  // no process: the engine does it
    const auto& c = executor.container;
    if (c.command.empty() && c.args.empty()) {
      // A pod would run the image's entrypoint; this host has no image.
      return Error{fmt::format("executor '{}' (image {}) sets neither command nor args, so it "
                               "runs its image's entrypoint, which the process executor cannot "
                               "run on this host. Run it with --executor stub or against a real "
                               "KFP (--host)",
                               label, c.image.empty() ? "none" : c.image),
                   kHttpBadRequest};
    }
    std::string line;
    for (const auto* part : {&c.command, &c.args}) {
      for (const auto& word : *part) line += word + " ";
    }
    bool sdk_component = line.find("kfp.dsl.executor_main") != std::string::npos ||
                         line.find("kfp.components.executor_main") != std::string::npos;
    bool installs = line.find("pip install") != std::string::npos ||
                    line.find("pip3 install") != std::string::npos;
    if (!sdk_component && !installs) continue;
    return Error{fmt::format("executor '{}' (image {}) {}; the process executor runs each step's "
                             "command on this host, not in its image, so it would install "
                             "packages here. Run such pipelines with --executor stub (timed "
                             "steps that hold their CPU and memory requests) or against a real "
                             "KFP (--host)",
                             label, c.image.empty() ? "none" : c.image,
                             sdk_component ? "is a Python component of KFP's SDK"
                                           : "installs Python packages with pip"),
                 kHttpBadRequest};
  }
  return Ok();
}

void ProcessExecutor::Cancel(const std::string& task_id) {
  Impl& impl = *impl_;
  {
    std::lock_guard lock(impl.mu);
    auto it = impl.by_task.find(task_id);
    if (it == impl.by_task.end()) return;
    Impl::Child& child = *impl.by_pidfd.at(it->second);
    if (child.canceled) return;
    child.canceled = true;
    // Unreaped, so the group id cannot have been reused.
    kill(-child.pid, SIGTERM);
    child.kill_at = SteadyClock::now() + impl.options.kill_grace;
  }
  impl.Wake();
}

std::string ProcessExecutor::DescribeLimits() const { return impl_->limiter.Describe(); }
const Limiter& ProcessExecutor::limiter() const { return impl_->limiter; }

size_t ProcessExecutor::running() const {
  std::lock_guard lock(impl_->mu);
  return impl_->by_pidfd.size();
}

void ProcessExecutor::Impl::ReaperLoop() {
  constexpr int kMaxEvents = 64;
  epoll_event events[kMaxEvents];
  while (true) {
    std::optional<int> timeout_ms = NextTimeoutMs();
    if (!timeout_ms) return;  // stopping
    int n = epoll_wait(epoll_fd, events, kMaxEvents, *timeout_ms);
    if (n < 0 && errno != EINTR) {
      fmt::print(stderr, "kfpbench: process executor: epoll_wait: {}\n", strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd) {
        uint64_t count;
        [[maybe_unused]] ssize_t r = read(wake_fd, &count, sizeof count);
      } else {
        Reap(events[i].data.fd);
      }
    }
    KillOverdue();
    SampleRss();
  }
}

// Milliseconds to the next SIGKILL or RSS sample, -1 for none; nullopt when
// stopping.
std::optional<int> ProcessExecutor::Impl::NextTimeoutMs() {
  std::lock_guard lock(mu);
  if (stopping) return std::nullopt;
  std::optional<SteadyClock::time_point> next;
  if (!by_pidfd.empty() && options.rss_sample_interval > Duration::zero()) next = next_sample;
  for (const auto& [fd, child] : by_pidfd) {
    if (child->kill_at && (!next || *child->kill_at < *next)) next = child->kill_at;
  }
  if (!next) return -1;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(*next - SteadyClock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, INT_MAX));
}

void ProcessExecutor::Impl::KillOverdue() {
  std::lock_guard lock(mu);
  const auto now = SteadyClock::now();
  for (auto& [fd, child] : by_pidfd) {
    if (child->kill_at && *child->kill_at <= now) {
      kill(-child->pid, SIGKILL);
      child->kill_at.reset();
    }
  }
}

void ProcessExecutor::Impl::SampleRss() {
  if (options.rss_sample_interval <= Duration::zero()) return;
  const auto now = SteadyClock::now();
  if (now < next_sample) return;
  next_sample = now + options.rss_sample_interval;
  // Children are only removed on this thread, so the pointers stay valid
  // without the lock, and /proc reads do not hold up Launch and Cancel.
  std::vector<Child*> children;
  {
    std::lock_guard lock(mu);
    for (const auto& [fd, child] : by_pidfd) children.push_back(child.get());
  }
  for (Child* child : children) {
    child->sampled_rss = std::max(child->sampled_rss, TreePeakRss(child->pid));
  }
}

void ProcessExecutor::Impl::Reap(int pidfd) {
  std::unique_ptr<Child> child;
  bool shutting_down;
  {
    std::lock_guard lock(mu);
    auto it = by_pidfd.find(pidfd);
    if (it == by_pidfd.end()) return;
    child = std::move(it->second);
    by_pidfd.erase(it);
    by_task.erase(child->task_id);
    shutting_down = stopping;
  }
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, pidfd, nullptr);
  // A pod's processes end with its main one: kill what the step left running
  // in its group. The leader is still an unreaped zombie here, so the group id
  // is still ours.
  kill(-child->pid, SIGKILL);
  int status = 0;
  rusage usage{};
  pid_t reaped;
  while ((reaped = wait4(child->pid, &status, 0, &usage)) < 0 && errno == EINTR) {
  }
  close(pidfd);
  // After the main process is gone; Remove also kills descendants that left
  // its process group, as a pod's end would.
  const TaskUsage cgroup_usage = limiter.Collect(child->cgroup);
  limiter.Remove(child->cgroup);
  engine::TaskResult result;
  if (reaped < 0) {
    // Someone else reaped it (SIGCHLD ignored, or a waitpid(-1) elsewhere).
    result.error = fmt::format("exit status lost: wait4: {}", strerror(errno));
    result.log_path = child->log_path.string();
  } else {
    result = Finish(*child, status, usage, cgroup_usage);
  }
  // Killed by our destructor: its done is dropped like everyone else's,
  // whether or not this wakeup raced ahead of the shutdown.
  if (shutting_down) return;
  loop.Post([done = std::move(child->done), result = std::move(result)]() mutable {
    done(std::move(result));
  });
}

engine::TaskResult ProcessExecutor::Impl::Finish(const Child& child, int status,
                                                 const rusage& usage,
                                                 const TaskUsage& cgroup_usage) {
  engine::TaskResult result;
  result.log_path = child.log_path.string();
  // wait4's usage covers the main process and the descendants it waited for.
  result.cpu_seconds = Seconds(usage.ru_utime) + Seconds(usage.ru_stime);
  result.peak_rss_bytes = EstimatePeakRss(static_cast<int64_t>(usage.ru_maxrss) * 1024,
                                          child.inherited_rss, child.sampled_rss);
  // The cgroup saw every process of the step, waited for or not, and its
  // peak is exact (it is what the kubelet reports: RSS plus page cache).
  if (cgroup_usage.cpu_seconds) result.cpu_seconds = *cgroup_usage.cpu_seconds;
  if (cgroup_usage.peak_memory_bytes) result.peak_rss_bytes = *cgroup_usage.peak_memory_bytes;
  const bool signaled = WIFSIGNALED(status);
  // Shell and Kubernetes convention for a signal death: 128 + signal.
  result.exit_code = signaled ? 128 + WTERMSIG(status) : WEXITSTATUS(status);

  if (!child.forced_error.empty()) {
    result.error = child.forced_error;
  } else if (child.canceled) {
    result.error = "canceled";
  } else if (cgroup_usage.oom_killed) {
    // Whichever process the kernel picked, the pod's container is OOMKilled.
    result.error = WithLogTail(OomKilledMessage(child.cgroup.memory_limit), child.log_path,
                               options.log_tail_bytes);
  } else if (signaled) {
    result.error = WithLogTail("killed by signal " + SignalName(WTERMSIG(status)), child.log_path,
                               options.log_tail_bytes);
  } else if (result.exit_code != 0) {
    result.error = WithLogTail(fmt::format("exit code {}", result.exit_code), child.log_path,
                               options.log_tail_bytes);
  } else {
    auto outputs = ReadOutputParameters(child.output_files, options.max_output_parameter_bytes);
    if (outputs.ok()) {
      result.output_parameters = std::move(*outputs);
    } else {
      result.error = outputs.error().message;
    }
  }
  result.succeeded = result.error.empty();
  return result;
}

}  // namespace kfpbench::exec
