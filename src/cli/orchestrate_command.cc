#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "cli/profile_commands.h"
#include "harness/harness.h"
#include "harness/orchestrate.h"
#include "http/client.h"
#include "http/url.h"
#include "kfp/client.h"
#include "metrics/recorder.h"
#include "report/reporter.h"
#include "report/write_reports.h"
#include "util/secrets.h"

namespace kfpbench::cli {

Command AddOrchestrateCommand(CLI::App& app) {
  struct Flags {
    std::string csv;
    std::string pipeline;
    std::string experiment;
    int concurrency = 0;
    std::string rate;
    std::string host;
    std::string namespace_;
    std::string token_file;
    std::string out;
    bool keep = false;
    std::string poll_interval = "500ms";
    std::string drain_timeout = "30m";
    BackendFlags backend;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "orchestrate",
      "start one run per CSV row, the row's columns as the run's parameters, and record them "
      "like a benchmark");
  cmd->add_option("scenarios", f->csv, "SCENARIOS.csv: a header of parameter names, a row per run")
      ->required();
  cmd->add_option("--pipeline", f->pipeline,
                  "a pipeline file (uploaded, removed afterwards unless --keep) or the name of a "
                  "pipeline on the server")
      ->required();
  cmd->add_option("--experiment", f->experiment,
                  "experiment by name (created if missing, and then removed unless --keep)");
  cmd->add_option("--concurrency", f->concurrency, "runs in flight at once (default 4)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--rate", f->rate,
                  "start runs at a rate instead: 30 or 30/m (per minute), 0.5/s, 120/h");
  cmd->add_option("--host", f->host,
                  "KFP API server URL (default: the embedded backend on a loopback port)");
  cmd->add_option("--namespace", f->namespace_, "KFP namespace (multi-user deployments)");
  cmd->add_option("--token-file", f->token_file, "file holding a bearer token");
  cmd->add_option("--out", f->out, "results folder (default: results/<timestamp>)");
  cmd->add_flag("--keep", f->keep, "keep the pipeline, experiment and runs created");
  cmd->add_option("--poll-interval", f->poll_interval, "how often a run is polled")
      ->capture_default_str();
  cmd->add_option("--drain-timeout", f->drain_timeout, "how long each run is awaited")
      ->capture_default_str();
  f->backend.Add(*cmd);

  return {
      cmd, [f] {
        if (f->concurrency > 0 && !f->rate.empty()) {
          return Fail("give --concurrency or --rate, not both");
        }
        harness::OrchestratePlan plan;
        plan.csv_path = f->csv;
        plan.experiment_name = f->experiment;
        plan.concurrency = f->concurrency > 0 ? f->concurrency : 4;
        if (!f->rate.empty()) {
          auto rate = harness::ParseRate(f->rate);
          if (!rate.ok()) return Fail(rate.error().message);
          plan.rate_per_minute = *rate;
        }
        harness::HarnessOptions options;
        for (auto [text, out, name] :
             {std::tuple{&f->poll_interval, &options.poll_interval, "--poll-interval"},
              std::tuple{&f->drain_timeout, &options.drain_timeout, "--drain-timeout"}}) {
          auto d = ParseDuration(*text);
          if (!d.ok()) return Fail(std::string(name) + ": " + d.error().message);
          *out = *d;
        }
        options.keep = f->keep;
        options.interrupted = &g_interrupted;
        // The table is read before anything is started or sent.
        auto table = harness::LoadCsv(f->csv);
        if (!table.ok()) return Fail(table.error().message);

        std::string token;
        if (!f->token_file.empty()) {
          std::ifstream in(f->token_file);
          std::stringstream s;
          s << in.rdbuf();
          token = s.str();
          while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
            token.pop_back();
          }
          if (!in || token.empty())
            return Fail("--token-file: cannot read a token from " + f->token_file);
          RegisterSecret(token);
        }
        std::filesystem::path out_dir = f->out;
        if (out_dir.empty()) {
          auto now = std::chrono::floor<std::chrono::seconds>(WallClock::now());
          out_dir = "results/" + fmt::format("{:%Y%m%d-%H%M%S}", now);
        }

        std::string url = f->host;
        auto embedded = f->backend.StartUnlessHost(url);
        if (!embedded.ok()) return Fail(embedded.error().message);
        auto base = http::ParseUrl(url);
        if (!base.ok()) return Fail("--host: " + base.error().message);
        http::ClientOptions co;
        co.base = *base;
        if (!token.empty()) co.default_headers.Set("Authorization", "Bearer " + token);
        http::Client http(co);
        metrics::Recorder recorder(WallClock::now());
        harness::RecordingObserver observer(recorder);
        kfp::Client client(http, {f->namespace_}, &observer);

        auto spec = harness::ResolvePipeline(client, f->pipeline, plan);
        if (!spec.ok()) return Fail(spec.error().message);
        auto rows = harness::TypeRows(*table, *spec, f->csv);
        if (!rows.ok()) return Fail(rows.error().message);
        plan.rows = std::move(*rows);
        if (plan.Scheduled() && (f->concurrency > 0 || !f->rate.empty())) {
          return Fail(f->csv + ": its offset column schedules the runs; drop --concurrency/--rate");
        }

        std::error_code ec;
        std::filesystem::create_directories(out_dir, ec);
        if (ec) {
          return Fail(fmt::format("--out: cannot create {}: {}", out_dir.string(), ec.message()));
        }
        InstallSignalHandlers();
        auto results = harness::RunOrchestration(plan, client, recorder, options);
        results.target.url = url;
        results.target.embedded = *embedded != nullptr;

        report::ConsoleReporter(std::cout).Report(results).ok();
        auto json_path = out_dir / "results.json";
        if (Status s = report::JsonReporter(json_path).Report(results); !s.ok()) {
          return Fail(s.error().message, kExitFailed);
        }
        std::cout << "\nresults: " << json_path.string() << (results.partial ? " (partial)" : "")
                  << std::endl;
        auto reports = report::DefaultReportOptions(out_dir);
        if (Status s = report::WriteReports(results, reports); !s.ok()) {
          std::cerr << "kfpbench: " << s.error().message << "\n";
        } else {
          std::cout << "report:  " << reports.html.string() << std::endl;
        }
        if (g_interrupted.load()) return kExitInterrupted;
        bool all_succeeded = results.errors.empty();
        for (const auto& r : results.runs) all_succeeded &= r.state == RuntimeState::kSucceeded;
        return all_succeeded ? kExitOk : kExitFailed;
      }};
}

}  // namespace kfpbench::cli
