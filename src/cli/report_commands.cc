#include "cli/commands.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <limits>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "report/compare.h"
#include "report/history.h"
#include "report/merge.h"
#include "report/notify.h"
#include "report/reporter.h"
#include "report/thresholds.h"
#include "report/write_reports.h"
#include "results/results_json.h"
#include "util/files.h"
#include "util/json_reader.h"
#include "util/secrets.h"

namespace kfpbench::cli {
namespace {

Result<nlohmann::json> ReadThresholds(const std::string& path) {
  if (path.empty()) return nlohmann::json();
  auto text = ReadFile(path);
  if (!text.ok()) return text.error();
  nlohmann::json j = ParseJson(*text);
  if (j.is_discarded()) return Error{fmt::format("{}: not valid JSON", path)};
  // A whole scenario file works too: its "thresholds" are used.
  if (j.is_object() && j.contains("thresholds") && j.contains("scenarios")) return j["thresholds"];
  return j;
}

void PrintVerdicts(const std::vector<report::Verdict>& verdicts) {
  for (const auto& v : verdicts) {
    std::cout << fmt::format("{} {}: {} (observed {}; {})\n", v.passed ? "pass" : "FAIL", v.metric,
                             v.expression, v.observed_text, v.margin);
  }
}

Command AddMerge(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "merge", "merge results of parallel load generators or repetitions into one, exactly");
  struct Flags {
    std::vector<std::string> dirs;
    std::string out;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("dirs", f->dirs, "results folders (or results.json files)")->required();
  cmd->add_option("--out", f->out, "folder for the merged results.json and report.html")
      ->required();
  return {cmd, [f] {
            auto merged = report::MergeFiles(f->dirs);
            if (!merged.ok()) return Fail(merged.error().message, kExitBadInput);
            std::filesystem::path out(f->out);
            if (Status s = report::WriteMerged(*merged, out); !s.ok()) {
              return Fail(s.error().message, kExitFailed);
            }
            std::cout << fmt::format("merged {} results: {} API calls, {} runs -> {}\n",
                                     f->dirs.size(), merged->ApiCalls(), merged->runs.size(),
                                     (out / "results.json").string());
            return kExitOk;
          }};
}

Command AddReport(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report", "write reports (HTML, CSV, JUnit XML, Markdown) from a results folder");
  struct Flags {
    std::string dir;
    report::ReportOptions options;
    std::string html, csv, junit, markdown, thresholds;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("dir", f->dir, "results folder (or results.json file)")->required();
  auto* html = cmd->add_option("--html", f->html,
                               "self-contained HTML report (bare: DIR/report.html, also the "
                               "default when no other format is named)")
                   ->expected(0, 1);
  cmd->add_option("--csv", f->csv, "folder for operations.csv, runs.csv and tasks.csv");
  cmd->add_option("--junit", f->junit, "JUnit XML, one testcase per threshold");
  cmd->add_option("--markdown", f->markdown, "Markdown summary for a pull-request comment");
  cmd->add_option("--thresholds", f->thresholds,
                  "JSON thresholds (or a scenario file) instead of the scenario's own");
  return {cmd, [f, html] {
            auto results = results::LoadResults(f->dir);
            if (!results.ok()) return Fail(results.error().message, kExitBadInput);
            auto thresholds = ReadThresholds(f->thresholds);
            if (!thresholds.ok()) return Fail(thresholds.error().message, kExitBadInput);
            report::ReportOptions o;
            o.html = f->html;
            o.csv_dir = f->csv;
            o.junit = f->junit;
            o.markdown = f->markdown;
            o.thresholds = *thresholds;
            if (o.html.empty() && (html->count() > 0 ||
                                   (o.csv_dir.empty() && o.junit.empty() && o.markdown.empty()))) {
              std::filesystem::path dir = f->dir;
              if (!std::filesystem::is_directory(dir)) dir = dir.parent_path();
              o.html = report::DefaultReportOptions(dir).html;
            }
            auto verdicts = report::VerdictsFor(*results, o.thresholds);
            if (!verdicts.ok()) return Fail(verdicts.error().message, kExitBadInput);
            if (Status s = report::WriteReports(*results, o); !s.ok()) {
              return Fail(s.error().message, kExitFailed);
            }
            PrintVerdicts(*verdicts);
            for (const auto& p : {o.html, o.csv_dir, o.junit, o.markdown}) {
              if (!p.empty()) std::cout << "wrote " << p.string() << "\n";
            }
            return report::AllPassed(*verdicts) ? kExitOk : kExitThresholdsFailed;
          }};
}

// A side of a comparison: a results folder (one repetition), or a folder
// whose subfolders each hold one repetition's results.json.
Result<std::vector<results::BenchmarkResults>> LoadSide(const std::string& path) {
  std::filesystem::path p(path);
  std::error_code ec;
  if (!std::filesystem::is_directory(p, ec) || std::filesystem::exists(p / "results.json", ec)) {
    return results::LoadAll({path});
  }
  std::vector<std::string> reps;
  for (const auto& e : std::filesystem::directory_iterator(p, ec)) {
    if (std::filesystem::exists(e.path() / "results.json")) reps.push_back(e.path().string());
  }
  if (reps.empty()) {
    return Error{fmt::format("{}: no results.json, here or in its subfolders", path)};
  }
  std::sort(reps.begin(), reps.end());
  return results::LoadAll(reps);
}

Command AddCompare(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "compare",
      "compare a candidate with a baseline: change in p50/p95/p99/mean with its interval, p and "
      "power from one bootstrap over every repetition's calls and runs (repetitions that differ "
      "paired as blocks); exit 1 on a significant regression above --min-effect, 3 when the "
      "samples could not have shown one (inconclusive), of the rows --metric names (default: "
      "the scenario's latency thresholds, else every metric but set-up operations)");
  struct Flags {
    std::string baseline, candidate, min_effect = "5%", format = "text", notify;
    report::CompareOptions options;
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("baseline", f->baseline,
                  "results folder, or a folder of repetitions (one results folder each)")
      ->required();
  cmd->add_option("candidate", f->candidate, "the same for the candidate")->required();
  cmd->add_option("--alpha", f->options.alpha, "significance level")->capture_default_str();
  cmd->add_option("--min-effect", f->min_effect, "smallest regression that fails, e.g. 5% or 0.05")
      ->capture_default_str();
  cmd->add_option("--seed", f->options.seed, "bootstrap seed")->capture_default_str();
  cmd->add_option("--metric", f->options.gate,
                  "what the gate is about (repeatable): a metric (run_duration, GetRun) or one "
                  "statistic of it (GetRun:p95); other rows are shown but do not decide the exit "
                  "code")
      ->type_name("METRIC[:STAT]");
  cmd->add_option("--format", f->format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  cmd->add_option("--notify", f->notify,
                  "POST a JSON summary (Slack-compatible `text`) to this URL on a failing "
                  "regression");
  return {cmd, [f] {
            if (!f->notify.empty()) {
              RegisterSecret(f->notify);  // webhook URLs carry their secret
              if (Status s = report::CheckNotifyUrl(f->notify); !s.ok()) {
                return Fail(s.error().message, kExitBadInput);
              }
            }
            auto effect = ParsePercent(f->min_effect, std::numeric_limits<double>::infinity());
            if (!effect.ok()) return Fail("--min-effect: " + effect.error().message, kExitBadInput);
            f->options.min_effect = *effect;
            auto base = LoadSide(f->baseline);
            if (!base.ok()) return Fail(base.error().message, kExitBadInput);
            auto cand = LoadSide(f->candidate);
            if (!cand.ok()) return Fail(cand.error().message, kExitBadInput);
            for (const auto& w : report::ComparabilityWarnings({&base->front(), &cand->front()},
                                                               {f->baseline, f->candidate})) {
              std::cerr << "kfpbench: warning: " << Redact(w) << "\n";
            }
            auto c = report::Compare(*base, *cand, f->options);
            if (!c.ok()) return Fail(c.error().message, kExitBadInput);
            if (f->format == "json") {
              std::cout << report::ComparisonJson(*c, f->options).dump(2) << "\n";
            } else if (f->format == "markdown") {
              std::cout << report::ComparisonMarkdown(*c, f->options);
            } else {
              std::cout << fmt::format("baseline: {} repetition(s); candidate: {}\n\n",
                                       c->baseline_repetitions, c->candidate_repetitions)
                        << report::ComparisonText(*c, f->options);
            }
            if (!f->notify.empty()) {
              auto body = report::RegressionNotification(*c, f->options, cand->front(), f->baseline,
                                                         f->candidate);
              if (body) {
                if (Status s = report::PostNotification(f->notify, *body); !s.ok()) {
                  std::cerr << "kfpbench: " << Redact(s.error().message) << "\n";
                }
              }
            }
            if (c->regressed) return kExitFailed;
            return c->inconclusive ? kExitInconclusive : kExitOk;
          }};
}

Command AddHistory(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "history",
      "tabulate a metric across many results folders (by date or target version) and flag "
      "slow drift with a trend test");
  struct Flags {
    std::vector<std::string> dirs;
    std::string metric = "run_duration", by = "date", html, csv, format = "text";
  };
  auto f = std::make_shared<Flags>();
  cmd->add_option("dirs", f->dirs, "results folders (or results.json files)")->required();
  cmd->add_option("--metric", f->metric,
                  "an operation (GetRun, CreateRun, ...), run_duration or "
                  "queue_wait")
      ->capture_default_str();
  cmd->add_option("--by", f->by, "order: date (started_at) or version (the target's healthz)")
      ->check(CLI::IsMember({"date", "version"}))
      ->capture_default_str();
  cmd->add_option("--html", f->html, "write a self-contained page with a chart");
  cmd->add_option("--csv", f->csv,
                  "folder for history.csv, one row per results folder (a folder, as for "
                  "report --csv)");
  cmd->add_option("--format", f->format, "text, markdown or json on stdout")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  return {cmd, [f] {
            std::vector<report::NamedResults> runs;
            for (const auto& d : f->dirs) {
              auto r = results::LoadResults(d);
              if (!r.ok()) return Fail(r.error().message, kExitBadInput);
              runs.push_back({d, std::move(*r)});
            }
            std::vector<const results::BenchmarkResults*> all;
            for (const auto& r : runs) all.push_back(&r.results);
            for (const auto& w : report::ComparabilityWarnings(all, f->dirs)) {
              std::cerr << "kfpbench: warning: " << Redact(w) << "\n";
            }
            report::HistoryOptions o;
            o.metric = f->metric;
            o.order =
                f->by == "version" ? report::HistoryOrder::kVersion : report::HistoryOrder::kDate;
            auto h = report::BuildHistory(std::move(runs), o);
            if (!h.ok()) return Fail(h.error().message, kExitBadInput);
            if (f->format == "json") {
              std::cout << report::HistoryJson(*h).dump(2) << "\n";
            } else if (f->format == "markdown") {
              std::cout << report::HistoryMarkdown(*h);
            } else {
              std::cout << report::HistoryText(*h);
            }
            std::string csv;
            if (!f->csv.empty()) {
              std::error_code ec;
              std::filesystem::create_directories(f->csv, ec);
              if (ec) return Fail(fmt::format("cannot create {}: {}", f->csv, ec.message()));
              csv = (std::filesystem::path(f->csv) / "history.csv").string();
            }
            for (auto [path, text] :
                 {std::pair{f->html, &report::HistoryHtml}, std::pair{csv, &report::HistoryCsv}}) {
              if (path.empty()) continue;
              if (Status s = WriteFileAtomically(path, text(*h)); !s.ok()) {
                return Fail(s.error().message, kExitFailed);
              }
              if (f->format != "json") std::cout << "wrote " << path << "\n";
            }
            return kExitOk;
          }};
}

}  // namespace

void AddReportCommands(CLI::App& app, std::vector<Command>& commands) {
  commands.push_back(AddMerge(app));
  commands.push_back(AddReport(app));
  commands.push_back(AddCompare(app));
  commands.push_back(AddHistory(app));
}

}  // namespace kfpbench::cli
