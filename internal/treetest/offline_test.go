package treetest_test

import (
	"context"
	"os"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/pipelinetest"
	"github.com/holdfast-dist/holdfast/internal/treetest"
)

// TestGoTestBinariesHaveOnlyLoopback: an upstream's test binary sees no
// network interface but lo (so no packet it sends can leave the machine),
// and loopback still works for its httptest servers. The probe lists
// interfaces rather than dialling out, so the RED run sends nothing either.
func TestGoTestBinariesHaveOnlyLoopback(t *testing.T) {
	needGo(t)
	dir := t.TempDir()
	pipelinetest.Write(t, dir, map[string]string{
		"go.mod": "module example.com/probe\n\ngo 1.22\n",
		"probe_test.go": `package probe

import (
	"net"
	"testing"
)

func TestOnlyLoopback(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Name != "lo" {
			t.Errorf("interface %s is visible to the test binary", i.Name)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("loopback: %v", err)
	}
	c.Close()
}
`,
	})
	r := treetest.Runner{Env: append(os.Environ(), "GOFLAGS=-count=1", "GOWORK=off")}
	run, err := r.GoTest(context.Background(), dir, nil, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	if run.State("TestOnlyLoopback") != treetest.Green {
		t.Errorf("TestOnlyLoopback %s: %q", run.State("TestOnlyLoopback"), run.Output)
	}
}
