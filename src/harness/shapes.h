// Scenario shapes as data, as modes are (harness/modes.h): each shape is a
// ShapeSpec (its name, the scenario key holding its settings, the reader that
// types and checks them) on one line of the table in shapes.cc. A mode says
// which shapes beyond those every mode takes its runner drives
// (ModeSpec::shapes); the reader finds both there, so "stress works with
// modes PIPELINE_RUN, EXPERIMENT" is said from the tables, not kept by hand.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/scenario.h"
#include "util/result.h"

namespace kfpbench::harness {

struct ModeSpec;   // harness/modes.h
struct Preflight;  // harness/preflight.h

struct ShapeSpec {
  std::string_view name;
  // Taken by every mode: smoke, load and soak label the results; their load
  // is what the common fields say. Otherwise only modes that list the shape
  // in ModeSpec::shapes take it.
  bool every_mode = false;
  // The scenario key holding this shape's settings ("stress"), required with
  // the shape and refused without it; empty: the shape has none.
  std::string_view field = {};
  // Reads `entry[field]` into `scenario` (whose common fields and mode are
  // read) and checks what the shape needs of the rest; errors start with `at`.
  Status (*read)(const nlohmann::json& entry, const std::string& at, double time_scale,
                 Scenario& scenario) = nullptr;
  // What `validate` and `run` say of the read settings before any load: a
  // runTime that cannot hold the shape is a problem, what it will do a note.
  void (*plan)(const Scenario& scenario, const std::string& at, Preflight& out) = nullptr;
  // Splits the shape's settings for one of `count` shards (--shard i/N),
  // after the common load is dealt out; an Error when the shape cannot be
  // split. Null: nothing of its own to split.
  Status (*shard)(Scenario& scenario, int count) = nullptr;
  // How the mode's runner drives it (PIPELINE_RUN's runner dispatches on
  // the shape; modes that do not list it never see it) and how it reports
  // (results::BenchmarkResults holds a section per shape that has one,
  // filled through Context::Record) are said beside the shape's line in
  // shapes.cc.
};

// Every shape, in the order messages list them.
std::span<const ShapeSpec* const> Shapes();
// The shape of that name; null when none.
const ShapeSpec* FindShape(std::string_view name);
// "smoke, load, stress, soak or growth" for messages.
std::string ShapeList();
// Whether `mode` takes `shape`.
bool TakesShape(const ModeSpec& mode, const ShapeSpec& shape);
// Reads the scenario's "shape" (into scenario.shape) and the settings of its
// shape, refusing a shape's settings without the shape. `scenario.mode` must
// be set.
Status ReadShape(const nlohmann::json& entry, const std::string& at, double time_scale,
                 Scenario& scenario);

// The shapes, one declaration each.
const ShapeSpec& SmokeShape();
const ShapeSpec& LoadShape();
const ShapeSpec& StressShape();
const ShapeSpec& SoakShape();
const ShapeSpec& GrowthShape();

}  // namespace kfpbench::harness
