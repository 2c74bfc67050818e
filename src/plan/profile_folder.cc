#include "plan/profile_folder.h"

#include <optional>

#include <fmt/format.h>

#include "plan/command_errors.h"
#include "plan/profile_results.h"
#include "report/reporter.h"
#include "util/files.h"

namespace kfpbench::plan {
namespace {

// Through a temporary file: a full disk or Ctrl-C never leaves half a file.
Status WriteJson(const std::filesystem::path& path, const nlohmann::json& j) {
  return WriteFileAtomically(path, j.dump(2) + "\n");
}

}  // namespace

Result<ProfileFolder> ProfileToFolder(const ProfileRequest& r,
                                      const std::function<void(const ProfileReport&)>& on_report) {
  ProfileFolder folder;
  std::optional<ProfileRun> run;
  if (!r.from_results.empty()) {
    std::optional<ir::PipelineSpec> spec;
    if (!r.run.pipeline_path.empty()) {
      auto parsed = ir::LoadPipelineSpec(r.run.pipeline_path);
      if (!parsed.ok()) return BadInput(parsed.error().message);
      spec = std::move(*parsed);
    }
    auto report = ProfileFromResultsFile(r.from_results, spec ? &*spec : nullptr, r.run.profile);
    if (!report.ok()) return BadInput(report.error().message);
    folder.report = std::move(*report);
  } else {
    auto profiled = ProfileOnEmbeddedBackend(r.run);
    if (!profiled.ok()) return profiled.error();
    folder.report = profiled->report;
    run = std::move(*profiled);
  }

  std::error_code ec;
  std::filesystem::create_directories(r.out, ec);
  if (ec) return BadInput(fmt::format("cannot create {}: {}", r.out.string(), ec.message()));
  if (on_report) on_report(folder.report);
  folder.profile = r.out / "profile.json";
  if (Status s = WriteJson(folder.profile, ToJson(folder.report)); !s.ok())
    return Failed(s.error());
  if (!run) return folder;
  folder.results = r.out / "results.json";
  // Each task's figures go beside its timing, so `--from-results` and other
  // tools read them like a cluster's.
  AnnotateResults(run->results.runs, run->executions);
  if (Status s = report::JsonReporter(folder.results).Report(run->results); !s.ok()) {
    return Failed(s.error());
  }
  folder.sized = r.out / "pipeline-sized.json";
  if (Status s = WriteJson(folder.sized, run->sized_pipeline); !s.ok()) return Failed(s.error());
  return folder;
}

}  // namespace kfpbench::plan
