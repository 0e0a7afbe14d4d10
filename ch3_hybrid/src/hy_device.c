/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:hybrid: the process's RNIC (one device, PD and completion queue, opened at the first window)
 * and its queue pairs, one per peer, connected on demand. Of two peers, the lower (process group,
 * rank) always makes the connection, when the higher one asks it to with a CONNECT_ME packet over
 * SCTP; a lower side that wants a queue pair first asks the higher one for that packet. It carries
 * a fresh nonce, and the Initiate proves with an HMAC over it under the key in the higher rank's
 * business card that it comes from a rank that holds that card and received that packet (over an
 * association that already proved the same), so a stranger's or a replayed Initiate is refused.
 * (Two simultaneous connects cannot be told apart and dropped one by one: SCTP merges the two
 * associations between the same endpoints into one, which then carries two Initiates.) The
 * completion queue is polled by an extra stage of the transport's progress engine,
 * which does nothing while no window exists and no RDMA work is left; its event fd wakes a
 * blocked progress wait. This is ch3:hybrid's lowest layer: completions, arrived PUT headers and
 * the CONNECT_ME packet go up through the callbacks hy_hold.c gives (MPIDI_CH3I_Hy_device_init). */
#include "mpidi_ch3_hybrid.h"
#include "uthash.h"
#include <sys/random.h>
#include <unistd.h>

MPIDI_CH3I_Hy_rnic_t MPIDI_CH3I_Hy_rnic;
static MPIDI_CH3I_Hy_device_ops_t ops; /* the layers above, called back (hy_hold.c sets them) */

void MPIDI_CH3I_Hy_device_init(const MPIDI_CH3I_Hy_device_ops_t * above)
{
    ops = *above;
}

#define HY_QP_SEND_WRS 1024     /* a full send queue sends further operations on SCTP */
/* The CQ cannot overflow: every work request completes once, so a QP makes at most HY_QP_CQES
 * entries, and a QP is created only while the CQ has room for all of its (an entry costs memory
 * only when it exists). Past HY_CQ_ENTRIES / HY_QP_CQES = 963 QPs, peers stay on SCTP. */
#define HY_QP_CQES (HY_QP_SEND_WRS + MPIDI_CH3I_HY_HEADER_CREDITS)
#define HY_CQ_ENTRIES (1 << 20)
static int cq_reserved;         /* HY_QP_CQES per live QP entry */
#define HY_READ_DEPTH 16        /* RDMA Reads in flight per QP (IRD and ORD) */

#define HY_CREDITS MPIDI_CH3I_HY_HEADER_CREDITS
#define HY_RECV_WR_ID 1         /* our receives' wr_id (the held transfers' are pointers) */

/* Every QP we made, with its VC (events and completions name the QP only) and its memory, by
 * QP number. */
typedef struct hy_qp_entry {
    UT_hash_handle hh;
    iwv_qp *qp;
    uint32_t num;
    MPIDI_VC_t *vc;
    MPIDI_CH3I_Hy_qp_mem *mem;
    struct iwv_mr *mr;
    unsigned recv_next;         /* receives complete in the order posted: the next one's slot */
} hy_qp_entry;

static hy_qp_entry *qps = NULL;

static void complain(const char *what, const char *detail)
{
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
}

/* The addresses of our transport's card ("sctpm1;udp=..;sctp=..;addr=a[,b...]"): the first one,
 * or all of them as "a,b,..." */
static int card_addresses(char *addr, size_t len, int all)
{
    const char *a = strstr(sctpm_card(MPIDI_CH3I_sctp), "addr=");
    size_t n;
    if (!a)
        return -1;
    a += 5;
    n = strcspn(a, all ? ";" : ",;");
    if (n == 0 || n >= len)
        return -1;
    memcpy(addr, a, n);
    addr[n] = '\0';
    return 0;
}

static hy_qp_entry *entry_of(uint32_t num)
{
    hy_qp_entry *e;
    HASH_FIND(hh, qps, &num, sizeof(num), e);
    return e;
}

/* A receive for the peer's next header into slot i; the peer may send one more. */
static int post_header_recv(hy_qp_entry * e, unsigned i)
{
    struct iwv_sge sge = { (uint64_t) (uintptr_t) & e->mem->recv[i], sizeof(e->mem->recv[i]), e->mr->lkey };
    struct iwv_recv_wr wr, *bad = NULL;
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = HY_RECV_WR_ID;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (iwv_post_recv(e->qp, &wr, &bad) != 0)
        return -1;
    e->mem->posted++;
    return 0;
}

