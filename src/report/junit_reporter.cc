#include <fmt/format.h>

#include "http/url.h"
#include "report/caveats.h"
#include "report/markup.h"
#include "report/reporter.h"
#include "report/thresholds.h"

namespace kfpbench::report {
namespace {

// XML 1.0 allows no control characters but tab and line breaks, even escaped,
// so they are dropped rather than escaped.
std::string Testcase(const std::string& classname, const std::string& name,
                     const std::string& failure, const std::string& detail) {
  std::string out = fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"",
                                EscapeMarkup(classname), EscapeMarkup(name));
  if (failure.empty()) return out + "/>\n";
  return out + fmt::format(
                   ">\n      <failure message=\"{}\" type=\"threshold\">{}</failure>\n    "
                   "</testcase>\n",
                   EscapeMarkup(failure), EscapeMarkup(detail));
}

// JUnit's hostname is a host: the target URL's (the URL itself is the
// `target` property); the URL as it is when it does not parse.
std::string HostOf(const std::string& url) {
  auto parsed = http::ParseUrl(url);
  return parsed.ok() ? parsed->host : url;
}

}  // namespace

Status JunitReporter::Report(const results::BenchmarkResults& r) {
  auto verdicts = VerdictsFor(r, thresholds_);
  if (!verdicts.ok()) return verdicts.error();
  int tests = 0, failures = 0;
  std::string cases;
  for (const auto& v : *verdicts) {
    ++tests;
    std::string failure;
    if (!v.passed) {
      ++failures;
      failure =
          fmt::format("{} {}: observed {}, {}", v.metric, v.expression, v.observed_text, v.margin);
    }
    cases += Testcase("kfpbench.thresholds." + v.metric, v.expression, failure,
                      fmt::format("limit {}, observed {}", v.limit_text, v.observed_text));
  }
  // Scenario errors (an upload that failed, runs that could not be created)
  // fail the build as well: a benchmark that did not run cannot pass.
  ++tests;
  std::string errors;
  for (const auto& e : r.errors) errors += e + "\n";
  if (!r.errors.empty()) ++failures;
  cases += Testcase("kfpbench.benchmark", "scenarios ran without errors",
                    r.errors.empty() ? "" : fmt::format("{} scenario error(s)", r.errors.size()),
                    errors);
  // Caveats as properties (CI servers list them with the suite) and as the
  // suite's output, where a person reading the build log sees them.
  std::string caveat_properties, caveat_text;
  for (const auto& c : CaveatsOf(r)) {
    caveat_properties += fmt::format("      <property name=\"caveat.{}\" value=\"{}\"/>\n",
                                     EscapeMarkup(c.key), EscapeMarkup(c.text));
    caveat_text += "caveat: " + c.text + "\n";
  }
  double elapsed = ToSeconds(r.finished - r.started);
  std::string timestamp =
      r.started.time_since_epoch().count() ? FormatRfc3339(r.started) : std::string();
  std::string xml = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"kfpbench\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "time=\"{2:.3f}\">\n"
      "  <testsuite name=\"kfpbench thresholds\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"0\" time=\"{2:.3f}\" timestamp=\"{3}\" hostname=\"{4}\">\n"
      "    <properties>\n"
      "      <property name=\"kfpbench_version\" value=\"{5}\"/>\n"
      "      <property name=\"target\" value=\"{10}\"/>\n"
      "      <property name=\"scenario\" value=\"{6}\"/>\n"
      "{8}"
      "    </properties>\n"
      "{7}"
      "{9}"
      "  </testsuite>\n"
      "</testsuites>\n",
      tests, failures, elapsed, EscapeMarkup(timestamp), EscapeMarkup(HostOf(r.target.url)),
      EscapeMarkup(r.kfpbench_version), EscapeMarkup(r.scenario_path), cases, caveat_properties,
      caveat_text.empty() ? std::string()
                          : "    <system-out>" + EscapeMarkup(caveat_text) + "</system-out>\n",
      EscapeMarkup(r.target.url));
  return WriteFileAtomically(path_, xml);
}

}  // namespace kfpbench::report
