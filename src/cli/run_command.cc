#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/preflight.h"
#include "cli/run_repetitions.h"
#include "cli/target_config.h"
#include "harness/collector.h"
#include "harness/harness.h"
#include "harness/pod_collector.h"
#include "harness/prometheus.h"
#include "harness/scenario.h"
#include "http/client.h"
#include "ir/pipeline_spec.h"
#include "kfp/client.h"
#include "metrics/recorder.h"
#include "report/failures.h"
#include "report/reporter.h"
#include "report/thresholds.h"
#include "report/write_reports.h"
#include "util/secrets.h"
#include "util/time.h"

namespace kfpbench::cli {
namespace {

std::string Timestamp() {
  auto now = std::chrono::floor<std::chrono::seconds>(WallClock::now());
  return fmt::format("{:%Y%m%d-%H%M%S}", now);
}

Result<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{"--token-file: cannot read " + path};
  std::stringstream s;
  s << in.rdbuf();
  std::string token = s.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  if (token.empty()) return Error{"--token-file: " + path + " is empty"};
  return token;
}

// "5%" or "0.05" -> 0.05.
Result<double> ParsePercent(const std::string& text) {
  std::string t = text;
  bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !(v >= 0)) {
    return Error{"expected a percentage like 5% (got '" + text + "')"};
  }
  if (percent) v /= 100;
  if (v > 1) return Error{"must be at most 100% (got '" + text + "')"};
  return v;
}

// The live status: one rewritten line on a terminal, a plain line every ten
// seconds otherwise (logs, CI).
class StatusLine {
 public:
  explicit StatusLine(bool quiet) : quiet_(quiet), tty_(isatty(fileno(stderr)) != 0) {}

