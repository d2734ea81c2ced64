package hubfollow

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

func haEnv(extra map[string]string) map[string]string {
	env := map[string]string{
		EnvPrimaryEndpoint:   "https://hub-a.example.com:6443",
		EnvSecondaryEndpoint: "https://hub-b.example.com:6443",
		EnvClusterName:       testCluster,
		EnvProjectNamespace:  testNamespace,
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func TestConfigFromEnvDefaults(t *testing.T) {
	sink, log := newLogSink()
	cfg := configFromEnv(t, envMap(haEnv(nil)), log)
	if !cfg.Enabled() {
		t.Fatalf("Enabled() = false with both hubs configured: %s", cfg.disabledReason())
	}
	if cfg.ResolveInterval != 10*time.Second || cfg.ResolveTimeout != 5*time.Second || cfg.SwitchConfirmations != 2 {
		t.Errorf("defaults = %v/%v/%d, want upstream's 10s/5s/2", cfg.ResolveInterval, cfg.ResolveTimeout, cfg.SwitchConfirmations)
	}
	if cfg.ClusterName != testCluster || cfg.ProjectNamespace != testNamespace {
		t.Errorf("Cluster CR location = %s/%s", cfg.ProjectNamespace, cfg.ClusterName)
	}
	if got := sink.all(); got != "" {
		t.Errorf("valid configuration logged:\n%s", got)
	}
}

// TestConfigFromEnvRefusesInvalidTuning: a tuning variable that is set and
// invalid is an error naming it, its value and what is accepted (the guard's
// policy), with failover following configured or not; it used to fall back
// to the default with a warning.
func TestConfigFromEnvRefusesInvalidTuning(t *testing.T) {
	tests := []struct{ variable, value, want string }{
		{EnvResolveInterval, "ten seconds", "a positive Go duration such as 10s"},
		{EnvResolveInterval, "10", "a positive Go duration such as 10s"},
		{EnvResolveInterval, "0s", "a positive Go duration such as 10s"},
		{EnvResolveInterval, "-3s", "a positive Go duration such as 10s"},
		{EnvResolveTimeout, "soon", "a positive Go duration such as 5s"},
		{EnvResolveTimeout, "0", "a positive Go duration such as 5s"},
		{EnvSwitchConfirmations, "two", "a positive whole number such as 2"},
		{EnvSwitchConfirmations, "0", "a positive whole number such as 2"},
		{EnvSwitchConfirmations, "-1", "a positive whole number such as 2"},
		{EnvSwitchConfirmations, "1.5", "a positive whole number such as 2"},
	}
	for _, tt := range tests {
		for _, following := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s=%s/following=%v", tt.variable, tt.value, following), func(t *testing.T) {
				env := haEnv(map[string]string{tt.variable: tt.value})
				if !following {
					delete(env, EnvSecondaryEndpoint)
				}
				_, err := ConfigFromEnv(envMap(env), logr.Discard())
				want := fmt.Sprintf("invalid hub follower setting: %s=%q: want %s (unset means the default)", tt.variable, tt.value, tt.want)
				if err == nil || err.Error() != want {
					t.Errorf("err = %v\nwant %s", err, want)
				}
			})
		}
	}
}

