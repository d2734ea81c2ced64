package node

import (
	"strings"
	"testing"
)

// A worker as the chart runs it: the image's nonroot user, no
// capabilities, no_new_privs.
const workerStatus = "Name:\tmanager\nPPid:\t4242\nUid:\t65532\t65532\t65532\t65532\nGid:\t65532\t65532\t65532\t65532\n" +
	"CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\n"

func TestCheckProcStatus(t *testing.T) {
	no := false
	root := int64(0)
	cases := []struct {
		name string
		want procWant
		diff []string
	}{
		{"as the chart implies", wantFor(nil, 65532, &no), nil},
		{"chart's runAsUser wins over the image's user", wantFor(&root, 65532, &no), []string{"Uid[0] = 65532, want 0", "CapEff = \"0000000000000000\", want \"00000000a80425fb\""}},
		{"escalation allowed means no_new_privs off", wantFor(nil, 65532, nil), []string{"NoNewPrivs = \"1\", want \"0\""}},
		{"another image user", wantFor(nil, 1001, &no), []string{"Uid[0] = 65532, want 1001"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkProcStatus(workerStatus, c.want)
			for _, d := range c.diff {
				if !strings.Contains(strings.Join(got, "\n"), d) {
					t.Errorf("differences %q: want one saying %q", got, d)
				}
			}
			if len(c.diff) == 0 && len(got) != 0 {
				t.Errorf("differences %q, want none", got)
			}
			if len(c.diff) != 0 && len(got) == 0 {
				t.Error("no difference found")
			}
		})
	}
}
