#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "report/html_assets.h"
#include "report/markup.h"
#include "report/reporter.h"
#include "report/thresholds.h"

namespace kfpbench::report {
namespace {

using nlohmann::json;

// JSON inside <script type="application/json">: a '<' may only occur inside a
// JSON string, where \u003c means the same, so no "</script>" or "<!--" in the
// data can end the element or change how the parser reads it.
std::string ScriptJson(const json& j) {
  std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else {
      out += c;
    }
  }
  return out;
}

// Inlined code must not contain the closing tag of its element; "<\/" is the
// same text to JavaScript and CSS alike.
std::string Inline(std::string_view code, std::string_view tag) {
  std::string out;
  std::string closing = "</" + std::string(tag);
  size_t i = 0;
  while (i < code.size()) {
    bool match = i + closing.size() <= code.size() &&
                 std::equal(closing.begin(), closing.end(), code.begin() + i, [](char a, char b) {
                   return std::tolower(static_cast<unsigned char>(a)) ==
                          std::tolower(static_cast<unsigned char>(b));
                 });
    if (match) {
      out += "<\\/";
      i += 2;
    } else {
      out += code[i++];
    }
  }
  return out;
}

// uPlot's minified build opens with a banner naming its home page; the page
// keeps the MIT notice instead and names no address at all.
std::string_view WithoutBanner(std::string_view js) {
  if (js.starts_with("/*!")) {
    size_t end = js.find("*/");
    if (end != std::string_view::npos) js.remove_prefix(end + 2);
  }
  return js;
}

}  // namespace

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
  page += Inline(assets::UplotCss(), "style");
  page += "\n";
  page += Inline(assets::ReportCss(), "style");
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
  page += Inline(assets::UplotLicense(), "script");
  page += "\n*/\n";
  page += Inline(WithoutBanner(assets::UplotJs()), "script");
  page += "\n</script>\n<script>\n";
  page += Inline(assets::ReportJs(), "script");
  page += "</script>\n</body>\n</html>\n";
  return page;
}

Status HtmlReporter::Report(const harness::BenchmarkResults& results) {
  auto page = Render(results, thresholds_);
  if (!page.ok()) return page.error();
  return WriteFileAtomically(path_, *page);
}

}  // namespace kfpbench::report