  void Show(const harness::Progress& p) {
    if (quiet_) return;
    ++ticks_;
    if (!tty_ && ticks_ % 10 != 0) return;
    // Past the planned time the load has stopped and runs in flight are
    // awaited: say so rather than let the clock run past its total.
    bool draining = p.elapsed > p.planned;
    std::string line = fmt::format(
        "[{}{:>5.0f}s/{:.0f}s] runs {} created, {} done{} | API {} calls, {} errors, p99 {}",
        draining ? "draining " : "", ToSeconds(p.elapsed), ToSeconds(p.planned), p.runs_created,
        p.runs_finished, p.runs_refused ? fmt::format(", {} refused", p.runs_refused) : "",
        p.api_calls, p.api_errors, FormatDuration(std::chrono::microseconds(p.p99_us)));
    if (tty_) {
      std::fprintf(stderr, "\r%s\033[K", line.c_str());
      shown_ = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

  void Done() {
    if (shown_) std::fprintf(stderr, "\n");
  }

 private:
  bool quiet_;
  bool tty_;
  bool shown_ = false;
  int ticks_ = 0;
};

}  // namespace

Command AddRunCommand(CLI::App& app) {
  struct Flags {
    std::string scenario;
    std::string host;
    std::string out;
    std::vector<std::string> pipeline_dirs;
    double time_scale = 1.0;
    std::string poll_interval = "500ms";
    std::string drain_timeout = "10m";
    std::string grace = "30s";
    bool keep = false;
    std::string namespace_;
    std::string token;
    std::string token_file;
    std::vector<std::string> headers;
    std::string cookie;
    std::string max_error_rate = "100%";
    std::string max_failed_runs = "0%";
    bool quiet = false;
    std::string config;
    std::string target;
    std::vector<std::string> collectors;
    std::string shard;
    kube::PodReaderOptions pods;  // --kube-context: pod lifecycle of the runs
    std::string ca_file;
    bool insecure = false;
    std::string api;
    std::string prometheus;
    std::string prometheus_wait = "30s";
    BackendFlags backend;
    RunRepetitionFlags repetitions;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand("run", "run a scenario file against KFP (default: embedded)");
  cmd->add_option("scenario", f->scenario, "scenario file (KFP perf-tests JSON)")->required();
  cmd->add_option("--host", f->host,
                  "KFP API server URL, e.g. http://localhost:8888 (default: start the embedded "
                  "backend on a loopback port)");
  cmd->add_option("--out", f->out, "results folder (default: results/<timestamp>)");
  cmd->add_option("--pipelines", f->pipeline_dirs, "folder to look for pipeline files in");
  cmd->add_option("--time-scale", f->time_scale, "multiply every time in the file")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--poll-interval", f->poll_interval, "how often a run is polled")
      ->capture_default_str();
  cmd->add_option("--drain-timeout", f->drain_timeout,
                  "how long runs in flight at the end are awaited")
      ->capture_default_str();
  cmd->add_option("--grace", f->grace, "after Ctrl-C, how long runs in flight are awaited")
      ->capture_default_str();
  cmd->add_flag("--keep", f->keep, "keep the pipelines, experiments and runs created");
  cmd->add_option("--namespace", f->namespace_, "KFP namespace (multi-user deployments)");
  cmd->add_option("--token", f->token, "bearer token (prefer --token-file)");
  cmd->add_option("--token-file", f->token_file, "file holding a bearer token");
  cmd->add_option("--header", f->headers,
                  "extra request header K:V (repeatable; values are "
                  "treated as secrets)");
  cmd->add_option("--cookie", f->cookie, "Cookie header value, e.g. authservice_session=...");
  cmd->add_option("--ca-file", f->ca_file,
                  "https: trust the CA certificates in this PEM file instead of the system's");
  cmd->add_flag("--insecure", f->insecure, "https: do not verify the server's certificate");
  cmd->add_option("--api", f->api, "KFP API version: v2beta1 (default) or v1beta1 (older servers)");
  cmd->add_option("--prometheus", f->prometheus,
                  "Prometheus URL: after the load, read each step's container CPU and memory");
  cmd->add_option("--prometheus-wait", f->prometheus_wait,
                  "how long to wait for Prometheus to scrape the last steps")
      ->capture_default_str();
  cmd->add_option("--max-error-rate", f->max_error_rate,
                  "stop the load when more API calls than this fail, e.g. 5%")
      ->capture_default_str();
  cmd->add_option("--max-failed-runs", f->max_failed_runs,
                  "the share of runs that may end other than SUCCEEDED before the benchmark "
                  "fails (exit 1), e.g. 5%")
      ->capture_default_str();
  cmd->add_flag("--quiet", f->quiet, "no live status line");
  cmd->add_option("--config", f->config, "targets file (default: ./kfpbench.yaml if present)");
  cmd->add_option("--target", f->target, "a target named in the config file");
  cmd->add_option("--shard", f->shard,
                  "i/N: send shard i (from 0) of N of the load; N processes together send what "
                  "one would (see kfpbench merge)");
  cmd->add_option("--collector", f->collectors,
                  "shell command run at start and end (KFPBENCH_PHASE=start|end) whose JSON "
                  "output is kept in the results (repeatable)");
  cmd->add_option("--kube-context", f->pods.context,
                  "kubeconfig context of the cluster KFP runs on: read the runs' pods (scheduling, "
                  "image pull, start, readiness) through kubectl, see docs/KUBERNETES.md");
  cmd->add_option("--kube-namespace", f->pods.namespace_,
                  "namespace of the runs' pods (default: --namespace, else kubeflow)");
  f->backend.Add(*cmd);
  f->repetitions.Add(*cmd);

  return {
      cmd, [f] {
        harness::LoadOptions load;
        load.time_scale = f->time_scale;
        for (const auto& d : f->pipeline_dirs) load.pipeline_dirs.emplace_back(d);
        auto scenarios = harness::LoadScenarioFile(f->scenario, load);
        if (!scenarios.ok()) return Fail(scenarios.error().message);
        // Refuse up front, with validate's words, what would fail midway.
        auto preflight = CheckScenarioFile(*scenarios);
        if (!preflight.problems.empty()) {
          return Fail(fmt::format("{}", fmt::join(preflight.problems, "\n")));
        }
        for (const auto& note : preflight.notes) spdlog::info("{}", note);
        if (!f->shard.empty()) {
          int index = -1, count = 0;
          char slash = 0;
          std::istringstream in(f->shard);
          if (!(in >> index >> slash >> count) || slash != '/' || !in.eof()) {
            return Fail("--shard: expected i/N, e.g. 0/4 (got '" + f->shard + "')");
          }
          if (Status s = harness::ApplyShard(*scenarios, index, count); !s.ok()) {
            return Fail(s.error().message);
          }
        }
        harness::HarnessOptions options;
        for (auto [text, out, name] :
             {std::tuple{&f->poll_interval, &options.poll_interval, "--poll-interval"},
              std::tuple{&f->drain_timeout, &options.drain_timeout, "--drain-timeout"},
              std::tuple{&f->grace, &options.grace, "--grace"}}) {
          auto d = ParseDuration(*text);
          if (!d.ok()) return Fail(std::string(name) + ": " + d.error().message);
          *out = *d;
        }
        options.keep = f->keep;
        auto max_error_rate = ParsePercent(f->max_error_rate);
        if (!max_error_rate.ok())
          return Fail("--max-error-rate: " + max_error_rate.error().message);
        options.max_error_rate = *max_error_rate;
        auto max_failed_runs = ParsePercent(f->max_failed_runs);
        if (!max_failed_runs.ok()) {
          return Fail("--max-failed-runs: " + max_failed_runs.error().message);
        }
        options.interrupted = &g_interrupted;

        // A named target fills what the flags leave out.
        TargetConfig config;
        std::string config_path = f->config;
        if (config_path.empty() && std::filesystem::exists("kfpbench.yaml"))
          config_path = "kfpbench.yaml";
        if (!config_path.empty()) {
          auto c = LoadTargetConfig(config_path);
          if (!c.ok()) return Fail(c.error().message);
          config = std::move(*c);
        } else if (!f->target.empty()) {
          return Fail("--target: no config file (pass --config FILE or create kfpbench.yaml)");
        }
        // Where to run, first found wins: --host; --target NAME; the scenario
        // file's own "target"; kfpbench.yaml's default_target; the embedded
        // backend. Flags always override the keys of the target chosen.
        auto target = SelectTarget(config, f->target);
        if (!target.ok()) return Fail(target.error().message);
        if (f->target.empty() && !scenarios->target.empty()) {
          target = ParseScenarioTarget(scenarios->target, f->scenario);  // checked by preflight
          if (!target.ok()) return Fail(target.error().message);
        }
        if (f->host.empty()) f->host = target->host;
        if (f->namespace_.empty()) f->namespace_ = target->namespace_;
        if (f->token_file.empty() && f->token.empty()) f->token_file = target->token_file;
        if (f->ca_file.empty()) f->ca_file = target->ca_file;
        f->insecure = f->insecure || target->insecure;
        if (f->api.empty()) f->api = target->api_version;
        auto api = kfp::ParseApiVersion(f->api);
        if (!api.ok()) return Fail("--api: " + api.error().message);
        if (!f->ca_file.empty() && !std::filesystem::is_regular_file(f->ca_file)) {
          return Fail("--ca-file: cannot read " + f->ca_file);
        }
        std::optional<http::Url> prometheus_url;
        harness::PrometheusOptions prometheus_options;
        if (!f->prometheus.empty()) {
          auto u = http::ParseUrl(f->prometheus);
          if (!u.ok()) return Fail("--prometheus: " + u.error().message);
          prometheus_url = *u;
          auto wait = ParseDuration(f->prometheus_wait);
          if (!wait.ok()) return Fail("--prometheus-wait: " + wait.error().message);
          prometheus_options.wait = *wait;
        }

        if (!f->pods.context.empty()) {
          if (f->pods.namespace_.empty()) f->pods.namespace_ = f->namespace_;
          if (f->pods.namespace_.empty()) f->pods.namespace_ = "kubeflow";
          options.before_cleanup = harness::PodLifecycleStep(f->pods);
        }

        std::string token = f->token;
        if (!f->token_file.empty()) {
          auto t = ReadTokenFile(f->token_file);
          if (!t.ok()) return Fail(t.error().message);
          token = *t;
        }
        RegisterSecret(token);

        std::filesystem::path out_dir = f->out.empty() ? "results/" + Timestamp() : f->out;
        std::error_code ec;
        std::filesystem::create_directories(out_dir, ec);
        if (ec)
          return Fail(fmt::format("--out: cannot create {}: {}", out_dir.string(), ec.message()));

        std::string url = f->host;
        auto embedded = f->backend.StartUnlessHost(url);
        if (!embedded.ok()) return Fail(embedded.error().message);
        auto base = http::ParseUrl(url);
        if (!base.ok()) return Fail("--host: " + base.error().message);
        http::ClientOptions co;
        co.base = *base;
        co.ca_file = f->ca_file;
        co.insecure = f->insecure;
        if (!token.empty()) co.default_headers.Set("Authorization", "Bearer " + token);
        if (!f->cookie.empty()) {
          RegisterSecret(f->cookie);
          co.default_headers.Set("Cookie", f->cookie);
        }
        for (const auto& h : f->headers) {
          auto colon = h.find(':');
          if (colon == std::string::npos || colon == 0) {
            return Fail("--header: expected NAME:VALUE, got '" + Redact(h) + "'");
          }
          std::string value = h.substr(colon + 1);
          while (!value.empty() && value.front() == ' ') value.erase(0, 1);
          RegisterSecret(value);
          co.default_headers.Add(h.substr(0, colon), value);
        }
        http::Client http(co);
        metrics::Recorder recorder(WallClock::now());
        harness::RecordingObserver observer(recorder);
        kfp::Client client(http, {f->namespace_, *api}, &observer);
        RepeatedRun repeated(f->repetitions, recorder, &g_interrupted);
        if (Status s = repeated.Start(); !s.ok()) return Fail(s.error().message);

        auto health = client.GetHealthz();
        if (!health.ok()) {
          // 400 at healthz: usually plain http to an https port (ours and nginx say so).
          if (health.error().code == 0 || health.error().code == 400 ||
              health.error().code == 401 || health.error().code == 403) {
            return Fail(fmt::format("cannot use {}: {}", url, health.error().message));
          }
          spdlog::warn("healthz failed ({}); going on", health.error().message);
        }

        InstallSignalHandlers();
        constexpr auto kCollectorTimeout = std::chrono::seconds(60);
        auto results = repeated.Run(out_dir, [&](const auto& on_progress) {
          nlohmann::json collected = nlohmann::json::array();
          for (const auto& c : f->collectors) {
            collected.push_back(harness::RunCollector(c, "start", url, kCollectorTimeout));
          }
          StatusLine status(f->quiet);
          auto results = harness::RunScenarios(*scenarios, client, recorder, options,
                                               [&](const harness::Progress& p) {
                                                 status.Show(p);
                                                 on_progress(p);
                                               });
          status.Done();
          if (prometheus_url) {
            http::ClientOptions po;
            po.base = *prometheus_url;
            po.ca_file = f->ca_file;
            po.insecure = f->insecure;
            http::Client prometheus(po);
            prometheus_options.namespace_ = f->namespace_;
            auto filled = harness::AddPrometheusUsage(results.runs, prometheus, prometheus_options);
            if (filled.ok()) {
              spdlog::info("prometheus: CPU and memory for {} step(s)", *filled);
            } else {
              results.errors.push_back(filled.error().message);
            }
          }
          for (const auto& c : f->collectors) {
            collected.push_back(harness::RunCollector(c, "end", url, kCollectorTimeout));
          }
          results.collectors = std::move(collected);
          results.target.url = url;
          results.target.embedded = *embedded != nullptr;
          results.target.api_version = std::string(kfp::ApiVersionName(*api));
          if (health.ok()) results.target.healthz = kfp::ToJson(*health);
          return results;
        });

        report::ConsoleReporter(std::cout).Report(results).ok();
        auto json_path = out_dir / "results.json";
        if (Status s = report::JsonReporter(json_path).Report(results); !s.ok()) {
          return Fail(s.error().message, kExitFailed);
        }
        std::cout << "\nresults: " << json_path.string() << (results.partial ? " (partial)" : "")
                  << std::endl;
        auto reports = report::DefaultReportOptions(out_dir);
        reports.thresholds = scenarios->thresholds;
        if (Status s = report::WriteReports(results, reports); !s.ok()) {
          std::cerr << "kfpbench: " << s.error().message << "\n";
        } else {
          std::cout << "report:  " << reports.html.string() << std::endl;
        }
        bool thresholds_failed = false;
        if (!scenarios->thresholds.empty()) {
          auto verdicts = report::EvaluateThresholds(results, scenarios->thresholds);
          if (!verdicts.ok()) return Fail(verdicts.error().message);
          std::cout << "\nThresholds\n";
          for (const auto& v : *verdicts) {
            std::cout << fmt::format("  {:<4} {:<16} {:<22} observed {} ({})\n",
                                     v.passed ? "ok" : "FAIL", v.metric, v.expression,
                                     v.observed_text, v.margin);
          }
          thresholds_failed = !report::AllPassed(*verdicts);
          repeated.NotifyThresholds(results, *verdicts, json_path.string());
        }
        auto failures = report::FailureReasons(results, {*max_failed_runs});
        if (!failures.empty()) {
          std::cout << "\nFAILED\n";
          for (const auto& reason : failures) std::cout << "  " << reason << "\n";
        }
        if (g_interrupted.load()) return kExitInterrupted;
        if (thresholds_failed) return kExitThresholdsFailed;
        return failures.empty() ? kExitOk : kExitFailed;
      }};
}

}  // namespace kfpbench::cli
