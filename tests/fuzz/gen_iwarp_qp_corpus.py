#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpus of tests/fuzz/iwarp_qp_fuzz.cpp (its script format: see `step` there).

    python3 tests/fuzz/gen_iwarp_qp_corpus.py tests/fuzz/iwarp_qp_corpus

Findings of the fuzzer are kept in that directory too, under their own names (not written here).
"""
import os
import struct
import sys


def u16(v):
    return struct.pack(">H", v & 0xFFFF)


def u32(v):
    return struct.pack(">I", v & 0xFFFFFFFF)


# Header: b0 = passive | early-limit selector << 1 | segment-size selector << 4; our IRD, ORD.
def active(early=0, seg=0, ird=4, ord_=4):
    return bytes([early << 1 | seg << 4, ird, ord_, 0])  # no private data in the Initiate


def passive(early=0, seg=0, ird=4, ord_=4):
    return bytes([1 | early << 1 | seg << 4, ird, ord_])


# Operations (the first byte is the operation number, `step`'s switch).
def raw(ppid_sel, mode, body):
    return bytes([0, ppid_sel, mode]) + u16(len(body)) + body


def write(stag_sel, to, length, last=True, mode=0):
    return bytes([1, stag_sel]) + u16(to) + u16(length) + bytes([1 if last else 0, mode])


def send(mo, length, kind=0, mode=0):
    return bytes([2, kind]) + u16(mo) + u16(length) + bytes([mode])


def read_request(sink_stag, sink_to, size, src_sel, src_to, mode=0):
    return bytes([3]) + u32(sink_stag) + u32(sink_to) + u16(size) + bytes([src_sel]) + u16(src_to) + bytes([0, mode])


def read_response(stag_sel, to, length, last=True, mode=0):
    return bytes([4, stag_sel]) + u16(to) + u16(length) + bytes([1 if last else 0, mode])


def terminate(layer, etype, code, mode=0):
    return bytes([5, layer, etype, code, mode])


# Session functions as `control` numbers them: 0 Initiate, 1 Accept, 2 Reject, 3 Terminate,
# 4..6 the enhanced Initiate, Accept, Reject (RFC 6581, with an IRD/ORD word).
def control(f, pd=b"", ird=4, ord_=4, mode=0):
    out = bytes([6, f, mode])
    if f >= 4:
        out += bytes([ird, ord_])
    return out + u16(len(pd)) + pd


HOLD, PROGRESS, CLOSE, NEW_REQUEST = bytes([7]), bytes([11, 3]), bytes([13]), bytes([14])


def release(seed):
    return bytes([8, seed])


def post_recv(*sges):  # one WR; sges: (region, offset, length)
    out = bytes([9, 0, len(sges)])
    for r, off, n in sges:
        out += bytes([r]) + u16(off) + u16(n)
    return out


def post_read(region, off, length, rkey=0x55, raddr=0):
    k = 3 | 4 | 1 << 4  # RDMA Read, signaled, one SGE
    return bytes([10, k, region]) + u16(off) + u16(length) + u32(0) + u32(rkey) + u32(raddr)


def u64(v):
    return struct.pack(">Q", v & 0xFFFFFFFFFFFFFFFF)


# RFC 7306: the peer's Atomic Request (AOpCode aop on region stag_sel at offset to) and Response.
def atomic_request(aop, stag_sel, to, add=1, mask=0, compare=0, compare_mask=None, d=0, mode=0):
    cm = bytes([1]) if compare_mask is None else bytes([0]) + u64(compare_mask)
    return bytes([20, aop]) + u32(7) + bytes([stag_sel]) + u16(to) + u64(add) + u64(mask) + u64(compare) + cm + bytes([d, mode])


def atomic_response(original=5, d=0, mode=0):
    return bytes([21, d]) + u64(original) + bytes([mode])


def post_atomic(cas, region, off, rkey=0x55, raddr=0, compare=0, swap=1):
    k = (1 if cas else 0) | 2 | 4  # 8-byte sink, signaled
    return bytes([22, k, region]) + u16(off) + u16(8) + u32(rkey) + u32(raddr) + u32(compare) + u32(swap)


def clock(ms):
    return bytes([16]) + u16(ms // 4)


def answer(reject=False, pd=b""):
    return bytes([17, 0x80 if reject else 0, len(pd)]) + pd


def multi_send(total, per8):
    return bytes([19]) + u16(total) + bytes([per8])


ACCEPT = control(5, b"hi")
SEEDS = {
    "passive_handshake_send": passive() + control(4, b"abc") + answer(pd=b"ok")
    + post_recv((2, 0, 512)) + send(0, 100),
    "passive_reject": passive() + control(4, b"abc") + answer(reject=True, pd=b"no"),
    "passive_data_before_initiate": passive() + raw(0, 0, bytes(20)),
    "active_rdma_write": active() + ACCEPT + write(0, 16, 200),
    "active_write_zero_based": active() + ACCEPT + write(4, 0, 256),
    "active_write_read_only_region": active() + ACCEPT + write(1, 0, 10),
    "active_reordered_send": active(seg=1) + ACCEPT + post_recv((2, 0, 1024), (2, 1024 - 1024, 0))
    + HOLD + multi_send(1000, 32) + HOLD + release(7),
    "active_read_request": active() + ACCEPT + read_request(0x1234, 0, 64, 1, 0) + PROGRESS,
    "active_read_response": active() + ACCEPT + post_read(2, 0, 128) + PROGRESS + read_response(2, 0, 128),
    "active_terminate": active() + ACCEPT + post_recv((2, 0, 64)) + terminate(0, 1, 0),
    "active_reject": active() + control(6, b"busy"),
    "early_limit_exceeded": active(early=3) + ACCEPT + write(0, 0, 300, mode=5),
    "early_then_filled": active() + ACCEPT + write(0, 100, 50, mode=1) + write(0, 0, 50),
    "active_atomic_fetch_add": active() + ACCEPT + atomic_request(0, 6, 8, add=3) + PROGRESS,
    "active_atomic_masked_cmp_swap": active() + ACCEPT
    + atomic_request(2, 6, 16, add=0xFF00, mask=0xFFFF, compare=0, compare_mask=0xFF) + PROGRESS,
    "active_atomic_misaligned": active() + ACCEPT + atomic_request(0, 6, 4) + PROGRESS,
    "active_atomic_unknown_aopcode": active() + ACCEPT + atomic_request(1, 6, 0) + PROGRESS,
    "active_atomic_on_read_only": active() + ACCEPT + atomic_request(0, 1, 0) + PROGRESS,
    "active_atomic_response": active() + ACCEPT + post_atomic(True, 2, 0) + PROGRESS + atomic_response(),
    "active_atomic_response_unasked": active() + ACCEPT + atomic_response(d=4),
    "request_flood_and_timeout": passive() + NEW_REQUEST * 70 + clock(10004),
    "request_slow_initiate": passive() + clock(9000) + control(0, b"late") + clock(2000) + answer(),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "iwarp_qp_corpus")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
