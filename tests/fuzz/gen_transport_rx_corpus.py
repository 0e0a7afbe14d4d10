#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpus of tests/fuzz/transport_rx_fuzz.cpp (its script format: see `step` there).

    python3 tests/fuzz/gen_transport_rx_corpus.py tests/fuzz/transport_rx_corpus

Findings of the fuzzer are kept in that directory too, under their own names (not written here).
"""
import os
import struct
import sys


def u16(v):
    return struct.pack(">H", v & 0xFFFF)


# Header byte 0: auth off | pre_hello selector << 1 | reorder selector << 3 | fragment selector << 5
# (selectors index the tables in LLVMFuzzerTestOneInput); byte 1: head selector | 4 (the receiver
# takes the whole head) | piece selector << 6.
def header(auth=True, pre=0, reorder=0, frag=3, head=3, piece=0):
    return bytes([(0 if auth else 1) | pre << 1 | reorder << 3 | frag << 5, head | 4 | piece << 6])


# Associations: 0..2 pick the incoming ones (ids 1..3), 3.. those this side connected.
def hello(assoc=0, link=0, who=1):  # who % 4: 1 a new peer, 2 a peer this side added, 0 refused
    return bytes([0, assoc, link, who])


def proof(assoc=0, link=0, right=True):
    return bytes([1, assoc, link, 0 if right else 1])


def data(assoc=0, link=0, domain=0, ahead=0, stream=0, total=100, frag8=15):
    return bytes([2, assoc, link, domain, ahead, stream]) + u16(total - 6) + bytes([frag8])


def raw(assoc, stream, body):
    return bytes([3, assoc, stream]) + u16(len(body)) + body


COMM_UP, COMM_LOST, RESTART, SHUTDOWN_COMP, CANT_START, PATH, SEND_FAILED = range(7)


def note(kind, assoc=0, error=0, extra=b""):
    out = bytes([4, kind, assoc]) + u16(error)
    if kind in (COMM_LOST, SEND_FAILED):
        out += bytes([len(extra)]) + extra
    elif kind == PATH:
        out += extra[:1] or b"\x02"
    return out


HOLD = bytes([5])


def release(seed):
    return bytes([6, seed])


def connect(k=0):
    return bytes([7, k])


def challenge(k=0):  # k & 1: a wrong MAC
    return bytes([8, k])


def send(peer=0, body=b"ping"):
    return bytes([9, peer, len(body)]) + body


BLOCK, STINGY = bytes([10]), bytes([12])


def remove(peer=0):
    return bytes([11, peer])


def release_peer(peer=0):  # the caller gives a peer back (its VC destroyed)
    return bytes([14, peer])


def unlink(assoc=0, link=0):  # the remote gives a link back
    return bytes([15, assoc, link])


HANDSHAKE = hello() + proof()
# An ABORT chunk with a User-Initiated Abort cause carrying a reason.
ABORT = bytes([6, 0]) + u16(16) + u16(12) + u16(12) + b"bye now!"

SEEDS = {
    "handshake_message": header() + HANDSHAKE + data(),
    "reordered_fragmented": header() + HANDSHAKE + HOLD + data(domain=1, ahead=1, stream=1, total=500, frag8=7)
    + data(domain=1, stream=2, total=300, frag8=3) + HOLD + release(5) + data(domain=1, stream=3, total=40),
    "wrong_proof": header() + hello() + proof(right=False),
    "data_before_hello": header() + data(total=50) + hello() + proof() + data(total=60),
    "pre_hello_bound": header(pre=1) + data(total=1000),
    "reorder_bound": header(reorder=1) + HANDSHAKE + data(ahead=1, total=2000),
    "outgoing_link": header() + connect() + note(COMM_UP, assoc=3) + challenge() + send()
    + data(assoc=3, link=0x80, total=70),
    "wrong_challenge": header() + connect() + note(COMM_UP, assoc=3) + challenge(1),
    "notifications": header() + HANDSHAKE + data() + note(PATH, extra=b"\x07") + note(SEND_FAILED, extra=b"lost")
    + note(RESTART) + hello(assoc=1) + proof(assoc=1) + note(COMM_LOST, assoc=1, error=5, extra=ABORT)
    + note(SHUTDOWN_COMP, assoc=2) + connect(2) + note(CANT_START, assoc=3),
    "auth_off": header(auth=False) + hello(who=1) + data(total=30) + data(domain=2, total=3000, frag8=40),
    "stingy_receiver": header(head=0, piece=1) + HANDSHAKE + STINGY + data(total=3000, frag8=30),
    "small_pieces": bytes([0x60, 0x3 | 1 << 3 | 2 << 6]) + HANDSHAKE + data(total=2500, frag8=20),
    "refused_hello": header() + hello(who=0) + proof(),
    "raw_garbage": header() + HANDSHAKE + raw(0, 0, b"SC\x01\x00\x03\x00" + bytes(26)),
    "second_link_same_peer": header() + connect() + note(COMM_UP, assoc=3) + challenge()
    + hello(assoc=3, link=0, who=2) + proof(assoc=3, link=0) + data(assoc=3, link=0, total=20),
    "blocked_challenge": header() + BLOCK + hello() + BLOCK + proof() + data(),
    "removed_peer": header() + connect() + remove(0),
    # Links given back by both sides, then opened again under the same number: by the remote
    # (an incoming link) and by this side (an outgoing one).
    "unlinked_then_reopened": header() + HANDSHAKE + data() + release_peer(0) + unlink() + HANDSHAKE + data(total=30),
    "outgoing_unlinked_then_reopened": header() + connect() + note(COMM_UP, assoc=3) + challenge() + send()
    + release_peer(0) + unlink(assoc=3, link=0x80) + connect() + challenge(0x40) + send(1),
    "unlink_errors": header() + unlink(link=5) + HANDSHAKE + unlink() + unlink(),
    # Data on a link this side opened, before the remote's challenge proved its key: it used to
    # be delivered as the peer's (now a protocol error).
    "regress_data_before_challenge": header() + connect() + note(COMM_UP, assoc=3) + data(assoc=3, link=0x80, total=40),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "transport_rx_corpus")
    os.makedirs(out, exist_ok=True)
    for name, content in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(content)


if __name__ == "__main__":
    main()
