package provenance_test

import (
	"fmt"

	"github.com/holdfast-dist/holdfast/internal/pipeline/provenance"
)

// The provenance file of a patched Karmada tree, as the build step reads it.
func ExampleRecord_Marshal() {
	fmt.Print(string(provenance.Record{
		Kind:            provenance.Patched,
		Upstream:        "karmada",
		Module:          "github.com/karmada-io/karmada",
		Version:         "v1.18.2",
		Sum:             "h1:B1Eu3055LtTBndD/R2WcaS/bLvGwwVU1/3wXQjkIVN4=",
		Revision:        1,
		HoldfastVersion: "v1.18.2-holdfast.1",
		Series:          "patches/karmada/1.18",
		SeriesHash:      "h1:ltZeIlRH0Qn6buTGILg3TlcoImHIskfE27tH0PMD02s=",
		Patches:         []string{"0001-membercred-refreshing-token.patch"},
		Carried:         []string{"membercred"},
	}.Marshal()))
	// Output:
	// # Written by holdfast apply: what this tree was made from. Do not edit.
	// kind: patched
	// upstream: karmada
	// module: github.com/karmada-io/karmada
	// version: v1.18.2
	// sum: h1:B1Eu3055LtTBndD/R2WcaS/bLvGwwVU1/3wXQjkIVN4=
	// holdfast-revision: 1
	// holdfast-version: v1.18.2-holdfast.1
	// series: patches/karmada/1.18
	// series-hash: h1:ltZeIlRH0Qn6buTGILg3TlcoImHIskfE27tH0PMD02s=
	// patch: 0001-membercred-refreshing-token.patch
	// carried: membercred
}
