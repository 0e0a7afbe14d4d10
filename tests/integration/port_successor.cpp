// SPDX-License-Identifier: BSD-3-Clause
// A new process on the UDP port of one that has gone (the kernel gives a freed port out again: a
// process spawned after another disconnected, or a rank started again after it died). Side a stays
// up; side b starts two processes one after the other on one fixed port, each sending a message to
// a and waiting for a's echo of it:
// - the first one disconnects (both sides release their peers) and closes: its association is
//   left open at a (no live peer on it), and the second's INIT restarts it without any failure;
// - the first one dies without closing: a's stack still holds its association, and the second's
//   INIT restarts it. a's peer for the dead process fails; the new process is served
//   on the restarted association like on a new one, not aborted. (A packet of a's for the old
//   association that reaches the new process before its INIT reaches a, a heartbeat or a SACK,
//   is out of the blue there: its stack answers with an ABORT, which ends the old association
//   first, and the INIT opens a new one. Also correct; heartbeats every 5 s make it rare here.)
// - the first one, with a second link to a, dies without closing, and a, which sent it one more
//   message on that link that it never acknowledged, releases that link's peer: a's unlink of the
//   link stays due (it waits for the data before it to be acknowledged), and must not go to the
//   second process on the restarted association, which has no such link and would take it for
//   a protocol error (MPICH's spawn/taskmanager: a spawned worker could not connect back);
// - the first one dies in the middle of a large message that a has begun to read: the restart
//   ends that message (usrsctp patch restart-ends-partial-delivery.patch), which otherwise
//   blocked a's socket for good, and a drops it without calling it a protocol error.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "pair_harness.hpp"
#include "stack.hpp"

using namespace pair_test;

