/* ch3:hybrid: the process's RNIC (one device, PD and completion queue, opened at the first window)
 * and its queue pairs, one per peer, connected on demand. Of two peers, the lower (process group,
 * rank) always makes the connection; the higher one asks it to with a CONNECT_ME packet over SCTP.
 * (Two simultaneous connects cannot be told apart and dropped one by one: SCTP merges the two
 * associations between the same endpoints into one, which then carries two Initiates.) The
 * completion queue is polled by an extra stage of the transport's progress engine,
 * which does nothing while no window exists and no RDMA work is left; its event fd wakes a
 * blocked progress wait. */
#include "mpidi_ch3_impl.h"
#include <unistd.h>

MPIDI_CH3I_Hy_rnic_t MPIDI_CH3I_Hy_rnic;

#define HY_CQ_ENTRIES 65536
#define HY_QP_SEND_WRS 1024     /* a full send queue sends further operations on SCTP */
#define HY_READ_DEPTH 16        /* RDMA Reads in flight per QP (IRD and ORD) */

/* Every QP we made, with its VC (events name the QP only). */
typedef struct hy_qp_entry {
    struct hy_qp_entry *next;
    iwv_qp *qp;
    MPIDI_VC_t *vc;
} hy_qp_entry;
static hy_qp_entry *qps = NULL;

