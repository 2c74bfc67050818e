#include "server/backend.h"

#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/engine.h"
#include "engine/event_loop.h"
#include "engine/task_record_json.h"
#include "exec/process_executor.h"
#include "exec/stub_executor.h"
#include "http/router.h"
#include "http/server.h"
#include "server/access.h"
#include "server/api_util.h"
#include "server/handlers.h"
#include "server/metrics.h"
#include "server/pod_metrics.h"
#include "server/run_tracker.h"
#include "server/scheduler.h"
#include "server/status_writer.h"
#include "server/work_root.h"
#include "store/store.h"
#include "util/json_reader.h"
#include "util/secrets.h"

namespace kfpbench::server {
namespace {

// Persists every change the engine reports, in the API's own form, so that
// GetRun is one row read. The snapshot is turned into a status on the loop
// and written by a StatusWriter on its own thread (the newest status of each
// run, in order; a status the store refuses, a full disk or a locked
// database, is written again every second until it lands or a newer one
// replaces it: otherwise a run whose last write failed would show RUNNING
// forever).
class StoreObserver : public engine::RunObserver {
 public:
  // `steps_write_files`: steps leave outputs and logs on disk (the process
  // executor), so succeeded runs' tasks are kept too, for the artifact read
  // endpoint. Stub steps write nothing, and keeping every run's tasks would
  // cost a benchmark's backend a write per run for nothing.
  StoreObserver(store::Store& store, RunTracker& tracker, engine::EventLoop& loop,
                bool steps_write_files)
      : store_(store),
        tracker_(tracker),
        loop_(loop),
        steps_write_files_(steps_write_files),
        writer_(store) {}

  void OnRunChanged(const engine::RunSnapshot& snapshot) override {
    tracker_.OnSnapshot(snapshot);
    store::RunStatus status = ToRunStatus(snapshot);
    status.state_history = tracker_.WithPrefix(snapshot.run_id, std::move(status.state_history),
                                               IsTerminal(snapshot.state));
    // Kept before the end is written: a client that sees the end may retry
    // the run or read its artifacts at once.
    std::optional<StatusWriter::KeptTasks> kept;
    if (snapshot.state == RuntimeState::kFailed || snapshot.state == RuntimeState::kCanceled ||
        (snapshot.state == RuntimeState::kSucceeded && steps_write_files_)) {
      kept = KeepTasks(snapshot);
    }
    writer_.Submit(snapshot.run_id, std::move(status), std::move(kept));
  }

  // A run the store shows in flight but the engine does not execute: either
  // its last status is still waiting to be written (then that is its truth),
  // or nothing will ever end it, and terminating it ends it CANCELED.
  void OnTerminateNotExecuting(const std::string& run_id) override {
    if (writer_.WriteNow(run_id)) return;
    auto ended = store_.EndInFlightRuns({.run_id = run_id,
                                         .state = RuntimeState::kCanceled,
                                         .code = kfp::GrpcCode::kCancelled,
                                         .message = "terminated; nothing was executing the run",
                                         .now = loop_.Now()});
    if (!ended.ok()) {
      spdlog::error("cannot end run {}: {}", run_id, ended.error().message);
    } else if (*ended > 0) {
      spdlog::warn("run {} was in flight with nothing executing it; it ended CANCELED", run_id);
    }
  }

 private:
  // What a later :retry keeps, and where the artifact read endpoint finds
  // files: the container tasks that succeeded (or were cache hits), outputs
  // included; the API's task details carry neither parameter values nor
  // paths, so they are kept apart.
  static StatusWriter::KeptTasks KeepTasks(const engine::RunSnapshot& snapshot) {
    StatusWriter::KeptTasks keep;
    for (const auto& t : snapshot.tasks) {
      if (t.executor_label.empty() || t.key.empty()) continue;
      bool cache_hit = t.state == RuntimeState::kSkipped && !t.cache_fingerprint.empty();
      if (t.state != RuntimeState::kSucceeded && !cache_hit) continue;
      keep.emplace_back(t.key, DumpJson(engine::TaskRecordToJson(t)));
    }
    return keep;
  }

  static std::optional<kfp::RpcStatus> ToError(const std::string& message) {
    if (message.empty()) return std::nullopt;
    return kfp::RpcStatus{static_cast<int>(kfp::GrpcCode::kUnknown), message, {}};
  }

