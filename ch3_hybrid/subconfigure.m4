[#] start of __file__
dnl SPDX-License-Identifier: BSD-3-Clause
dnl ch3:hybrid: ch3:sctp plus one-sided data by RDMA over the software iWARP RNIC (libiwarp).
dnl configure with CPPFLAGS="-I<repo>/src -I<repo>/iwarp" and
dnl LIBS="<repo>/build/iwarp/.libs/libiwarp.a <repo>/build/src/.libs/libsctpmpi.a -lusrsctp -lstdc++"
dnl (tools/mpich-build does this).

AC_DEFUN([PAC_SUBCFG_PREREQ_]PAC_SUBCFG_AUTO_SUFFIX,[
    AM_CONDITIONAL([BUILD_CH3_HYBRID],[test "X$device_name" = "Xch3" -a "X$channel_name" = "Xhybrid"])
    AM_COND_IF([BUILD_CH3_HYBRID],[
        AC_MSG_NOTICE([RUNNING PREREQ FOR ch3:hybrid])
        MPID_MAX_THREAD_LEVEL=MPI_THREAD_MULTIPLE
    ])
])

AC_DEFUN([PAC_SUBCFG_BODY_]PAC_SUBCFG_AUTO_SUFFIX,[
AM_COND_IF([BUILD_CH3_HYBRID],[
    AC_MSG_NOTICE([RUNNING CONFIGURE FOR ch3:hybrid])
    AC_CHECK_HEADER([sctpmpi.h], [],
        [AC_MSG_ERROR([ch3:hybrid needs sctpmpi.h of the transport core: add -I<repo>/src to CPPFLAGS])])
    AC_CHECK_HEADER([iwarp_verbs.h], [],
        [AC_MSG_ERROR([ch3:hybrid needs iwarp_verbs.h of the software RNIC: add -I<repo>/iwarp to CPPFLAGS])])
    AC_CHECK_HEADER([usrsctp.h], [],
        [AC_MSG_ERROR([ch3:hybrid needs usrsctp.h: build it with tools/usrsctp-build and add -I<repo>/build/usrsctp/include to CPPFLAGS])])
])
])
[#] end of __file__