static void free_entry(hy_qp_entry * e)
{
    cq_reserved -= HY_QP_CQES;
    if (e->qp)
        iwv_destroy_qp(e->qp);
    if (e->mr)
        iwv_dereg_mr(e->mr);
    MPL_free(e->mem);
    MPL_free(e);
}

/* A QP in INIT for vc, with its memory registered and every header receive posted. */
static iwv_qp *new_qp(MPIDI_VC_t * vc)
{
    MPIDI_CH3I_Hy_rnic_t *r = &MPIDI_CH3I_Hy_rnic;
    struct iwv_qp_init_attr attr;
    hy_qp_entry *e;
    const int room = MPIDI_CH3I_Hy_config.max_qps > 0 ? MPIDI_CH3I_Hy_config.max_qps * HY_QP_CQES : HY_CQ_ENTRIES;
    if (cq_reserved + HY_QP_CQES > room) {
        MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "no queue pair to rank %d: the completion queue "
                          "has room for %d queue pairs; its one-sided traffic goes over SCTP",
                          vc->pg_rank, cq_reserved / HY_QP_CQES);
        return NULL;
    }
    if (!(e = MPL_calloc(1, sizeof(*e), MPL_MEM_OTHER)))
        return NULL;
    cq_reserved += HY_QP_CQES;
    memset(&attr, 0, sizeof(attr));
    attr.qp_context = vc;
    attr.send_cq = attr.recv_cq = r->cq;
    attr.cap.max_send_wr = HY_QP_SEND_WRS;
    attr.cap.max_recv_wr = HY_CREDITS;
    attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
    e->mem = MPL_calloc(1, sizeof(*e->mem), MPL_MEM_OTHER);
    e->mr = e->mem ? iwv_reg_mr(r->pd, e->mem, sizeof(*e->mem),
                                IWV_ACCESS_LOCAL_WRITE | IWV_ACCESS_REMOTE_READ) : NULL;
    e->qp = e->mr ? iwv_create_qp(r->pd, &attr) : NULL;
    if (!e->qp || iwv_modify_qp(e->qp, IWV_QPS_INIT) != 0) {
        complain("cannot create a queue pair", e->mem ? iwv_last_error(r->dev) : "out of memory");
        free_entry(e);
        return NULL;
    }
    for (unsigned i = 0; i < HY_CREDITS; i++)
        if (post_header_recv(e, i) != 0) {
            complain("cannot post a receive on a queue pair", iwv_last_error(r->dev));
            free_entry(e);
            return NULL;
        }
    e->num = iwv_qp_num(e->qp);
    e->vc = vc;
    HASH_ADD(hh, qps, num, sizeof(e->num), e, MPL_MEM_OTHER);
    return e->qp;
}

static void destroy_entry(hy_qp_entry * e)
{
    HASH_DEL(qps, e);
    if (e->vc->ch.hy.qp == e->qp) {
        e->vc->ch.hy.qp = NULL;
        e->vc->ch.hy.mem = NULL;
        e->vc->ch.hy.mem_mr = NULL;
    }
    free_entry(e);
}

static void destroy_qp(iwv_qp * qp)
{
    destroy_entry(entry_of(iwv_qp_num(qp)));
}

/* vc's QP is now qp: headers may go on it once the peer's count is known (use_qp). */
static void use_qp(MPIDI_VC_t * vc, iwv_qp * qp)
{
    hy_qp_entry *e = entry_of(iwv_qp_num(qp));
    vc->ch.hy.qp = qp;
    vc->ch.hy.mem = e->mem;
    vc->ch.hy.mem_mr = e->mr;
}

static MPIDI_CH3I_Hy_contact_t our_contact(iwv_qp * qp)
{
    MPIDI_CH3I_Hy_contact_t c;
    hy_qp_entry *e = entry_of(iwv_qp_num(qp));
    memset(&c, 0, sizeof(c));
    c.version = MPIDI_CH3I_HY_PROTO_VERSION;
    c.addr = (uint64_t) (uintptr_t) & e->mem->posted;
    c.stag = e->mr->rkey;
    return c;
}

/* The peer posted HY_CREDITS receives before it connected or accepted. */
static void learn_contact(MPIDI_VC_t * vc, const MPIDI_CH3I_Hy_contact_t * c)
{
    vc->ch.hy.peer_posted_addr = c->addr;
    vc->ch.hy.peer_posted_stag = c->stag;
    vc->ch.hy.credit = vc->ch.hy.headers_sent + HY_CREDITS;
}

