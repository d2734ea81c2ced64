// Command hooktools stands in for the two programs of upstream's cfssl
// image that Karmada's chart scripts call and busybox lacks: `openssl req`
// (the pre-install job makes its two CAs with it) and `curl` (the
// karmada-apiserver's init container polls etcd with it). It is one
// static binary installed under both names; argv[0] picks the program.
//
// Each implements only the command line the chart's scripts use and
// refuses anything else by name, so that a rebase whose scripts call them
// differently fails at once instead of doing something else.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	var err error
	code := 1
	switch name := filepath.Base(os.Args[0]); name {
	case "openssl":
		err = openssl(os.Args[1:])
	case "curl":
		code, err = curl(os.Args[1:])
	default:
		err = fmt.Errorf("hooktools: called as %q; install it as openssl or curl", name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(code)
	}
}
