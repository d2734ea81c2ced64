//go:build !unix

package stage

// lock is a no-op where flock is not available: the build machines and CI
// are Linux, and a second concurrent run there is the only thing it guards.
func lock(string) (func(), error) { return func() {}, nil }
