//go:build e2e

package toolcache

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestEnsureRealTools builds (or finds) the tools the suites run and checks
// that each binary runs and reports the version it was cached under. It logs
// how long Ensure took, which is the figure to quote for cold and warm runs.
func TestEnsureRealTools(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool        Tool
		versionArgs []string
		want        string
	}{
		{Etcd, []string{"--version"}, "etcd Version: 3.6.6"},
		{KubeAPIServer, []string{"--version"}, "Kubernetes v1.35.3"},
		// Installed as its own main module: the version comes from its
		// build information (Tool.Install).
		{Govulncheck, []string{"-version"}, "Scanner: govulncheck@v1.9.0"},
		{ControllerGen, []string{"--version"}, "Version: v0.17.3"},
		// Wrapper-built: the version is the -X the definition sets.
		{Gremlins, []string{"--version"}, "gremlins version v0.6.0"},
	} {
		t.Run(tc.tool.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			start := time.Now()
			path, err := Ensure(ctx, root, tc.tool)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Ensure(%s %s) took %s", tc.tool.Name, tc.tool.Version, time.Since(start).Round(time.Millisecond))
			out, err := exec.CommandContext(ctx, path, tc.versionArgs...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s %v: %v\n%s", path, tc.versionArgs, err, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("%s %v says %q, want it to contain %q", path, tc.versionArgs, out, tc.want)
			}
			// The node's binaries built with it carry the same version.
			for _, pkg := range tc.tool.Also {
				also := tc.tool.PathOf(root, installedName(pkg))
				args, want := tc.versionArgs, tc.want
				if installedName(pkg) == Kubectl {
					// kubectl has no --version flag and words it its own way.
					args, want = []string{"version", "--client"}, "Client Version: "+kubernetesVersion
				}
				out, err := exec.CommandContext(ctx, also, args...).CombinedOutput()
				if err != nil {
					t.Fatalf("%s %v: %v\n%s", also, args, err, out)
				}
				if !strings.Contains(string(out), want) {
					t.Errorf("%s %v says %q, want it to contain %q", also, args, out, want)
				}
			}
		})
	}
}
