/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: start-up and shut-down of the channel, business cards, VC and PG hooks. */
#include "mpidi_ch3_impl.h"
#include <stdarg.h>

char MPIDI_CH3_ABIVersion[] = "1.1";
sctpm_transport *MPIDI_CH3I_sctp = NULL;

void MPIDI_CH3I_On_block(void *ctx, int entering);

/* eager_max (MPIR_CVAR_CH3_SCTP_EAGER_MAX), the limit every VC is given; 0 leaves CH3's own
 * (MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE, which MPIDI_VC_Init set). */
static intptr_t eager_max;

static void read_eager_max(const sctpm_config * cfg)
{
    char value[32];
    if (sctpm_config_get(cfg, "eager_max", value, sizeof(value)) == 0)
        eager_max = (intptr_t) strtoll(value, NULL, 10);
}

static sctpm_callbacks callbacks = {
    NULL, MPIDI_CH3I_On_message, MPIDI_CH3I_On_dest, MPIDI_CH3I_On_placed, MPIDI_CH3I_On_sent,
    MPIDI_CH3I_On_event, MPIDI_CH3I_On_hello, MPIDI_CH3I_On_block, MPIDI_CH3I_On_unproven_end,
    MPIDI_CH3I_On_stall
};

const MPIDI_CH3I_Ext_t *MPIDI_CH3I_ext_in_use;

/* Once, at the first look (MPI_Init, one thread): the channel's table, or no hook at all. */
const MPIDI_CH3I_Ext_t *MPIDI_CH3I_Ext_choose(void)
{
    static const MPIDI_CH3I_Ext_t none = { NULL };
    const MPIDI_CH3I_Ext_t *table = &MPIDI_CH3I_ext_table;
    MPIDI_CH3I_ext_in_use = table->wanted && !table->wanted() ? &none : table;
    return MPIDI_CH3I_ext_in_use;
}

void MPIDI_CH3I_Report(int level, const char *format, ...)
{
    char text[1024];
    va_list args;
    if (level == MPIDI_CH3I_REPORT_NOTICE && !MPIR_CVAR_CH3_SCTP_NOTICES)
        return;
    va_start(args, format);
    vsnprintf(text, sizeof(text), format, args);
    va_end(args);
    fprintf(stderr, "[%s] rank %d: %s\n", MPIDI_CH3I_Ext()->name ? MPIDI_CH3I_Ext()->name : "ch3:sctp",
            MPIR_Process.rank, text);
}

/* Open the transport (the first time) with "hello" as our introduction to new peers. */
static int open_transport(const char *hello)
{
    char err[SCTPM_ERRLEN];
    int mpi_errno = MPI_SUCCESS;
    sctpm_config *cfg;
    if (MPIDI_CH3I_sctp)
        return MPI_SUCCESS;
    cfg = sctpm_config_from_env(err, sizeof(err));
    if (cfg && MPIDI_CH3I_Apply_cvars(cfg, err, sizeof(err)) != 0) {
        sctpm_config_free(cfg);
        cfg = NULL;
    }
    if (cfg) {
        read_eager_max(cfg);
        MPIDI_CH3I_sctp = sctpm_open(cfg, NULL, hello, strlen(hello), &callbacks, err, sizeof(err));
        sctpm_config_free(cfg);
    }
    if (!MPIDI_CH3I_sctp)
        MPIR_ERR_SETANDSTMT1(mpi_errno, MPI_ERR_OTHER, {
                             MPIDI_CH3I_Report(MPIDI_CH3I_REPORT_ERROR, "%s", err);}, "**ch3|sctp|init",
                             "**ch3|sctp|init %s", err);
    return mpi_errno;
}

int MPIDI_CH3_Init(int has_parent, MPIDI_PG_t * pg_p, int pg_rank)
{
    char hello[2048], bc[SCTPM_CARD_MAX];
    int mpi_errno;
    (void) has_parent;
    mpi_errno = MPIDI_CH3I_Ext()->init ? MPIDI_CH3I_Ext()->init() : MPI_SUCCESS;
    if (mpi_errno)
        return mpi_errno;
    snprintf(hello, sizeof(hello), "P%d %s", pg_rank, (const char *) pg_p->id);
    mpi_errno = open_transport(hello);
    if (mpi_errno)
        return mpi_errno;
    if (eager_max)      /* this group's VCs were made before the setting was read */
        for (int i = 0; i < pg_p->size; i++)
            pg_p->vct[i].eager_max_msg_sz = eager_max;
    mpi_errno = MPIDI_CH3I_Progress_init();
    if (mpi_errno)
        return mpi_errno;
    mpi_errno = MPIDI_CH3I_Dead_notices_start();
    if (mpi_errno)
        return mpi_errno;
    MPIDI_CH3I_Pvars_register(pg_p->size);
    MPIDI_CH3I_Card_to_bc(sctpm_card(MPIDI_CH3I_sctp), bc, sizeof(bc));
    return MPIDI_PG_SetConnInfo(pg_rank, bc);
}

int MPIDI_CH3_InitCompleted(void)
{
    return MPI_SUCCESS;
}