namespace {

enum class FirstEnds { disconnects, dies, dies_with_unlink_due, dies_mid_message };
constexpr size_t kLargeBytes = 64u << 20; // far more than a's receive window: it cannot all be sent

// The large message goes in SCTP messages of 16 MiB, four times a's receive buffer, so a's
// stack hands them to the reader before their end (partial delivery).
void settings(sctpm_config* cfg, FirstEnds first) {
    set(cfg, "heartbeat_ms", "5000");
    if (first != FirstEnds::dies_mid_message)
        return;
    set(cfg, "fragment_size", "16777216");
    set(cfg, "sndbuf", "33554432");
    set(cfg, "rcvbuf", "4194304");
}

// The new process's stack aborted the old association (see the top of this file).
bool ended_by_new_process(const sctpm_event* e) {
    return e->type == SCTPM_EV_ASSOC_LOST && std::strstr(e->detail, "ABORT (T bit)");
}

// a, when the first process dies mid-message: tells b once that message began, then serves the
// second process.
void serve_after_cut(Side& s, int tell_b) {
    CHILD_CHECK(s.progress_until([&] { return !s.messages.empty(); }), "the first process's message did not begin");
    // Read nothing while the first process fills the receive buffer, dies, and the second one
    // restarts the association: the cut message then holds unread bytes (usrsctp's thread takes
    // the packets meanwhile), which must not stay counted against the restarted association's
    // window.
    usleep(500000);
    CHILD_CHECK(write(tell_b, "x", 1) == 1, "pipe write");
    usleep(1000000);
    CHILD_CHECK(s.progress_until([&] { return s.completed >= 1; }),
                "no message from the second process (is the half-read one blocking the socket?)");
    CHILD_CHECK(s.messages.size() == 2 && s.senders[0] != s.senders[1], "%zu messages", s.messages.size());
    CHILD_CHECK(s.messages[1] == make_message(1, kLargeBytes / 2), "the second process's message differs");
    s.other = s.senders[1];
    send_all(s, {s.messages[1]});
    s.progress_until([] { return false; }, 0.5);
    const sctpm_event* e = s.failure_of(s.senders[0]);
    CHILD_CHECK(e && e->type == SCTPM_EV_ASSOC_LOST && (std::strstr(e->detail, "restarted") || ended_by_new_process(e)),
                "the dead process's peer did not fail for the restart: %s", e ? e->detail : "no failure");
    CHILD_CHECK(!s.failure_of(s.senders[1]), "the new process's peer failed: %s", s.failure_of(s.senders[1])->detail);
}

// a, when the first process dies with an unlink due: echoes its two links' messages, sends one
// more on the second link after it died, releases that link's peer, tells b, then serves the
// second process.
void serve_with_unlink_due(Side& s, int tell_b, int hear_b) {
    for (size_t k = 0; k < 2; ++k) {
        CHILD_CHECK(s.progress_until([&] { return s.completed > k; }), "no message on the first process's link %zu", k);
        s.other = s.senders[k];
        send_all(s, {s.messages[k]});
    }
    CHILD_CHECK(s.senders[0] != s.senders[1], "both links were taken for one peer");
    char c;
    CHILD_CHECK(read(hear_b, &c, 1) == 1, "b did not say the first process exited");
    send_all(s, {make_message(7, 1000)}); // on the second link, never acknowledged
    sctpm_peer_release(s.t, s.other);               // its unlink is due, and held back
    s.progress_until([] { return false; }, 0.2);
    CHILD_CHECK(write(tell_b, "x", 1) == 1, "pipe write");
    CHILD_CHECK(s.progress_until([&] { return s.completed > 2; }), "no message from the second process");
    s.other = s.senders[2];
    send_all(s, {s.messages[2]});
    s.progress_until([] { return false; }, 0.5); // the second process's close
    CHILD_CHECK(!s.failure_of(s.senders[2]), "the new process's peer failed: %s", s.failure_of(s.senders[2])->detail);
}

// a: echoes each process's message to it; every hello is a new peer.
void serve(Side& s, FirstEnds first, int tell_b, int hear_b) {
    s.on_hello = [](Side& me, const std::string&, const char* card) { return sctpm_peer_add(me.t, card); };
    if (first == FirstEnds::dies_mid_message)
        return serve_after_cut(s, tell_b);
    if (first == FirstEnds::dies_with_unlink_due)
        return serve_with_unlink_due(s, tell_b, hear_b);
    for (size_t k = 0; k < 2; ++k) {
        CHILD_CHECK(s.progress_until([&] { return s.completed > k; }), "no message from process %zu", k);
        s.other = s.senders[k];
        send_all(s, {s.messages[k]});
        if (k == 0 && first == FirstEnds::disconnects)
            sctpm_peer_release(s.t, s.other);
    }
    CHILD_CHECK(s.senders[0] != s.senders[1], "both processes were taken for one peer");
    s.progress_until([] { return false; }, 0.5); // the second process's close
    if (first == FirstEnds::disconnects) {
        CHILD_CHECK(!s.failed_event(), "a failure event: %s", s.events.back().detail);
    } else {
        // It fails for the restart, or just before it, for a's echo that the dead process never
        // acknowledged (the stack gives up what was in flight before it reports the restart).
        const sctpm_event* e = s.failure_of(s.senders[0]);
        CHILD_CHECK(e && ((e->type == SCTPM_EV_ASSOC_LOST && std::strstr(e->detail, "restarted")) ||
                          e->type == SCTPM_EV_SEND_FAILED || ended_by_new_process(e)),
                    "the dead process's peer did not fail for the restart: %s", e ? e->detail : "no failure");
        CHILD_CHECK(!s.failure_of(s.senders[1]), "the new process's peer failed: %s", s.failure_of(s.senders[1])->detail);
    }
}

// One process of b: sends message k to a and waits for its echo. After a cut, the second message
// is large too: the restarted association must still carry a full window.
void client(Side& s, uint32_t k, FirstEnds first) {
    const std::string m = make_message(k, first == FirstEnds::dies_mid_message ? kLargeBytes / (k + 1) : 1000);
    send_all(s, {m});
    CHILD_CHECK(s.progress_until([&] { return s.completed >= 1; }), "no echo for process %u", k);
    CHILD_CHECK(s.messages[0] == m, "process %u: the echo differs from the message", k);
    CHILD_CHECK(!s.failed_event(), "process %u: %s", k, s.events.back().detail);
    if (k == 0 && first == FirstEnds::dies_with_unlink_due) { // a second link, then die
        const sctpm_peer second = sctpm_peer_add(s.t, s.peer_card.c_str());
        CHILD_CHECK(second >= 0 && second != s.other, "second peer_add returned %d", second);
        s.other = second;
        send_all(s, {make_message(5, 1000)});
        CHILD_CHECK(s.progress_until([&] { return s.completed >= 2; }), "no echo on the second link");
        std::_Exit(0);
    }
    if (k == 0 && first == FirstEnds::dies)
        std::_Exit(0); // no close: nothing tells a
    if (k == 0)
        sctpm_peer_release(s.t, s.other);
}

// b: starts the two processes in turn on one port; each learns a's card through a pipe.
void launch(int rd, int wr, FirstEnds first) {
    uint32_t len = 0;
    CHILD_CHECK(read(rd, &len, 4) == 4, "pipe read");
    std::string a_card(len, '\0');
    CHILD_CHECK(read(rd, a_card.data(), len) == ssize_t(len), "pipe read");
    const uint32_t none = 0; // a learns each process's card from its hello
    CHILD_CHECK(write(wr, &none, 4) == 4, "pipe write");
    const std::string port = std::to_string(sctpm::probe_free_udp_port());
    for (uint32_t k = 0; k < 2; ++k) {
        int to_child[2], from_child[2];
        CHILD_CHECK(pipe(to_child) == 0 && pipe(from_child) == 0, "pipe");
        CHILD_CHECK(write(to_child[1], &len, 4) == 4 && write(to_child[1], a_card.data(), len) == ssize_t(len),
                    "pipe write");
        std::fflush(nullptr);
        const pid_t pid = fork();
        if (pid == 0)
            run_child([&](Side& s) { client(s, k, first); },
                      [&](sctpm_config* cfg) {
                          settings(cfg, first);
                          set(cfg, "udp_port", port.c_str());
                      },
                      from_child[1], to_child[0],
                      true);
        for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]})
            close(fd);
        if (k == 0 && first == FirstEnds::dies_mid_message) {
            char c;
            CHILD_CHECK(read(rd, &c, 1) == 1, "a did not say the message began");
            kill(pid, SIGKILL);
            waitpid(pid, nullptr, 0);
            continue;
        }
        int status = 0;
        CHILD_CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
        CHILD_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %u on port %s ended with status %d", k,
                    port.c_str(), status);
        char c;
        if (k == 0 && first == FirstEnds::dies_with_unlink_due) { // gone: a may now make its unlink due
            CHILD_CHECK(write(wr, "x", 1) == 1, "pipe write");
            CHILD_CHECK(read(rd, &c, 1) == 1, "a did not say its unlink is due");
        }
    }
}

