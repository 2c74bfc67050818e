// A finished task's record as JSON, so that `:retry` can hand the engine the
// tasks of the failed attempt that are to be kept (they may outlive the
// server: the backend keeps them in SQLite).
#pragma once

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "util/result.h"

namespace kfpbench::engine {

nlohmann::json TaskRecordToJson(const TaskRecord& record);
// Errors name the field that is missing or of the wrong type.
Result<TaskRecord> TaskRecordFromJson(const nlohmann::json& json);

}  // namespace kfpbench::engine
