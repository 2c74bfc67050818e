// What `calibrate` prints and writes of a summary fit (sim/summary_fit.h).
#include <cmath>

#include <fmt/format.h>

#include "sim/summary_fit.h"
#include "util/human.h"
#include "util/time.h"

namespace kfpbench::sim {
namespace {

std::string Signed(double error) { return fmt::format("{:+.1f}%", error * 100); }

std::string Role(const SummaryFit& fit, const SummaryLevel& l, size_t i) {
  if (fit.fitted[i]) return "fitted";
  return l.held_out ? "held out" : "question";
}

std::string ParamsText(const SummaryFit& fit) {
  const SummaryParams& p = fit.best.params;
  std::string split;
  for (size_t i = 0; i < fit.labels.size(); ++i) {
    split += fmt::format("{}{} {}", i == 0 ? "" : ", ", fit.labels[i],
                         FormatSeconds(p.step_seconds * p.split[i]));
  }
  auto basis = [](const std::string& b) { return b == "fitted" ? "" : " (" + b + ")"; };
  const std::string delay =
      fit.delay_basis.starts_with("not fitted")
          ? "provisioning delay not fitted (no level autoscaled, so none could show it)"
          : "provisioning delay " + FormatSeconds(p.delay) + basis(fit.delay_basis);
  return fmt::format("steps {}; overhead {} per step{}; {}\n", split, FormatSeconds(p.overhead),
                     basis(fit.overhead_basis), delay);
}

// A prediction for a level the fit did not see, at the precision its errors
// on such levels allow ("about 3h0m0s").
std::string Predicted(const SummaryFit& fit, double seconds) {
  return FormatDurationKnownTo(FromSeconds(seconds), fit.unseen_error());
}

// "about 8m30s to 29m40s": one "about" for the pair.
std::string RangeText(const std::string& low, std::string high) {
  if (low.starts_with("about ") && high.starts_with("about ")) high.erase(0, 6);
  return low + " to " + high;
}

std::string LevelRows(const SummaryFit& fit, const SummaryLevels& file) {
  std::string s = fmt::format("  {:<24} {:>7} {:<9} {:<34} {}\n", "level", "runs", "role",
                              "makespan measured -> predicted", "near-equal fits predict");
  for (size_t i = 0; i < file.levels.size(); ++i) {
    const SummaryLevel& l = file.levels[i];
    const double predicted = fit.best.at[i].makespan;
    // A fitted level's prediction is its fit, shown as it is; the others'
    // are answers, as precise as the errors on unseen levels allow.
    auto shown = [&](double seconds) {
      return fit.fitted[i] ? FormatSeconds(seconds) : Predicted(fit, seconds);
    };
    const std::string cell =
        l.makespan ? fmt::format("{} -> {} ({})", FormatSeconds(*l.makespan), shown(predicted),
                                 Signed((predicted - *l.makespan) / *l.makespan))
                   : "predicted " + shown(predicted);
    const auto [lo, hi] = fit.identifiability.range[i];
    s += fmt::format("  {:<24} {:>7} {:<9} {:<34} {}\n", l.name, l.runs, Role(fit, l, i), cell,
                     RangeText(shown(lo), shown(hi)));
  }
  return s;
}

std::string UnseenText(const SummaryFit& fit) {
  std::string s;
  for (const auto& e : fit.held_out) {
    s += fmt::format("held out    \"{}\": measured {}, predicted {} ({})\n",
                     fit.level_names[e.level], FormatSeconds(e.measured),
                     FormatSeconds(e.predicted), Signed(e.error()));
  }
  if (!fit.leave_one_out_why_not.empty()) {
    s += "leave-one-out: not run: " + fit.leave_one_out_why_not + "\n";
  }
  for (const auto& e : fit.leave_one_out) {
    s += fmt::format("left out    \"{}\": a fit to the other levels predicts {} for {} ({})\n",
                     fit.level_names[e.level], FormatSeconds(e.predicted),
                     FormatSeconds(e.measured), Signed(e.error()));
  }
  return s;
}

std::string IdentifiabilityText(const SummaryFit& fit) {
  const Identifiability& id = fit.identifiability;
  std::string s = fmt::format(
      "{} of {} parameter sets explain the fitted levels within {:.0f}% of the best fit's worst "
      "error",
      id.near, id.candidates, fit.tolerance * 100);
  if (id.near < 2 || id.differs.empty()) return s + ": the data pin the parameters down\n";
  s += fmt::format(";\n  they differ in {}", id.differs.front());
  for (size_t i = 1; i < id.differs.size(); ++i) s += ", and in " + id.differs[i];
  if (!id.decided) {
    s += ";\n  THE DATA CANNOT DECIDE: on the levels not fitted they disagree (above)\n";
  } else if (fit.out_of_time) {
    // Agreement among the fits found is no claim about those not reached.
    s += ";\n  those found agree on every level not fitted, but --fit-seconds ended the search: "
         "fits it did not reach may not\n";
  } else {
    s += ";\n  but they agree on every level not fitted within the tolerance\n";
  }
  if (!id.measurements.empty() || id.level) s += "  to tell them apart, measure ";
  for (size_t i = 0; i < id.measurements.size(); ++i) {
    s += (i == 0 ? "" : "; or ") + id.measurements[i];
  }
  if (id.level) {
    s += fmt::format("{}a level of {}, where they predict {} ({:.0f}% apart)",
                     id.measurements.empty() ? "" : "; or ", id.level->what,
                     RangeText(Predicted(fit, id.level->low), Predicted(fit, id.level->high)),
                     (id.level->high / id.level->low - 1) * 100);
  }
  return s + (!id.measurements.empty() || id.level ? "\n" : "");
}

}  // namespace

std::string Describe(const SummaryFit& fit, const SummaryLevels& file) {
  int fitted = 0;
  for (bool f : fit.fitted) fitted += f;
  std::string s = fmt::format(
      "summary fit of {} of {}: {}, by {} simulations in {:.1f}s\n  {}", Plural(fitted, "level"),
      file.levels.size(),
      "the lightest fixes the step time, the others choose the split, overhead and delay",
      fit.simulations, fit.seconds, ParamsText(fit));
  s += LevelRows(fit, file);
  if (fit.best.worst > fit.tolerance) {
    // The fitted level the best misses most, by its makespan.
    size_t worst = 0;
    double error = 0;
    for (size_t i = 0; i < file.levels.size(); ++i) {
      const SummaryLevel& l = file.levels[i];
      if (!fit.fitted[i] || !l.makespan || *l.makespan <= 0) continue;
      const double e = (fit.best.at[i].makespan - *l.makespan) / *l.makespan;
      if (std::abs(e) >= std::abs(error)) worst = i, error = e;
    }
    s += fmt::format(
        "BEST FIT MISSES A FITTED LEVEL: by {:.1f}% at worst (\"{}\" makespan {}), more than the "
        "tolerance of {:.0f}%: no parameter set tried reproduces every fitted level; read its "
        "predictions with that error at least\n",
        fit.best.worst * 100, file.levels[worst].name, Signed(error), fit.tolerance * 100);
  }
  if (fit.out_of_time) {
    s += fmt::format(
        "out of time: --fit-seconds ended the search ({} parameter sets left unfinished); the "
        "best is the best of those simulated on every level\n",
        fit.cut_short);
  }
  s += UnseenText(fit);
  if (fit.unseen_error() > 0) {
    s += fmt::format(
        "precision   predictions for levels not fitted rounded to what the errors on them allow "
        "(up to {:.0f}%)\n",
        fit.unseen_error() * 100);
  }
  s += IdentifiabilityText(fit);
  return s;
}

nlohmann::json ToJson(const SummaryFit& fit, const SummaryLevels& file) {
  const SummaryParams& p = fit.best.params;
  nlohmann::json split = nlohmann::json::object();
  for (size_t i = 0; i < fit.labels.size(); ++i) split[fit.labels[i]] = p.split[i];
  nlohmann::json levels = nlohmann::json::array();
  // Each level's leave-one-out error by index, not a search per level.
  std::vector<const UnseenError*> left_out(file.levels.size(), nullptr);
  for (const auto& e : fit.leave_one_out) {
    if (e.level < left_out.size()) left_out[e.level] = &e;
  }
  for (size_t i = 0; i < file.levels.size(); ++i) {
    const SummaryLevel& l = file.levels[i];
    nlohmann::json j = {
        {"name", l.name},
        {"runs", l.runs},
        {"role", Role(fit, l, i)},
        {"predicted_makespan_seconds", fit.best.at[i].makespan},
        {"near_fits_makespan_seconds",
         {fit.identifiability.range[i].first, fit.identifiability.range[i].second}}};
    if (l.makespan) {
      j["measured_makespan_seconds"] = *l.makespan;
      j["error"] = (fit.best.at[i].makespan - *l.makespan) / *l.makespan;
    }
    if (left_out[i] != nullptr) j["leave_one_out_error"] = left_out[i]->error();
    levels.push_back(std::move(j));
  }
  const Identifiability& id = fit.identifiability;
  nlohmann::json ident = {{"near_equal_fits", id.near}, {"candidates", id.candidates},
                          {"tolerance", fit.tolerance}, {"decided", id.decided && !fit.out_of_time},
                          {"differ_in", id.differs},    {"measure", id.measurements}};
  nlohmann::json shares = nlohmann::json::object();
  for (size_t i = 0; i < fit.labels.size() && i < id.share.size(); ++i) {
    shares[fit.labels[i]] = {id.share[i].first, id.share[i].second};
  }
  ident["parameter_ranges"] = {{"split", shares},
                               {"step_seconds", {id.step_seconds.first, id.step_seconds.second}},
                               {"overhead_seconds", {id.overhead.first, id.overhead.second}},
                               {"provisioning_delay_seconds", {id.delay.first, id.delay.second}}};
  if (id.level) {
    ident["level"] = {{"what", id.level->what},
                      {"makespan_seconds", {id.level->low, id.level->high}}};
  }
  return {{"split", split},
          {"step_seconds", p.step_seconds},
          {"overhead_seconds", p.overhead},
          {"overhead", fit.overhead_basis},
          {"autoscaler",
           {{"provisioning_delay_seconds", p.delay}, {"provisioning_delay", fit.delay_basis}}},
          {"out_of_time", fit.out_of_time},
          {"best_worst_error", fit.best.worst},
          {"best_misses_a_fitted_level", fit.best.worst > fit.tolerance},
          {"levels", levels},
          {"leave_one_out", fit.leave_one_out_why_not.empty()
                                ? nlohmann::json("run")
                                : nlohmann::json("not run: " + fit.leave_one_out_why_not)},
          {"identifiability", ident},
          {"simulations", fit.simulations}};
}

}  // namespace kfpbench::sim