  // KFP's task inputs and outputs are maps of artifact name to ArtifactList
  // (MLMD artifact ids); parameter values are not part of them. Without MLMD,
  // an artifact's id is a stable number derived from its URI.
  static nlohmann::json ArtifactLists(const nlohmann::json& engine_io) {
    nlohmann::json out = nlohmann::json::object();
    auto artifacts = engine_io.find("artifacts");
    if (artifacts == engine_io.end() || !artifacts->is_object()) return out;
    for (const auto& [name, list] : artifacts->items()) {
      nlohmann::json ids = nlohmann::json::array();
      for (const auto& a : list) {
        uint64_t id = std::hash<std::string>{}(a.value("uri", name)) & 0x7fffffffffffffffULL;
        ids.push_back(std::to_string(id));
      }
      out[name] = {{"artifact_ids", std::move(ids)}};
    }
    return out;
  }

  static std::vector<kfp::RuntimeStatus> ToHistory(const std::vector<engine::StateChange>& h) {
    std::vector<kfp::RuntimeStatus> out;
    out.reserve(h.size());
    for (const auto& c : h) out.push_back({c.time, c.state, ToError(c.error)});
    return out;
  }

  static store::RunStatus ToRunStatus(const engine::RunSnapshot& snap) {
    store::RunStatus status;
    status.state = snap.state;
    status.finished_at = snap.finished_at;
    status.error = ToError(snap.error);
    status.state_history = ToHistory(snap.history);
    std::map<std::string, const engine::TaskRecord*> by_id;
    for (const auto& t : snap.tasks) by_id[t.task_id] = &t;
    int64_t execution_id = 0;
    for (const auto& t : snap.tasks) {
      kfp::PipelineTaskDetail d;
      d.run_id = snap.run_id;
      d.task_id = t.task_id;
      d.display_name = t.display_name.empty() ? t.name : t.display_name;
      d.create_time = t.create_time;
      d.start_time = t.start_time;
      d.end_time = t.end_time;
      d.state = t.state;
      d.execution_id = ++execution_id;
      d.error = ToError(t.error);
      if (auto in = ArtifactLists(t.inputs); !in.empty()) d.inputs = std::move(in);
      if (auto out = ArtifactLists(t.outputs); !out.empty()) d.outputs = std::move(out);
      d.parent_task_id = t.parent_task_id;
      d.state_history = ToHistory(t.history);
      d.pod_name = t.pod_name;
      d.cache_fingerprint = t.cache_fingerprint;
      for (const auto& child : t.child_task_ids) {
        auto it = by_id.find(child);
        d.child_tasks.push_back({child, it == by_id.end() ? "" : it->second->pod_name});
      }
      status.task_details.push_back(std::move(d));
    }
    return status;
  }

  store::Store& store_;
  RunTracker& tracker_;
  engine::EventLoop& loop_;
  const bool steps_write_files_;
  StatusWriter writer_;  // last: its destructor writes what still waits
};

// The execution cache in SQLite, so that it survives restarts as KFP's does.
class StoreTaskCache : public engine::TaskCache {
 public:
  explicit StoreTaskCache(store::Store& store) : store_(store) {}

  std::optional<engine::CachedExecution> Lookup(const std::string& scope,
                                                const std::string& fingerprint) override {
    auto row = store_.GetCachedExecution(scope, fingerprint);
    if (!row.ok()) {
      spdlog::error("execution cache lookup failed, running the task: {}", row.error().message);
      return std::nullopt;
    }
    if (!row->has_value()) return std::nullopt;
    auto outputs = ParseJson((*row)->outputs);
    if (!outputs.is_object()) return std::nullopt;  // unreadable: run the task instead
    engine::CachedExecution hit;
    hit.run_id = (*row)->run_id;
    hit.task_id = (*row)->task_id;
    hit.output_parameters = outputs.value("parameters", nlohmann::json::object());
    hit.output_artifacts = outputs.value("artifacts", nlohmann::json::object());
    return hit;
  }

  void Record(const std::string& scope, const std::string& fingerprint,
              const engine::CachedExecution& execution) override {
    const std::string outputs = DumpJson(
        {{"parameters", execution.output_parameters}, {"artifacts", execution.output_artifacts}});
    store::CachedExecutionRow row{scope,   fingerprint,     execution.run_id, execution.task_id,
                                  outputs, WallClock::now()};
    if (Status s = store_.PutCachedExecution(row); !s.ok()) {
      spdlog::error("cannot record execution {} in the cache: {}", fingerprint, s.error().message);
    }
  }