static void wrong_version(MPIDI_VC_t * vc, uint32_t version)
{
    MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "rank %d speaks ch3:hybrid wire version %u, this "
                      "rank %u: no queue pair, its one-sided traffic goes over SCTP", vc->pg_rank,
                      (unsigned) version, (unsigned) MPIDI_CH3I_HY_PROTO_VERSION);
    MPIDI_CH3I_Hy_qp_failed(vc);
}

/* The VC of a connecting peer from its Initiate's private data (hy_proto.h), or NULL. */
static MPIDI_VC_t *vc_of_identity(const uint8_t * data, size_t len, int *rank_out, const char **pg_out,
                                  MPIDI_CH3I_Hy_contact_t * contact, hy_wire_status * status)
{
    static char text[IWV_MAX_PRIVATE_DATA + 1];
    MPIDI_PG_t *pg = NULL;
    MPIDI_VC_t *vc = NULL;
    int rank = -1;
    const char *pg_id = NULL;
    *status = len <= IWV_MAX_PRIVATE_DATA ? hy_parse_identity(data, len, text, &rank, &pg_id, contact)
        : HY_WIRE_MALFORMED;
    if (*status == HY_WIRE_MALFORMED)
        return NULL;
    if (MPIDI_PG_Find((void *) pg_id, &pg) != MPI_SUCCESS || !pg || rank >= MPIDI_PG_Get_size(pg))
        return NULL;
    MPIDI_PG_Get_vc(pg, rank, &vc);
    *rank_out = rank;
    *pg_out = pg_id;
    return vc;
}

/* 1 if we come first in (process group id, rank) order: then we make the connection. */
static int we_are_lower(int peer_rank, const char *peer_pg)
{
    int c = strcmp((const char *) MPIDI_Process.my_pg->id, peer_pg);
    return c < 0 || (c == 0 && MPIDI_Process.my_pg_rank < peer_rank);
}

static struct iwv_conn_param conn_param(const void *data, int len)
{
    struct iwv_conn_param p;
    memset(&p, 0, sizeof(p));
    p.private_data = data;
    p.private_data_len = (uint16_t) len;
    p.responder_resources = HY_READ_DEPTH;
    p.initiator_depth = HY_READ_DEPTH;
    return p;
}

/* What the proof ending an Initiate covers (hy_proto.h): a label, the higher rank's nonce and the
 * identity before the proof. Its key is the one in the higher rank's card (sctpm_link_key_mac). */
static void proof_parts(struct iovec parts[3], const uint8_t * nonce, const uint8_t * identity, size_t len)
{
    static const char label[] = "ch3:hybrid queue pair";
    parts[0].iov_base = (void *) label;
    parts[0].iov_len = sizeof(label);
    parts[1].iov_base = (void *) nonce;
    parts[1].iov_len = MPIDI_CH3I_HY_NONCE_BYTES;
    parts[2].iov_base = (void *) identity;
    parts[2].iov_len = len;
}

/* We are the lower side: connect, proving it with the higher side's nonce. */
static void connect_to(MPIDI_VC_t * vc, const uint8_t * nonce)
{
    uint8_t id[IWV_MAX_PRIVATE_DATA];
    struct iwv_conn_param p;
    MPIDI_CH3I_Hy_contact_t ours;
    int len;
    sctpm_peer higher;
    struct iovec parts[3];
    iwv_qp *qp;
    if (!(qp = new_qp(vc))) {
        MPIDI_CH3I_Hy_qp_failed(vc);
        return;
    }
    ours = our_contact(qp);
    len = hy_write_identity(id, sizeof(id) - MPIDI_CH3I_HY_PROOF_BYTES, MPIDI_Process.my_pg_rank,
                            (const char *) MPIDI_Process.my_pg->id, &ours);
    higher = MPIDI_CH3I_VC_peer(vc);    /* -1 would name our own key */
    if (len >= 0)
        proof_parts(parts, nonce, id, (size_t) len);
    if (len >= 0 && (higher < 0 || sctpm_link_key_mac(MPIDI_CH3I_sctp, higher, parts, 3, id + len) != 0)) {
        complain("cannot prove a queue pair's connect: no key in the peer's business card", NULL);
        len = -1;
    }
    if (len >= 0) {
        p = conn_param(id, len + MPIDI_CH3I_HY_PROOF_BYTES);
        if (iwv_connect(qp, vc->ch.hy.addr, vc->ch.hy.sctp_port, vc->ch.hy.udp_port, &p) == 0) {
            use_qp(vc, qp);
            if (vc->ch.hy.state != MPIDI_CH3I_HY_QP_CONNECTING)
                MPIDI_CH3I_Hy_qp_to(vc, MPIDI_CH3I_HY_QP_CONNECTING);
            return;
        }
        complain("cannot connect a queue pair", iwv_last_error(MPIDI_CH3I_Hy_rnic.dev));
    }
    destroy_qp(qp);
    MPIDI_CH3I_Hy_qp_failed(vc);
}

