// Package modproxytest serves synthetic Go modules to the go command in
// tests, through a file:// GOPROXY folder and a private module cache, so that
// the pipeline's real `go mod download -json` path is exercised without a
// network. Modules are zipped with golang.org/x/mod/zip, the code the go
// command itself uses, so their h1: hashes are real ones.
package modproxytest
