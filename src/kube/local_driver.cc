#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "kube/driver.h"
#include "kube/manifest.h"
#include "kube/process.h"
#include "util/files.h"
#include "util/strings.h"

namespace kfpbench::kube {
namespace {

int Total(const JobConfig& config) {
  int n = 0;
  for (const auto& r : config.replicas) n += r.count;
  return n;
}

bool HasRole(const JobConfig& config, const std::string& role) {
  for (const auto& r : config.replicas) {
    if (r.role == role) return true;
  }
  return false;
}

// The replicas whose success completes the job, as the operators decide it
// (FACTS.md §2, §5): TF chief/master else workers; PyTorch master; MPI launcher.
bool Decides(const JobConfig& config, const std::string& role) {
  switch (config.kind) {
    case JobKind::kJob:
      return true;
    case JobKind::kPyTorchJob:
      return role == "Master";
    case JobKind::kMPIJob:
      return role == "Launcher";
    case JobKind::kTFJob:
      if (HasRole(config, "Chief") || HasRole(config, "Master"))
        return role == "Chief" || role == "Master";
      return role == "Worker";
  }
  return true;
}

// argv0 as exec would find it: itself when it holds a slash, else the first
// executable of that name on PATH; empty when there is none.
std::string ResolveOnPath(const std::string& argv0) {
  if (argv0.find('/') != std::string::npos) return argv0;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t begin = 0;
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    std::filesystem::path candidate =
        std::filesystem::path(end == begin ? "." : dirs.substr(begin, end - begin)) / argv0;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    begin = end + 1;
  }
  return "";
}

bool IsPython(const std::string& argv0) {
  return std::filesystem::path(argv0).filename().string().starts_with("python");
}

// Empty when `python` imports `module`, else why not (the last line of its error).
std::string ImportProblem(const std::string& python, const std::string& module) {
  auto r = RunCapture({python, "-c", "import " + module}, std::chrono::seconds(60));
  if (!r.ok()) return r.error().message;
  if (r->exit_code == 0) return "";
  std::string why = Tail(r->err.empty() ? r->out : r->err, 1);
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  return why.empty() ? "exit code " + std::to_string(r->exit_code) : why;
}

}  // namespace

Status CheckInterpreterImports(const std::string& argv0, const std::string& module) {
  if (module.empty() || !IsPython(argv0)) return Ok();
  std::string resolved = ResolveOnPath(argv0);
  if (resolved.empty()) {
    return Error{"the job's interpreter " + argv0 +
                 " is not on PATH; pick one with --set python=/usr/bin/python3"};
  }
  std::string problem = ImportProblem(resolved, module);
  if (problem.empty()) return Ok();
  std::string named = resolved == argv0 ? argv0 : argv0 + " (" + resolved + " on PATH)";
  std::string message =
      "the job's interpreter " + named + " cannot import " + module + ": " + problem + ". ";
  // Debian's python3-torch and friends live in the system interpreter, which
  // a pyenv, conda or venv python3 earlier on PATH does not see.
  const std::string system_python = "/usr/bin/python3";
  if (resolved != system_python && ::access(system_python.c_str(), X_OK) == 0 &&
      ImportProblem(system_python, module).empty()) {
    return Error{message + system_python + " can: pass --set python=" + system_python};
  }
  return Error{message + "Install " + module +
               " for it, or pick another interpreter with --set python=PATH"};
}

Status LocalDriver::Preflight(const JobConfig& config, const SweepPoint& point) {
  auto resolved = Resolve(config, point);
  if (!resolved.ok()) return resolved.error();
  if (resolved->command.empty()) return Ok();
  return CheckInterpreterImports(resolved->command[0], KindInfo(config.kind).framework_module);
}

Result<int> FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Error{"socket failed"};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return Error{"cannot find a free port"};
  }
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

