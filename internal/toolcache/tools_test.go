package toolcache

import (
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/modproxytest"
	"golang.org/x/mod/modfile"
)

func TestRootFrom(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "e2e", "karmada")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := rootFrom(deep); err == nil || !strings.Contains(err.Error(), "pins.txt") {
		t.Fatalf("rootFrom without pins.txt: err = %v, want one naming pins.txt", err)
	}
	if err := os.WriteFile(filepath.Join(root, "pins.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{root, deep} {
		got, err := rootFrom(dir)
		if err != nil || got != root {
			t.Errorf("rootFrom(%s) = %q, %v; want %q", dir, got, err, root)
		}
	}
}

func TestStampChangesWithEveryInput(t *testing.T) {
	base := Tool{Name: "x", Version: "v1", GoMod: "module m\n", Package: "m/cmd", LDFlags: "-s"}
	seen := map[string]string{base.stamp("go1.26"): "base"}
	for name, stamp := range map[string]string{
		"GoMod":      Tool{Name: "x", Version: "v1", GoMod: "module n\n", Package: "m/cmd", LDFlags: "-s"}.stamp("go1.26"),
		"Package":    Tool{Name: "x", Version: "v1", GoMod: "module m\n", Package: "m/cmd2", LDFlags: "-s"}.stamp("go1.26"),
		"LDFlags":    Tool{Name: "x", Version: "v1", GoMod: "module m\n", Package: "m/cmd", LDFlags: ""}.stamp("go1.26"),
		"go version": base.stamp("go1.27"),
		"install":    Tool{Name: "x", Version: "v1", GoMod: "module m\n", Package: "m/cmd", LDFlags: "-s", Install: true}.stamp("go1.26"),
		"also":       Tool{Name: "x", Version: "v1", GoMod: "module m\n", Package: "m/cmd", LDFlags: "-s", Also: []string{"m/other"}}.stamp("go1.26"),
		"tags":       Tool{Name: "x", Version: "v1", GoMod: "module m\n", Package: "m/cmd", LDFlags: "-s", Tags: []string{"remove_all_sd"}}.stamp("go1.26"),
		"main":       Tool{Name: "x", Version: "v1", GoMod: "module m\n", Package: "m/cmd", LDFlags: "-s", Main: "package main\n"}.stamp("go1.26"),
		// Moving bytes between fields must not collide.
		"boundary": Tool{Name: "x", Version: "v1", GoMod: "module m\nm/cmd", Package: "", LDFlags: "-s"}.stamp("go1.26"),
	} {
		if other, dup := seen[stamp]; dup {
			t.Errorf("changing %s gives the same stamp as %s", name, other)
		}
		seen[stamp] = name
	}
	// Name and Version choose the folder, not the stamp.
	if a, b := base.stamp("go1.26"), (Tool{Name: "y", Version: "v2", GoMod: base.GoMod, Package: base.Package, LDFlags: base.LDFlags}).stamp("go1.26"); a != b {
		t.Errorf("stamp depends on Name/Version")
	}
	// ...except for an installed tool, where Version is the module version
	// built.
	installed := Tool{Name: "x", Version: "v1.0.0", Package: "m/cmd", Install: true}
	if a, b := installed.stamp("go1.26"), (Tool{Name: "x", Version: "v1.0.1", Package: "m/cmd", Install: true}).stamp("go1.26"); a == b {
		t.Errorf("an installed tool's stamp does not depend on its Version")
	}
	// Adding Install must not rebuild the tools cached before it existed:
	// a wrapper-built tool's stamp is what it was.
	if got, want := base.stamp("go1.26"), legacyStamp(base, "go1.26"); got != want {
		t.Errorf("a wrapper-built tool's stamp changed: %s, was %s", got, want)
	}
}

