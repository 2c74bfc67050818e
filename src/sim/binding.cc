#include "sim/binding.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/enum_names.h"

namespace kfpbench::sim {
namespace {

constexpr double kWaited = 0.05;  // pending share from which nodes were waited for
constexpr double kHolds = 0.10;   // service share from which a service holds nodes

double Share(double part, double whole) { return whole > 0 ? part / whole : 0; }

int Pct(double share) { return static_cast<int>(share * 100); }  // truncated, as shown elsewhere

constexpr EnumName<Binds> kBindsNames[] = {
    {Binds::kCpu, "nodes' CPU"},           {Binds::kMemory, "nodes' memory"},
    {Binds::kResource, "nodes' resource"}, {Binds::kAutoscaler, "the autoscaler's delay"},
    {Binds::kApi, "the API server"},       {Binds::kStore, "the artifact store"}};
constexpr EnumName<Binds> kBindsKeys[] = {
    {Binds::kCpu, "cpu"},           {Binds::kMemory, "memory"},
    {Binds::kResource, "resource"}, {Binds::kAutoscaler, "autoscaler"},
    {Binds::kApi, "api"},           {Binds::kStore, "artifact_store"}};

}  // namespace

// Both tables hold literals, so a name's data() ends in a NUL.
const char* BindsName(Binds b) { return NameIn(kBindsNames, b, "nothing").data(); }

const char* BindsKey(Binds b) { return NameIn(kBindsKeys, b, "nothing").data(); }

Binding WhatBinds(const SimResult& r) {
  const TaskTime& t = r.task_time;
  Binding b;
  b.pending_share = Share(t.pending, t.pending + t.held);
  b.provisioning_share = Share(t.pending_while_provisioning, t.pending_sampled);
  // A service's hold is weighed in the resource nodes ran short of.
  const bool memory_scarcer = r.memory_utilisation > r.cpu_utilisation;
  auto held = [&](const ServiceHold& h) {
    return memory_scarcer ? Share(h.memory, t.allocated_memory) : Share(h.cpu, t.allocated_cpu);
  };
  b.api_share = held(t.api);
  b.store_share = held(t.store);
  const bool store_holds = b.store_share >= kHolds && b.store_share >= b.api_share;
  const bool api_holds = b.api_share >= kHolds && !store_holds;
  const char* resource = memory_scarcer ? "memory" : "CPU";
  auto service_hold = [&](Binds what) {
    const ServiceStats& st = what == Binds::kStore ? r.artifact_store : r.api;
    const double share = what == Binds::kStore ? b.store_share : b.api_share;
    b.what = what;
    b.text = fmt::format(
        "{}: tasks held {}% of the nodes' allocated {} inside it (queued or served), though it "
        "was {}% busy",
        BindsName(what), Pct(share), resource, Pct(st.utilisation));
  };

  if (std::string bottleneck = Bottleneck(r); !bottleneck.empty()) {
    const ServiceStats* worst = BusiestService(r.api, r.artifact_store);
    b.what = worst == &r.artifact_store ? Binds::kStore : Binds::kApi;
    b.text = bottleneck;
    return b;
  }
  if (b.pending_share >= kWaited) {
    if (b.provisioning_share >= 0.5) {
      b.what = Binds::kAutoscaler;
      b.text = fmt::format(
          "the autoscaler's delay: tasks spent {}% of their time waiting for a node, and nodes "
          "were being provisioned for {}% of that wait",
          Pct(b.pending_share), Pct(b.provisioning_share));
      return b;
    }
    if (store_holds) {
      service_hold(Binds::kStore);
      b.text +=
          fmt::format(", while tasks waited {}% of their time for a node", Pct(b.pending_share));
      return b;
    }
    if (api_holds) {
      service_hold(Binds::kApi);
      b.text +=
          fmt::format(", while tasks waited {}% of their time for a node", Pct(b.pending_share));
      return b;
    }
    const ResourceUse* most = nullptr;
    for (const auto& use : r.resources) {
      if (use.utilisation > std::max(r.cpu_utilisation, r.memory_utilisation) &&
          (most == nullptr || use.utilisation > most->utilisation)) {
        most = &use;
      }
    }
    if (most != nullptr) {
      b.what = Binds::kResource;
      b.resource = most->name;
      b.text = fmt::format(
          "nodes' {}: tasks spent {}% of their time waiting for a node; {} allocated {}%, CPU "
          "{}%, memory {}%",
          most->name, Pct(b.pending_share), most->name, Pct(most->utilisation),
          Pct(r.cpu_utilisation), Pct(r.memory_utilisation));
      return b;
    }
    b.what = memory_scarcer ? Binds::kMemory : Binds::kCpu;
    b.text = fmt::format(
        "{}: tasks spent {}% of their time waiting for a node; CPU allocated {}%, memory {}%",
        BindsName(b.what), Pct(b.pending_share), Pct(r.cpu_utilisation), Pct(r.memory_utilisation));
    return b;
  }
  if (store_holds) {
    service_hold(Binds::kStore);
    return b;
  }
  if (api_holds) {
    service_hold(Binds::kApi);
    return b;
  }
  b.text = fmt::format(
      "nothing: tasks waited {}% of their time for a node and no shared service held them; each "
      "run's own steps set the pace",
      Pct(b.pending_share));
  return b;
}

}  // namespace kfpbench::sim
