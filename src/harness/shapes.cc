#include "harness/shapes.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/modes.h"

namespace kfpbench::harness {
namespace {

using nlohmann::json;

// "mode PIPELINE_RUN", "modes PIPELINE_RUN, EXPERIMENT": the modes that take `shape`.
std::string ModesTaking(const ShapeSpec& shape) {
  std::vector<std::string_view> names;
  for (const ModeSpec* mode : Modes()) {
    if (TakesShape(*mode, shape)) names.push_back(mode->name);
  }
  return fmt::format("{} {}", names.size() == 1 ? "mode" : "modes", fmt::join(names, ", "));
}

}  // namespace

// The labels: their load is what the common fields say. Stress and growth
// are defined beside their drivers (stress_runner.cc, growth_runner.cc).
const ShapeSpec& SmokeShape() {
  static const ShapeSpec shape{.name = "smoke", .every_mode = true};
  return shape;
}
const ShapeSpec& LoadShape() {
  static const ShapeSpec shape{.name = "load", .every_mode = true};
  return shape;
}
const ShapeSpec& SoakShape() {
  static const ShapeSpec shape{.name = "soak", .every_mode = true};
  return shape;
}
std::span<const ShapeSpec* const> Shapes() {
  static const ShapeSpec* const kShapes[] = {
      &SmokeShape(), &LoadShape(), &StressShape(), &SoakShape(), &GrowthShape(),
  };
  return kShapes;
}

const ShapeSpec* FindShape(std::string_view name) {
  for (const ShapeSpec* shape : Shapes()) {
    if (shape->name == name) return shape;
  }
  return nullptr;
}

std::string ShapeList() {
  std::string out;
  const auto shapes = Shapes();
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i > 0) out += i + 1 == shapes.size() ? " or " : ", ";
    out += shapes[i]->name;
  }
  return out;
}

bool TakesShape(const ModeSpec& mode, const ShapeSpec& shape) {
  return shape.every_mode ||
         std::find(mode.shapes.begin(), mode.shapes.end(), shape.name) != mode.shapes.end();
}

Status ReadShape(const json& entry, const std::string& at, double time_scale, Scenario& scenario) {
  const ShapeSpec* shape = nullptr;
  if (auto v = entry.find("shape"); v != entry.end()) {
    if (v->is_string()) shape = FindShape(v->get<std::string>());
    if (shape == nullptr) {
      return Error{fmt::format("{}.shape: must be {} (got {})", at, ShapeList(), v->dump())};
    }
  }
  for (const ShapeSpec* other : Shapes()) {
    if (other == shape || other->field.empty() || !entry.contains(other->field)) continue;
    return Error{fmt::format("{}.{}: goes with \"shape\": \"{}\"", at, other->field, other->name)};
  }
  scenario.shape = shape;
  if (shape == nullptr) return Ok();
  if (!TakesShape(*scenario.mode, *shape)) {
    return Error{fmt::format("{}.shape: {} works with {}", at, shape->name, ModesTaking(*shape))};
  }
  return shape->read != nullptr ? shape->read(entry, at, time_scale, scenario) : Ok();
}

}  // namespace kfpbench::harness
