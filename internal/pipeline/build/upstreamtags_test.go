package build

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// karmadaBuildSh is the go build of Karmada v1.18.2's hack/build.sh.
const karmadaBuildSh = `#!/usr/bin/env bash
# -tags in a comment is not a flag: -tags ignored_in_comment
function build_binary_for_platform() {
  set -x
  CGO_ENABLED=0 GOOS=${os} GOARCH=${arch} go build \
      -tags kubernetes_protomessage_one_more_release \
      -ldflags "${LDFLAGS:-}" \
      -o "_output/bin/${platform}/$target" \
      "${gopkg}"
}
`

func writeBuildSh(t *testing.T, content string) string {
	t.Helper()
	tree := t.TempDir()
	if content == "" {
		return tree
	}
	if err := os.MkdirAll(filepath.Join(tree, "hack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "hack", "build.sh"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return tree
}

func TestUpstreamTags(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         []string
		ok           bool
	}{
		{"karmada v1.18.2", karmadaBuildSh, []string{"kubernetes_protomessage_one_more_release"}, true},
		{"karmada v1.16.0 (no tags)", "go build -ldflags \"${LDFLAGS:-}\" -o x ./cmd/x\n", nil, true},
		{"equals form, quoted, two tags twice", "go build -tags=\"b,a\" ./x\ngo build -tags a,b ./y\n", []string{"a", "b"}, true},
		{"no build script (worker-operator)", "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := UpstreamTags(writeBuildSh(t, tc.script))
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.ok || !slices.Equal(got, tc.want) {
				t.Errorf("UpstreamTags = %v, %t; want %v, %t", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestCheckTagsRefusesAPinWithoutUpstreamsTags: the defect of
// v1.18.2-holdfast.7 (no tags on the pin) is refused with what to write.
func TestCheckTagsRefusesAPinWithoutUpstreamsTags(t *testing.T) {
	tree := writeBuildSh(t, karmadaBuildSh)
	err := checkTags(tree, "karmada", "v1.18.2", "")
	if err == nil {
		t.Fatal("a pin without upstream's tags was accepted")
	}
	for _, want := range []string{"karmada v1.18.2", "hack/build.sh", "kubernetes_protomessage_one_more_release", "tags=\"\""} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if err := checkTags(tree, "karmada", "v1.18.2", "kubernetes_protomessage_one_more_release"); err != nil {
		t.Errorf("the pin with upstream's tags: %v", err)
	}
	if err := checkTags(writeBuildSh(t, ""), "workeroperator", "v1.6.4", ""); err != nil {
		t.Errorf("a tree without a build script: %v", err)
	}
	if err := checkTags(writeBuildSh(t, "go build -o x ./x\n"), "karmada", "v1.16.0", "extra_tag"); err == nil {
		t.Error("a pin with a tag upstream's build does not use was accepted")
	}
}
