#include <fmt/format.h>

#include "report/html_assets.h"
#include "report/html_page.h"
#include "report/markup.h"
#include "report/reporter.h"
#include "report/thresholds.h"

namespace kfpbench::report {

using nlohmann::json;

Result<std::string> HtmlReporter::Render(const harness::BenchmarkResults& results,
                                         const json& thresholds) {
  auto verdicts = VerdictsFor(results, thresholds);
  if (!verdicts.ok()) return verdicts.error();
  std::string title = "kfpbench report";
  if (!results.scenario_path.empty()) title += " — " + results.scenario_path;
  if (results.started.time_since_epoch().count()) title += " — " + FormatRfc3339(results.started);
  std::string page;
  page.reserve(assets::UplotJs().size() + 200000);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may be fetched: the page must render the same offline, and an
  // embedded string can never turn into a request.
  page +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src "
      "'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<title>" + EscapeMarkup(title) + "</title>\n<style>\n";
  page += InlineCode(assets::UplotCss(), "style");
  page += "\n";
  page += InlineCode(assets::ReportCss(), "style");
  page += "</style>\n</head>\n<body>\n";
  page += "<ul id=\"kfpbench-errors\" hidden></ul>\n";
  page += "<div id=\"kfpbench-status\" data-ready=\"false\" hidden></div>\n";
  page += "<main id=\"app\"></main>\n";
  page +=
      "<noscript><p>This report draws its charts with JavaScript; the data are in "
      "results.json beside it.</p></noscript>\n";
  page += "<script type=\"application/json\" id=\"kfpbench-results\">";
  page += ScriptJson(ResultsToJson(results));
  page += "</script>\n<script type=\"application/json\" id=\"kfpbench-verdicts\">";
  page += ScriptJson(VerdictsToJson(*verdicts));
  page += "</script>\n<script>\n/* uPlot ";
  page += assets::UplotVersion();
  page += "\n";
  page += InlineCode(assets::UplotLicense(), "script");
  page += "\n*/\n";
  page += InlineCode(WithoutBanner(assets::UplotJs()), "script");
  page += "\n</script>\n<script>\n";
  page += InlineCode(assets::ReportJs(), "script");
  page += "</script>\n</body>\n</html>\n";
  return page;
}

Status HtmlReporter::Report(const harness::BenchmarkResults& results) {
  auto page = Render(results, thresholds_);
  if (!page.ok()) return page.error();
  return WriteFileAtomically(path_, *page);
}

}  // namespace kfpbench::report
