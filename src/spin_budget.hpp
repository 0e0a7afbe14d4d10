// SPDX-License-Identifier: BSD-3-Clause
// How long a waiting rank busy-polls before it blocks. Spinning pays when the awaited packet comes
// within the spin: the rank answers at once instead of paying a wake-up. A wait that outlasts the
// spin only held a core, and when ranks outnumber the cores that is the core the awaited rank
// needs (NAS LU class A, 4 ranks on 2 cores: 12.8 s spinning 100 us every wait, 11.0 s never
// spinning, 10.1 s on ch3:sock). So with spin_adapt the budget follows the waits: one that
// ended within spin_us grows it (to twice that wait, by a quarter of spin_us at least), one
// that outlasted spin_us halves it. Short ping-pongs keep the whole spin; ranks that mostly wait
// long stop spinning, and come back to it with their first short waits.
#pragma once
#include <algorithm>
#include <cstdint>

namespace sctpm {

class SpinBudget {
public:
    explicit SpinBudget(bool adapt = true) : adapt_(adapt) {}

    // Microseconds the next wait spins, at most spin_us.
    int64_t next(uint32_t spin_us) {
        if (!adapt_ || budget_ < 0 || budget_ > int64_t{spin_us})
            budget_ = spin_us;
        return budget_;
    }

    // A wait found work waited_us after it began (spinning or blocked).
    void waited(int64_t waited_us, uint32_t spin_us) {
        if (!adapt_)
            return;
        const int64_t full = spin_us;
        const int64_t now = budget_ < 0 ? full : budget_;
        budget_ = waited_us <= full ? std::min(full, std::max(2 * waited_us, now + full / 4)) : now / 2;
    }

private:
    bool adapt_;
    int64_t budget_ = -1; // -1: nothing learned yet (the whole spin_us)
};

} // namespace sctpm
