/* SPDX-License-Identifier: BSD-3-Clause */
/* ch3:sctp's extension table: no hook. The one source file only ch3:sctp builds; a channel built
 * on ch3:sctp's sources (ch3:hybrid) defines MPIDI_CH3I_ext_table instead. */
#include "mpidi_ch3_impl.h"

const MPIDI_CH3I_Ext_t MPIDI_CH3I_ext_table = { NULL };
