package toolcache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Key is a cache key for .cache/tools holding tools built by this Go: a
// hash of every tool's stamp, which is what decides whether a cached binary
// is reused. CI keys its cache of the folder with it, so the cache is
// replaced exactly when a binary in it would be rebuilt: a tool's version
// or build definition changed, or the Go toolchain did.
func Key(ctx context.Context, tools []Tool) (string, error) {
	goVersion, err := goEnv(ctx, "GOVERSION")
	if err != nil {
		return "", err
	}
	return key(tools, goVersion), nil
}

func key(tools []Tool, goVersion string) string {
	h := sha256.New()
	for _, t := range tools {
		fmt.Fprintf(h, "%s-%s %s\n", t.Name, t.Version, t.stamp(goVersion))
	}
	return "tools-" + goVersion + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}
