# SPDX-License-Identifier: BSD-3-Clause
# Builds the NAS Parallel Benchmarks (NPB 3.4, MPI) against one MPI install; sourced by run-nas,
# which sets REPO, INST (build/install), NPB_BUILD (build/npb) and NPB_SRC (the NPB3.4-MPI
# tarball or its unpacked folder), and has sourced tools/lib/mpich-versions.sh (real_install).
#
#   nas_build INSTALL CLASS BENCH...   INSTALL: a name under build/install, or openmpi (Debian's
#                                      Open MPI); binaries land in NPB_BUILD/INSTALL/<bench>.<class>.x
#
# Each install gets its own copy of the source (NPB_BUILD/INSTALL/src) and its own
# config/make.def. A binary is rebuilt only when the install's MPI library or the NPB source is
# newer than it. Build output goes to NPB_BUILD/INSTALL/build.log.

# nas_compilers INSTALL: prints "mpif90 mpicc library" for the install (the library dates it)
nas_compilers() {
    if [[ $1 == openmpi ]]; then
        local lib
        lib=$(readlink -f "$(mpicc.openmpi --showme:libdirs | awk '{ print $1 }')/libmpi.so")
        echo "mpif90.openmpi mpicc.openmpi $lib"
    else
        echo "$INST/$1/bin/mpif90 $INST/$1/bin/mpicc $INST/$1/lib/libmpi.so"
    fi
}

# nas_source DIR: a fresh copy of the NPB source in DIR/src unless it is already as new as NPB_SRC
nas_source() {
    local dir=$1
    [[ -f $dir/src/.copied && ! $NPB_SRC -nt $dir/src/.copied ]] && return 0
    rm -rf "$dir/src"
    mkdir -p "$dir/src"
    if [[ -d $NPB_SRC ]]; then
        cp -a "$NPB_SRC/." "$dir/src/"
    else
        tar -xzf "$NPB_SRC" -C "$dir/src" --strip-components=1
    fi || return 1
    [[ -f $dir/src/config/make.def.template && -d $dir/src/CG ]] ||
        { echo "$NPB_SRC does not look like NPB 3.4 MPI (no config/make.def.template or CG/)" >&2; return 1; }
    mkdir -p "$dir/src/bin" # where NPB's makefiles link to; the distribution has none
    touch "$dir/src/.copied"
}

# nas_make_def FC CC: NPB's config/make.def for these compilers. gfortran 12 rejects NPB's MPI
# calls without -fallow-argument-mismatch; NPB's default random number generator (randi8) does
# not build with it, randdp does.
nas_make_def() {
    cat <<EOF
MPIFC = $1
FLINK = \$(MPIFC)
FMPI_LIB =
FMPI_INC =
FFLAGS = -O3 -fallow-argument-mismatch
FLINKFLAGS = \$(FFLAGS)
MPICC = $2
CLINK = \$(MPICC)
CMPI_LIB =
CMPI_INC =
CFLAGS = -O3
CLINKFLAGS = \$(CFLAGS)
CC = gcc -g
BINDIR = ../bin
CONVERTFLAG = -DFORTRAN_REC_SIZE=1
RAND = randdp
EOF
}

# nas_link_name INST DIR: NPB_BUILD/INST leads to DIR, the folder of the MPICH the install name
# INST stands for now (ch3-sctp -> 5.0.1/ch3-sctp), since run-nas and the virtual-cluster jobs run
# NPB_BUILD/INST/<bench>.x. A real folder left there by the older layout goes.
nas_link_name() {
    local inst=$1 dir=$2 name=$NPB_BUILD/$1
    [[ $dir == "$name" ]] && return 0
    [[ -L $name || ! -e $name ]] || rm -rf "$name"
    ln -sfn "$(realpath -m --relative-to="$(dirname "$name")" "$dir")" "$name"
}

nas_build() {
    local inst=$1 class=$2 fc cc lib dir b bin
    shift 2
    read -r fc cc lib <<<"$(nas_compilers "$inst")"
    [[ -x $(command -v "$fc") && -e $lib ]] || { echo "no MPI install $inst ($fc, $lib)" >&2; return 1; }
    dir=$NPB_BUILD/$inst
    [[ $inst == openmpi ]] || dir=$NPB_BUILD/$(real_install "$inst")
    mkdir -p "$dir"
    nas_link_name "$inst" "$dir"
    nas_source "$dir" >>"$dir/build.log" 2>&1 || return 1
    nas_make_def "$fc" "$cc" >"$dir/src/config/make.def.new"
    cmp -s "$dir/src/config/make.def.new" "$dir/src/config/make.def" ||
        mv "$dir/src/config/make.def.new" "$dir/src/config/make.def"
    rm -f "$dir/src/config/make.def.new"
    for b in "$@"; do
        bin=$dir/$b.$class.x
        [[ -x $bin && ! $lib -nt $bin && ! $dir/src/.copied -nt $bin && ! $dir/src/config/make.def -nt $bin ]] && continue
        echo "run-nas: building ${b^^} class $class against $inst"
        # NPB's benchmarks share objects in common/: one benchmark at a time.
        make -C "$dir/src" "$b" CLASS="$class" >>"$dir/build.log" 2>&1 &&
            cp "$dir/src/bin/$b.$class.x" "$bin" || return 1
    done
}
