package pristine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/mod/module"
)

// DefaultChecksumDB is the checksum database pins are checked against: the
// go command's own default, whose key the go command carries.
const DefaultChecksumDB = "sum.golang.org"

// sumGolangOrgKey is sum.golang.org's verifier key as the go command knows
// it: GOSUMDB may spell the database with it.
const sumGolangOrgKey = "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ey18htu2OtTxYcF3oSX"

// checkedSettings are the go command settings that decide whether a
// download is checked against the checksum database, read as the go command
// resolves them: the environment first, then the go env file (`go env -w`).
var checkedSettings = []string{"GOSUMDB", "GOPRIVATE", "GONOSUMDB", "GOINSECURE", "GOFLAGS"}

// ModuleEnv returns the go command's environment for fetching path from
// dir (a `go get` in a tree): the pins' rules, so a dependency override is
// checked against the same checksum database a pin is, and refused under
// the same settings.
func (d Downloader) ModuleEnv(ctx context.Context, dir, path string) ([]string, error) {
	goCmd := d.Go
	if goCmd == "" {
		goCmd = "go"
	}
	if d.ChecksumDB == "off" {
		return nil, fmt.Errorf("fetching %s: the checksum database cannot be turned off", path)
	}
	return d.checksumEnv(ctx, goCmd, dir, path, append(append(os.Environ(), "GOWORK=off"), d.Env...))
}

// checksumEnv returns the go command's environment for downloading path:
// env with GOSUMDB set explicitly to the database pins are checked against.
// It refuses, naming the variable and its value, any setting that would
// have the go command skip or weaken that check for path: GOSUMDB off or
// another database, GOPRIVATE or GONOSUMDB patterns that match path (either
// skips the database), GOINSECURE patterns that match it and -insecure in
// GOFLAGS (neither skips the database in today's go command, but a pin has
// no business being fetched insecurely). Refusing rather than overriding
// keeps the user's intent visible: a setting they rely on elsewhere is
// named, not silently ignored.
func (d Downloader) checksumEnv(ctx context.Context, goCmd, dir, path string, env []string) ([]string, error) {
	cmd := exec.CommandContext(ctx, goCmd, append([]string{"env", "-json"}, checkedSettings...)...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go env: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var set map[string]string
	if err := json.Unmarshal(stdout.Bytes(), &set); err != nil {
		return nil, fmt.Errorf("go env: reading its JSON answer: %v", err)
	}
	refuse := func(name, why string) error {
		return fmt.Errorf("%s=%s %s for %s; pins are only fetched with the checksum database (%s) consulted: unset it for holdfast (and `go env -u %s` if `go env -w` set it)",
			name, set[name], why, path, DefaultChecksumDB, name)
	}
	db := d.ChecksumDB
	if db == "" {
		db = DefaultChecksumDB
	}
	switch sumdb := set["GOSUMDB"]; {
	case sumdb == "off":
		return nil, refuse("GOSUMDB", "turns the checksum database off")
	case d.ChecksumDB == "" && isSumGolangOrg(sumdb):
		// The user's spelling stays: it may name a mirror of sum.golang.org,
		// which the go command still checks with sum.golang.org's key.
		db = sumdb
	case sumdb != DefaultChecksumDB && sumdb != db:
		return nil, refuse("GOSUMDB", "names another checksum database than "+DefaultChecksumDB)
	}
	for _, name := range []string{"GOPRIVATE", "GONOSUMDB"} {
		if module.MatchPrefixPatterns(set[name], path) {
			return nil, refuse(name, "skips the checksum database")
		}
	}
	if module.MatchPrefixPatterns(set["GOINSECURE"], path) {
		return nil, refuse("GOINSECURE", "allows fetching it insecurely")
	}
	for _, f := range strings.Fields(set["GOFLAGS"]) {
		if name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "="); name == "insecure" {
			return nil, refuse("GOFLAGS", "asks for insecure fetches")
		}
	}
	return append(env, "GOSUMDB="+db), nil
}

// isSumGolangOrg reports whether a GOSUMDB value names sum.golang.org with
// the key the go command carries for it, at its own URL or a mirror's.
func isSumGolangOrg(v string) bool {
	name, _, _ := strings.Cut(v, " ")
	return name == DefaultChecksumDB || name == sumGolangOrgKey
}
