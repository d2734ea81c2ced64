package build

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A binary's build information names its main module and version; built in
// a plain folder the go command records "(devel)", which scanners match
// against nothing (govulncheck's binary mode skips it, Trivy and Grype find
// no package). Since Go 1.24 the go command records instead the version a
// git checkout's tags give the commit being built, by the module rules:
// the tag itself on a tagged commit, else the pseudo-version of a commit
// after the newest tag below it, vX.Y.(Z+1)-0.<commit time>-<commit>.
//
// stampedCheckout gives the go command that history. It hard-links the
// tree into a new folder (the go command only reads sources; a copy where
// links are impossible) and commits it there with fixed names and dates:
//
//   - pristine: one commit tagged with the upstream version, so the binary
//     records exactly it (v1.18.2), as `go install MODULE/cmd/x@v1.18.2`
//     would;
//   - patched: an empty commit tagged with the upstream version, then the
//     tree, so the binary records v1.18.3-0.<build date>-<commit>: a
//     pre-release of the next patch version, which sorts after v1.18.2 and
//     before v1.18.3 and v1.19.0 in semantic-version order (the order
//     govulncheck, Trivy and Grype compare versions in). An advisory fixed
//     in v1.18.2 or earlier is not reported; one fixed in v1.18.3 or
//     later is, unless the series fixes it (the VEX says so).
//
// The build date (SOURCE_DATE_EPOCH or holdfast's commit time) is the
// commit time, and the content decides the rest: the same inputs give the
// same commit, version and vcs.revision, so builds stay byte-identical.
// vcs.revision names that synthetic commit (a hash of the tree's content
// and the upstream tag), not an upstream or holdfast commit.
func stampedCheckout(ctx context.Context, tree, parent, tag string, patched bool, date time.Time, message string) (string, error) {
	dir, err := os.MkdirTemp(parent, ".src-")
	if err != nil {
		return "", err
	}
	if err := linkTree(tree, dir); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("linking %s into %s: %w", tree, dir, err)
	}
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir, cmd.Env = dir, gitEnv(date)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("git %s in a checkout of %s: %v: %s", strings.Join(args, " "), tree, err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	steps := [][]string{{"init", "-q", "--template=", "."}}
	if patched {
		steps = append(steps,
			[]string{"commit", "-q", "--no-verify", "--allow-empty", "-m", "upstream " + tag},
			[]string{"tag", tag},
			[]string{"add", "-A", "-f", "."},
			[]string{"commit", "-q", "--no-verify", "-m", message})
	} else {
		steps = append(steps,
			[]string{"add", "-A", "-f", "."},
			[]string{"commit", "-q", "--no-verify", "-m", message},
			[]string{"tag", tag})
	}
	for _, s := range steps {
		if err := git(s...); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// gitEnv keeps the user's and the system's git configuration (hooks,
// signing, templates, autocrlf) out of the commits: only the fixed
// identity and date below decide them.
func gitEnv(date time.Time) []string {
	if date.Before(time.Unix(0, 0)) {
		// An unset date (the zero time) is the epoch, as ReadSource's
		// fallback: git refuses dates before 1970.
		date = time.Unix(0, 0)
	}
	when := "@" + strconv.FormatInt(date.Unix(), 10) + " +0000"
	env := withoutKeys(os.Environ(), "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
	return append(env,
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=holdfast", "GIT_AUTHOR_EMAIL=build@holdfast.invalid", "GIT_AUTHOR_DATE="+when,
		"GIT_COMMITTER_NAME=holdfast", "GIT_COMMITTER_EMAIL=build@holdfast.invalid", "GIT_COMMITTER_DATE="+when,
	)
}

// linkTree recreates src's folders under dst and hard-links its files,
// copying where a link fails (another file system). A .git in the tree
// would be another repository's history: trees have none, and one is
// refused rather than followed.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if path == dst {
			// The output folder may lie inside the tree (--bin DIR in it):
			// the checkout must not copy itself.
			return filepath.SkipDir
		}
		if d.Name() == ".git" {
			return fmt.Errorf("%s: a tree holds no .git", path)
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if rel == "." {
				return nil
			}
			return os.Mkdir(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			if os.Link(path, target) == nil {
				return nil
			}
			return copyFile(path, target)
		}
		return fmt.Errorf("%s: not a file, folder or symlink", path)
	})
}

func copyFile(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
