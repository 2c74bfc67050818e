#include "report/job_report.h"

#include "report/html_assets.h"
#include "report/html_inline.h"
#include "report/reporter.h"

namespace kfpbench::report {

Result<std::string> RenderJobReport(const nlohmann::json& jobs) {
  if (!jobs.is_object()) return Error{"job results: expected an object"};
  auto runs = jobs.find("runs");
  if (runs == jobs.end() || !runs->is_array()) return Error{"job results: runs: expected an array"};
  for (size_t i = 0; i < runs->size(); ++i) {
    const auto& run = (*runs)[i];
    std::string at = "job results: runs[" + std::to_string(i) + "]";
    if (!run.is_object()) return Error{at + ": expected an object"};
    for (const char* key : {"parameters", "metrics"}) {
      if (!run.contains(key) || !run[key].is_object())
        return Error{at + "." + key + ": expected an object"};
    }
  }
  if (jobs.contains("swept") && !jobs["swept"].is_array()) {
    return Error{"job results: swept: expected an array"};
  }
  std::string page =
      ReportPageOpen("kfpbench job report — " + jobs.value("config", std::string("?")));
  page +=
      "<noscript><p>This report draws its charts with JavaScript; the data are in job_results.json "
      "and results.csv beside it.</p></noscript>\n";
  page += "<script type=\"application/json\" id=\"kfpbench-jobs\">";
  page += ScriptJson(jobs);
  page += "</script>\n";
  page += UplotScript();
  page += "<script>\n";
  page += Inline(assets::JobReportJs(), "script");
  page += "</script>\n</body>\n</html>\n";
  return page;
}

Status WriteJobReport(const std::filesystem::path& path, const nlohmann::json& jobs) {
  auto page = RenderJobReport(jobs);
  if (!page.ok()) return page.error();
  return WriteFileAtomically(path, *page);
}

}  // namespace kfpbench::report
