package build

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Source is what holdfast's own checkout says about a build.
type Source struct {
	// Commit and ShortCommit are holdfast's git commit, "unknown" outside
	// a git checkout (a source tarball).
	Commit, ShortCommit string
	// TreeState is "clean", "dirty" or "unknown".
	TreeState string
	// Date is the build date recorded in binaries.
	Date time.Time
}

// unknown is what Karmada's version package says for an unset field.
const unknown = "unknown"

// ReadSource reads the checkout at root with read-only git commands. The
// date is SOURCE_DATE_EPOCH when set (the reproducible-builds convention),
// else the commit's time, else the Unix epoch: a date that depends only on
// the inputs keeps two builds of the same inputs byte-identical.
func ReadSource(ctx context.Context, root string) (Source, error) {
	s := Source{Commit: unknown, ShortCommit: unknown, TreeState: unknown, Date: time.Unix(0, 0).UTC()}
	git := func(args ...string) (string, bool) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	if commit, ok := git("rev-parse", "HEAD"); ok && commit != "" {
		s.Commit = commit
		s.ShortCommit, _ = git("rev-parse", "--short=12", "HEAD")
		if status, ok := git("status", "--porcelain"); ok {
			s.TreeState = "clean"
			if status != "" {
				s.TreeState = "dirty"
			}
		}
		if ct, ok := git("log", "-1", "--format=%ct", "HEAD"); ok {
			if sec, err := strconv.ParseInt(ct, 10, 64); err == nil {
				s.Date = time.Unix(sec, 0).UTC()
			}
		}
	}
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return Source{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a count of seconds", epoch)
		}
		s.Date = time.Unix(sec, 0).UTC()
	}
	return s, nil
}

// ShortSeriesHash turns an h1: series hash into 12 hex digits (48 bits),
// as short as a git short commit and as easy to compare by eye; the full
// hash is in the tree's HOLDFAST-PROVENANCE.
func ShortSeriesHash(h1 string) string {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(h1, "h1:"))
	if err != nil || len(raw) < 6 {
		return unknown
	}
	return hex.EncodeToString(raw)[:12]
}
