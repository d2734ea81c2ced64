package treetest_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/modproxytest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/pipelinetest"
	"github.com/holdfast-dist/holdfast/internal/pipeline/treetest"
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

// TestGoTestFetchesTheRootPackagesModules: a regression test that builds the
// module's main package (as the worker-operator's do) runs offline, so the
// modules only that package needs must be in the module cache before it
// starts. The inner build runs with GOPROXY=off, as an offline go command
// effectively does; on a cold module cache it fails without the prefetch.
func TestGoTestFetchesTheRootPackagesModules(t *testing.T) {
	needGo(t)
	proxy := modproxytest.New(t)
	proxy.Add(t, "example.com/onlymain", "v1.0.0", map[string]string{
		"onlymain.go": "package onlymain\n\n// Name is what main prints.\nfunc Name() string { return \"main\" }\n",
	})
	dir := t.TempDir()
	pipelinetest.Write(t, dir, map[string]string{
		"go.mod":  "module example.com/probe\n\ngo 1.22\n\nrequire example.com/onlymain v1.0.0\n",
		"main.go": "package main\n\nimport \"example.com/onlymain\"\n\nfunc main() { println(onlymain.Name()) }\n",
		"tests/build/build_test.go": `package build

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestBuildsTheMainPackage(t *testing.T) {
	cmd := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "probe"), ".")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the main package offline: %v\n%s", err, out)
	}
}
`,
	})
	env := append(os.Environ(), proxy.Env()...)
	env = append(env, "GOFLAGS=-count=1 -mod=mod -modcacherw", "GOWORK=off", "GOSUMDB=off")
	run, err := treetest.Runner{Env: env}.GoTest(context.Background(), dir, nil, []string{"./tests/build"})
	if err != nil {
		t.Fatal(err)
	}
	if run.State("TestBuildsTheMainPackage") != treetest.Green {
		t.Errorf("TestBuildsTheMainPackage %s: want GREEN, the root package's modules fetched before the offline run:\n%s", run.State("TestBuildsTheMainPackage"), strings.Join(run.Output, "\n"))
	}
}
