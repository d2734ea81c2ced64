package pins

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

const (
	sumA = "h1:B1Eu3055LtTBndD/R2WcaS/bLvGwwVU1/3wXQjkIVN4="
	sumB = "h1:gNjjEYUQr1aFgqcMiqQVZYWmnAAXhfXZoTbPJ5pala0="
)

const valid = `# comment
upstream karmada github.com/karmada-io/karmada
	carry membercred
	build ./cmd/controller-manager .
	pin v1.18.2 ` + sumA + ` series=patches/karmada/1.18 revision=2 default # trailing
	pin v1.17.1 ` + sumB + ` series=patches/karmada/1.17 revision=1

upstream workeroperator github.com/kubeslice/worker-operator
	build .
	pin v1.6.4 ` + sumA + ` series=patches/workeroperator/1.6 revision=1 default
`

func TestParseValid(t *testing.T) {
	f, err := Parse("pins.txt", []byte(valid))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	k, err := f.Upstream("karmada")
	if err != nil {
		t.Fatal(err)
	}
	if k.Module != "github.com/karmada-io/karmada" || strings.Join(k.Carry, ",") != "membercred" || strings.Join(k.Build, ",") != "./cmd/controller-manager,." {
		t.Errorf("karmada upstream = %+v", k)
	}
	def, err := k.Pin("")
	if err != nil {
		t.Fatal(err)
	}
	want := Pin{Version: "v1.18.2", Sum: sumA, Series: "patches/karmada/1.18", Revision: 2, Default: true, Line: 5}
	if def != want {
		t.Errorf("default pin = %+v, want %+v", def, want)
	}
	if got := def.VersionString(); got != "v1.18.2-holdfast.2" {
		t.Errorf("VersionString = %q", got)
	}
	if _, err := k.Pin("v1.17.1"); err != nil {
		t.Errorf("Pin(v1.17.1): %v", err)
	}
	if _, err := k.Pin("v1.13.0"); err == nil || !strings.Contains(err.Error(), "v1.18.2, v1.17.1") {
		t.Errorf("Pin(v1.13.0) error = %v, want one listing the pinned versions", err)
	}
	if _, err := f.Upstream("nope"); err == nil || !strings.Contains(err.Error(), "karmada, workeroperator") {
		t.Errorf("Upstream(nope) error = %v, want one listing the known upstreams", err)
	}
}

