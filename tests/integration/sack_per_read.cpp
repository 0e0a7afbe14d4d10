// SPDX-License-Identifier: BSD-3-Clause
// The delayed-SACK settings, counted by usrsctp's own statistics in the receiving child (the data
// is checked byte by byte):
// - sack_per_read (user-recv-sack-per-gro-read.patch): the receiver acknowledges a UDP GRO read of
//   many packets with one SACK, and without the setting every second packet, as usrsctp did. On
//   loopback at path_mtu 1500 the sender's GSO batches hold many packets, so the receiver's reads do.
// - sack_full_packets (user-recv-sack-small-packets-by-bytes.patch): small packets force a SACK only
//   once more than a path MTU of them arrived, and without the setting every second one does.
#include <gtest/gtest.h>
#include <usrsctp.h>

#include "pair_harness.hpp"

using namespace pair_test;

namespace {

constexpr uint32_t kMessages = 16;
constexpr size_t kMessageBytes = 1u << 20;

// b receives kMessages of 1 MiB from a; then checks its SACKs sent against the DATA chunks it got.
PairExit run_bulk(const char* sack_per_read, bool expect_per_read) {
    return run_pair(
        [](Side& s) {
            std::vector<std::string> m;
            for (uint32_t i = 0; i < kMessages; ++i) m.push_back(make_message(i, kMessageBytes));
            send_all(s, m);
            expect_messages(s, 1); // b's answer: everything arrived
        },
        [expect_per_read](Side& s) {
            expect_messages(s, kMessages); // and their bytes
            struct sctpstat st {};
            usrsctp_get_stat(&st);
            const uint32_t data = st.sctps_recvdata, sacks = st.sctps_sendsacks;
            CHILD_CHECK(data >= kMessages * kMessageBytes / 1500, "only %u DATA chunks for %u MiB at MTU 1500", data,
                        kMessages);
            if (expect_per_read)
                CHILD_CHECK(sacks * 4 < data, "%u SACKs for %u DATA chunks: not one per GRO read", sacks, data);
            else
                CHILD_CHECK(sacks * 3 > data, "%u SACKs for %u DATA chunks: not one per second packet", sacks, data);
            send_all(s, {make_message(0, 8)});
            s.progress_until([] { return false; }, 0.5);
        },
        [sack_per_read](sctpm_config* cfg) {
            set(cfg, "path_mtu", "1500");
            set(cfg, "sack_per_read", sack_per_read);
        });
}

constexpr uint32_t kSmallMessages = 200;
constexpr size_t kSmallBytes = 16;

// a sends kSmallMessages of 16 bytes one at a time; b checks its SACKs sent against the packets with
// data it got. usrsctp bundles a few messages per packet when they come faster than it sends, but
// the packets stay far below the path MTU. Reads of one packet each: sack_per_read plays no part.
// The delayed-SACK timer at its longest (500 ms) leaves the SACKs to the packet rule alone. The
// retransmission timer must not fire before it (the default RTO is 100-300 ms): a retransmitted
// packet is a duplicate, which the receiver acknowledges at once (seen in a gate run under load:
// 39 SACKs for 111 packets).
PairExit run_small(const char* sack_full_packets, bool expect_full_only) {
    return run_pair(
        [](Side& s) {
            for (uint32_t i = 0; i < kSmallMessages; ++i) send_all(s, {make_message(i, kSmallBytes)});
            expect_messages(s, 1);
        },
        [expect_full_only](Side& s) {
            expect_messages(s, kSmallMessages);
            struct sctpstat st {};
            usrsctp_get_stat(&st);
            const uint32_t packets = st.sctps_recvpktwithdata, sacks = st.sctps_sendsacks;
            CHILD_CHECK(st.sctps_recvdupdata == 0, "%u duplicate DATA chunks: the sender retransmitted",
                        st.sctps_recvdupdata);
            CHILD_CHECK(packets >= kSmallMessages / 8, "only %u packets with data for %u messages", packets,
                        kSmallMessages);
            if (expect_full_only)
                CHILD_CHECK(sacks * 3 < packets, "%u SACKs for %u small packets: small ones still force SACKs", sacks,
                            packets);
            else
                CHILD_CHECK(sacks * 3 > packets, "%u SACKs for %u small packets: not one per second packet", sacks,
                            packets);
            send_all(s, {make_message(0, 8)});
            s.progress_until([] { return false; }, 0.5);
        },
        [sack_full_packets](sctpm_config* cfg) {
            set(cfg, "path_mtu", "1500");
            set(cfg, "sack_per_read", "off");
            set(cfg, "sack_delay_ms", "500");
            set(cfg, "rto_min_ms", "5000");
            set(cfg, "rto_initial_ms", "5000");
            set(cfg, "rto_max_ms", "5000");
            set(cfg, "sack_full_packets", sack_full_packets);
        });
}

} // namespace

TEST(SackFullPackets, SmallPacketsDoNotForceSacks) {
    PairExit o = run_small("on", true);
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST(SackFullPackets, OffAcknowledgesEverySecondSmallPacket) {
    PairExit o = run_small("off", false);
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST(SackPerRead, OneSackPerGroRead) {
    PairExit o = run_bulk("on", true);
    EXPECT_TRUE(o.ok()) << o.describe();
}

TEST(SackPerRead, OffAcknowledgesEverySecondPacket) {
    PairExit o = run_bulk("off", false);
    EXPECT_TRUE(o.ok()) << o.describe();
}
