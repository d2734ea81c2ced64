package hubfollow

import "testing"

// TestConfigFromEnvTimeoutEqualToIntervalIsSaid: "not shorter" includes
// equal; a timeout just below the interval says nothing.
func TestConfigFromEnvTimeoutEqualToIntervalIsSaid(t *testing.T) {
	for _, tc := range []struct {
		timeout string
		lines   int
	}{
		{"5s", 1},
		{"4999ms", 0},
	} {
		sink, log := newLogSink()
		configFromEnv(t, envMap(haEnv(map[string]string{EnvResolveInterval: "5s", EnvResolveTimeout: tc.timeout})), log)
		if n := sink.count(EnvResolveTimeout); n != tc.lines {
			t.Errorf("interval 5s, timeout %s: %d lines name %s, want %d:\n%s", tc.timeout, n, EnvResolveTimeout, tc.lines, sink.all())
		}
	}
}

// TestConfigFromEnvEmptyValueIsUnset: a variable set to "" (a chart value
// left blank) is the default, silently, as if it were not set.
func TestConfigFromEnvEmptyValueIsUnset(t *testing.T) {
	for _, variable := range []string{EnvResolveInterval, EnvResolveTimeout, EnvSwitchConfirmations} {
		sink, log := newLogSink()
		cfg := configFromEnv(t, envMap(haEnv(map[string]string{variable: ""})), log)
		if cfg.ResolveInterval != DefaultResolveInterval || cfg.ResolveTimeout != DefaultResolveTimeout || cfg.SwitchConfirmations != DefaultSwitchConfirmations {
			t.Errorf("%s=\"\": config %+v, want the defaults", variable, cfg)
		}
		if got := sink.all(); got != "" {
			t.Errorf("%s=\"\" logged:\n%s", variable, got)
		}
	}
}
