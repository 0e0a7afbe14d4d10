# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# The MPICH versions the channels are built against (sourced, never run).
#
# MPICH_DEFAULT_VERSION: what tools/mpich-build builds when no --mpich is given; its installs are
#   also reachable as build/install/ch3-<channel> (symlinks into build/install/<version>/).
# MPICH_DEBIAN_VERSION: the version whose source comes from Debian 12's package (tools/mpich-fetch);
#   any other version comes from a tarball or tree (tools/mpich-source).
# MPICH_OTHER_VERSIONS: the versions gated besides the default (check.sh's mpich-other step).
MPICH_DEFAULT_VERSION=${MPICH_DEFAULT_VERSION:-5.0.1}
MPICH_DEBIAN_VERSION=4.0.2
MPICH_OTHER_VERSIONS=${MPICH_OTHER_VERSIONS:-4.0.2}

# real_install NAME: the install NAME under build/install (of the repository at REPO) really is,
# links resolved (ch3-sctp -> 5.0.1/ch3-sctp, the default version's). Folders of programs built
# against an install are named by it, so that programs built against one MPICH never run on
# another (their libmpi may not even load).
real_install() { realpath -m --relative-to="$REPO/build/install" "$REPO/build/install/$1"; }

# mpich_version_of TREE: the MPICH version the tree's maint/version.m4 defines (empty if none).
mpich_version_of() {
    sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\([^]]*\)\].*/\1/p' "$1/maint/version.m4" 2>/dev/null || true
}