PairExit run(FirstEnds first) {
    auto stays = [first](int rd, int wr) {
        run_child([=](Side& s) { serve(s, first, wr, rd); }, [=](sctpm_config* c) { settings(c, first); }, wr, rd, false);
    };
    return fork_pair(stays, [first](int rd, int wr) { launch(rd, wr, first); }, 60);
}

} // namespace

TEST(PortSuccessor, TheNextProcessOnTheirPortIsServedAfterADisconnect) {
    const PairExit r = run(FirstEnds::disconnects);
    EXPECT_TRUE(r.ok()) << r.describe();
}

TEST(PortSuccessor, TheNextProcessOnADeadOnesPortIsServedOnTheRestartedAssociation) {
    const PairExit r = run(FirstEnds::dies);
    EXPECT_TRUE(r.ok()) << r.describe();
}

TEST(PortSuccessor, AnUnlinkDueToTheDeadOneDoesNotReachTheNextProcess) {
    const PairExit r = run(FirstEnds::dies_with_unlink_due);
    EXPECT_TRUE(r.ok()) << r.describe();
}

TEST(PortSuccessor, AMessageCutShortByTheRestartIsDroppedAndTheSocketReadsOn) {
    const PairExit r = run(FirstEnds::dies_mid_message);
    EXPECT_TRUE(r.ok()) << r.describe();
}
