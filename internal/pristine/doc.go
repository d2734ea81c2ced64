// Package pristine fetches an upstream module version exactly as released and
// proves it is unmodified before anything is laid onto it.
//
// Source arrives through `go mod download -json`, so the go command checks
// the module zip against the checksum database (GOSUMDB) on first download.
// That check happens once, when the zip is extracted into the module cache;
// the extracted folder is not checked again on later runs and anyone who can
// write to the cache can change it. So Verify checks two things against the
// pin: the h1: the go command reports, and a fresh hash of the extracted
// folder computed with golang.org/x/mod/sumdb/dirhash (what `go mod verify`
// does). The module cache is only ever read; staging copies it elsewhere.
package pristine
