#include "report/history.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "report/html_assets.h"
#include "report/html_inline.h"
#include "report/markup.h"
#include "util/strings.h"

namespace kfpbench::report {
namespace {

bool IsSet(WallTime t) { return t.time_since_epoch().count() != 0; }

// Runs that ended in anything but SUCCEEDED, over runs the benchmark created.
double RunFailureRate(const results::BenchmarkResults& r) {
  int created = 0, failed = 0;
  for (const auto& run : r.runs) {
    if (run.run_id.empty()) {
      ++failed;  // CreateRun itself failed
      ++created;
      continue;
    }
    ++created;
    if (run.state != RuntimeState::kSucceeded) ++failed;
  }
  return created ? static_cast<double>(failed) / created : 0.0;
}

HistoryPoint PointOf(const NamedResults& n, const std::string& metric) {
  HistoryPoint p;
  p.source = n.source;
  p.started = n.results.started;
  p.target_version = TargetVersion(n.results);
  metrics::Histogram h;
  double scale = 1;  // to ms
  if (metric == "run_duration" || metric == "queue_wait") {
    h = metric == "run_duration" ? n.results.RunDurationsMs() : n.results.QueueWaitsMs();
    p.error_rate = RunFailureRate(n.results);
  } else if (auto it = n.results.operations.find(metric); it != n.results.operations.end()) {
    h = it->second.latency_us;
    scale = 1.0 / 1000;
    uint64_t calls = h.count();
    p.error_rate = calls ? static_cast<double>(it->second.errors) / calls : 0.0;
  }
  p.count = h.count();
  if (p.count) {
    p.p50 = h.ValueAtPercentile(50) * scale;
    p.p95 = h.ValueAtPercentile(95) * scale;
    p.p99 = h.ValueAtPercentile(99) * scale;
    p.mean = h.mean() * scale;
  }
  return p;
}

// Two-sided Mann-Kendall test with the tie-corrected variance.
double MannKendallP(const std::vector<double>& y) {
  size_t n = y.size();
  if (n < 3) return 1;
  double s = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) s += (y[j] > y[i]) - (y[j] < y[i]);
  }
  double var = n * (n - 1.0) * (2.0 * n + 5) / 18;
  std::vector<double> sorted = y;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && sorted[j] == sorted[i]) ++j;
    double t = static_cast<double>(j - i);
    var -= t * (t - 1) * (2 * t + 5) / 18;
    i = j;
  }
  if (var <= 0 || s == 0) return 1;
  double z = (s > 0 ? s - 1 : s + 1) / std::sqrt(var);
  return std::erfc(std::abs(z) / std::sqrt(2.0));
}

Trend Fit(const std::string& stat, const std::vector<HistoryPoint>& points,
          double HistoryPoint::*field, const HistoryOptions& o) {
  Trend t;
  t.stat = stat;
  std::vector<double> x, y;
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].count == 0 && field != &HistoryPoint::error_rate) continue;
    x.push_back(static_cast<double>(i));
    y.push_back(points[i].*field);
  }
  t.n = y.size();
  if (t.n < 4) {
    t.verdict = "too few runs";
    return t;
  }
  double mx = 0, my = 0;
  for (size_t i = 0; i < t.n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= t.n;
  my /= t.n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < t.n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  t.slope = sxx > 0 ? sxy / sxx : 0;
  double span = t.slope * (x.back() - x.front());
  bool rate = field == &HistoryPoint::error_rate;
  // An error rate drifts in percentage points; a latency relative to itself.
  t.relative = !rate && my > 0 ? t.slope / my : 0;
  t.drift = rate ? span : (my > 0 ? span / my : 0);
  t.p_value = MannKendallP(y);
  double needed = rate ? 0.01 : o.min_drift;
  if (t.p_value < o.alpha && std::abs(t.drift) > needed) {
    t.verdict = t.drift > 0 ? "drifting up" : "drifting down";
  } else {
    t.verdict = "stable";
  }
  return t;
}

std::string CompactMs(double ms) {
  if (ms >= 1000) return fmt::format("{:.2f}s", ms / 1000);
  if (ms >= 10) return fmt::format("{:.1f}ms", ms);
  return fmt::format("{:.2f}ms", ms);
}

std::string Day(WallTime t) { return IsSet(t) ? FormatRfc3339(t) : std::string("-"); }

