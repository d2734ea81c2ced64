// Package stage builds an output tree so that it is either finished or
// absent: never half-built, and never silently stale.
//
// The tree is built in a temporary folder beside its destination (same file
// system, so the final os.Rename is atomic), stamped with the key of its
// inputs and a dirhash of its content, and renamed into place last. A run
// that fails or is killed leaves at most a hidden .partial folder, which the
// next run removes. An existing tree is reused only when its stamp matches
// the key and its content still hashes to the stamp, so an edited tree is
// rebuilt rather than trusted. Concurrent runs on one destination are
// serialised with an advisory lock (flock) on a file beside it.
package stage
