#include "report/notify.h"

#include <fmt/format.h>

#include "http/client.h"
#include "http/url.h"
#include "util/secrets.h"

namespace kfpbench::report {
namespace {

// The target without credentials: secrets redacted, user:password@ dropped.
std::string SafeUrl(const std::string& url) {
  std::string out = Redact(url);
  auto scheme = out.find("://");
  auto at = out.find('@', scheme == std::string::npos ? 0 : scheme + 3);
  auto slash = out.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (scheme != std::string::npos && at != std::string::npos &&
      (slash == std::string::npos || at < slash)) {
    out.erase(scheme + 3, at - scheme - 2);
  }
  return out;
}

std::string ScenarioName(const results::BenchmarkResults& r) {
  return r.scenario_path.empty() ? std::string("(unnamed)") : r.scenario_path;
}

// What every notification says: its text (redacted), its event, the
// scenario, the target and the failures; the caller adds its own fields.
nlohmann::json Notification(const char* event, const std::string& text,
                            const results::BenchmarkResults& results, nlohmann::json failures) {
  return {{"text", Redact(text)},
          {"event", event},
          {"scenario", ScenarioName(results)},
          {"target", SafeUrl(results.target.url)},
          {"kfpbench_version", results.kfpbench_version},
          {"failures", std::move(failures)}};
}

// scheme://host:port, what an error may show of a webhook URL.
std::string Origin(const http::Url& u) {
  return fmt::format("{}://{}:{}", u.scheme, u.host, u.port);
}

}  // namespace

std::optional<nlohmann::json> ThresholdNotification(const results::BenchmarkResults& results,
                                                    const std::vector<Verdict>& verdicts,
                                                    const std::string& results_path) {
  nlohmann::json failures = nlohmann::json::array();
  std::string lines;
  for (const auto& v : verdicts) {
    if (v.passed) continue;
    failures.push_back({{"metric", v.metric},
                        {"threshold", v.expression},
                        {"observed", v.observed_text},
                        {"limit", v.limit_text},
                        {"margin", v.margin}});
    lines += fmt::format("\n• {} `{}`: observed {} ({})", v.metric, v.expression, v.observed_text,
                         v.margin);
  }
  if (failures.empty()) return std::nullopt;
  std::string target = SafeUrl(results.target.url);
  std::string text = fmt::format(
      ":x: kfpbench: {} of {} threshold(s) failed — scenario {} against {}{}\nresults: {}",
      failures.size(), verdicts.size(), ScenarioName(results), target, lines, results_path);
  nlohmann::json out = Notification("thresholds_failed", text, results, std::move(failures));
  out["results"] = results_path;
  out["partial"] = results.partial;
  return out;
}

std::optional<nlohmann::json> RegressionNotification(const Comparison& comparison,
                                                     const CompareOptions& options,
                                                     const results::BenchmarkResults& candidate,
                                                     const std::string& baseline_path,
                                                     const std::string& candidate_path) {
  nlohmann::json failures = nlohmann::json::array();
  std::string lines;
  for (const auto& m : comparison.changes) {
    if (!m.fails) continue;
    failures.push_back({{"metric", m.metric},
                        {"stat", m.stat},
                        {"baseline_ms", m.baseline},
                        {"candidate_ms", m.candidate},
                        {"change", m.change},
                        {"ci", {m.ci_low, m.ci_high}},
                        {"p_value", m.p_value},
                        {"sample", m.sample}});
    lines += fmt::format("\n• {} {}: {:.3g} ms → {:.3g} ms ({:+.1f}%, p = {:.3g})", m.metric,
                         m.stat, m.baseline, m.candidate, m.change * 100, m.p_value);
  }
  if (failures.empty()) return std::nullopt;
  std::string target = SafeUrl(candidate.target.url);
  std::string text = fmt::format(
      ":x: kfpbench compare: {} significant regression(s) above {:.1f}% — scenario {} against "
      "{}{}\nbaseline: {}\ncandidate: {}",
      failures.size(), options.min_effect * 100, ScenarioName(candidate), target, lines,
      baseline_path, candidate_path);
  nlohmann::json out = Notification("regression", text, candidate, std::move(failures));
  out["baseline"] = baseline_path;
  out["results"] = candidate_path;
  out["alpha"] = options.alpha;
  out["min_effect"] = options.min_effect;
  return out;
}

Status CheckNotifyUrl(const std::string& url) {
  auto u = http::ParseUrl(url);
  if (!u.ok()) {
    // ParseUrl's message names the whole URL; a webhook path must not leak.
    std::string shown = url.substr(
        0, url.find('/', url.find("://") == std::string::npos ? 0 : url.find("://") + 3));
    return Error{"--notify: expected an http:// or https:// URL (got '" + Redact(shown) + "…')"};
  }
  return Ok();
}

Status PostNotification(const std::string& url, const nlohmann::json& body,
                        std::chrono::milliseconds timeout) {
  auto u = http::ParseUrl(url);
  if (!u.ok()) return CheckNotifyUrl(url);
  std::string origin = Origin(*u);
  // The client sends to base_path + target: split off the last segment so
  // the post goes to the URL exactly (no trailing slash a webhook would 404).
  std::string full_path = u->base_path;
  auto last = full_path.rfind('/');
  std::string target = last == std::string::npos ? "/" : full_path.substr(last);
  http::ClientOptions o;
  o.base = *u;
  o.base.base_path = last == std::string::npos ? "" : full_path.substr(0, last);
  o.connect_timeout = timeout;
  o.request_timeout = timeout;
  o.max_idle_connections = 1;
  http::Client client(o);
  auto r = client.Send(http::Method::kPost, target, body.dump(), "application/json");
  if (!r.ok()) {
    std::string why = r.error().message;
    // The client names the full URL; keep only the cause's text after it.
    if (!full_path.empty()) {
      for (auto at = why.find(full_path); at != std::string::npos; at = why.find(full_path)) {
        why.replace(at, full_path.size(), "/…");
      }
    }
    return Error{fmt::format("--notify: cannot post to {}: {}", origin, Redact(why))};
  }
  if (r->status < 200 || r->status > 299) {
    return Error{fmt::format("--notify: {} answered HTTP {}", origin, r->status)};
  }
  return Ok();
}

}  // namespace kfpbench::report