/* CONNECT_ME: the higher side sends its nonce (the one still unused, if it sent one before) and
 * waits for the lower one's connect; the lower side asks for that nonce. Either waits in
 * CONNECTING without a QP, except a higher side that does not know the peer's contact yet (it
 * needs none to accept). */
static void ask_for_connect(MPIDI_VC_t * vc, int higher)
{
    MPIDI_CH3_Pkt_t pkt;
    memset(&pkt, 0, sizeof(pkt));
    pkt.type = MPIDI_CH3_PKT_HY_CONNECT_ME;
    if (higher) {
        if (!vc->ch.hy.nonce_issued &&
            getrandom(vc->ch.hy.connect_nonce, MPIDI_CH3I_HY_NONCE_BYTES, 0) != MPIDI_CH3I_HY_NONCE_BYTES) {
            MPIDI_CH3I_Hy_qp_failed(vc);
            return;
        }
        memcpy(pkt.hy_connect_me.nonce, vc->ch.hy.connect_nonce, MPIDI_CH3I_HY_NONCE_BYTES);
        vc->ch.hy.nonce_issued = 1;
    }
    /* Not held behind RDMA transfers (there are none yet to this peer) and order-free. */
    if (ops.send_now(vc, &pkt, sizeof(pkt)) != MPI_SUCCESS) {
        MPIDI_CH3I_Hy_qp_failed(vc);
        return;
    }
    if (vc->ch.hy.state == MPIDI_CH3I_HY_QP_IDLE)
        MPIDI_CH3I_Hy_qp_to(vc, MPIDI_CH3I_HY_QP_CONNECTING);
}

/* No QP yet, and all it takes to make one: the peer's contact (IDLE), our RNIC, a process group
 * to name ourselves by. */
static int may_connect(MPIDI_VC_t * vc)
{
    return vc->ch.hy.state == MPIDI_CH3I_HY_QP_IDLE && MPIDI_CH3I_Hy_rnic.dev && vc->pg;
}

static int is_lower(MPIDI_VC_t * vc)
{
    return we_are_lower(vc->pg_rank, (const char *) vc->pg->id);
}

void MPIDI_CH3I_Hy_connect(MPIDI_VC_t * vc)
{
    if (may_connect(vc))
        ask_for_connect(vc, !is_lower(vc));
}

int MPIDI_CH3I_Hy_pkt_connect_me(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                                 MPIR_Request ** rreqp)
{
    enum MPIDI_CH3I_Hy_qp_state state = vc->ch.hy.state;
    (void) data;
    *buflen = 0;
    *rreqp = NULL;
    if (!MPIDI_CH3I_Hy_rnic.dev || !vc->pg)
        return MPI_SUCCESS;
    if (is_lower(vc)) {         /* the higher side's nonce: connect with it (if we know its contact) */
        if (state == MPIDI_CH3I_HY_QP_IDLE || (state == MPIDI_CH3I_HY_QP_CONNECTING && !vc->ch.hy.qp))
            connect_to(vc, pkt->hy_connect_me.nonce);
    } else if (state <= MPIDI_CH3I_HY_QP_IDLE || (state == MPIDI_CH3I_HY_QP_CONNECTING && !vc->ch.hy.qp)) {
        /* The lower side asks for our nonce; again if we sent it already: it came before the
         * lower side knew our contact (window creation), which drops it. */
        ask_for_connect(vc, 1);
    }
    return MPI_SUCCESS;
}

void MPIDI_CH3I_Hy_qp_to(MPIDI_VC_t * vc, enum MPIDI_CH3I_Hy_qp_state to)
{
    static const char *const names[] = { "no contact", "idle", "connecting", "ready", "failed",
        "sync asked", "sync answered"
    };
    MPIR_Assert(hy_qp_may_go(vc->ch.hy.state, to));
    MPL_DBG_MSG_FMT(MPIDI_CH3_DBG_OTHER, VERBOSE, (MPL_DBG_FDEST, "ch3:hybrid queue pair to rank %d: %s -> %s",
                    vc->pg_rank, names[vc->ch.hy.state], names[to]));
    (void) names;
    vc->ch.hy.state = to;
}

