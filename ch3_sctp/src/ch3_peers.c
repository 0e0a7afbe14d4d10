/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: which transport peer a VC is, and the reverse, plus the business card in a form
 * PMI can carry ('=' and ';' become '#' and '$'). */
#include "mpidi_ch3_impl.h"

static MPIDI_VC_t **peer_vcs = NULL;
static int peer_vcs_len = 0;

void MPIDI_CH3I_Peer_bind(sctpm_peer peer, MPIDI_VC_t * vc)
{
    if (peer >= peer_vcs_len) {
        int n = peer_vcs_len ? peer_vcs_len : 64;
        while (n <= peer)
            n *= 2;
        peer_vcs = MPL_realloc(peer_vcs, n * sizeof(*peer_vcs), MPL_MEM_OTHER);
        for (int i = peer_vcs_len; i < n; i++)
            peer_vcs[i] = NULL;
        peer_vcs_len = n;
    }
    peer_vcs[peer] = vc;
    vc->ch.peer = peer;
}

MPIDI_VC_t *MPIDI_CH3I_Peer_vc(sctpm_peer peer)
{
    return peer >= 0 && peer < peer_vcs_len ? peer_vcs[peer] : NULL;
}

static int translate(const char *in, char *out, size_t len, const char *from, const char *to)
{
    size_t n = strlen(in);
    if (n + 1 > len)
        return -1;
    for (size_t i = 0; i <= n; i++) {
        const char *hit = strchr(from, in[i]);
        out[i] = (in[i] && hit) ? to[hit - from] : in[i];
    }
    return 0;
}

int MPIDI_CH3I_Card_to_bc(const char *card, char *bc, size_t len)
{
    return translate(card, bc, len, "=;", "#$");
}

/* A port name holds other fields before the card ("tag#0$sctpm1$..."): start at the card. */
int MPIDI_CH3I_Bc_to_card(const char *bc, char *card, size_t len)
{
    const char *start = strstr(bc, "sctpm1$");
    if (!start)
        return -1;
    return translate(start, card, len, "#$", "=;");
}

/* A VC used again after its close handshake: if its association ended meanwhile, it starts
 * over with a new transport peer (and so a new association). */
static void renew_closed_vc(MPIDI_VC_t * vc)
{
    if (vc->ch.closed && vc->ch.failed && vc->ch.peer >= 0) {
        MPIDI_CH3I_Peer_unbind(vc->ch.peer);
        sctpm_peer_release(MPIDI_CH3I_sctp, vc->ch.peer);
        vc->ch.peer = -1;
        vc->ch.failed = 0;
    }
    vc->ch.closed = 0;
}

int MPIDI_CH3I_VC_peer(MPIDI_VC_t * vc)
{
    char bc[SCTPM_CARD_MAX] = "", card[SCTPM_CARD_MAX], shown[SCTPM_CARD_MAX];
    renew_closed_vc(vc);
    if (vc->ch.failed)
        return -1;      /* lost: its association failed, or the process manager reports it dead */
    if (vc->ch.peer >= 0)
        return vc->ch.peer;
    if (vc->pg == NULL)
        return -1;
    if (MPIDI_PG_GetConnString(vc->pg, vc->pg_rank, bc, sizeof(bc)) != MPI_SUCCESS ||
        MPIDI_CH3I_Bc_to_card(bc, card, sizeof(card)) != 0) {
        MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "no usable business card for rank %d ('%s')",
                          vc->pg_rank, sctpm_redact_key(bc, shown, sizeof(shown)));
        return -1;
    }
    sctpm_peer p = sctpm_peer_add(MPIDI_CH3I_sctp, card);
    if (p < 0) {        /* the error quotes the card without its key */
        MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "rank %d: %s", vc->pg_rank,
                          sctpm_last_error(MPIDI_CH3I_sctp));
        return -1;
    }
    MPIDI_CH3I_Peer_bind(p, vc);
    return p;
}

/* The peer of "P<rank> <pg id>", a member of a known process group (its VC made active), or -1. */
static sctpm_peer member_peer(const char *text)
{
    int rank = -1, off = 0;
    MPIDI_PG_t *pg = NULL;
    MPIDI_VC_t *vc = NULL;
    if (sscanf(text + 1, "%d %n", &rank, &off) < 1 || off == 0)
        return -1;
    /* MPIDI_PG_Find only compares the id (its declaration lacks the const) */
    if (MPIDI_PG_Find((void *) (text + 1 + off), &pg) != MPI_SUCCESS || pg == NULL || rank < 0 ||
        rank >= MPIDI_PG_Get_size(pg))
        return -1;
    MPIDI_PG_Get_vc(pg, rank, &vc);
    renew_closed_vc(vc);
    if (vc->state == MPIDI_VC_STATE_INACTIVE)
        MPIDI_CHANGE_VC_STATE(vc, ACTIVE);
    /* The process group's card, not the hello's: only it holds the key this process needs to open
     * links of its own to that rank later. */
    return MPIDI_CH3I_VC_peer(vc);
}

/* A hello blob as a C string in text (of size len), or 0 if it does not fit. */
static int hello_text(const void *hello, size_t len, char *text, size_t size)
{
    if (len == 0 || len >= size)
        return 0;
    memcpy(text, hello, len);
    text[len] = '\0';
    return 1;
}

/* The hello of a link a peer opened, once the peer proved that it holds our card (the transport's
 * auth setting): "P<rank> <pg id>" for a member of a known process group, "T<tag>" for the
 * temporary VC of MPI_Comm_connect (whose port name carried our card). */
sctpm_peer MPIDI_CH3I_On_hello(void *ctx, const void *hello, size_t len, const char *card)
{
    char text[4096];
    MPIDI_VC_t *vc = NULL;
    (void) ctx;
    if (!hello_text(hello, len, text, sizeof(text)))
        return -1;
    if (text[0] == 'P')
        return member_peer(text);
    if (text[0] != 'T')
        return -1;
    int tag = atoi(text + 1);
    vc = (MPIDI_VC_t *) MPL_malloc(sizeof(MPIDI_VC_t), MPL_MEM_ADDRESS);
    if (!vc)
        return -1;
    MPIDI_VC_Init(vc, NULL, 0);
    vc->ch.port_name_tag = tag;
    sctpm_peer p = sctpm_peer_add(MPIDI_CH3I_sctp, card);
    if (p < 0)
        return -1;
    MPIDI_CH3I_Peer_bind(p, vc);
    /* A VC that only receives must still take part in the close handshake at MPI_Finalize. */
    if (vc->state == MPIDI_VC_STATE_INACTIVE)
        MPIDI_CHANGE_VC_STATE(vc, ACTIVE);
    if (MPIDI_CH3I_Acceptq_enqueue(vc, tag) != MPI_SUCCESS)
        return -1;
    return p;
}

/* An association ended before the hello on it was proved (the transport's on_unproven_end): a
 * member's hello names the rank the transport then checks with an association of ours, so that
 * a rank that died holding messages for us is reported. A temporary VC's ("T") has no one to check. */
sctpm_peer MPIDI_CH3I_On_unproven_end(void *ctx, const void *hello, size_t len)
{
    char text[4096];
    (void) ctx;
    if (!hello_text(hello, len, text, sizeof(text)) || text[0] != 'P')
        return -1;
    return member_peer(text);
}

void MPIDI_CH3I_Peer_unbind(sctpm_peer peer)
{
    if (peer >= 0 && peer < peer_vcs_len)
        peer_vcs[peer] = NULL;
}
