/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp: progress macros. (The eager threshold is CH3's MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE, or
 * MPIR_CVAR_CH3_SCTP_EAGER_MAX when set: ch3_init.c.) */
#ifndef MPIDI_CH3_POST_H_INCLUDED
#define MPIDI_CH3_POST_H_INCLUDED

#include "mpidi_ch3_compat.h"

#define MPIDI_CH3_Progress_start(progress_state_)                                    \
    {                                                                                \
        MPIDI_CH3I_PROGRESS_STATE_ENTER();                                           \
        (progress_state_)->ch.completion_count = MPIDI_CH3I_progress_completion_count; \
    }
#define MPIDI_CH3_Progress_end(progress_state_) MPIDI_CH3I_PROGRESS_STATE_EXIT()
#define MPIDI_CH3_Progress_poke() (MPIDI_CH3_Progress_test())

int MPIDI_CH3I_Progress(int blocking, MPID_Progress_state * state);
#define MPIDI_CH3_Progress_test() MPIDI_CH3I_Progress(FALSE, NULL)
#define MPIDI_CH3_Progress_wait(state) MPIDI_CH3I_Progress(TRUE, state)

#endif /* MPIDI_CH3_POST_H_INCLUDED */