int MPIDI_CH3I_Hy_qp_failed(MPIDI_VC_t * vc)
{
    if (vc->ch.hy.state >= MPIDI_CH3I_HY_QP_FAILED)
        return 0;
    MPIDI_CH3I_Hy_qp_to(vc, MPIDI_CH3I_HY_QP_FAILED);
    return 1;
}

int MPIDI_CH3I_Hy_qp_ready(MPIDI_VC_t * vc)
{
    return vc->ch.hy.state == MPIDI_CH3I_HY_QP_READY;
}

/* An Initiate's proof, against the nonce we sent that VC's rank; a nonce serves one connect. */
static int proof_holds(MPIDI_VC_t * vc, const uint8_t * data, long at)
{
    static int told;
    struct iovec parts[3];
    proof_parts(parts, vc->ch.hy.connect_nonce, data, (size_t) at);
    if (vc->ch.hy.nonce_issued && sctpm_link_key_mac_check(MPIDI_CH3I_sctp, -1, parts, 3, data + at)) {
        vc->ch.hy.nonce_issued = 0;
        return 1;
    }
    MPIDI_CH3I_Hy_rnic.proof_failures++;
    if (!told++)
        MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_NOTICE, "refused a queue pair connect naming rank %d: it does not "
                          "prove that it holds this rank's business card%s (further refusals are only counted)",
                          vc->pg_rank, vc->ch.hy.nonce_issued ? "" : " (no connect was asked of it)");
    return 0;
}

static void on_connect_request(struct iwv_event *ev)
{
    int rank = -1;
    const char *pg = NULL;
    MPIDI_CH3I_Hy_contact_t theirs, ours;
    hy_wire_status status = HY_WIRE_MALFORMED;
    const long at = hy_proof_at(ev->private_data_len);
    MPIDI_VC_t *vc = at < 0 ? NULL : vc_of_identity(ev->private_data, (size_t) at, &rank, &pg, &theirs, &status);
    struct iwv_conn_param p;
    iwv_qp *qp;
    if (vc && status == HY_WIRE_VERSION) {
        iwv_reject(ev->request, NULL, 0);
        wrong_version(vc, theirs.version);
        return;
    }
    /* Only the lower side connects, with the proof for the nonce we sent it; a second connect from
     * it replaces nothing that works, and a peer whose QP broke stays on SCTP (the header counts
     * belong to that QP). */
    if (!vc || we_are_lower(rank, pg) || vc->ch.hy.state >= MPIDI_CH3I_HY_QP_READY ||
        !proof_holds(vc, ev->private_data, at) || !(qp = new_qp(vc))) {
        iwv_reject(ev->request, NULL, 0);
        return;
    }
    ours = our_contact(qp);
    p = conn_param(&ours, sizeof(ours));
    if (iwv_accept(ev->request, qp, &p) != 0) {
        complain("cannot accept a queue pair", iwv_last_error(MPIDI_CH3I_Hy_rnic.dev));
        destroy_qp(qp);
        MPIDI_CH3I_Hy_qp_failed(vc);
        return;
    }
    use_qp(vc, qp);
    learn_contact(vc, &theirs);
    MPIDI_CH3I_Hy_qp_to(vc, MPIDI_CH3I_HY_QP_READY);
}

