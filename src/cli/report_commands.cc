#include "cli/report_commands.h"

#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/cli.h"
#include "cli/common.h"
#include "report/merge.h"
#include "report/reporter.h"
#include "report/results_reader.h"
#include "report/thresholds.h"
#include "report/write_reports.h"

namespace kfpbench::cli {
namespace {

Result<std::vector<harness::BenchmarkResults>> LoadAll(const std::vector<std::string>& dirs) {
  std::vector<harness::BenchmarkResults> out;
  for (const auto& d : dirs) {
    auto r = report::LoadResults(d);
    if (!r.ok()) return r.error();
    out.push_back(std::move(*r));
  }
  return out;
}

Result<nlohmann::json> ReadThresholds(const std::string& path) {
  if (path.empty()) return nlohmann::json();
  std::ifstream in(path);
  if (!in) return Error{fmt::format("{}: cannot read", path)};
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
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
            auto parts = LoadAll(f->dirs);
            if (!parts.ok()) return Fail(parts.error().message, kExitBadInput);
            auto merged = report::MergeResults(*parts);
            if (!merged.ok()) return Fail(merged.error().message, kExitBadInput);
            std::error_code ec;
            std::filesystem::create_directories(f->out, ec);
            if (ec) return Fail(fmt::format("cannot create {}: {}", f->out, ec.message()));
            std::filesystem::path out(f->out);
            if (Status s = report::JsonReporter(out / "results.json").Report(*merged); !s.ok()) {
              return Fail(s.error().message, kExitFailed);
            }
            if (Status s = report::WriteReports(*merged, report::DefaultReportOptions(out));
                !s.ok()) {
              return Fail(s.error().message, kExitFailed);
            }
            std::cout << fmt::format(
                "merged {} results: {} API calls, {} runs -> {}\n", parts->size(),
                [&] {
                  uint64_t n = 0;
                  for (const auto& [name, op] : merged->operations) {
                    n += op.latency_us.count();
                  }
                  return n;
                }(),
                merged->runs.size(), (out / "results.json").string());
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
  cmd->add_option("--html", f->html, "self-contained HTML report (default: DIR/report.html)");
  cmd->add_option("--csv", f->csv, "folder for operations.csv, runs.csv and tasks.csv");
  cmd->add_option("--junit", f->junit, "JUnit XML, one testcase per threshold");
  cmd->add_option("--markdown", f->markdown, "Markdown summary for a pull-request comment");
  cmd->add_option("--thresholds", f->thresholds,
                  "JSON thresholds (or a scenario file) instead of the scenario's own");
  return {cmd, [f] {
            auto results = report::LoadResults(f->dir);
            if (!results.ok()) return Fail(results.error().message, kExitBadInput);
            auto thresholds = ReadThresholds(f->thresholds);
            if (!thresholds.ok()) return Fail(thresholds.error().message, kExitBadInput);
            report::ReportOptions o;
            o.html = f->html;
            o.csv_dir = f->csv;
            o.junit = f->junit;
            o.markdown = f->markdown;
            o.thresholds = *thresholds;
            if (o.html.empty() && o.csv_dir.empty() && o.junit.empty() && o.markdown.empty()) {
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
            return kExitOk;
          }};
}

}  // namespace

void AddReportCommands(CLI::App& app, std::vector<Command>& commands) {
  commands.push_back(AddMerge(app));
  commands.push_back(AddReport(app));
}

}  // namespace kfpbench::cli
