#include "plan/proportion.h"

#include <gtest/gtest.h>

namespace kfpbench::plan {
namespace {

TEST(Proportion, NormalQuantiles) {
  EXPECT_NEAR(TwoSidedZ(0.95), 1.959964, 1e-5);
  EXPECT_NEAR(TwoSidedZ(0.99), 2.575829, 1e-5);
  EXPECT_NEAR(TwoSidedZ(0.6826895), 1.0, 1e-5);
}

TEST(Proportion, WilsonMatchesItsClosedForm) {
  // 18 of 20 at 95%: the textbook 69.9%-97.2%.
  Proportion p = WilsonInterval(18, 20, 0.95);
  EXPECT_DOUBLE_EQ(p.Estimate(), 0.9);
  EXPECT_NEAR(p.low, 0.6990, 1e-3);
  EXPECT_NEAR(p.high, 0.9721, 1e-3);
  // 20 of 20 is not certainty: 83.9%-100%.
  Proportion all = WilsonInterval(20, 20, 0.95);
  EXPECT_NEAR(all.low, 0.8389, 1e-3);
  EXPECT_EQ(all.high, 1.0);
  Proportion none = WilsonInterval(0, 20, 0.95);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_NEAR(none.high, 0.1611, 1e-3);
}

TEST(Proportion, NarrowsWithTrials) {
  Proportion few = WilsonInterval(36, 40, 0.95);
  Proportion many = WilsonInterval(360, 400, 0.95);
  EXPECT_LT(many.high - many.low, (few.high - few.low) / 2.5);
  EXPECT_LT(many.low, 0.9);
  EXPECT_GT(many.high, 0.9);
}

TEST(Proportion, NoTrialsIsTheWholeRange) {
  Proportion p = WilsonInterval(0, 0, 0.95);
  EXPECT_EQ(p.low, 0.0);
  EXPECT_EQ(p.high, 1.0);
}

}  // namespace
}  // namespace kfpbench::plan