 private:
  store::Store& store_;
};

constexpr const char* kRestartMessage =
    "the kfpbench server restarted while this run was in flight; its steps died with the "
    "previous server process";

}  // namespace

struct Backend::Impl {
  BackendOptions options;
  std::optional<TempWorkRoot> temp_root;  // when no work root was given; removed at exit
  std::unique_ptr<store::Store> store;
  engine::RealTimeLoop loop;
  PodMetrics pod_metrics;                               // outlives the executor that reports to it
  std::unique_ptr<exec::ArtifactStore> artifact_store;  // outlives the executor that uploads
  std::unique_ptr<engine::Executor> executor;
  RunTracker tracker;
  ApiMetrics metrics;
  std::unique_ptr<StoreObserver> observer;
  std::unique_ptr<StoreTaskCache> cache;
  std::unique_ptr<engine::Engine> engine;
  http::Router router;
  std::unique_ptr<Handlers> handlers;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Authenticator> auth;  // null: no authentication asked for

  // Create's steps, in order.
  Status OpenStore(const std::string& db_path);
  Result<std::filesystem::path> PrepareWorkRoot(const std::filesystem::path& asked);
  Status MakeExecutor(const BackendOptions& options, const std::filesystem::path& work_root);
  void MakeEngine(const BackendOptions& options, const std::filesystem::path& work_root);
  Status MakeHandlers(const BackendOptions& options, const std::filesystem::path& work_root);

