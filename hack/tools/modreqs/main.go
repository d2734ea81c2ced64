// Command modreqs answers small questions about `go mod edit -json` and
// `go mod download -json` output for hack/check-compat.sh, so that the script
// needs nothing beyond the Go toolchain (no jq on a fresh machine).
//
// Usage (JSON on standard input):
//
//	modreqs direct        direct requirements, one module path a line
//	modreqs version PATH  the required version of PATH, or nothing
//	modreqs go            the go directive
//	modreqs gomod         the GoMod file of a `go mod download -json` answer
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

type modFile struct {
	Go      string
	Require []struct {
		Path     string
		Version  string
		Indirect bool
	}
	// Fields of `go mod download -json`.
	GoMod string
	Error string
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: modreqs direct|version PATH|go|gomod < json")
	}
	var m modFile
	if err := json.NewDecoder(os.Stdin).Decode(&m); err != nil {
		fail("modreqs: reading JSON from standard input: %v", err)
	}
	switch os.Args[1] {
	case "direct":
		for _, r := range m.Require {
			if !r.Indirect {
				fmt.Println(r.Path)
			}
		}
	case "version":
		if len(os.Args) != 3 {
			fail("usage: modreqs version PATH")
		}
		for _, r := range m.Require {
			if r.Path == os.Args[2] {
				fmt.Println(r.Version)
			}
		}
	case "go":
		fmt.Println(m.Go)
	case "gomod":
		if m.Error != "" {
			fail("modreqs: go mod download: %s", m.Error)
		}
		fmt.Println(m.GoMod)
	default:
		fail("modreqs: unknown question %q", os.Args[1])
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}
