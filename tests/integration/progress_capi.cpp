// SPDX-License-Identifier: BSD-3-Clause
// sctpm_progress as the channel uses it. A blocked wait releases the caller's lock (on_block, as
// MPICH's global lock is), so other threads call into the transport while it sleeps in ppoll:
// ch3:hybrid's first MPI_Win_create watches the completion queue's fd from another thread (run
// under ThreadSanitizer by check.sh's tsan step, which reports any race between the two). And an
// internal error inside progress is returned, so that the MPI call waiting on it fails.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <sys/eventfd.h>
#include <thread>

#include "pair_harness.hpp"

using namespace pair_test;

namespace {

// The watched fds and how many of their signals a progress stage consumed; guarded by `lock`.
struct Watched {
    std::mutex lock; // stands for MPICH's global lock
    std::vector<int> fds;
    int consumed = 0;
};

int drain_watched(void* arg) {
    auto* w = static_cast<Watched*>(arg);
    int work = 0;
    for (int fd : w->fds) {
        uint64_t v;
        if (read(fd, &v, sizeof v) == sizeof v) {
            w->consumed += static_cast<int>(v);
            ++work;
        }
    }
    return work;
}

} // namespace

TEST(ProgressCapi, WatchFdWhileAnotherThreadWaits) {
    auto o = run_pair(
        [](Side& s) {
            static Watched w;
            s.on_block = [](int entering) {
                if (entering)
                    w.lock.unlock();
                else
                    w.lock.lock();
            };
            CHILD_CHECK(sctpm_add_stage(s.t, "watched", drain_watched, &w) == 0, "add_stage");
            constexpr int kFds = 64; // the fd array grows (and moves) several times meanwhile
            std::atomic<bool> done{false};
            std::thread watcher([&] {
                for (int i = 0; i < kFds; ++i) {
                    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
                    CHILD_CHECK(fd >= 0, "eventfd");
                    {
                        std::lock_guard<std::mutex> g(w.lock);
                        w.fds.push_back(fd);
                        CHILD_CHECK(sctpm_watch_fd(s.t, fd) == 0, "watch_fd");
                    }
                    uint64_t one = 1;
                    CHILD_CHECK(write(fd, &one, sizeof one) == sizeof one, "eventfd write");
                    // The waiter must consume it before the next fd comes (it sleeps in between).
                    for (;;) {
                        {
                            std::lock_guard<std::mutex> g(w.lock);
                            if (w.consumed > i)
                                break;
                        }
                        std::this_thread::yield();
                    }
                }
                done = true;
                sctpm_wakeup(s.t);
            });
            {
                std::lock_guard<std::mutex> g(w.lock);
                while (!done)
                    CHILD_CHECK(sctpm_progress(s.t, -1) >= 0, "progress failed: %s", sctpm_last_error(s.t));
            }
            watcher.join();
            CHILD_CHECK(w.consumed == kFds, "consumed %d of %d fd signals", w.consumed, kFds);
        },
        [](Side&) {});
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST(ProgressCapi, AnInternalErrorIsReturnedNotSwallowed) {
    auto o = run_pair(
        [](Side& s) {
            static bool thrown = false;
            auto broken = [](void*) -> int {
                if (thrown)
                    return 0;
                thrown = true;
                throw std::logic_error("a stage broke");
            };
            CHILD_CHECK(sctpm_add_stage(s.t, "broken", broken, nullptr) == 0, "add_stage");
            const int rc = sctpm_progress(s.t, 0);
            CHILD_CHECK(rc == -EIO, "progress returned %d", rc);
            CHILD_CHECK(std::strstr(sctpm_last_error(s.t), "internal error") &&
                            std::strstr(sctpm_last_error(s.t), "a stage broke"),
                        "last error: %s", sctpm_last_error(s.t));
            CHILD_CHECK(sctpm_progress(s.t, 0) >= 0, "progress still fails: %s", sctpm_last_error(s.t));
        },
        [](Side&) {});
    EXPECT_TRUE(o.ok()) << o.describe();
}
