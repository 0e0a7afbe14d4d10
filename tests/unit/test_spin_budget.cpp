// SPDX-License-Identifier: BSD-3-Clause
// The spin of a waiting rank follows the waits it sees (src/spin_budget.hpp).
#include <gtest/gtest.h>

#include "spin_budget.hpp"

using sctpm::SpinBudget;

TEST(SpinBudget, FixedWithoutAdaptation) {
    SpinBudget b(false);
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(b.next(100), 100);
        b.waited(5000, 100);
    }
    EXPECT_EQ(b.next(30), 30); // a lower spin_us applies at once
}

TEST(SpinBudget, ShortWaitsKeepTheWholeSpin) {
    SpinBudget b;
    for (int i = 0; i < 50; ++i) {
        EXPECT_EQ(b.next(100), 100);
        b.waited(7, 100);
    }
}

TEST(SpinBudget, LongWaitsHalveItDownToNothing) {
    SpinBudget b;
    const int64_t expected[] = {100, 50, 25, 12, 6, 3, 1, 0, 0};
    for (int64_t e : expected) {
        EXPECT_EQ(b.next(100), e);
        b.waited(400, 100);
    }
}

TEST(SpinBudget, ShortWaitsBringItBack) {
    SpinBudget b;
    for (int i = 0; i < 20; ++i) {
        b.next(100);
        b.waited(1000, 100);
    }
    ASSERT_EQ(b.next(100), 0);
    b.waited(10, 100); // blocked, and the packet came 10 us later: spinning would have caught it
    EXPECT_EQ(b.next(100), 25); // at least a quarter of spin_us back at once
    b.waited(60, 100);
    EXPECT_EQ(b.next(100), 100); // twice the wait seen, capped at spin_us
}

TEST(SpinBudget, NeverAboveSpinUs) {
    SpinBudget b;
    b.next(100);
    b.waited(90, 100);
    EXPECT_EQ(b.next(100), 100);
    EXPECT_EQ(b.next(40), 40); // spin_us lowered: the budget follows
    b.waited(40, 40);
    EXPECT_EQ(b.next(40), 40);
    EXPECT_EQ(b.next(0), 0);
    b.waited(0, 0);
    EXPECT_EQ(b.next(0), 0);
}
