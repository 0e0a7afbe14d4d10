# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# ccache across clones (sourced, never run; needs REPO). Compiles name sources and include
# directories by absolute path, so a clone of the repository at another path (a CI checkout, a
# second working copy) would miss every cached object. With the clone as ccache's base directory,
# paths inside it are hashed relative to the build directory, and such a clone reuses what
# another one compiled. Objects compiled with -g still hash the build directory (ccache's
# hash_dir), so their debug information never names another clone. A user's own
# CCACHE_BASEDIR wins.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$REPO}
