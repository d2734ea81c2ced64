package membercred

import (
	"flag"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestGuardThresholdOneWithoutMinimumExitsOnFirst401: the documented way to
// reproduce exit-on-first-401 (Threshold 1, no minimum duration) must act on
// the very first persisting 401, with no second 401 and no time passing.
// With the default minimum, the same threshold waits for a later strike.
func TestGuardThresholdOneWithoutMinimumExitsOnFirst401(t *testing.T) {
	for _, tc := range []struct {
		name        string
		minDuration time.Duration
		wantExits   int
	}{
		{"no minimum", NoGuardMinDuration, 1},
		{"default minimum", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newAPIServer(t) // rejects everything
			f := newGuard(t, OwnCredentialGuardOptions{Threshold: 1, MinDuration: tc.minDuration})
			hc := ownClient(t, srv, f.guard, staticToken)
			if code, _ := get(t, hc, srv.URL); code != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", code)
			}
			if got := len(f.exits.calls()); got != tc.wantExits {
				t.Fatalf("exit called %d times after the first 401, want %d", got, tc.wantExits)
			}
			if tc.wantExits == 1 && f.guard.jitter != 0 {
				t.Errorf("jitter %s, want none without a minimum", f.guard.jitter)
			}
		})
	}
}

func TestGuardMinDurationValidate(t *testing.T) {
	for _, tc := range []struct {
		d       time.Duration
		wantErr bool
	}{
		{0, false}, {time.Second, false}, {NoGuardMinDuration, false},
		{-time.Second, true}, {-1, true}, {NoGuardMinDuration + 1, true},
	} {
		err := OwnCredentialGuardOptions{MinDuration: tc.d}.Validate()
		if (err != nil) != tc.wantErr {
			t.Errorf("MinDuration %s: Validate() = %v, want error %v", FormatGuardMinDuration(tc.d), err, tc.wantErr)
		}
	}
}

// TestGuardMinDurationValue: the flag value Karmada's
// --own-credential-guard-min-duration uses keeps the default and every
// duration it took before, and adds "none".
func TestGuardMinDurationValue(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    time.Duration
		wantErr string
	}{
		{nil, time.Minute, ""},
		{[]string{"-min=2s"}, 2 * time.Second, ""},
		{[]string{"-min=0"}, 0, ""},              // the default, as before: Validate and withDefaults say so
		{[]string{"-min=-1s"}, -time.Second, ""}, // kept for Validate to name
		{[]string{"-min=none"}, NoGuardMinDuration, ""},
		{[]string{"-min=None"}, 0, `want a Go duration such as 1m, or "none"`},
		{[]string{"-min=60"}, 0, `want a Go duration such as 1m, or "none"`},
	} {
		var d time.Duration
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(new(strings.Builder))
		fs.Var(NewGuardMinDurationValue(&d, time.Minute), "min", "")
		err := fs.Parse(tc.args)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: error %v, want it to contain %q", tc.args, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.wantErr == "" && d != tc.want:
			t.Errorf("%q: MinDuration %s, want %s", tc.args, FormatGuardMinDuration(d), FormatGuardMinDuration(tc.want))
		}
	}
	var d time.Duration
	v := NewGuardMinDurationValue(&d, time.Minute)
	if v.String() != "1m0s" || v.Type() != "duration" {
		t.Errorf("String() %q, Type() %q; want 1m0s and duration (the help text DurationVar gave)", v.String(), v.Type())
	}
	if err := v.Set("none"); err != nil || v.String() != "none" {
		t.Errorf(`after Set("none"): %v, String() %q`, err, v.String())
	}
}