static void complain(const char *what, const char *detail)
{
    if (getenv("MPICH_SCTP_QUIET") == NULL)
        fprintf(stderr, "[ch3:hybrid] rank %d: %s%s%s\n", MPIR_Process.rank, what,
                detail ? ": " : "", detail ? detail : "");
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

static hy_qp_entry *entry_of(iwv_qp * qp)
{
    for (hy_qp_entry * e = qps; e; e = e->next)
        if (e->qp == qp)
            return e;
    return NULL;
}

static iwv_qp *new_qp(MPIDI_VC_t * vc)
{
    struct iwv_qp_init_attr attr;
    hy_qp_entry *e = MPL_calloc(1, sizeof(*e), MPL_MEM_OTHER);
    if (!e)
        return NULL;
    memset(&attr, 0, sizeof(attr));
    attr.qp_context = vc;
    attr.send_cq = attr.recv_cq = MPIDI_CH3I_Hy_rnic.cq;
    attr.cap.max_send_wr = HY_QP_SEND_WRS;
    attr.cap.max_recv_wr = 1;   /* nothing is ever sent to it as a Send */
    attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
    e->qp = iwv_create_qp(MPIDI_CH3I_Hy_rnic.pd, &attr);
    if (!e->qp || iwv_modify_qp(e->qp, IWV_QPS_INIT) != 0) {
        complain("cannot create a queue pair", iwv_last_error(MPIDI_CH3I_Hy_rnic.dev));
        if (e->qp)
            iwv_destroy_qp(e->qp);
        MPL_free(e);
        return NULL;
    }
    e->vc = vc;
    e->next = qps;
    qps = e;
    return e->qp;
}

static void destroy_qp(iwv_qp * qp)
{
    for (hy_qp_entry ** p = &qps; *p; p = &(*p)->next)
        if ((*p)->qp == qp) {
            hy_qp_entry *e = *p;
            *p = e->next;
            MPL_free(e);
            break;
        }
    iwv_destroy_qp(qp);
}

/* "<rank> <pg id>": who is connecting (the private data of the Initiate). */
static int identity(char *out, size_t len)
{
    int n = snprintf(out, len, "%d %s", MPIDI_Process.my_pg_rank, (const char *) MPIDI_Process.my_pg->id);
    return n > 0 && (size_t) n < len ? n + 1 : -1;
}

static MPIDI_VC_t *vc_of_identity(const uint8_t * data, size_t len, int *rank_out, const char **pg_out)
{
    static char text[IWV_MAX_PRIVATE_DATA + 1];
    MPIDI_PG_t *pg = NULL;
    MPIDI_VC_t *vc = NULL;
    int rank = -1, off = 0;
    memcpy(text, data, len);
    text[len] = '\0';
    if (sscanf(text, "%d %n", &rank, &off) < 1 || off == 0)
        return NULL;
    if (MPIDI_PG_Find(text + off, &pg) != MPI_SUCCESS || !pg || rank < 0 || rank >= MPIDI_PG_Get_size(pg))
        return NULL;
    MPIDI_PG_Get_vc(pg, rank, &vc);
    *rank_out = rank;
    *pg_out = text + off;
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

static void connect_to(MPIDI_VC_t * vc)
{
    char id[IWV_MAX_PRIVATE_DATA];
    struct iwv_conn_param p;
    int len;
    iwv_qp *qp;
    vc->ch.hy.state = MPIDI_CH3I_HY_QP_FAILED;  /* unless the connect starts */
    len = identity(id, sizeof(id));
    if (len < 0 || !(qp = new_qp(vc)))
        return;
    p = conn_param(id, len);
    if (iwv_connect(qp, vc->ch.hy.addr, vc->ch.hy.sctp_port, vc->ch.hy.udp_port, &p) != 0) {
        complain("cannot connect a queue pair", iwv_last_error(MPIDI_CH3I_Hy_rnic.dev));
        destroy_qp(qp);
        return;
    }
    vc->ch.hy.qp = qp;
    vc->ch.hy.state = MPIDI_CH3I_HY_QP_CONNECTING;
}

/* The higher side of a pair waits for the lower one's connect (CONNECTING without a QP). */
static void ask_for_connect(MPIDI_VC_t * vc)
{
    MPIDI_CH3_Pkt_t pkt;
    struct iovec iov = { &pkt, sizeof(pkt) };
    MPIR_Request *sreq = NULL;
    memset(&pkt, 0, sizeof(pkt));
    pkt.type = MPIDI_CH3_PKT_HY_CONNECT_ME;
    /* Not held behind RDMA transfers (there are none yet to this peer) and order-free. */
    if (MPIDI_CH3I_Start_msg_now(vc, &iov, 1, &sreq) != MPI_SUCCESS) {
        vc->ch.hy.state = MPIDI_CH3I_HY_QP_FAILED;
        return;
    }
    vc->ch.hy.state = MPIDI_CH3I_HY_QP_CONNECTING;
}

/* No QP yet, and all it takes to make one: the peer's contact, our RNIC, a process group to
 * name ourselves by. */
static int may_connect(MPIDI_VC_t * vc)
{
    return vc->ch.hy.state == MPIDI_CH3I_HY_QP_NONE && vc->ch.hy.contact_known && MPIDI_CH3I_Hy_rnic.dev
        && vc->pg;
}

static int is_lower(MPIDI_VC_t * vc)
{
    return we_are_lower(vc->pg_rank, (const char *) vc->pg->id);
}

void MPIDI_CH3I_Hy_connect(MPIDI_VC_t * vc)
{
    if (!may_connect(vc))
        return;
    if (is_lower(vc))
        connect_to(vc);
    else
        ask_for_connect(vc);
}

int MPIDI_CH3I_Hy_pkt_connect_me(MPIDI_VC_t * vc, MPIDI_CH3_Pkt_t * pkt, void *data, intptr_t * buflen,
                                 MPIR_Request ** rreqp)
{
    (void) pkt, (void) data;
    *buflen = 0;
    *rreqp = NULL;
    if (may_connect(vc) && is_lower(vc))
        connect_to(vc);
    return MPI_SUCCESS;
}

int MPIDI_CH3I_Hy_qp_ready(MPIDI_VC_t * vc)
{
    return vc->ch.hy.state == MPIDI_CH3I_HY_QP_READY;
}

static void on_connect_request(struct iwv_event *ev)
{
    int rank = -1;
    const char *pg = NULL;
    MPIDI_VC_t *vc = vc_of_identity(ev->private_data, ev->private_data_len, &rank, &pg);
    struct iwv_conn_param p = conn_param(NULL, 0);
    iwv_qp *qp;
    /* Only the lower side connects; a second connect from it replaces nothing that works. */
    if (!vc || we_are_lower(rank, pg) || vc->ch.hy.state == MPIDI_CH3I_HY_QP_READY || !(qp = new_qp(vc))) {
        iwv_reject(ev->request, NULL, 0);
        return;
    }
    if (iwv_accept(ev->request, qp, &p) != 0) {
        complain("cannot accept a queue pair", iwv_last_error(MPIDI_CH3I_Hy_rnic.dev));
        destroy_qp(qp);
        vc->ch.hy.state = MPIDI_CH3I_HY_QP_FAILED;
        return;
    }
    vc->ch.hy.qp = qp;
    vc->ch.hy.state = MPIDI_CH3I_HY_QP_READY;
}

static void on_event(struct iwv_event *ev)
{
    hy_qp_entry *e;
    if (ev->type == IWV_EVENT_CONNECT_REQUEST) {
        on_connect_request(ev);
        return;
    }
    e = entry_of(ev->qp);
    if (!e)
        return;
    switch (ev->type) {
        case IWV_EVENT_ESTABLISHED:
            if (e->vc->ch.hy.qp == e->qp)
                e->vc->ch.hy.state = MPIDI_CH3I_HY_QP_READY;
            break;
        case IWV_EVENT_REJECTED:
        case IWV_EVENT_UNREACHABLE:
        case IWV_EVENT_DISCONNECTED:
        case IWV_EVENT_QP_ERROR:
            if (e->vc->ch.hy.qp == e->qp) {
                /* Once: a broken QP reports an error and then its disconnection. Not after
                 * CH3's close handshake with the peer, which may then close its RNIC. */
                if (ev->type != IWV_EVENT_REJECTED && e->vc->ch.hy.state != MPIDI_CH3I_HY_QP_FAILED &&
                    !e->vc->ch.closed) {
                    char what[128];
                    snprintf(what, sizeof(what), "the queue pair to rank %d failed, one-sided traffic "
                             "to it continues over SCTP", e->vc->pg_rank);
                    complain(what, ev->detail);
                }
                e->vc->ch.hy.state = MPIDI_CH3I_HY_QP_FAILED;
            }
            break;
        default:
            break;
    }
}

/* Caller mode: the RNIC runs here, on the MPI thread (its fd, written by usrsctp's upcalls,
 * wakes a blocked progress wait; drained first, so that later upcalls signal again). */
static int run_rnic(MPIDI_CH3I_Hy_rnic_t * r)
{
    static unsigned rounds;
    static int last_work;
    uint64_t v;
    if (MPIDI_CH3I_Hy_config.progress_thread)
        return 0;
    /* Drain the fd before a round (an upcall after it writes it again), but only after a round
     * that found work and now and then otherwise, not at every poll of the progress engine: it
     * is a system call. Until drained, a readable fd only makes a blocked wait look again. */
    if (last_work > 0 || ++rounds % 64 == 0) {
        while (read(r->fd, &v, sizeof(v)) > 0) {
        }
    }
    last_work = iwv_progress(r->dev, 0);
    return last_work;
}

static int rnic_busy(void *arg)
{
    MPIDI_CH3I_Hy_rnic_t *r = (MPIDI_CH3I_Hy_rnic_t *) arg;
    return r->dev && (r->in_flight > 0 || r->windows > 0) && iwv_device_tx_blocked(r->dev);
}

static int cq_stage(void *arg)
{
    MPIDI_CH3I_Hy_rnic_t *r = &MPIDI_CH3I_Hy_rnic;
    struct iwv_wc wc[16];
    struct iwv_event ev;
    int work = 0, n;
    (void) arg;
    /* Connection events left over when the last window went wait for the next one. */
    if (!r->dev || (r->windows == 0 && r->in_flight == 0))
        return 0;
    work += run_rnic(r);
    while (iwv_get_event(r->dev, &ev, 0) == 1) {
        on_event(&ev);
        work++;
    }
    /* The event fd fired for the first entry since it was armed: once entries were taken, clear
     * it and arm it again, then look once more for entries that came in between. */
    while ((n = iwv_poll_cq(r->cq, 16, wc)) > 0) {
        for (int i = 0; i < n; i++)
            MPIDI_CH3I_Hy_completed(&wc[i]);
        work += n;
        iwv_cq_ack_event(r->cq);
        iwv_req_notify_cq(r->cq, 0);
    }
    if (n < 0) {
        complain("the RDMA completion queue overflowed", NULL);
        MPID_Abort(NULL, MPI_ERR_INTERN, 1, "ch3:hybrid: RDMA completion queue overflow");
    }
    return work;
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
    attr.progress = MPIDI_CH3I_Hy_config.progress_thread ? IWV_PROGRESS_THREAD : IWV_PROGRESS_CALLER;
    /* Where peers reach our transport, and with those interfaces' MTU (65000 on loopback rather
     * than the 1472 of the host's Ethernet interface that an unbound endpoint would take). All of
     * them: a multihomed transport gives a multihomed RNIC, with CMT when the transport has it
     * (one rail would halve RDMA bandwidth on a two-rail cluster). */
    if (card_addresses(addr, sizeof(addr), 1) != 0) {
        complain("no RDMA (no address in the transport's business card), one-sided traffic goes over SCTP",
                 sctpm_card(MPIDI_CH3I_sctp));
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
    sctpm_add_stage(MPIDI_CH3I_sctp, "iwarp-cq", cq_stage, NULL);
    sctpm_watch_fd(MPIDI_CH3I_sctp, iwv_cq_fd(r->cq));
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
        MPIDI_VC_t *vc = qps->vc;
        if (vc->ch.hy.qp == qps->qp) {
            vc->ch.hy.qp = NULL;
            vc->ch.hy.state = MPIDI_CH3I_HY_QP_FAILED;
        }
        destroy_qp(qps->qp);
    }
    iwv_dereg_mr(r->scratch);
    iwv_destroy_cq(r->cq);
    /* Both EBUSY if a window was never freed (its registration keeps the PD): left to exit. */
    if (iwv_dealloc_pd(r->pd) == 0)
        iwv_close_device(r->dev);
    r->dev = NULL;      /* the CQ stage stops here */
    return MPI_SUCCESS;
}