int MPIDI_CH3_Finalize(void)
{
    MPIDI_CH3I_Dead_notices_stop();     /* its handler wakes the transport closed below */
    if (MPIDI_CH3I_Ext()->finalize)
        MPIDI_CH3I_Ext()->finalize();      /* e.g. queue pairs and sockets, before the stack they use */
    if (MPIDI_CH3I_sctp) {
        if (MPIR_CVAR_CH3_SCTP_PATH_REPORT)
            MPIDI_CH3I_Path_report();
        /* CH3's close handshake is done, but its last packets may still be in flight: shut the
         * associations down gracefully (SCTP delivers queued data first). Closing before that
         * aborts them and the peer loses those packets; the bound only matters for dead peers. */
        sctpm_close(MPIDI_CH3I_sctp, 10000);
        MPIDI_CH3I_sctp = NULL;
    }
    return MPIDI_CH3I_Progress_finalize();
}

int MPIDI_CH3_Get_business_card(int myRank, char *value, int length)
{
    (void) myRank;
    size_t used = strlen(value);        /* a port name may already hold "tag#N$" */
    if (MPIDI_CH3I_Card_to_bc(sctpm_card(MPIDI_CH3I_sctp), value + used, length - used) != 0)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**buscard_len", 0);
    return MPI_SUCCESS;
}

int MPIDI_CH3_PortFnsInit(MPIDI_PortFns * portFns)
{
    (void) portFns;
    return MPI_SUCCESS;
}

int MPIDI_CH3_VC_Init(MPIDI_VC_t * vc)
{
    vc->ch.peer = -1;
    vc->ch.failed = 0;
    vc->ch.closed = 0;
    vc->ch.recv_active = NULL;
    vc->ch.recv_filled = 0;
    vc->ch.port_name_tag = -1;
    vc->ch.awaiting = NULL;
    vc->ch.awaiting_n = vc->ch.awaiting_cap = 0;
    vc->ch.late_next = NULL;
    vc->ch.late_listed = 0;
    if (eager_max)
        vc->eager_max_msg_sz = eager_max;
    if (MPIDI_CH3I_Ext()->vc_init)
        MPIDI_CH3I_Ext()->vc_init(vc);
    return MPI_SUCCESS;
}

/* Also the transport peer goes (after MPI_Finalize closed the transport, there is none): the
 * temporary VC of every MPI_Comm_connect/accept and the VCs of every process group a disconnect
 * drops would otherwise each keep one, and a link on the association, for good. */
int MPIDI_CH3_VC_Destroy(struct MPIDI_VC *vc)
{
    if (vc->ch.peer >= 0 && MPIDI_CH3I_Peer_vc(vc->ch.peer) == vc) {
        MPIDI_CH3I_Peer_unbind(vc->ch.peer);
        if (MPIDI_CH3I_sctp)
            sctpm_peer_release(MPIDI_CH3I_sctp, vc->ch.peer);
    }
    vc->ch.peer = -1;
    MPIDI_CH3I_Awaiting_vc_destroy(vc);
    return MPI_SUCCESS;
}

int MPIDI_CH3_PG_Init(MPIDI_PG_t * pg)
{
    (void) pg;
    return MPI_SUCCESS;
}

int MPIDI_CH3_PG_Destroy(struct MPIDI_PG *pg)
{
    (void) pg;
    return MPI_SUCCESS;
}

/* MPI_Comm_connect: a temporary VC to the root named by the port, introduced by its tag so the
 * accepting side can queue it for the matching MPI_Comm_accept. */
int MPIDI_CH3_Connect_to_root(const char *port_name, MPIDI_VC_t ** new_vc)
{
    char card[SCTPM_CARD_MAX], shown[SCTPM_CARD_MAX];
    int tag = 0, mpi_errno = MPI_SUCCESS;
    MPIDI_VC_t *vc;
    sctpm_peer p;

    /* What the errors quote: the port carries the root's card, whose key is the job's secret. */
    sctpm_redact_key(port_name, shown, sizeof(shown));

    mpi_errno = MPIDI_GetTagFromPort(port_name, &tag);
    MPIR_ERR_CHECK(mpi_errno);
    if (MPIDI_CH3I_Bc_to_card(port_name, card, sizeof(card)) != 0)
        MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_PORT, "**ch3|sctp|port", "**ch3|sctp|port %s", shown);
    vc = (MPIDI_VC_t *) MPL_malloc(sizeof(MPIDI_VC_t), MPL_MEM_ADDRESS);
    MPIR_ERR_CHKANDJUMP(vc == NULL, mpi_errno, MPI_ERR_OTHER, "**nomem");
    MPIDI_VC_Init(vc, NULL, 0);
    p = sctpm_peer_add(MPIDI_CH3I_sctp, card);
    if (p < 0) {
        MPL_free(vc);
        MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_PORT, "**ch3|sctp|port", "**ch3|sctp|port %s", shown);
    }
    MPIDI_CH3I_Peer_bind(p, vc);
    {
        /* Introduce ourselves as the connector of that port (not as a process-group member). */
        char hello[32];
        snprintf(hello, sizeof(hello), "T%d", tag);
        if (sctpm_peer_connect_as(MPIDI_CH3I_sctp, p, hello, strlen(hello)) != 0)
            MPIR_ERR_SETANDJUMP1(mpi_errno, MPI_ERR_PORT, "**ch3|sctp|port", "**ch3|sctp|port %s", shown);
    }
    *new_vc = vc;
  fn_fail:
    return mpi_errno;
}
