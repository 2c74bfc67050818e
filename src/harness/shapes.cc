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

void ReadShape(JsonReader& entry, double time_scale, Scenario& scenario) {
  const ShapeSpec* shape = nullptr;
  entry.Custom("shape", [&](const json& v) {
    if (v.is_string()) shape = FindShape(v.get<std::string>());
    return shape != nullptr ? "" : fmt::format("must be {} (got {})", ShapeList(), v.dump());
  });
  for (const ShapeSpec* other : Shapes()) {
    if (other == shape || other->field.empty() || !entry.object().contains(other->field)) continue;
    std::string field(other->field);
    return entry.Fail(field.c_str(), fmt::format("goes with \"shape\": \"{}\"", other->name));
  }
  if (!entry.ok()) return;
  scenario.shape = shape;
  if (shape == nullptr) return;
  if (!TakesShape(*scenario.mode, *shape)) {
    return entry.Fail("shape", fmt::format("{} works with {}", shape->name, ModesTaking(*shape)));
  }
  if (shape->read != nullptr) shape->read(entry, time_scale, scenario);
}

Status ReadShape(const json& entry, const std::string& at, double time_scale, Scenario& scenario) {
  JsonReader reader = JsonReader::Config(entry, at);
  ReadShape(reader, time_scale, scenario);
  return reader.status();
}

}  // namespace kfpbench::harness
