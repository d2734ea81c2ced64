// Package modproxytest serves synthetic Go modules to the go command in
// tests, through a file:// GOPROXY folder and a private module cache, so that
// the pipeline's real `go mod download -json` path is exercised without a
// network. Modules are zipped with golang.org/x/mod/zip, the code the go
// command itself uses, so their h1: hashes are real ones, and a checksum
// database on 127.0.0.1 (golang.org/x/mod/sumdb's server, signed with a key
// made per Proxy) vouches for them, so the go command's own verification
// runs as it does against sum.golang.org; Tamper makes the proxy serve
// something the database does not vouch for.
package modproxytest
