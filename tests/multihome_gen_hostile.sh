#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tools/multihome-gen against hostile input, with no ssh and no root: a fake ssh first on PATH logs
# its arguments and answers for the host it is given.
#   host file  a line "-oProxyCommand=false:2" (an ssh option, not a host) is refused naming the
#              file, the line and the value, before any ssh runs
#   uname -n   h1 answers "evil 10.6.6.6" (a name that would add fields to the multihome file): h1
#              is refused naming that answer, nothing is written; node-2.example is fine, and its
#              ssh got "--" before the host (no host can be taken for an option)
set -u
here=$(cd "$(dirname "$0")" && pwd)
gen=$here/../tools/multihome-gen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "multihome_gen_hostile: FAIL: $*"
    [ -s "$tmp/err" ] && sed 's/^/    /' "$tmp/err"
    exit 1
}
expect_in_err() { grep -qF -- "$1" "$tmp/err" || fail "$2: its error does not say \"$1\""; }

cat >"$tmp/ssh" <<'EOF'
#!/bin/sh
# ssh as multihome-gen runs it (OPTIONS... HOST COMMAND): the host is the last but one argument.
printf '%s\n' "$*" >>"${0%/*}/ssh.log"
last=
for arg; do host=$last; last=$arg; done
case $host in
h1) echo 'evil 10.6.6.6' ;;
*) echo "$host" ;;
esac
echo '2: eth1    inet 10.1.0.1/24 brd 10.1.0.255 scope global eth1\       valid_lft forever'
EOF
chmod +x "$tmp/ssh"
PATH=$tmp:$PATH
export PATH

printf 'h2\n-oProxyCommand=false:2\n' >"$tmp/hosts"
"$gen" -f "$tmp/hosts" --subnet 10.1.0.0/24 -o "$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || fail "host file with an ssh option: exit $rc, not 2"
[ ! -e "$tmp/ssh.log" ] || fail "host file with an ssh option: ssh ran: $(cat "$tmp/ssh.log")"
expect_in_err "$tmp/hosts:2: " "host file with an ssh option"
expect_in_err "'-oProxyCommand=false'" "host file with an ssh option"

"$gen" h1 node-2.example --subnet 10.1.0.0/24 -o "$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] || fail "hostile uname -n: exit $rc, not 1"
[ ! -e "$tmp/out" ] || fail "hostile uname -n: the file was written: $(cat "$tmp/out")"
expect_in_err "h1: " "hostile uname -n"
expect_in_err "'evil 10.6.6.6'" "hostile uname -n"
expect_in_err "nothing written (1 error(s))" "hostile uname -n (node-2.example is a good name)"
grep -qxF -- "-o BatchMode=yes -- node-2.example uname -n && LC_ALL=C ip -o addr show" "$tmp/ssh.log" ||
    fail "ssh did not get '--' before the host: $(cat "$tmp/ssh.log")"
echo "multihome_gen_hostile: ok"
