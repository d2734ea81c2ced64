package controlplane

import (
	"net"
	"strings"
	"testing"
)

func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
		if a == name {
			return "", true
		}
	}
	return "", false
}

// TestAPIServerArgsOnAnAddress: with Options.Address kube-apiserver binds
// and advertises there, and etcd stays on loopback.
func TestAPIServerArgsOnAnAddress(t *testing.T) {
	p := ports{etcdClient: 2001, etcdPeer: 2002, apiServer: 6443, apiServerAddress: net.ParseIP("198.18.7.1")}
	args := apiServerArgs(layout("/w/node"), p, nil)
	for _, tc := range []struct{ flag, want string }{
		{"--etcd-servers", "http://127.0.0.1:2001"},
		{"--bind-address", "198.18.7.1"},
		{"--advertise-address", "198.18.7.1"},
	} {
		if got, ok := flagValue(args, tc.flag); !ok || got != tc.want {
			t.Errorf("%s = %q, want %q", tc.flag, got, tc.want)
		}
	}
}

// TestServiceAccountAdmissionOption: a cluster with a controller manager
// keeps the plugin that mounts pods' tokens; appending
// --disable-admission-plugins= would not (list flags append).
func TestServiceAccountAdmissionOption(t *testing.T) {
	for _, keep := range []bool{false, true} {
		c := &Cluster{layout: layout("/w/x"), opts: Options{ServiceAccountAdmission: keep}}
		_, disabled := flagValue(c.apiServerArgs(), "--disable-admission-plugins")
		if disabled == keep {
			t.Errorf("ServiceAccountAdmission %v: --disable-admission-plugins present = %v", keep, disabled)
		}
	}
}

func TestAPIServerArgs(t *testing.T) {
	l := layout("/w/member1")
	p := ports{etcdClient: 2001, etcdPeer: 2002, apiServer: 6443}
	args := apiServerArgs(l, p, []string{"--v=2"})
	for _, tc := range []struct{ flag, want string }{
		{"--etcd-servers", "http://127.0.0.1:2001"},
		{"--bind-address", "127.0.0.1"},
		{"--advertise-address", "127.0.0.1"},
		{"--secure-port", "6443"},
		{"--tls-cert-file", "/w/member1/certs/apiserver.crt"},
		{"--tls-private-key-file", "/w/member1/certs/apiserver.key"},
		{"--token-auth-file", "/w/member1/token-auth.csv"},
		{"--service-account-key-file", "/w/member1/certs/sa.pub"},
		{"--service-account-signing-key-file", "/w/member1/certs/sa.key"},
		{"--service-account-lookup", "true"},
		{"--authorization-mode", "RBAC"},
		{"--service-cluster-ip-range", "10.96.0.0/16"},
		{"--disable-admission-plugins", "ServiceAccount"},
		{"--v", "2"},
	} {
		if got, ok := flagValue(args, tc.flag); !ok || got != tc.want {
			t.Errorf("%s = %q (set: %v), want %q", tc.flag, got, ok, tc.want)
		}
	}
	if args[len(args)-1] != "--v=2" {
		t.Errorf("extra flags must come last so they override: %v", args)
	}
	for _, a := range args {
		if strings.Contains(a, "0.0.0.0") || strings.Contains(a, "localhost:") {
			t.Errorf("flag %q binds beyond 127.0.0.1", a)
		}
	}
}

func TestEtcdArgsAreLoopbackAndPerCluster(t *testing.T) {
	a := etcdArgs("hub-a", layout("/w/hub-a"), ports{etcdClient: 1, etcdPeer: 2})
	b := etcdArgs("hub-b", layout("/w/hub-b"), ports{etcdClient: 3, etcdPeer: 4})
	for flag, want := range map[string][2]string{
		"--data-dir":           {"/w/hub-a/etcd", "/w/hub-b/etcd"},
		"--listen-client-urls": {"http://127.0.0.1:1", "http://127.0.0.1:3"},
		"--listen-peer-urls":   {"http://127.0.0.1:2", "http://127.0.0.1:4"},
		"--initial-cluster":    {"hub-a=http://127.0.0.1:2", "hub-b=http://127.0.0.1:4"},
	} {
		for i, args := range [][]string{a, b} {
			if got, _ := flagValue(args, flag); got != want[i] {
				t.Errorf("cluster %d: %s = %q, want %q", i, flag, got, want[i])
			}
		}
	}
}
