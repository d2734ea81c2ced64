package karmadacp

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// listenerFlags are the flags that make a component listen; each must
// name 127.0.0.1.
var listenerFlags = []string{"--bind-address=", "--metrics-bind-address=", "--health-probe-bind-address="}

func checkLoopbackOnly(t *testing.T, component string, args []string) {
	t.Helper()
	for _, a := range args {
		for _, f := range listenerFlags {
			if strings.HasPrefix(a, f) && !strings.HasPrefix(strings.TrimPrefix(a, f), "127.0.0.1") {
				t.Errorf("%s: %s binds beyond loopback", component, a)
			}
		}
	}
}

func TestControllerManagerArgs(t *testing.T) {
	args, err := ControllerManagerOptions{Extra: []string{"--own-credential-guard-threshold=3"}}.args("/k", 10001, 10002)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--controllers") {
			t.Errorf("%s: the default controller set is upstream's default, no --controllers", a)
		}
	}
	for _, want := range []string{"--kubeconfig=/k", "--leader-elect=false", "--cluster-status-update-frequency=2s", "--metrics-bind-address=127.0.0.1:10001", "--health-probe-bind-address=127.0.0.1:10002", "--v=2"} {
		if !slices.Contains(args, want) {
			t.Errorf("missing %s in %v", want, args)
		}
	}
	if args[len(args)-1] != "--own-credential-guard-threshold=3" {
		t.Errorf("extra flags must come last (to override), got %v", args)
	}
	checkLoopbackOnly(t, "karmada-controller-manager", args)

	args, err = ControllerManagerOptions{StatusUpdateFrequency: 10 * time.Second, Verbosity: 4}.args("/k", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(args, "--cluster-status-update-frequency=10s") || !slices.Contains(args, "--v=4") {
		t.Errorf("options not applied: %v", args)
	}
}

func TestControllerManagerArgsRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		o          ControllerManagerOptions
		kubeconfig string
		m, h       int
		want       string
	}{
		"no kubeconfig":      {ControllerManagerOptions{}, "", 1, 2, "kubeconfig"},
		"same port twice":    {ControllerManagerOptions{}, "/k", 1, 1, "two distinct ports"},
		"no port":            {ControllerManagerOptions{}, "/k", 0, 2, "two distinct ports"},
		"negative frequency": {ControllerManagerOptions{StatusUpdateFrequency: -time.Second}, "/k", 1, 2, "negative"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tc.o.args(tc.kubeconfig, tc.m, tc.h)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestComponentArgsBindLoopback(t *testing.T) {
	p := &pki{dir: "/pki"}
	agg := aggregatedArgs("/k", "http://127.0.0.1:2379", p, 7443, 2)
	checkLoopbackOnly(t, "karmada-aggregated-apiserver", agg)
	for _, want := range []string{"--bind-address=127.0.0.1", "--secure-port=7443", "--etcd-servers=http://127.0.0.1:2379", "--authentication-kubeconfig=/k", "--authorization-kubeconfig=/k", "--tls-cert-file=/pki/karmada-aggregated-apiserver.crt"} {
		if !slices.Contains(agg, want) {
			t.Errorf("aggregated API server: missing %s in %v", want, agg)
		}
	}
	hook := webhookArgs("/k", p, 8443, 8080, 8000, 2)
	checkLoopbackOnly(t, "karmada-webhook", hook)
	if !slices.Contains(hook, "--cert-dir=/pki/webhook") || !slices.Contains(hook, "--bind-address=127.0.0.1") {
		t.Errorf("webhook: %v", hook)
	}
	sched := schedulerArgs("/k", 8081, 10351, 2)
	checkLoopbackOnly(t, "karmada-scheduler", sched)
	if !slices.Contains(sched, "--enable-scheduler-estimator=false") || !slices.Contains(sched, "--leader-elect=false") {
		t.Errorf("scheduler: %v", sched)
	}
}

func TestFrontProxyFlags(t *testing.T) {
	flags := frontProxyFlags(&pki{dir: "/pki"})
	for _, want := range []string{
		"--requestheader-client-ca-file=/pki/front-proxy-ca.crt",
		"--requestheader-allowed-names=front-proxy-client",
		"--proxy-client-cert-file=/pki/front-proxy-client.crt",
		"--proxy-client-key-file=/pki/front-proxy-client.key",
		"--requestheader-username-headers=X-Remote-User",
	} {
		if !slices.Contains(flags, want) {
			t.Errorf("missing %s in %v", want, flags)
		}
	}
	for _, f := range flags {
		if strings.HasPrefix(f, "--enable-aggregator-routing") {
			t.Errorf("%s: the aggregator must resolve the ExternalName Service, not Endpoints", f)
		}
	}
}