Result<std::vector<LocalReplica>> PlanLocalReplicas(const JobConfig& config,
                                                    const SweepPoint& point,
                                                    const std::vector<int>& ports,
                                                    const std::filesystem::path& work_dir) {
  auto resolved = Resolve(config, point);
  if (!resolved.ok()) return resolved.error();
  std::vector<LocalReplica> out;
  for (const auto& r : config.replicas) {
    for (int i = 0; i < r.count; ++i) {
      LocalReplica rep;
      rep.role = r.role;
      rep.index = i;
      rep.name = point.job_name + "-" + AsciiLower(r.role) + "-" + std::to_string(i);
      rep.env = resolved->env;
      rep.decides = Decides(config, r.role);
      out.push_back(std::move(rep));
    }
  }
  int total = Total(config);
  switch (config.kind) {
    case JobKind::kJob:
      break;
    case JobKind::kPyTorchJob: {
      if (ports.empty()) return Error{"no port for MASTER_PORT"};
      std::string port = std::to_string(ports[0]);
      for (auto& rep : out) {
        std::string rank = std::to_string(rep.role == "Master" ? 0 : rep.index + 1);
        for (auto kv : std::vector<std::pair<std::string, std::string>>{
                 {"PYTHONUNBUFFERED", "1"},
                 {"MASTER_ADDR", "127.0.0.1"},
                 {"PET_MASTER_ADDR", "127.0.0.1"},
                 {"MASTER_PORT", port},
                 {"PET_MASTER_PORT", port},
                 {"WORLD_SIZE", std::to_string(total)},
                 {"RANK", rank},
                 {"PET_NODE_RANK", rank},
                 {"PET_NNODES", std::to_string(total)}}) {
          rep.env.push_back(kv);
        }
      }
      break;
    }
    case JobKind::kTFJob: {
      if (total == 1) break;  // the operator sets TF_CONFIG only for distributed jobs
      if (ports.size() < out.size()) return Error{"not enough ports for TF_CONFIG"};
      nlohmann::json cluster = nlohmann::json::object();
      for (size_t i = 0; i < out.size(); ++i) {
        cluster[AsciiLower(out[i].role)].push_back("localhost:" + std::to_string(ports[i]));
      }
      for (auto& rep : out) {
        nlohmann::json tf = {{"cluster", cluster},
                             {"task", {{"type", AsciiLower(rep.role)}, {"index", rep.index}}},
                             {"environment", "cloud"}};
        rep.env.emplace_back("TF_CONFIG", tf.dump());
      }
      break;
    }
    case JobKind::kMPIJob: {
      // One host with a slot per worker: mpirun starts the ranks here, where
      // the operator's launcher would reach the worker pods over kubexec/ssh.
      int workers = 0;
      for (const auto& rep : out) workers += rep.role == "Worker" ? 1 : 0;
      auto hostfile = work_dir / "hostfile";
      std::ofstream(hostfile) << "localhost slots=" << std::max(workers, 1) << "\n";
      for (auto& rep : out) {
        if (rep.role == "Worker") {
          rep.started = false;
          rep.env.emplace_back("K_MPI_JOB_ROLE", "worker");
          continue;
        }
        for (auto kv : std::vector<std::pair<std::string, std::string>>{
                 {"K_MPI_JOB_ROLE", "launcher"},
                 {"OMPI_MCA_orte_default_hostfile", hostfile.string()},
                 {"OMPI_MCA_orte_keep_fqdn_hostnames", "true"},
                 {"OMPI_MCA_orte_set_default_slots", "1"},
                 // Containers run as root; Open MPI refuses root without these.
                 {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
                 {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}}) {
          rep.env.push_back(kv);
        }
      }
      break;
    }
  }
  return out;
}

namespace {

// One replica's process while the job runs.
struct Running {
  LocalReplica replica;
  std::filesystem::path log;
  pid_t pid = -1;
  std::optional<int> code;
  bool killed = false;
};

void KillAll(std::vector<Running>& running) {
  for (auto& r : running) {
    if (r.pid > 0 && !r.code) {
      KillGroup(r.pid, std::chrono::milliseconds(2000));
      r.killed = true;
      r.code = 137;
    }
  }
}

void CollectLogs(const std::vector<Running>& running, JobOutcome& outcome) {
  for (const auto& r : running)
    outcome.logs.push_back({r.replica.role, r.replica.index, ReadSmallFile(r.log)});
}

// The ports the replicas rendezvous on: PyTorch's master port, one per TF replica.
Result<std::vector<int>> RendezvousPorts(const JobConfig& config) {
  std::vector<int> ports;
  int needed = config.kind == JobKind::kPyTorchJob
                   ? 1
                   : (config.kind == JobKind::kTFJob ? Total(config) : 0);
  for (int i = 0; i < needed; ++i) {
    auto p = FreePort();
    if (!p.ok()) return p.error();
    ports.push_back(*p);
  }
  return ports;
}

// Starts the replicas the plan starts; on a failure, kills those started.
Status StartReplicas(const std::vector<LocalReplica>& plan, const std::vector<std::string>& command,
                     const std::filesystem::path& dir, std::vector<Running>& running) {
  for (const auto& rep : plan) {
    if (!rep.started) continue;
    Running r{rep, dir / (rep.name + ".log"), -1, std::nullopt, false};
    auto pid = SpawnLogged({command, rep.env, dir, r.log});
    if (!pid.ok()) {
      KillAll(running);
      return Error{rep.name + ": " + pid.error().message};
    }
    r.pid = *pid;
    running.push_back(std::move(r));
  }
  return Ok();
}

// Polls the replicas until all have exited, or the deciding ones have and
// the rest lingered long enough; a replica failing, the deadline or an
// interrupt ends the job with an error.
Status WaitForReplicas(const JobConfig& config, const LocalDriverOptions& options,
                       std::chrono::steady_clock::time_point deadline,
                       std::vector<Running>& running, JobOutcome& outcome) {
  std::optional<std::chrono::steady_clock::time_point> linger_until;
  while (true) {
    bool all_done = true;
    bool deciders_done = true;
    for (auto& r : running) {
      if (!r.code) r.code = PollExit(r.pid);
      if (r.code && *r.code != 0 && !r.killed) {
        KillAll(running);
        CollectLogs(running, outcome);
        std::string log = ReadSmallFile(r.log);
        return Error{"replica " + r.replica.name + " exited with code " + std::to_string(*r.code) +
                     "; last lines of its log:\n" + Tail(log, 20)};
      }
      all_done = all_done && r.code.has_value();
      if (r.replica.decides) deciders_done = deciders_done && r.code.has_value();
    }
    auto now = std::chrono::steady_clock::now();
    if (all_done) return Ok();
    if (deciders_done) {
      if (!linger_until) linger_until = now + options.linger;
      if (now >= *linger_until) {
        KillAll(running);  // e.g. TF parameter servers, which never exit on their own
        return Ok();
      }
    }
    if (now >= deadline || (options.interrupted && options.interrupted->load())) {
      KillAll(running);
      CollectLogs(running, outcome);
      return Error{now >= deadline ? "timed out after " + std::to_string(config.timeout_seconds) +
                                         " s (timeoutSeconds)"
                                   : "interrupted"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

JobOutcome LocalDriver::Run(const JobConfig& config, const SweepPoint& point) {
  JobOutcome outcome;
  auto start = std::chrono::steady_clock::now();
  std::filesystem::path root = options_.work_root;
  std::error_code ec;
  if (root.empty()) {
    char tmpl[] = "/tmp/kfpbench-job-XXXXXX";
    if (!::mkdtemp(tmpl)) {
      outcome.error = "cannot create a work folder under /tmp";
      return outcome;
    }
    root = tmpl;
  }
  auto dir = root / point.job_name;
  std::filesystem::create_directories(dir, ec);
  auto finish = [&](JobOutcome o) {
    o.duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!options_.keep) std::filesystem::remove_all(options_.work_root.empty() ? root : dir, ec);
    return o;
  };

  auto ports = RendezvousPorts(config);
  if (!ports.ok()) {
    outcome.error = ports.error().message;
    return finish(outcome);
  }
  auto plan = PlanLocalReplicas(config, point, *ports, dir);
  if (!plan.ok()) {
    outcome.error = plan.error().message;
    return finish(outcome);
  }
  auto resolved = Resolve(config, point);  // checked by PlanLocalReplicas
  std::vector<Running> running;
  if (auto st = StartReplicas(*plan, resolved->command, dir, running); !st.ok()) {
    outcome.error = st.error().message;
    return finish(outcome);
  }
  auto deadline = start + std::chrono::seconds(config.timeout_seconds);
  auto waited = WaitForReplicas(config, options_, deadline, running, outcome);
  if (!waited.ok()) {
    outcome.error = waited.error().message;
    return finish(outcome);
  }
  CollectLogs(running, outcome);
  outcome.succeeded = true;
  return finish(outcome);
}

}  // namespace kfpbench::kube