// Splits "v2.10.0-rc1" into runs of digits and of other characters.
std::vector<std::string> VersionParts(const std::string& v) {
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size();) {
    bool digit = std::isdigit(static_cast<unsigned char>(v[i])) != 0;
    size_t j = i;
    while (j < v.size() && (std::isdigit(static_cast<unsigned char>(v[j])) != 0) == digit) ++j;
    out.push_back(v.substr(i, j - i));
    i = j;
  }
  return out;
}

// A trend in words, ending with `verdict` as the format shows it.
std::string TrendSentence(const Trend& t, const std::string& verdict) {
  if (t.verdict == "too few runs") return fmt::format("too few runs ({} with data; 4 needed)", t.n);
  if (t.stat == "error_rate") {
    return fmt::format("{:+.3f} points per run, {:+.2f} points over the runs, p = {:.3g}: {}",
                       t.slope * 100, t.drift * 100, t.p_value, verdict);
  }
  return fmt::format("{:+.3f} ms per run ({:+.2f}%), {:+.1f}% over the runs, p = {:.3g}: {}",
                     t.slope, t.relative * 100, t.drift * 100, t.p_value, verdict);
}

}  // namespace

std::string TargetVersion(const results::BenchmarkResults& r) {
  const auto& h = r.target.healthz;
  if (h.is_object()) {
    for (const char* key : {"tag_name", "version", "commit_sha"}) {
      if (auto it = h.find(key);
          it != h.end() && it->is_string() && !it->get<std::string>().empty()) {
        return it->get<std::string>();
      }
    }
  }
  if (r.target.embedded && !r.kfpbench_version.empty()) return "embedded " + r.kfpbench_version;
  return "";
}

bool VersionLess(const std::string& a, const std::string& b) {
  auto pa = VersionParts(a), pb = VersionParts(b);
  for (size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    bool da = std::isdigit(static_cast<unsigned char>(pa[i][0])) != 0;
    bool db = std::isdigit(static_cast<unsigned char>(pb[i][0])) != 0;
    if (da && db) {
      std::string x = pa[i].substr(std::min(pa[i].find_first_not_of('0'), pa[i].size() - 1));
      std::string y = pb[i].substr(std::min(pb[i].find_first_not_of('0'), pb[i].size() - 1));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
    } else if (pa[i] != pb[i]) {
      return pa[i] < pb[i];
    }
  }
  return pa.size() < pb.size();
}

Result<History> BuildHistory(std::vector<NamedResults> runs, const HistoryOptions& o) {
  if (runs.empty()) return Error{"history needs at least one results folder"};
  if (o.metric != "run_duration" && o.metric != "queue_wait") {
    std::set<std::string> seen;
    for (const auto& r : runs) {
      for (const auto& [name, op] : r.results.operations) seen.insert(name);
    }
    if (!seen.count(o.metric)) {
      std::string names = "run_duration, queue_wait";
      for (const auto& s : seen) names += ", " + s;
      return Error{
          fmt::format("--metric {}: not in any of the results (metrics: {})", o.metric, names)};
    }
  }
  std::stable_sort(runs.begin(), runs.end(), [&](const NamedResults& a, const NamedResults& b) {
    if (o.order == HistoryOrder::kVersion) {
      std::string va = TargetVersion(a.results), vb = TargetVersion(b.results);
      if (va != vb) {
        if (va.empty() || vb.empty()) return vb.empty();  // unknown versions last
        return VersionLess(va, vb);
      }
    }
    return a.results.started < b.results.started;
  });
  History h;
  h.metric = o.metric;
  for (const auto& r : runs) h.points.push_back(PointOf(r, o.metric));
  h.trends = {
      Fit("p50", h.points, &HistoryPoint::p50, o), Fit("p95", h.points, &HistoryPoint::p95, o),
      Fit("p99", h.points, &HistoryPoint::p99, o), Fit("mean", h.points, &HistoryPoint::mean, o),
      Fit("error_rate", h.points, &HistoryPoint::error_rate, o)};
  return h;
}