  ~Impl() {
    // The scheduler submits runs: stop it first. Nothing may call into the
    // engine once the loop is gone: stop the loop, then tear down engine and
    // executor (which kills what still runs).
    if (scheduler) scheduler->Stop();
    loop.Stop();
    engine.reset();
    executor.reset();
    artifact_store.reset();
    temp_root.reset();
  }
};

Backend::Backend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Backend::~Backend() = default;

// Runs in flight when the previous server died cannot be resumed: their
// processes died with it. Say so instead of leaving them RUNNING forever.
Status Backend::Impl::OpenStore(const std::string& db_path) {
  auto opened = store::Store::Open(db_path);
  if (!opened.ok()) return opened.error();
  store = std::move(*opened);
  auto failed = store->EndInFlightRuns({.run_id = std::nullopt,
                                        .state = RuntimeState::kFailed,
                                        .code = kfp::GrpcCode::kAborted,
                                        .message = kRestartMessage,
                                        .now = WallClock::now()});
  if (!failed.ok()) return failed.error();
  if (*failed > 0) spdlog::warn("{} run(s) in flight at the last shutdown ended FAILED", *failed);
  return Ok();
}

// The work root asked for, or a temporary one removed at exit.
Result<std::filesystem::path> Backend::Impl::PrepareWorkRoot(const std::filesystem::path& asked) {
  std::filesystem::path work_root = asked;
  std::error_code ec;
  if (work_root.empty()) {
    auto temp = TempWorkRoot::Create(std::filesystem::temp_directory_path(ec));
    if (!temp.ok()) return temp.error();
    work_root = temp->path();
    temp_root.emplace(std::move(*temp));
  }
  std::filesystem::create_directories(work_root, ec);
  if (ec)
    return Error{
        fmt::format("cannot create work directory {}: {}", work_root.string(), ec.message())};
  return work_root;
}

Status Backend::Impl::MakeExecutor(const BackendOptions& options,
                                   const std::filesystem::path& work_root) {
  if (options.executor != "stub" &&
      (options.artifact_bandwidth > 0 || !options.stub_artifact_bytes.empty())) {
    return Error{
        "--artifact-bandwidth and --stub-artifact-bytes shape the stub executor's uploads: "
        "add --executor stub (process steps write their artifacts to local files)"};
  }
  if (options.artifact_bandwidth > 0 && options.stub_artifact_bytes.empty()) {
    return Error{
        "--artifact-bandwidth limits uploads, and no step uploads anything: add "
        "--stub-artifact-bytes (e.g. exec-train=10Mi)"};
  }
  if (options.executor == "process") {
    exec::ProcessExecutorOptions po;
    po.self_binary = options.self_binary;
    auto process = std::make_unique<exec::ProcessExecutor>(loop, po);
    spdlog::info("process executor limits: {}", process->DescribeLimits());
    executor = std::make_unique<PodMetricsExecutor>(std::move(process), pod_metrics);
    return Ok();
  }
  if (options.executor != "stub") {
    return Error{fmt::format("unknown executor '{}' (expected process or stub)", options.executor)};
  }
  auto so = exec::ParseStubExecutorOptions(options.stub_durations);
  if (!so.ok()) return Error{"--stub-duration: " + so.error().message};
  if (Status s = exec::AddStubFailures(options.stub_failures, *so); !s.ok()) {
    return Error{"--stub-failure: " + s.error().message};
  }
  if (Status s = exec::AddStubArtifactBytes(options.stub_artifact_bytes, *so); !s.ok()) {
    return Error{"--stub-artifact-bytes: " + s.error().message};
  }
  if (!options.stub_artifact_bytes.empty()) {
    artifact_store = std::make_unique<exec::ArtifactStore>(
        loop,
        exec::ArtifactStore::Options{work_root / "artifact-store", options.artifact_bandwidth});
  }
  executor = std::make_unique<exec::StubExecutor>(loop, std::move(*so), artifact_store.get());
  return Ok();
}

void Backend::Impl::MakeEngine(const BackendOptions& options,
                               const std::filesystem::path& work_root) {
  observer = std::make_unique<StoreObserver>(*store, tracker, loop, options.executor == "process");
  engine::EngineOptions eo;
  eo.work_root = work_root;
  if (!options.package_root.empty()) eo.import_roots.push_back(options.package_root);
  eo.nodes = options.nodes;
  // Stub steps write no files, so their tasks need no work directories.
  eo.create_work_dirs = options.executor != "stub";
  // Every run, not only wide ones, is snapshotted at most once per interval
  // while only its tasks change (its own state changes and its end go out at
  // once). Each snapshot copies every task record and rewrites the run's
  // whole status in SQLite; a ten-step run of short steps would otherwise
  // write it a dozen times in a few milliseconds, for states no client could
  // have seen.
  eo.large_run_records = 0;
  if (options.cache) {
    cache = std::make_unique<StoreTaskCache>(*store);
    eo.cache = cache.get();
  }
  engine = std::make_unique<engine::Engine>(loop, *executor, *observer, eo);
}

// The handlers, their routes, the scheduler that starts recurring runs
// through them, and who may call.
Status Backend::Impl::MakeHandlers(const BackendOptions& options,
                                   const std::filesystem::path& work_root) {
  handlers = std::make_unique<Handlers>(*store, *engine, tracker, metrics);
  if (Status s = handlers->Init(); !s.ok()) return s.error();
  handlers->Register(router);
  scheduler = std::make_unique<Scheduler>(
      *store, [h = handlers.get()](const kfp::RecurringRun& r, WallTime fire) {
        return h->StartScheduledRun(r, fire);
      });
  handlers->set_scheduler(scheduler.get());
  handlers->set_package_root(options.package_root);
  handlers->set_work_root(work_root);
  handlers->set_multi_user(options.auth.multi_user);
  if (options.auth.enabled()) auth = std::make_unique<Authenticator>(options.auth);
  if (options.executor == "process") handlers->set_pod_metrics(&pod_metrics);
  return Ok();
}

std::string AccessLogLine(const AccessRecord& record) {
  auto safe = [](std::string_view text) {
    std::string out = text.empty() ? std::string("-") : std::string(text);
    for (char& c : out) {
      if (static_cast<unsigned char>(c) <= ' ' || c == '"' || c == 0x7f) c = '?';
    }
    return out;
  };
  return Redact(fmt::format("user={} namespace={} route={} status={} ms={:.1f}", safe(record.user),
                            safe(record.namespace_), safe(record.route), record.status,
                            record.seconds * 1000));
}

Result<std::unique_ptr<Backend>> Backend::Create(BackendOptions options) {
  auto impl = std::make_unique<Impl>();
  if (Status s = impl->OpenStore(options.db_path); !s.ok()) return s.error();
  auto work_root = impl->PrepareWorkRoot(options.work_root);
  if (!work_root.ok()) return work_root.error();
  if (Status s = impl->MakeExecutor(options, *work_root); !s.ok()) return s.error();
  impl->MakeEngine(options, *work_root);
  if (Status s = impl->MakeHandlers(options, *work_root); !s.ok()) return s.error();
  impl->options = std::move(options);
  impl->loop.Start();
  impl->scheduler->Start();
  return std::unique_ptr<Backend>(new Backend(std::move(impl)));
}

std::vector<http::Router::RouteInfo> Backend::Routes() const { return impl_->router.Routes(); }

http::Response Backend::Handle(const http::Request& request) {
  auto start = std::chrono::steady_clock::now();
  auto match = impl_->router.Find(request.method, request.path);
  http::Response response;
  const char* route = nullptr;
  // Authenticated before anything else, unknown paths included: a caller
  // without credentials learns nothing about the API.
  std::optional<http::Response> refused;
  std::optional<Caller> caller;
  AccessRecord access;
  if (impl_->auth) {
    auto authenticated = impl_->auth->Authenticate(request);
    if (auto* r = std::get_if<http::Response>(&authenticated)) {
      route = "Unauthenticated";
      refused = std::move(*r);
    } else {
      caller = std::move(std::get<Caller>(authenticated));
      access.user = caller->user;
    }
  }
  // A create request's body is read once, here: authorization decides on
  // that value and the handler acts on it (create_requests.h).
  std::optional<CreateBody> body;
  if (!refused && match.handler && HasCreateBody(*match.name)) {
    auto read = ReadCreateBody(*match.name, request);
    if (auto* r = std::get_if<http::Response>(&read)) {
      refused = std::move(*r);
    } else {
      body = std::move(std::get<CreateBody>(read));
    }
  }
  if (!refused && caller && impl_->auth->config().multi_user && match.handler) {
    // Authorize's two steps, so that the access log learns the namespace.
    auto target =
        AccessTargetOf(*match.name, request, match.params, *impl_->store, body ? &*body : nullptr);
    if (!target.ok()) {
      refused = ErrorResponse(target.error());
    } else {
      access.namespace_ = target->namespace_;
      refused = CheckAccess(*target, *caller, *impl_->auth);
    }
  }
  if (refused) {
    response = std::move(*refused);
  } else if (!match.handler) {
    if (match.path_matched) {
      route = "MethodNotAllowed";
      response = ErrorResponse(405, fmt::format("method {} is not allowed on {}",
                                                http::MethodName(request.method), request.path));
    } else {
      route = "NotFound";
      response = ErrorResponse(404, fmt::format("no API at {}", request.path));
    }
  } else {
    try {
      response = body ? impl_->handlers->Create(std::move(*body))
                      : (*match.handler)(request, match.params);
    } catch (const nlohmann::json::exception& e) {
      // Handlers check request JSON before using it; a value of an
      // unexpected type that slipped through is still the client's mistake.
      response = ErrorResponse(400, std::string("invalid request: ") + e.what());
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  impl_->metrics.Record(route ? std::string(route) : *match.name, response.status, seconds);
  if (impl_->options.access_log) {
    access.route = route ? std::string(route) : *match.name;
    access.status = response.status;
    access.seconds = seconds;
    impl_->options.access_log(access);
  }
  return response;
}

struct ApiServer::Impl {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<http::Server> server;
  std::string address;
  bool tls = false;
  std::string warning;
};

ApiServer::ApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ApiServer::~ApiServer() { Stop(); }

Result<std::unique_ptr<ApiServer>> ApiServer::Start(ServeOptions options) {
  std::string warning;
  if (Status s = CheckExposure(options.address, options.backend.executor, options.backend.auth,
                               options.allow_unauthenticated, options.allow_host_steps, warning);
      !s.ok()) {
    return s.error();
  }
  auto backend = Backend::Create(std::move(options.backend));
  if (!backend.ok()) return backend.error();
  auto impl = std::make_unique<Impl>();
  impl->backend = std::move(*backend);
  impl->address = options.address;
  impl->warning = std::move(warning);
  http::ServerOptions so;
  so.address = options.address;
  so.port = options.port;
  so.threads = options.threads;
  so.max_body_bytes = options.max_body_bytes;
  so.request_timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(options.request_timeout);
  so.max_connections = options.max_connections;
  so.tls_cert_file = options.tls_cert_file;
  so.tls_key_file = options.tls_key_file;
  impl->tls = !options.tls_cert_file.empty();
  Backend* b = impl->backend.get();
  so.handler = [b](const http::Request& r) { return b->Handle(r); };
  so.error_response = TransportErrorResponse;
  impl->server = std::make_unique<http::Server>(std::move(so));
  if (Status s = impl->server->Start(); !s.ok()) return s.error();
  return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

uint16_t ApiServer::port() const { return impl_->server->port(); }

std::string ApiServer::url() const {
  bool v6 = impl_->address.find(':') != std::string::npos;
  return fmt::format("{}://{}{}{}:{}", impl_->tls ? "https" : "http", v6 ? "[" : "", impl_->address,
                     v6 ? "]" : "", port());
}

const std::string& ApiServer::warning() const { return impl_->warning; }

void ApiServer::Stop() {
  if (impl_->server) impl_->server->Stop();
}

}  // namespace kfpbench::server