// legacyStamp is the stamp as computed before Tool.Install existed.
func legacyStamp(t Tool, goVersion string) string {
	h := sha256.New()
	for _, part := range []string{t.GoMod, t.Package, t.LDFlags, goVersion} {
		fmt.Fprintf(h, "%d:%s\n", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestInstalledName(t *testing.T) {
	for pkg, want := range map[string]string{
		"golang.org/x/vuln/cmd/govulncheck": "govulncheck",
		"example.com/tool/v2":               "tool",
		"example.com/cmd/v2tool":            "v2tool",
		"example.com/v":                     "v",
		"tool":                              "tool",
	} {
		if got := installedName(pkg); got != want {
			t.Errorf("installedName(%s) = %s, want %s", pkg, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	good := Tool{Name: "x", Version: "v1", GoMod: "module m\n", Package: "m"}
	for _, tc := range []struct {
		name string
		edit func(*Tool)
		want string // substring of the error; "" means valid
	}{
		{"valid", func(*Tool) {}, ""},
		{"no GoMod", func(t *Tool) { t.GoMod = "" }, "empty GoMod"},
		{"no Package", func(t *Tool) { t.Package = " " }, "empty Package"},
		{"slash in version", func(t *Tool) { t.Version = "v1/../../etc" }, "plain folder names"},
		{"dotdot name", func(t *Tool) { t.Name = ".." }, "plain folder names"},
		{"install", func(t *Tool) { t.Install, t.GoMod = true, "" }, ""},
		{"install with GoMod", func(t *Tool) { t.Install = true }, "GoMod must be empty"},
		{"install without Package", func(t *Tool) { t.Install, t.GoMod, t.Package = true, "", "" }, "empty Package"},
		{"also", func(t *Tool) { t.Also = []string{"m/cmd/y"} }, ""},
		{"also with install", func(t *Tool) { t.Install, t.GoMod, t.Also = true, "", []string{"m/cmd/y"} }, "Also needs a wrapper module"},
		{"also named like the tool", func(t *Tool) { t.Name, t.Also = "y", []string{"m/cmd/y"} }, `both be named "y"`},
		{"main", func(t *Tool) { t.Main = "package main\n\nfunc main() {}\n" }, ""},
		{"main with install", func(t *Tool) { t.Install, t.GoMod, t.Main = true, "", "package main\n" }, "cannot be installed or built with Also"},
		{"main with also", func(t *Tool) { t.Also, t.Main = []string{"m/cmd/y"}, "package main\n" }, "cannot be installed or built with Also"},
		{"main of another package", func(t *Tool) { t.Main = "package tools\n" }, `must start with "package main"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := good
			tc.edit(&tool)
			err := tool.validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestKubernetesWrapperGoMod(t *testing.T) {
	f, err := modfile.Parse("go.mod", []byte(KubeAPIServer.GoMod), nil)
	if err != nil {
		t.Fatalf("KubeAPIServer.GoMod does not parse: %v", err)
	}
	if len(f.Require) != 1 || f.Require[0].Mod.Path != "k8s.io/kubernetes" || f.Require[0].Mod.Version != "v1.35.3" {
		t.Errorf("requires = %v, want only k8s.io/kubernetes v1.35.3", f.Require)
	}
	replaced := map[string]string{}
	for _, r := range f.Replace {
		if r.Old.Path != r.New.Path {
			t.Errorf("replace %s => %s: a staging module must be replaced by its own release", r.Old.Path, r.New.Path)
		}
		replaced[r.Old.Path] = r.New.Version
	}
	for _, m := range []string{"k8s.io/api", "k8s.io/client-go", "k8s.io/apiserver", "k8s.io/kms", "k8s.io/externaljwt"} {
		if replaced[m] != "v0.35.3" {
			t.Errorf("%s replaced with %q, want v0.35.3", m, replaced[m])
		}
	}
	if len(replaced) != len(kubernetesStaging) {
		t.Errorf("%d replaces for %d staging modules", len(replaced), len(kubernetesStaging))
	}
	if _, err := modfile.Parse("go.mod", []byte(Etcd.GoMod), nil); err != nil {
		t.Errorf("Etcd.GoMod does not parse: %v", err)
	}
}

// helloTool is a tool built from a module on disk, so Ensure can be tested
// end to end without the module proxy.
func helloTool(t *testing.T, name, message string) Tool {
	t.Helper()
	src := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.local/hello\n\ngo 1.24\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nvar message = \"default\"\n\nfunc main() { fmt.Print(message) }\n",
	}
	if message == "BROKEN" {
		files["main.go"] = "package main\n\nfunc main() { undefinedThing() }\n"
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Tool{
		Name:    name,
		Version: "v0.0.1",
		GoMod:   fmt.Sprintf("module holdfast.local/hello-build\n\ngo 1.24\n\nrequire example.local/hello v0.0.0\n\nreplace example.local/hello => %s\n", src),
		Package: "example.local/hello",
		LDFlags: "-X main.message=" + message,
	}
}

// writeModule writes files (path: content) into a new folder and returns it.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	src := t.TempDir()
	for name, content := range files {
		path := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// twoCommandsTool is a tool whose Package and one Also command come from a
// module on disk: the shape of kube-apiserver with the node's binaries.
func twoCommandsTool(t *testing.T, name string) Tool {
	t.Helper()
	src := writeModule(t, map[string]string{
		"go.mod":             "module example.local/pair\n\ngo 1.24\n",
		"lib/lib.go":         "package lib\n\nvar Message = \"default\"\n",
		"cmd/first/main.go":  "package main\n\nimport (\"fmt\"; \"example.local/pair/lib\")\n\nfunc main() { fmt.Print(\"first \" + lib.Message) }\n",
		"cmd/second/main.go": "package main\n\nimport (\"fmt\"; \"example.local/pair/lib\")\n\nfunc main() { fmt.Print(\"second \" + lib.Message) }\n",
	})
	return Tool{
		Name:    name,
		Version: "v0.0.1",
		GoMod:   fmt.Sprintf("module holdfast.local/pair-build\n\ngo 1.24\n\nrequire example.local/pair v0.0.0\n\nreplace example.local/pair => %s\n", src),
		Package: "example.local/pair/cmd/first",
		Also:    []string{"example.local/pair/cmd/second"},
		LDFlags: "-X example.local/pair/lib.Message=linked",
	}
}

// TestEnsureBuildsAlsoInOneBuild checks that Also's commands come out of
// the same build as Package, with its flags, and that a missing one
// rebuilds: a cached kube-apiserver without a kubelet beside it is not
// current.
func TestEnsureBuildsAlsoInOneBuild(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	tool := twoCommandsTool(t, "first")
	path, err := Ensure(ctx, root, tool)
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, path); got != "first linked" {
		t.Errorf("%s says %q, want %q", path, got, "first linked")
	}
	second := tool.PathOf(root, "second")
	if got := run(t, second); got != "second linked" {
		t.Errorf("%s says %q, want %q (built with the tool's LDFlags)", second, got, "second linked")
	}
	if n := buildsOf(tool.Name); n != 1 {
		t.Errorf("%d builds, want 1 for both commands", n)
	}
	// A definition without Also (an older checkout sharing the cache) has
	// its own folder: neither rebuilds over the other.
	plain := tool
	plain.Also = nil
	if plain.Dir(root) == tool.Dir(root) {
		t.Errorf("with and without Also share the folder %s", tool.Dir(root))
	}
	if err := os.Remove(second); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(ctx, root, tool); err != nil {
		t.Fatal(err)
	}
	if n := buildsOf(tool.Name); n != 2 {
		t.Errorf("%d builds after removing %s, want 2 (a missing Also binary must rebuild)", n, second)
	}
	if got := run(t, second); got != "second linked" {
		t.Errorf("rebuilt %s says %q", second, got)
	}
}

// TestEnsureBuildsMain: a tool with Main builds the wrapper's own main.go
// over a library module (CoreDNS's coremain with some plugins), and only
// what it imports: the library's other package, which does not compile,
// is never built.
func TestEnsureBuildsMain(t *testing.T) {
	t.Parallel()
	src := writeModule(t, map[string]string{
		"go.mod":              "module example.local/plugins\n\ngo 1.24\n",
		"core/core.go":        "package core\n\nimport \"fmt\"\n\nvar registered []string\n\nfunc Register(name string) { registered = append(registered, name) }\n\nfunc Run() string { return fmt.Sprint(registered) }\n",
		"plugin/a/a.go":       "package a\n\nimport \"example.local/plugins/core\"\n\nfunc init() { core.Register(\"a\") }\n",
		"plugin/broken/b.go":  "package broken\n\nfunc init() { undefinedThing() }\n",
		"cmd/plugins/main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"example.local/plugins/core\"\n\t_ \"example.local/plugins/plugin/a\"\n\t_ \"example.local/plugins/plugin/broken\"\n)\n\nfunc main() { fmt.Print(core.Run()) }\n",
	})
	tool := Tool{
		Name:    "plugins-main",
		Version: "v0.0.1",
		GoMod:   fmt.Sprintf("module holdfast.local/plugins-build\n\ngo 1.24\n\nrequire example.local/plugins v0.0.0\n\nreplace example.local/plugins => %s\n", src),
		Package: "example.local/plugins/cmd/plugins",
		Main:    "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.local/plugins/core\"\n\t_ \"example.local/plugins/plugin/a\"\n)\n\nvar suffix = \"\"\n\nfunc main() { fmt.Print(core.Run() + suffix) }\n",
		LDFlags: "-X main.suffix=!",
	}
	path, err := Ensure(context.Background(), t.TempDir(), tool)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := run(t, path), "[a]!"; got != want {
		t.Errorf("%s says %q, want %q (Main with the tool's LDFlags, only plugin a)", path, got, want)
	}
}

// builds counts the builds started per tool name, so Ensure tests can run
// in parallel with tools of their own names.
var builds = struct {
	sync.Mutex
	byName map[string]int
}{byName: map[string]int{}}

func TestMain(m *testing.M) {
	logf = func(format string, args ...any) {
		if strings.HasPrefix(format, "building") && len(args) > 0 {
			builds.Lock()
			builds.byName[fmt.Sprint(args[0])]++
			builds.Unlock()
		}
	}
	os.Exit(m.Run())
}

func buildsOf(name string) int {
	builds.Lock()
	defer builds.Unlock()
	return builds.byName[name]
}

func run(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command(path).Output()
	if err != nil {
		t.Fatalf("running %s: %v", path, err)
	}
	return string(out)
}

func TestEnsureBuildsCachesAndRebuildsOnChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := t.TempDir()
	first := helloTool(t, "hello-rebuild", "one")
	builds := func() int { return buildsOf(first.Name) }
	path, err := Ensure(ctx, root, first)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(root, ".cache", "tools", "hello-rebuild-v0.0.1", "hello-rebuild") {
		t.Errorf("path = %s, want it under .cache/tools/hello-rebuild-v0.0.1", path)
	}
	if got := run(t, path); got != "one" {
		t.Errorf("built binary says %q, want %q (LDFlags not applied?)", got, "one")
	}

	if _, err := Ensure(ctx, root, first); err != nil {
		t.Fatal(err)
	}
	if builds() != 1 {
		t.Errorf("second Ensure of the same tool built again (%d builds)", builds())
	}

	changed := first
	changed.LDFlags = "-X main.message=two"
	if _, err := Ensure(ctx, root, changed); err != nil {
		t.Fatal(err)
	}
	if builds() != 2 || run(t, path) != "two" {
		t.Errorf("a changed definition was not rebuilt (%d builds, binary says %q)", builds(), run(t, path))
	}

	matches, _ := filepath.Glob(filepath.Join(root, ".cache", "tools", "*.build-*"))
	if len(matches) != 0 {
		t.Errorf("build folders left behind: %v", matches)
	}
}

func TestEnsureConcurrentCallersBuildOnce(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tool := helloTool(t, "hello-concurrent", "shared")
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Ensure(context.Background(), root, tool) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := buildsOf(tool.Name); n != 1 {
		t.Errorf("%d builds for 3 concurrent callers, want 1", n)
	}
}

func TestEnsureFailureQuotesTheBuildLog(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tool := helloTool(t, "hello-broken", "BROKEN")
	_, err := Ensure(context.Background(), root, tool)
	if err == nil {
		t.Fatal("Ensure of a tool that does not compile succeeded")
	}
	for _, want := range []string{"tool hello-broken v0.0.1", "build.log", "undefinedThing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if current(root, tool, tool.stamp("any")) {
		t.Error("a failed build left a current-looking binary")
	}
	if _, err := os.Stat(filepath.Join(tool.Dir(root), stampFile)); !os.IsNotExist(err) {
		t.Errorf("a failed build left a stamp (stat: %v)", err)
	}
}

func TestLockFileWaitIsCancellable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lockFile(ctx, path); err == nil {
		t.Fatal("second lock on a held file succeeded")
	}
}

func TestKubernetesVersionLDFlags(t *testing.T) {
	got := kubernetesVersionLDFlags("v1.35.3")
	for _, want := range []string{
		"-X k8s.io/component-base/version.gitVersion=v1.35.3",
		"-X k8s.io/component-base/version.gitMajor=1",
		"-X k8s.io/component-base/version.gitMinor=35",
		"-X k8s.io/client-go/pkg/version.gitVersion=v1.35.3",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ldflags %q lack %q", got, want)
		}
	}
}

// The CI cache key changes whenever a cached binary would be rebuilt, and
// only then.
func TestKey(t *testing.T) {
	base := key(Tools, "go1.26.8")
	if base != key(Tools, "go1.26.8") {
		t.Fatal("key is not deterministic")
	}
	helm := Helm
	helm.LDFlags += " -X x.y=z"
	for name, other := range map[string]string{
		"go version":      key(Tools, "go1.26.9"),
		"a tool's build":  key([]Tool{Etcd, KubeAPIServer, helm, Actionlint}, "go1.26.8"),
		"the set":         key(Tools[:3], "go1.26.8"),
		"another version": key([]Tool{Etcd, KubeAPIServer, Helm, {Name: "actionlint", Version: "v1.7.11", GoMod: Actionlint.GoMod, Package: Actionlint.Package, LDFlags: Actionlint.LDFlags}}, "go1.26.8"),
	} {
		if other == base {
			t.Errorf("changing %s keeps the key %s", name, base)
		}
	}
	if !strings.HasPrefix(base, "tools-go1.26.8-") {
		t.Errorf("key %s: want the Go version in it, for people reading the cache list", base)
	}
	if _, ok := Lookup("actionlint"); !ok {
		t.Error("Lookup(actionlint) failed")
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup(nope) succeeded")
	}
}

// TestEnsureInstallsToolAsMainModule: an Install tool is built from its
// published module version (a local proxy and checksum database here), so
// its build information names that module and version, as `go install
// pkg@version` leaves it, and the record beside it is that build
// information, not a wrapper's go.mod.
func TestEnsureInstallsToolAsMainModule(t *testing.T) {
	proxy := modproxytest.New(t)
	proxy.Add(t, "example.test/greeter", "v1.2.3", map[string]string{
		"cmd/greet/main.go": "package main\n\nimport \"fmt\"\n\nvar message = \"default\"\n\nfunc main() { fmt.Print(message) }\n",
	})
	for _, kv := range append(proxy.Env(), "GOSUMDB="+proxy.ChecksumDB(), "GONOSUMDB=", "GOPRIVATE=") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	root := t.TempDir()
	tool := Tool{Name: "greet", Version: "v1.2.3", Package: "example.test/greeter/cmd/greet", LDFlags: "-X main.message=hi", Install: true}
	path, err := Ensure(context.Background(), root, tool)
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, path); got != "hi" {
		t.Errorf("installed binary says %q, want %q (LDFlags not applied?)", got, "hi")
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bi.Main.Path != "example.test/greeter" || bi.Main.Version != "v1.2.3" {
		t.Errorf("main module %s %s, want example.test/greeter v1.2.3", bi.Main.Path, bi.Main.Version)
	}
	record, err := os.ReadFile(filepath.Join(tool.Dir(root), "buildinfo.txt"))
	if err != nil || !strings.Contains(string(record), "mod\texample.test/greeter\tv1.2.3") {
		t.Errorf("buildinfo.txt: %v\n%s", err, record)
	}
	if _, err := os.Stat(filepath.Join(tool.Dir(root), "go.mod")); !os.IsNotExist(err) {
		t.Errorf("an installed tool left a wrapper go.mod (stat: %v)", err)
	}
	if _, err := Ensure(context.Background(), root, tool); err != nil || buildsOf("greet") != 1 {
		t.Errorf("second Ensure: %v, %d builds, want 1", err, buildsOf("greet"))
	}
}

// A tool's build tags reach the go command; a tool without tags is built
// with the same arguments as before Tool.Tags existed, so its compile steps
// (and the build cache entries they hit) stay the same.
func TestGoArgsPassesTags(t *testing.T) {
	got := strings.Join(goArgs("build", "out", "-s", []string{"remove_all_sd", "x"}, "m/cmd"), " ")
	if want := "build -trimpath -o out -ldflags -s -tags remove_all_sd,x m/cmd"; got != want {
		t.Errorf("goArgs with tags = %q, want %q", got, want)
	}
	got = strings.Join(goArgs("build", "out", "-s", nil, "m/cmd"), " ")
	if want := "build -trimpath -o out -ldflags -s m/cmd"; got != want {
		t.Errorf("goArgs without tags = %q, want %q", got, want)
	}
}

// TestRunGoRunsNiced: the go command runGo starts, and what it spawns, run
// at BuildNice at least, whatever the caller's priority: a test that
// builds a tool beside a running suite must not take the suite's cores.
func TestRunGoRunsNiced(t *testing.T) {
	t.Parallel()
	dir := writeModule(t, map[string]string{
		"go.mod":  "module example.local/nice\n\ngo 1.24\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"syscall\"\n)\n\nfunc main() {\n\traw, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)\n\tfmt.Printf(\"nice=%d err=%v\\n\", 20-raw, err)\n}\n",
	})
	log, err := os.Create(filepath.Join(t.TempDir(), "build.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if err := runGo(context.Background(), dir, log, nil, "run", "."); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(log.Name())
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("nice=%d err=<nil>", BuildNice); !strings.Contains(string(out), want) {
		t.Errorf("the program go run started printed:\n%s\nwant %q", out, want)
	}
}
