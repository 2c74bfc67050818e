// The store tests' fixture: a fresh in-memory store per test.
#pragma once

#include <memory>

#include <gtest/gtest.h>

#include "store/store.h"

namespace kfpbench::store::testing {

class InMemoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::Open("");
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(*s);
  }
  std::unique_ptr<Store> store_;
};

}  // namespace kfpbench::store::testing
