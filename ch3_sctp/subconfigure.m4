[#] start of __file__
dnl SPDX-License-Identifier: BSD-3-Clause
dnl ch3:sctp: MPI over SCTP (usrsctp) through the project's transport core (libsctpmpi).
dnl configure with CPPFLAGS=-I<repo>/src and LIBS="<repo>/build/src/.libs/libsctpmpi.a -lusrsctp -lstdc++"
dnl (tools/mpich-build does this).

AC_DEFUN([PAC_SUBCFG_PREREQ_]PAC_SUBCFG_AUTO_SUFFIX,[
    AM_CONDITIONAL([BUILD_CH3_SCTP],[test "X$device_name" = "Xch3" -a "X$channel_name" = "Xsctp"])
    AM_COND_IF([BUILD_CH3_SCTP],[
        AC_MSG_NOTICE([RUNNING PREREQ FOR ch3:sctp])
        MPID_MAX_THREAD_LEVEL=MPI_THREAD_MULTIPLE
    ])
])

AC_DEFUN([PAC_SUBCFG_BODY_]PAC_SUBCFG_AUTO_SUFFIX,[
AM_COND_IF([BUILD_CH3_SCTP],[
    AC_MSG_NOTICE([RUNNING CONFIGURE FOR ch3:sctp])
    AC_CHECK_HEADER([sctpmpi.h], [],
        [AC_MSG_ERROR([ch3:sctp needs sctpmpi.h of the transport core: add -I<repo>/src to CPPFLAGS])])
    AC_CHECK_HEADER([usrsctp.h], [],
        [AC_MSG_ERROR([ch3:sctp needs usrsctp.h: build it with tools/usrsctp-build and add -I<repo>/build/usrsctp/include to CPPFLAGS])])
])
])
[#] end of __file__
