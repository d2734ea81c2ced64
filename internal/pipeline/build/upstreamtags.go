package build

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// releaseBuildScript is where an upstream tree keeps its release build's
// go build line (Karmada's hack/build.sh); a tree without one declares no
// tags holdfast can check.
const releaseBuildScript = "hack/build.sh"

// tagsFlag is a -tags flag in a shell script: -tags a,b or -tags=a,b,
// quoted or not.
var tagsFlag = regexp.MustCompile(`(?:^|\s)-tags[ =]["']?([A-Za-z0-9_.,]+)["']?`)

// UpstreamTags returns the build tags tree's release build script passes
// to go build (sorted, each once), and whether the tree has such a script.
// Holdfast must build with the same tags: without Karmada's
// kubernetes_protomessage_one_more_release the scheduler estimator panics
// on its first gRPC request.
func UpstreamTags(tree string) (tags []string, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(tree, releaseBuildScript))
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, m := range tagsFlag.FindAllStringSubmatch(line, -1) {
			for t := range strings.SplitSeq(m[1], ",") {
				if t != "" && !slices.Contains(tags, t) {
					tags = append(tags, t)
				}
			}
		}
	}
	slices.Sort(tags)
	return tags, true, nil
}

// checkTags refuses a build whose pin's tags are not those of the tree's
// release build script, naming both and what to write in pins.txt.
func checkTags(tree, name, version, pinTags string) error {
	want, ok, err := UpstreamTags(tree)
	if err != nil || !ok {
		return err
	}
	var got []string
	for t := range strings.SplitSeq(pinTags, ",") {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(got, t) {
			got = append(got, t)
		}
	}
	slices.Sort(got)
	if slices.Equal(got, want) {
		return nil
	}
	return fmt.Errorf("%s %s: the tree's %s builds with -tags %q, but pins.txt's pin has tags=%q: set tags=%s on the pin, or the binaries differ from upstream's release build",
		name, version, releaseBuildScript, strings.Join(want, ","), pinTags, strings.Join(want, ","))
}
