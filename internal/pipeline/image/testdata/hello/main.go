// Command hello is the small real Go binary internal/pipeline/image's tests put
// in images: it links one module besides the standard library
// (golang.org/x/mod), so its SBOM has something to list.
package main

import (
	"fmt"

	"golang.org/x/mod/semver"
)

func main() { fmt.Println("hello", semver.Canonical("v1.2")) }