func TestParseErrors(t *testing.T) {
	pin := func(v, opts string) string { return "\tpin " + v + " " + sumA + " " + opts + "\n" }
	head := "upstream k github.com/k/k\n\tbuild .\n"
	tests := []struct {
		name    string
		content string
		want    string // substring of the error, including the line number
	}{
		{"unknown directive", head + pin("v1.0.0", "series=p/1 revision=1 default") + "\tbuidl .\n", `pins.txt:4: unknown directive "buidl"`},
		{"unknown pin option", head + pin("v1.0.0", "series=p/1 revision=1 defualt"), `pins.txt:3: unknown pin option "defualt"`},
		{"duplicate option", head + pin("v1.0.0", "series=p/1 series=p/2 revision=1 default"), "pins.txt:3: option series given twice"},
		{"missing series", head + pin("v1.0.0", "revision=1 default"), "pins.txt:3: pin v1.0.0 has no series= option"},
		{"missing revision", head + pin("v1.0.0", "series=p/1 default"), "pins.txt:3: pin v1.0.0 has no revision= option"},
		{"bad revision", head + pin("v1.0.0", "series=p/1 revision=0 default"), `pins.txt:3: revision "0" must be a whole number`},
		{"bad build tag", head + pin("v1.0.0", "series=p/1 revision=1 tags=ok,not-a-tag default"), `pins.txt:3: tags: "not-a-tag" is not a build tag`},
		{"empty build tag", head + pin("v1.0.0", "series=p/1 revision=1 tags=a,,b default"), `pins.txt:3: tags: "" is not a build tag`},
		{"build tag twice", head + pin("v1.0.0", "series=p/1 revision=1 tags=a,a default"), "pins.txt:3: tags: a given twice"},
		{"short version", head + pin("v1.0", "series=p/1 revision=1 default"), `pins.txt:3: version "v1.0" is not a full semantic version`},
		{"not h1", head + "\tpin v1.0.0 sha256:abc series=p/1 revision=1 default\n", `pins.txt:3: v1.0.0: checksum "sha256:abc" must be an h1: hash`},
		{"short h1", head + "\tpin v1.0.0 h1:YWJj series=p/1 revision=1 default\n", "is not a base64 SHA-256 hash"},
		{"escaping series", head + pin("v1.0.0", "series=../x revision=1 default"), `pins.txt:3: series "../x" must be a clean folder path`},
		{"duplicate version", head + pin("v1.0.0", "series=p/1 revision=1 default") + pin("v1.0.0", "series=p/1 revision=1"), "pins.txt:4: upstream k pins v1.0 twice: v1.0.0 here and v1.0.0 at line 3"},
		{"two pins of a minor", head + pin("v1.0.0", "series=p/1 revision=1 default") + pin("v1.0.1", "series=p/1 revision=1"), "pins.txt:4: upstream k pins v1.0 twice"},
		{"two defaults", head + pin("v1.0.0", "series=p/1 revision=1 default") + pin("v1.1.0", "series=p/1 revision=1 default"), "pins.txt:4: upstream k has a second default pin (the first is v1.0.0 at line 3)"},
		{"no default", head + pin("v1.0.0", "series=p/1 revision=1"), "pins.txt:1: upstream k has no pin marked default"},
		{"no pin", head, "pins.txt:1: upstream k has no pin"},
		{"no build", "upstream k github.com/k/k\n" + pin("v1.0.0", "series=p/1 revision=1 default"), "pins.txt:1: upstream k has no build line"},
		{"duplicate build", head + "\tbuild ./x\n" + pin("v1.0.0", "series=p/1 revision=1 default"), "pins.txt:3: build is already given for upstream k at line 2"},
		{"bad build path", "upstream k github.com/k/k\n\tbuild cmd/x\n" + pin("v1.0.0", "series=p/1 revision=1 default"), `pins.txt:2: build: package "cmd/x" must be "."`},
		{"bad binary name", "upstream k github.com/k/k\n\tbuild ./cmd/x=a/b\n" + pin("v1.0.0", "series=p/1 revision=1 default"), `pins.txt:2: build: binary name "a/b" must match`},
		{"binary name clash", "upstream k github.com/k/k\n\tbuild ./cmd/x ./other/x\n" + pin("v1.0.0", "series=p/1 revision=1 default"), "pins.txt:2: build: ./cmd/x and ./other/x would both be built as x"},
		{"version without vars", head + "\tversion pkg/version\n" + pin("v1.0.0", "series=p/1 revision=1 default"), "pins.txt:3: want `version PKG VAR=FIELD...`"},
		{"version unknown field", head + "\tversion pkg/version gitVersion=tag\n" + pin("v1.0.0", "series=p/1 revision=1 default"), `pins.txt:3: version: gitVersion: unknown field "tag" (fields: version, commit,`},
		{"version var twice", head + "\tversion pkg/version v=version v=commit\n" + pin("v1.0.0", "series=p/1 revision=1 default"), "pins.txt:3: version: v is set twice"},
		{"version bad package", head + "\tversion ./pkg/version v=version\n" + pin("v1.0.0", "series=p/1 revision=1 default"), `pins.txt:3: version: package "./pkg/version" must be a clean path`},
		{"version not a var", head + "\tversion pkg/version 1x=version\n" + pin("v1.0.0", "series=p/1 revision=1 default"), `pins.txt:3: version: "1x=version" must be VAR=FIELD`},
		{"bad carry", head + "\tcarry ../pkg\n" + pin("v1.0.0", "series=p/1 revision=1 default"), `pins.txt:3: carry: library "../pkg" must be a folder name under pkg/`},
		{"carry twice in a line", head + "\tcarry a a\n" + pin("v1.0.0", "series=p/1 revision=1 default"), "pins.txt:3: carry lists a twice"},
		{"duplicate upstream", head + pin("v1.0.0", "series=p/1 revision=1 default") + head + pin("v1.0.0", "series=p/1 revision=1 default"), "pins.txt:4: upstream k is already listed at line 1"},
		{"wrong argument count", "upstream k not a module\n", "pins.txt:1: want `upstream NAME MODULE`, got 4 arguments"},
		{"invalid module", "upstream k Github..com/x\n\tbuild .\n" + pin("v1.0.0", "series=p/1 revision=1 default"), "pins.txt:1: upstream k: malformed module path"},
		{"pin outside upstream", "\tpin v1.0.0 " + sumA + " series=p/1 revision=1 default\n", "pins.txt:1: pin must be indented under an upstream line"},
		{"unindented pin", head + "pin v1.0.0 " + sumA + " series=p/1 revision=1 default\n", "pins.txt:3: pin must be indented under an upstream line"},
		{"indented upstream", "  " + head, "pins.txt:1: upstream must start at the beginning of the line"},
		{"empty", "# nothing\n", "pins.txt: no upstream listed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("pins.txt", []byte(tt.content))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tt.content)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestParseBuildAndVersion(t *testing.T) {
	content := "upstream k github.com/k/worker-operator\n" +
		"\tbuild ./cmd/controller-manager=k-controller-manager ./cmd/search .\n" +
		"\tversion pkg/version gitVersion=version gitCommit=commit buildDate=build-date\n" +
		"\tpin v1.0.0 " + sumA + " series=p/1 revision=1 default\n"
	f, err := Parse("pins.txt", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	u := f.Upstreams[0]
	if got := strings.Join(u.Build, " "); got != "./cmd/controller-manager ./cmd/search ." {
		t.Errorf("Build = %q", got)
	}
	for pkg, want := range map[string]string{"./cmd/controller-manager": "k-controller-manager", "./cmd/search": "search", ".": "worker-operator"} {
		if got := u.BinaryName(pkg); got != want {
			t.Errorf("BinaryName(%s) = %q, want %q", pkg, got, want)
		}
	}
	want := &VersionVars{Package: "pkg/version", Vars: []VersionVar{{"gitVersion", FieldVersion}, {"gitCommit", FieldCommit}, {"buildDate", FieldBuildDate}}}
	if u.Version == nil || u.Version.Package != want.Package || len(u.Version.Vars) != 3 || u.Version.Vars[2] != want.Vars[2] {
		t.Errorf("Version = %+v, want %+v", u.Version, want)
	}
}

func TestParseBoundsErrorCount(t *testing.T) {
	content := strings.Repeat("bogus\n", 100)
	_, err := Parse("pins.txt", []byte(content))
	if err == nil {
		t.Fatal("Parse accepted garbage")
	}
	if n := strings.Count(err.Error(), "\n") + 1; n > maxErrors {
		t.Errorf("got %d errors, want at most %d", n, maxErrors)
	}
}

func TestSetPin(t *testing.T) {
	tests := []struct {
		name         string
		pin          Pin
		wantReplaced string // version of the replaced pin, "" for an added one
		wantLine     string // the line the pin file must now contain
		wantLineNo   int
	}{
		{
			name:         "same minor replaces and keeps default and comment",
			pin:          Pin{Version: "v1.18.3", Sum: sumB, Series: "patches/karmada/1.18", Revision: 1},
			wantReplaced: "v1.18.2",
			wantLine:     "\tpin v1.18.3 " + sumB + " series=patches/karmada/1.18 revision=1 default # trailing",
			wantLineNo:   5,
		},
		{
			name:       "new minor is added after the last pin, not default",
			pin:        Pin{Version: "v1.13.0", Sum: sumB, Series: "patches/karmada/1.16", Revision: 1, Default: true},
			wantLine:   "\tpin v1.13.0 " + sumB + " series=patches/karmada/1.16 revision=1",
			wantLineNo: 7,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, replaced, err := SetPin("pins.txt", []byte(valid), "karmada", tt.pin)
			if err != nil {
				t.Fatalf("SetPin: %v", err)
			}
			if got := ""; replaced != nil {
				got = replaced.Version
				if got != tt.wantReplaced {
					t.Errorf("replaced %s, want %q", got, tt.wantReplaced)
				}
			} else if tt.wantReplaced != "" {
				t.Errorf("replaced nothing, want %s", tt.wantReplaced)
			}
			lines := strings.Split(string(out), "\n")
			if got := lines[tt.wantLineNo-1]; got != tt.wantLine {
				t.Errorf("line %d = %q\nwant %q", tt.wantLineNo, got, tt.wantLine)
			}
			// Exactly one line differs (replace) or was added (add).
			before := strings.Split(valid, "\n")
			changed := len(lines) - len(before)
			for i := 0; i < len(before) && i < len(lines); i++ {
				if replaced != nil && lines[i] != before[i] {
					changed++
				}
			}
			if changed != 1 {
				t.Errorf("SetPin changed %d lines, want 1:\n%s", changed, out)
			}
		})
	}
}

func TestSetPinUnknownUpstream(t *testing.T) {
	_, _, err := SetPin("pins.txt", []byte(valid), "nope", Pin{Version: "v1.0.0", Sum: sumA, Series: "p", Revision: 1})
	if err == nil {
		t.Fatal("SetPin accepted an unknown upstream")
	}
}

// The repository's own pin file must parse and pin what the issue asks for.
func TestRepositoryPinFile(t *testing.T) {
	root, err := toolcache.Root()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Load(filepath.Join(root, FileName))
	if err != nil {
		t.Fatal(err)
	}
	k, err := f.Upstream("karmada")
	if err != nil {
		t.Fatal(err)
	}
	if def, _ := k.Pin(""); def.Version != "v1.18.2" {
		t.Errorf("karmada default = %s, want v1.18.2", def.Version)
	}
	for _, v := range []string{"v1.16.0", "v1.17.1", "v1.18.2"} {
		if _, err := k.Pin(v); err != nil {
			t.Error(err)
		}
	}
	if _, err := f.Upstream("workeroperator"); err != nil {
		t.Error(err)
	}
}

// A pin's build tags (upstream's release build: Karmada 1.17 and 1.18 build
// with kubernetes_protomessage_one_more_release) round-trip through Format,
// and a rebase onto a patch release of the same minor keeps them.
func TestPinTags(t *testing.T) {
	const content = "upstream k github.com/k/k\n\tbuild .\n\tpin v1.0.0 " + sumA + " series=p/1 revision=2 tags=a,b.c default\n"
	f, err := Parse("pins.txt", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	pin := f.Upstreams[0].Pins[0]
	if pin.Tags != "a,b.c" {
		t.Fatalf("tags %q, want a,b.c", pin.Tags)
	}
	if got, want := pin.Format(), "pin v1.0.0 "+sumA+" series=p/1 revision=2 tags=a,b.c default"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	out, _, err := SetPin("pins.txt", []byte(content), "k", Pin{Version: "v1.0.1", Sum: sumB, Series: "p/1", Revision: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "pin v1.0.1 "+sumB+" series=p/1 revision=1 tags=a,b.c default") {
		t.Errorf("a rebase onto v1.0.1 dropped the minor's build tags:\n%s", out)
	}
}