std::string HistoryText(const History& h) {
  std::string out = fmt::format("{} across {} result(s)\n\n", h.metric, h.points.size());
  // Columns as wide as their longest value: timestamps and versions vary.
  auto version = [](const HistoryPoint& p) {
    return p.target_version.empty() ? std::string("-") : p.target_version;
  };
  size_t started_width = 7, version_width = 7;
  for (const auto& p : h.points) {
    started_width = std::max(started_width, Day(p.started).size());
    version_width = std::max(version_width, version(p).size());
  }
  out += fmt::format("{:>3}  {:<{}} {:<{}} {:>7} {:>9} {:>9} {:>9} {:>9} {:>7}  {}\n", "#",
                     "started", started_width, "version", version_width, "count", "p50", "p95",
                     "p99", "mean", "errors", "results");
  for (size_t i = 0; i < h.points.size(); ++i) {
    const auto& p = h.points[i];
    bool data = p.count > 0;
    out += fmt::format("{:>3}  {:<{}} {:<{}} {:>7} {:>9} {:>9} {:>9} {:>9} {:>6.2f}%  {}\n", i + 1,
                       Day(p.started), started_width, version(p), version_width, p.count,
                       data ? CompactMs(p.p50) : "-", data ? CompactMs(p.p95) : "-",
                       data ? CompactMs(p.p99) : "-", data ? CompactMs(p.mean) : "-",
                       p.error_rate * 100, p.source);
  }
  out += "\nTrend (least squares per run; Mann-Kendall test)\n";
  for (const auto& t : h.trends) {
    out += fmt::format("  {:<10} {}\n", t.stat, TrendSentence(t, t.verdict));
  }
  return out;
}

std::string HistoryMarkdown(const History& h) {
  std::string out =
      fmt::format("### {} across {} result(s)\n\n", MarkdownCell(h.metric), h.points.size());
  out += "| # | started | version | count | p50 | p95 | p99 | mean | errors | results |\n";
  out += "|---:|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (size_t i = 0; i < h.points.size(); ++i) {
    const auto& p = h.points[i];
    bool data = p.count > 0;
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2f}% | {} |\n", i + 1, Day(p.started),
        p.target_version.empty() ? "-" : MarkdownCell(p.target_version), p.count,
        data ? CompactMs(p.p50) : "-", data ? CompactMs(p.p95) : "-", data ? CompactMs(p.p99) : "-",
        data ? CompactMs(p.mean) : "-", p.error_rate * 100, MarkdownCell(p.source));
  }
  out += "\n**Trend** (least squares per run; Mann-Kendall test)\n\n";
  for (const auto& t : h.trends) {
    out += fmt::format("- {}: {}\n", t.stat, TrendSentence(t, "**" + t.verdict + "**"));
  }
  return out;
}

std::string HistoryCsv(const History& h) {
  std::string out =
      "index,source,started_at,target_version,metric,count,p50_ms,p95_ms,p99_ms,mean_ms,"
      "error_rate\r\n";
  for (size_t i = 0; i < h.points.size(); ++i) {
    const auto& p = h.points[i];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\r\n", i + 1, CsvField(p.source),
                       IsSet(p.started) ? FormatRfc3339(p.started) : "", CsvField(p.target_version),
                       CsvField(h.metric), p.count, p.p50, p.p95, p.p99, p.mean, p.error_rate);
  }
  return out;
}

nlohmann::json HistoryJson(const History& h) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : h.points) {
    points.push_back({{"source", p.source},
                      {"started_at", IsSet(p.started) ? FormatRfc3339(p.started) : ""},
                      {"target_version", p.target_version},
                      {"count", p.count},
                      {"p50_ms", p.p50},
                      {"p95_ms", p.p95},
                      {"p99_ms", p.p99},
                      {"mean_ms", p.mean},
                      {"error_rate", p.error_rate}});
  }
  nlohmann::json trends = nlohmann::json::array();
  for (const auto& t : h.trends) {
    trends.push_back({{"stat", t.stat},
                      {"n", t.n},
                      {"slope_per_run", t.slope},
                      {"relative_slope_per_run", t.relative},
                      {"drift", t.drift},
                      {"p_value", t.p_value},
                      {"verdict", t.verdict}});
  }
  return {{"metric", h.metric}, {"points", std::move(points)}, {"trends", std::move(trends)}};
}

std::string HistoryHtml(const History& h) {
  std::string title = "kfpbench history — " + h.metric;
  std::string page = ReportPageOpen(title);
  page += "<noscript><p>This page draws its chart with JavaScript.</p></noscript>\n";
  page += "<script type=\"application/json\" id=\"kfpbench-history\">";
  page += ScriptJson(HistoryJson(h));
  page += "</script>\n";
  page += UplotScript();
  page += "<script>\n";
  page += Inline(assets::HistoryJs(), "script");
  page += "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace kfpbench::report
