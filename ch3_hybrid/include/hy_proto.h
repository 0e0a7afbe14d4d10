/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid's wire formats and their version. What ch3:hybrid puts on the wire beyond CH3's own
 * packets:
 *  - its packet types (PUT_PLACED, GET_PLACED, GET_RESP_PLACED, GET_WRITE, CONNECT_ME, QP_SYNC,
 *    QP_SYNC_ATOMIC, QP_SYNC_ACK) and the layouts of GET_WRITE, QP_SYNC and QP_SYNC_ATOMIC:
 *    mpidi_ch3_hybrid_pre.h, where CH3's packet union needs them;
 *  - a PUT header sent on a queue pair: MPIDI_CH3I_Hy_header_t in mpidi_ch3_hybrid.h (it embeds
 *    CH3's packet);
 *  - the private data of a queue pair's connection (MPA Initiate and Accept): here. The
 *    Initiate ends with a proof of membership: HMAC-SHA-256, under the key in the accepting
 *    rank's business card, of a label, the nonce that rank sent in CONNECT_ME, and the rest of
 *    the private data (hy_device.c).
 * MPIDI_CH3I_HY_PROTO_VERSION names them all; change it with any of them. It travels in the
 * connection's private data, and a queue pair connects only between ranks of one version: with
 * another, that peer's one-sided traffic stays on SCTP.
 *
 * No MPICH type here, so that tests/unit/test_hy_proto.cpp checks the parser without MPICH. The
 * bytes come from the network: the parser accepts exactly the layout, nothing shorter or longer. */
#ifndef HY_PROTO_H_INCLUDED
#define HY_PROTO_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MPIDI_CH3I_HY_PROTO_VERSION 3
#define MPIDI_CH3I_HY_NONCE_BYTES 16
#define MPIDI_CH3I_HY_PROOF_BYTES 32

/* Both sides of a connection send theirs: the version, and where the peer reads how many
 * receives for its PUT headers we have posted (a uint32_t at addr, registered under stag). */
typedef struct {
    uint32_t version;
    uint32_t stag;
    uint64_t addr;
} MPIDI_CH3I_Hy_contact_t;

typedef enum {
    HY_WIRE_OK,
    HY_WIRE_MALFORMED,          /* not the layout (length, text, rank) */
    HY_WIRE_VERSION             /* the layout, from a rank of another version */
} hy_wire_status;

/* The Accept's private data: the contact alone. */
static inline hy_wire_status hy_parse_contact(const uint8_t * data, size_t len,
                                              MPIDI_CH3I_Hy_contact_t * contact)
{
    if (len != sizeof(*contact))
        return HY_WIRE_MALFORMED;
    memcpy(contact, data, sizeof(*contact));
    return contact->version == MPIDI_CH3I_HY_PROTO_VERSION ? HY_WIRE_OK : HY_WIRE_VERSION;
}

/* The Initiate's private data: "<rank> <process group id>", a NUL, then the contact. text (len
 * bytes at least) receives the text part; *pg points into it. */
static inline hy_wire_status hy_parse_identity(const uint8_t * data, size_t len, char *text, int *rank,
                                               const char **pg, MPIDI_CH3I_Hy_contact_t * contact)
{
    size_t n = len > sizeof(*contact) ? strnlen((const char *) data, len - sizeof(*contact)) : len;
    char *end;
    long r;
    if (len < sizeof(*contact) + 1 || n != len - sizeof(*contact) - 1)
        return HY_WIRE_MALFORMED;       /* the NUL must sit right before the contact */
    memcpy(text, data, n + 1);
    if (text[0] < '0' || text[0] > '9')
        return HY_WIRE_MALFORMED;
    r = strtol(text, &end, 10);
    if (*end != ' ' || end[1] == '\0' || r > 0x7fffffffL)
        return HY_WIRE_MALFORMED;
    *rank = (int) r;
    *pg = end + 1;
    return hy_parse_contact(data + n + 1, sizeof(*contact), contact);
}

/* The Initiate's private data into out (size cap): its length, or -1 if it does not fit. */
static inline int hy_write_identity(uint8_t * out, size_t cap, int rank, const char *pg,
                                    const MPIDI_CH3I_Hy_contact_t * contact)
{
    char text[32];
    size_t t = (size_t) snprintf(text, sizeof(text), "%d ", rank), p = strlen(pg);
    if (t + p + 1 + sizeof(*contact) > cap)
        return -1;
    memcpy(out, text, t);
    memcpy(out + t, pg, p + 1);
    memcpy(out + t + p + 1, contact, sizeof(*contact));
    return (int) (t + p + 1 + sizeof(*contact));
}

/* The Initiate's private data is the identity, then the proof: where the proof starts (the
 * identity's length), or -1 if the data is too short to hold one. */
static inline long hy_proof_at(size_t len)
{
    return len > MPIDI_CH3I_HY_PROOF_BYTES ? (long) (len - MPIDI_CH3I_HY_PROOF_BYTES) : -1;
}

#endif /* HY_PROTO_H_INCLUDED */
