#include "engine/stable_vector.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kfpbench::engine {
namespace {

TEST(StableVector, ElementsKeepTheirAddressAndValueAsItGrows) {
  StableVector<std::string, 2> v;  // chunks of four
  EXPECT_EQ(v.size(), 0u);
  std::vector<const std::string*> addresses;
  for (int i = 0; i < 11; ++i) {
    v.emplace_back() = "item " + std::to_string(i);
    addresses.push_back(&v[i]);
  }
  EXPECT_EQ(v.size(), 11u);
  for (int i = 0; i < 11; ++i) {
    EXPECT_EQ(&v[i], addresses[i]) << i;
    EXPECT_EQ(v[i], "item " + std::to_string(i));
  }
  const auto& c = v;
  EXPECT_EQ(c[10], "item 10");
  EXPECT_TRUE(v.emplace_back().empty());  // default-constructed
}

struct alignas(64) Wide {
  char bytes[192] = {};
};

TEST(StableVector, OverAlignedElementsAreAligned) {
  StableVector<Wide> v;
  for (int i = 0; i < 130; ++i) {
    Wide& w = v.emplace_back();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(&w) % 64, 0u) << i;
  }
}

}  // namespace
}  // namespace kfpbench::engine
