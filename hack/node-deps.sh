#!/usr/bin/env bash
# node-deps.sh: make sure the real node's runtime is on this machine before
# the node suite (e2e/node) runs.
#
# Why: the node harness (internal/harness/node) runs Debian's containerd, runc, the
# CNI plugins and iptables as the node's real runtime; they are not Go
# modules, so internal/toolcache cannot build them. On Debian or Ubuntu as
# root this installs what is missing, the same four packages CI installs;
# anywhere else it prints one line saying what is missing and how to get it,
# and fails, so `make test` never quietly skips the node suite.
#
# Usage: hack/node-deps.sh        (no arguments)
set -euo pipefail

packages=(containerd runc containernetworking-plugins iptables)

# missing prints the package of every absent program, once each.
missing() {
  local -A seen=()
  local need
  for need in \
    containerd:containerd ctr:containerd runc:runc \
    /usr/lib/cni/bridge:containernetworking-plugins \
    /usr/lib/cni/host-local:containernetworking-plugins \
    /usr/lib/cni/loopback:containernetworking-plugins \
    iptables:iptables ip6tables:iptables iptables-save:iptables; do
    local what=${need%%:*} pkg=${need#*:}
    if [[ $what == /* ]]; then
      [ -x "$what" ] && continue
    else
      PATH="$PATH:/usr/sbin:/sbin" command -v "$what" >/dev/null && continue
    fi
    if [ -z "${seen[$pkg]:-}" ]; then
      seen[$pkg]=1
      echo "$pkg"
    fi
  done
}

absent=$(missing | tr '\n' ' ')
absent=${absent% }
if [ -z "$absent" ]; then
  exit 0
fi

debian_like=false
if [ -r /etc/os-release ] && grep -Eq '^(ID|ID_LIKE)=.*(debian|ubuntu)' /etc/os-release; then
  debian_like=true
fi
if [ "$(id -u)" -eq 0 ] && $debian_like && command -v apt-get >/dev/null; then
  echo "node-deps: installing ${packages[*]} (missing: $absent)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${packages[@]}"
  absent=$(missing | tr '\n' ' ')
  absent=${absent% }
  [ -z "$absent" ] && exit 0
  echo "node-deps: still missing after apt-get install: $absent" >&2
  exit 1
fi

echo "node-deps: the node suite needs $absent; install with: sudo apt-get install -y --no-install-recommends ${packages[*]} (Debian/Ubuntu; elsewhere your distribution's containerd, runc, CNI plugins in /usr/lib/cni and iptables)" >&2
exit 1