static void on_event(struct iwv_event *ev)
{
    hy_qp_entry *e;
    if (ev->type == IWV_EVENT_CONNECT_REQUEST) {
        on_connect_request(ev);
        return;
    }
    e = entry_of(iwv_qp_num(ev->qp));
    if (!e)
        return;
    switch (ev->type) {
        case IWV_EVENT_ESTABLISHED:
            if (e->vc->ch.hy.qp == e->qp && e->vc->ch.hy.state == MPIDI_CH3I_HY_QP_CONNECTING) {
                MPIDI_CH3I_Hy_contact_t theirs;
                hy_wire_status status = hy_parse_contact(ev->private_data, ev->private_data_len, &theirs);
                if (status != HY_WIRE_OK) {     /* into FAILED: this peer's RMA stays on SCTP */
                    MPIDI_CH3I_Hy_close_qp(e->vc);
                    if (status == HY_WIRE_VERSION)
                        wrong_version(e->vc, theirs.version);
                    else
                        complain("a queue pair's accept carried malformed private data", NULL);
                    break;
                }
                learn_contact(e->vc, &theirs);
                MPIDI_CH3I_Hy_qp_to(e->vc, MPIDI_CH3I_HY_QP_READY);
            }
            break;
        case IWV_EVENT_REJECTED:
        case IWV_EVENT_UNREACHABLE:
        case IWV_EVENT_DISCONNECTED:
        case IWV_EVENT_QP_ERROR:
            /* Once: a broken QP reports an error and then its disconnection. Not after CH3's
             * close handshake with the peer, which may then close its RNIC. */
            if (e->vc->ch.hy.qp == e->qp && MPIDI_CH3I_Hy_qp_failed(e->vc) &&
                ev->type != IWV_EVENT_REJECTED && !e->vc->ch.closed) {
                char what[128];
                snprintf(what, sizeof(what), "the queue pair to rank %d failed, one-sided traffic "
                         "to it continues over SCTP", e->vc->pg_rank);
                complain(what, ev->detail);
            }
            break;
        default:
            break;
    }
}

/* Caller mode: the RNIC runs on the MPI thread; its fd, written by usrsctp's upcalls, wakes a
 * blocked progress wait. Drained before a round (an upcall after that writes it again), but only
 * after a round that found work and now and then otherwise: it is a system call. Until drained,
 * a readable fd only makes a blocked wait look again. */
static void drain_fd(MPIDI_CH3I_Hy_rnic_t * r)
{
    static unsigned rounds;
    uint64_t v;
    if (MPIDI_CH3I_Hy_config.progress_thread || (!r->more && ++rounds % 64 != 0))
        return;
    while (read(r->fd, &v, sizeof(v)) > 0) {
    }
}

static int run_rnic(MPIDI_CH3I_Hy_rnic_t * r)
{
    r->seen_activity = iwv_device_activity(r->dev);
    if (MPIDI_CH3I_Hy_config.progress_thread)
        return 0;
    drain_fd(r);
    r->more = iwv_progress(r->dev, 0) > 0;
    return r->more;
}

/* The CQ stage works while a window exists or transfers are in flight (connection events left
 * over when the last window went wait for the next one). */
static int rnic_active(const MPIDI_CH3I_Hy_rnic_t * r)
{
    return r->dev && (r->windows > 0 || r->in_flight > 0);
}

/* Has the RNIC's socket seen activity since the stage last ran it, or are completions waiting? */
static int rnic_has_news(const MPIDI_CH3I_Hy_rnic_t * r)
{
    return r->more || iwv_device_activity(r->dev) != r->seen_activity || iwv_cq_pending(r->cq);
}

/* For the progress engine's spin loop, instead of a poll system call on our fds each round. */
static int rnic_ready(void *arg)
{
    const MPIDI_CH3I_Hy_rnic_t *r = (const MPIDI_CH3I_Hy_rnic_t *) arg;
    if (r->dev)
        iwv_device_owner_present(r->dev);       /* spinning in MPI: the standby thread sleeps on */
    return rnic_active(r) && rnic_has_news(r);
}

static int rnic_busy(void *arg)
{
    MPIDI_CH3I_Hy_rnic_t *r = (MPIDI_CH3I_Hy_rnic_t *) arg;
    return rnic_active(r) && iwv_device_tx_blocked(r->dev);
}

/* A message from the peer landed in the next receive slot: take it, give the slot back, and hand
 * it up (to hy_placed.c, which checks it). Flushed receives (the QP broke or went) only end. */
static void received(const struct iwv_wc *wc)
{
    hy_qp_entry *e = entry_of(wc->qp_num);
    MPIDI_CH3I_Hy_header_t h;
    unsigned slot;
    if (!e || wc->status != IWV_WC_SUCCESS)
        return;
    slot = e->recv_next++ % HY_CREDITS;
    memcpy(&h, &e->mem->recv[slot], sizeof(h));
    if (post_header_recv(e, slot) != 0) {
        complain("cannot post a receive on a queue pair", iwv_last_error(MPIDI_CH3I_Hy_rnic.dev));
        MPIDI_CH3I_Hy_close_qp(e->vc);
    }
    ops.header_arrived(e->vc, &h, wc->byte_len);
}