// TestConfigFromEnvNamesEveryInvalidVariable: every wrong variable is in the
// one error, so fixing one does not reveal the next on the following start.
func TestConfigFromEnvNamesEveryInvalidVariable(t *testing.T) {
	_, err := ConfigFromEnv(envMap(haEnv(map[string]string{
		EnvResolveInterval: "10", EnvResolveTimeout: "5s", EnvSwitchConfirmations: "two",
	})), logr.Discard())
	if err == nil {
		t.Fatal("no error for two invalid variables")
	}
	for _, want := range []string{EnvResolveInterval + `="10"`, EnvSwitchConfirmations + `="two"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), EnvResolveTimeout) || strings.Contains(err.Error(), "\n") {
		t.Errorf("err = %q, want one line naming only the invalid variables", err)
	}
}

func TestConfigFromEnvValidValues(t *testing.T) {
	cfg := configFromEnv(t, envMap(haEnv(map[string]string{
		EnvResolveInterval: "30s", EnvResolveTimeout: "1500ms", EnvSwitchConfirmations: "3",
	})), logr.Discard())
	if cfg.ResolveInterval != 30*time.Second || cfg.ResolveTimeout != 1500*time.Millisecond || cfg.SwitchConfirmations != 3 {
		t.Errorf("got %v/%v/%d, want 30s/1.5s/3", cfg.ResolveInterval, cfg.ResolveTimeout, cfg.SwitchConfirmations)
	}
}

func TestConfigFromEnvTimeoutNotShorterThanIntervalIsKeptAndSaid(t *testing.T) {
	sink, log := newLogSink()
	cfg := configFromEnv(t, envMap(haEnv(map[string]string{EnvResolveInterval: "3s"})), log)
	if cfg.ResolveTimeout != DefaultResolveTimeout || cfg.ResolveInterval != 3*time.Second {
		t.Errorf("got interval %v timeout %v; the operator's values should be kept", cfg.ResolveInterval, cfg.ResolveTimeout)
	}
	if n := sink.count(EnvResolveTimeout); n != 1 {
		t.Errorf("%d lines name %s, want one:\n%s", n, EnvResolveTimeout, sink.all())
	}
}

func TestConfigFromEnvFeatureOff(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		wantLog    string // "" means nothing is logged
		wantReason string
	}{
		{
			name:       "secondary unset",
			env:        map[string]string{EnvPrimaryEndpoint: "https://hub-a.example.com:6443"},
			wantReason: EnvSecondaryEndpoint + " is not set",
		},
		{
			name:       "secondary equals primary after normalisation",
			env:        haEnv(map[string]string{EnvPrimaryEndpoint: "https://hub-a.example.com", EnvSecondaryEndpoint: "HTTPS://HUB-A.example.com:443/"}),
			wantLog:    "names the same hub",
			wantReason: "names the same hub",
		},
		{
			name:       "secondary is the primary's IPv6 address spelled out",
			env:        haEnv(map[string]string{EnvPrimaryEndpoint: "https://[::1]:6443", EnvSecondaryEndpoint: "https://[0:0:0:0:0:0:0:1]:6443"}),
			wantLog:    "names the same hub",
			wantReason: "names the same hub",
		},
		{
			name:       "secondary not a URL",
			env:        haEnv(map[string]string{EnvSecondaryEndpoint: "ftp://hub-b"}),
			wantLog:    EnvSecondaryEndpoint,
			wantReason: EnvSecondaryEndpoint,
		},
		{
			name:       "secondary with userinfo",
			env:        haEnv(map[string]string{EnvSecondaryEndpoint: "https://admin:s3cret@hub-b"}),
			wantLog:    "userinfo",
			wantReason: "userinfo",
		},
		{
			name:       "primary unusable",
			env:        haEnv(map[string]string{EnvPrimaryEndpoint: ""}),
			wantLog:    EnvPrimaryEndpoint,
			wantReason: EnvPrimaryEndpoint,
		},
		{
			name:       "cluster name missing",
			env:        haEnv(map[string]string{EnvClusterName: ""}),
			wantLog:    EnvClusterName,
			wantReason: EnvClusterName,
		},
		{
			name:       "project namespace missing",
			env:        haEnv(map[string]string{EnvProjectNamespace: ""}),
			wantLog:    EnvProjectNamespace,
			wantReason: EnvProjectNamespace,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink, log := newLogSink()
			cfg := configFromEnv(t, envMap(tt.env), log)
			if cfg.Enabled() {
				t.Fatal("Enabled() = true")
			}
			if r := cfg.disabledReason(); !strings.Contains(r, tt.wantReason) {
				t.Errorf("reason %q does not mention %q", r, tt.wantReason)
			}
			logs := sink.all()
			switch {
			case tt.wantLog == "" && logs != "":
				t.Errorf("unexpected log:\n%s", logs)
			case tt.wantLog != "" && sink.count(tt.wantLog) != 1:
				t.Errorf("want one line mentioning %q, got:\n%s", tt.wantLog, logs)
			}
			if strings.Contains(logs, "s3cret") {
				t.Errorf("log leaks userinfo:\n%s", logs)
			}
		})
	}
}

func TestConfigWithDefaults(t *testing.T) {
	got := Config{}.withDefaults()
	if got.ResolveInterval != DefaultResolveInterval || got.ResolveTimeout != DefaultResolveTimeout || got.SwitchConfirmations != DefaultSwitchConfirmations {
		t.Errorf("withDefaults() = %+v", got)
	}
}

// configFromEnv is ConfigFromEnv for environments it must accept.
func configFromEnv(t *testing.T, lookup LookupEnvFunc, log logr.Logger) Config {
	t.Helper()
	cfg, err := ConfigFromEnv(lookup, log)
	if err != nil {
		t.Fatalf("ConfigFromEnv: %v", err)
	}
	return cfg
}
