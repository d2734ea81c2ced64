// Package pristine fetches an upstream module version exactly as released and
// proves it is unmodified before anything is laid onto it.
//
// Source arrives through `go mod download -json`, run outside any module, so
// the go command checks the module's h1: against the checksum database on
// every download. No setting may turn that off for a pin: GOSUMDB=off or
// another database, GOPRIVATE/GONOSUMDB/GOINSECURE patterns matching the
// module and GOFLAGS=-insecure are refused by name (checksumdb.go). The
// extracted folder is not checked again on later runs and anyone who can
// write to the cache can change it. So Verify checks two things against the
// pin: the h1: the go command reports, and a fresh hash of the extracted
// folder computed with golang.org/x/mod/sumdb/dirhash (what `go mod verify`
// does). The module cache is only ever read; staging copies it elsewhere.
package pristine