int MPIDI_CH3I_Hy_poll_cq(void)
{
    static int polling;
    MPIDI_CH3I_Hy_rnic_t *r = &MPIDI_CH3I_Hy_rnic;
    struct iwv_wc wc[16];
    int n, taken = 0;
    if (!r->dev || polling)
        return 0;       /* what a handler run from here sends does not poll again */
    polling = 1;
    /* The event fd fired for the first entry since it was armed: once entries were taken, clear
     * it and arm it again, then look once more for entries that came in between. */
    while ((n = iwv_poll_cq(r->cq, 16, wc)) > 0) {
        for (int i = 0; i < n; i++) {
            if (wc[i].wr_id == HY_RECV_WR_ID)
                received(&wc[i]);
            else
                ops.completed(&wc[i]);
        }
        taken += n;
        iwv_cq_ack_event(r->cq);
        iwv_req_notify_cq(r->cq, 0);
    }
    polling = 0;
    if (n < 0)  /* cannot happen: QPs are created only within the CQ's room (new_qp) */
        MPID_Abort(NULL, MPI_ERR_INTERN, 1, "ch3:hybrid: internal error: RDMA completion queue overflow");
    return taken;
}

void MPIDI_CH3I_Hy_close_qp(MPIDI_VC_t * vc)
{
    if (vc->ch.hy.qp)
        iwv_modify_qp(vc->ch.hy.qp, IWV_QPS_ERR);
    if (vc->ch.hy.state == MPIDI_CH3I_HY_QP_READY || vc->ch.hy.state == MPIDI_CH3I_HY_QP_CONNECTING)
        MPIDI_CH3I_Hy_qp_failed(vc);
}

static int cq_stage(void *arg)
{
    MPIDI_CH3I_Hy_rnic_t *r = &MPIDI_CH3I_Hy_rnic;
    struct iwv_event ev;
    int work = 0;
    (void) arg;
    if (r->dev)
        iwv_device_owner_present(r->dev); /* the standby thread (progress=standby) stays asleep */
    if (!rnic_active(r))
        return 0;
    work += MPIDI_CH3I_Hy_sync_deadlines();
    /* With no transfer of ours in flight, nothing can have happened unless the RNIC's socket
     * saw activity: skip the device's locks (they cost small messages ~5% of a round trip). */
    if (r->in_flight == 0 && !rnic_has_news(r)) {
        drain_fd(r);
        return 0;
    }
    work += run_rnic(r);
    while (iwv_get_event(r->dev, &ev, 0) == 1) {
        on_event(&ev);
        work++;
    }
    return work + MPIDI_CH3I_Hy_poll_cq();
}

/* The progress engine blocks in the kernel, woken by the RNIC's fd among others: the RNIC's
 * standby thread (progress=standby) leaves the RNIC to it meanwhile. */
void MPIDI_CH3I_Hy_blocking(int entering)
{
    if (MPIDI_CH3I_Hy_rnic.dev)
        iwv_device_owner_waiting(MPIDI_CH3I_Hy_rnic.dev, entering);
}

/* The process is in MPI's progress engine: the standby thread does not take over however long a
 * round takes (placing a large transfer, copying a large message); its absence starts on leaving. */
void MPIDI_CH3I_Hy_inside(int entering)
{
    if (MPIDI_CH3I_Hy_rnic.dev)
        iwv_device_owner_inside(MPIDI_CH3I_Hy_rnic.dev, entering);
}

/* Tests only (MPICH_HYBRID_TEST_CONTACT_FILE=<path>): the RNIC's SCTP and UDP ports go to
 * <path>.<rank>, for tests/adversary/run's attacker (anyone who sees the RNIC's traffic knows them). */
static void tell_test_contact(iwv_device * dev)
{
    const char *path = getenv("MPICH_HYBRID_TEST_CONTACT_FILE");
    char name[4096];
    FILE *f;
    if (!path)
        return;
    snprintf(name, sizeof(name), "%s.%d", path, MPIDI_Process.my_pg_rank);
    if ((f = fopen(name, "w")) != NULL) {
        fprintf(f, "%u %u\n", (unsigned) iwv_device_sctp_port(dev), (unsigned) iwv_device_udp_port(dev));
        fclose(f);
    }
}

