// Scenario shapes as data, as modes are (harness/modes.h): each shape is a
// ShapeSpec (its name, the scenario key holding its settings, the reader that
// types and checks them, the preflight's plan of it, how it shards, and its
// driver) defined beside its driver, and registered on one line of the table
// in shapes.cc. A mode says which shapes beyond those every mode takes its
// runner drives (ModeSpec::shapes); the reader finds both there, so "stress
// works with modes PIPELINE_RUN, EXPERIMENT" is said from the tables, not
// kept by hand.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/scenario.h"
#include "util/json_reader.h"
#include "util/result.h"
#include "util/time.h"

namespace kfpbench::harness {

struct ModeSpec;        // harness/modes.h
struct Preflight;       // harness/preflight.h
class Context;          // harness/runner.h
struct HarnessOptions;  // harness/runner.h

// The load a mode's runner lends a shape's driver: the mode's own runs (its
// pipeline, parameters and experiment), sent open loop.
class ShapeLoad {
 public:
  virtual ~ShapeLoad() = default;
  // Starts runs at `scenario`'s rate from now until `end`, then follows
  // them to their end (within the drain timeout).
  virtual Status OpenLoop(const Scenario& scenario, WallTime end) = 0;
};

struct ShapeSpec {
  std::string_view name;
  // Taken by every mode: smoke, load and soak label the results; their load
  // is what the common fields say. Otherwise only modes that list the shape
  // in ModeSpec::shapes take it.
  bool every_mode = false;
  // The scenario key holding this shape's settings ("stress"), required with
  // the shape and refused without it; empty: the shape has none.
  std::string_view field = {};
  // Reads its `field` of the scenario (`entry`) into `scenario` (whose
  // common fields and mode are read) and checks what the shape needs of the
  // rest; problems go to `entry`, named by field ("[0].stress.stepTime").
  void (*read)(JsonReader& entry, double time_scale, Scenario& scenario) = nullptr;
  // What `validate` and `run` say of the read settings before any load: a
  // runTime that cannot hold the shape is a problem, what it will do a note.
  void (*plan)(const Scenario& scenario, const std::string& at, Preflight& out) = nullptr;
  // Splits the shape's settings for one of `count` shards (--shard i/N),
  // after the common load is dealt out; an Error when the shape cannot be
  // split. Null: nothing of its own to split.
  Status (*shard)(Scenario& scenario, int count) = nullptr;
  // Before any load, once the target is known: refuses what the shape may
  // not do there (growth fills only the embedded backend unless
  // --growth-fill names what it may create). Null: nothing to check.
  Status (*check_target)(const Scenario& scenario, bool embedded_target,
                         const HarnessOptions& options) = nullptr;
  // Runs the scenario in place of the mode's own loop, with the mode's runs
  // (`load`) when it needs them. Null: the mode's loop runs it as it is (a
  // label: smoke, load, soak). What it measures beyond calls and runs it
  // records through Context::Record into its section (`section`).
  Status (*drive)(const Scenario& scenario, Context& context, ShapeLoad* load) = nullptr;
  // The driver brings its own pipelines (growth fills with pipelines of
  // its own): it runs before the mode uploads its pipeline, with no `load`.
  bool own_pipelines = false;
  // The results.json section it fills (results::kMeasuredFields); empty:
  // none beyond calls and runs.
  std::string_view section = {};
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
void ReadShape(JsonReader& entry, double time_scale, Scenario& scenario);
// The same of the scenario `entry` alone, its messages starting with `at`.
Status ReadShape(const nlohmann::json& entry, const std::string& at, double time_scale,
                 Scenario& scenario);

// The shapes, one declaration each.
const ShapeSpec& SmokeShape();
const ShapeSpec& LoadShape();
const ShapeSpec& StressShape();
const ShapeSpec& SoakShape();
const ShapeSpec& GrowthShape();

}  // namespace kfpbench::harness
