#include <fmt/format.h>

#include "report/caveats.h"
#include "report/html_assets.h"
#include "report/html_inline.h"
#include "report/markup.h"
#include "report/reporter.h"
#include "report/thresholds.h"
#include "results/results_json.h"

namespace kfpbench::report {

using nlohmann::json;

Result<std::string> HtmlReporter::Render(const results::BenchmarkResults& results,
                                         const json& thresholds) {
  auto verdicts = VerdictsFor(results, thresholds);
  if (!verdicts.ok()) return verdicts.error();
  std::string title = "kfpbench report";
  if (!results.scenario_path.empty()) title += " — " + results.scenario_path;
  if (results.started.time_since_epoch().count()) title += " — " + FormatRfc3339(results.started);
  std::string page;
  page.reserve(assets::UplotJs().size() + 200000);
  page += ReportPageOpen(title);
  page +=
      "<noscript><p>This report draws its charts with JavaScript; the data are in "
      "results.json beside it.</p></noscript>\n";
  page += "<script type=\"application/json\" id=\"kfpbench-results\">";
  page += ScriptJson(results::ResultsToJson(results));
  page += "</script>\n<script type=\"application/json\" id=\"kfpbench-verdicts\">";
  page += ScriptJson(VerdictsToJson(*verdicts));
  page += "</script>\n<script type=\"application/json\" id=\"kfpbench-caveats\">";
  json caveats = json::array();
  for (const auto& c : CaveatsOf(results)) caveats.push_back({{"key", c.key}, {"text", c.text}});
  page += ScriptJson(caveats);
  page += "</script>\n";
  page += UplotScript();
  page += "<script>\n";
  page += Inline(assets::ReportJs(), "script");
  page += "\n";
  page += Inline(assets::PodLifecycleJs(), "script");
  page += "</script>\n</body>\n</html>\n";
  return page;
}

Status HtmlReporter::Report(const results::BenchmarkResults& results) {
  auto page = Render(results, thresholds_);
  if (!page.ok()) return page.error();
  return WriteFileAtomically(path_, *page);
}

}  // namespace kfpbench::report