int MPIDI_CH3I_Hy_open(void)
{
    MPIDI_CH3I_Hy_rnic_t *r = &MPIDI_CH3I_Hy_rnic;
    struct iwv_device_attr attr;
    char err[256] = "", addr[512];
    if (r->dev)
        return 0;
    if (r->failed)
        return -1;
    r->failed = 1;
    iwv_device_attr_init(&attr);
    attr.progress = MPIDI_CH3I_Hy_config.progress_thread ? IWV_PROGRESS_THREAD
        : MPIDI_CH3I_Hy_config.progress_standby ? IWV_PROGRESS_STANDBY : IWV_PROGRESS_CALLER;
    attr.initiate_timeout_ms = (uint32_t) MPIDI_CH3I_Hy_config.initiate_timeout_ms;
    attr.max_pending_requests = (uint32_t) MPIDI_CH3I_Hy_config.pending_connects;
    attr.early_bytes = (uint64_t) MPIDI_CH3I_Hy_config.early_bytes;
    attr.standby_after_us = (uint32_t) MPIDI_CH3I_Hy_config.standby_after_us;
    /* Where peers reach our transport, and with those interfaces' MTU (65000 on loopback rather
     * than the 1472 of the host's Ethernet interface that an unbound endpoint would take). All of
     * them: a multihomed transport gives a multihomed RNIC, with CMT when the transport has it
     * (one rail would halve RDMA bandwidth on a two-rail cluster). */
    if (card_addresses(addr, sizeof(addr), 1) != 0) {
        char shown[SCTPM_CARD_MAX];
        complain("no RDMA (no address in the transport's business card), one-sided traffic goes over SCTP",
                 sctpm_redact_key(sctpm_card(MPIDI_CH3I_sctp), shown, sizeof(shown)));
        return -1;
    }
    attr.bind_address = addr;
    r->dev = iwv_open_device(&attr, err, sizeof(err));
    if (!r->dev) {
        complain("no RDMA (cannot open the iWARP device), one-sided traffic goes over SCTP", err);
        return -1;
    }
    r->pd = iwv_alloc_pd(r->dev);
    r->cq = r->pd ? iwv_create_cq(r->dev, HY_CQ_ENTRIES) : NULL;
    r->scratch = r->cq ? iwv_reg_mr(r->pd, r->fence_byte, sizeof(r->fence_byte), IWV_ACCESS_LOCAL_WRITE) : NULL;
    if (!r->scratch) {
        complain("no RDMA (cannot set up the iWARP device), one-sided traffic goes over SCTP",
                 iwv_last_error(r->dev));
        if (r->cq)
            iwv_destroy_cq(r->cq);
        if (r->pd)
            iwv_dealloc_pd(r->pd);
        iwv_close_device(r->dev);
        r->dev = NULL;
        return -1;
    }
    iwv_req_notify_cq(r->cq, 0);
    tell_test_contact(r->dev);
    sctpm_add_stage(MPIDI_CH3I_sctp, "iwarp-cq", cq_stage, NULL);
    sctpm_watch_fd(MPIDI_CH3I_sctp, iwv_cq_fd(r->cq));
    sctpm_add_spin_probe(MPIDI_CH3I_sctp, rnic_ready, r);
    if (!MPIDI_CH3I_Hy_config.progress_thread) {
        r->fd = iwv_device_fd(r->dev);
        sctpm_watch_fd(MPIDI_CH3I_sctp, r->fd);
        sctpm_add_busy(MPIDI_CH3I_sctp, rnic_busy, r);
    }
    r->failed = 0;
    return 0;
}

int MPIDI_CH3I_Hy_local_contact(char *addr, size_t len, unsigned short *sctp_port,
                                unsigned short *udp_port)
{
    if (!MPIDI_CH3I_Hy_rnic.dev || card_addresses(addr, len, 0) != 0)
        return -1;
    *sctp_port = iwv_device_sctp_port(MPIDI_CH3I_Hy_rnic.dev);
    *udp_port = iwv_device_udp_port(MPIDI_CH3I_Hy_rnic.dev);
    return 0;
}

int MPIDI_CH3I_Hy_finalize(void)
{
    MPIDI_CH3I_Hy_rnic_t *r = &MPIDI_CH3I_Hy_rnic;
    if (!r->dev)
        return MPI_SUCCESS;
    while (qps) {
        MPIDI_CH3I_Hy_qp_failed(qps->vc);
        destroy_entry(qps);
    }
    iwv_dereg_mr(r->scratch);
    iwv_destroy_cq(r->cq);
    /* Both EBUSY if a window was never freed (its registration keeps the PD): left to exit. */
    if (iwv_dealloc_pd(r->pd) == 0)
        iwv_close_device(r->dev);
    r->dev = NULL;      /* the CQ stage stops here */
    return MPI_SUCCESS;
}
