package pins_test

import (
	"fmt"

	"github.com/holdfast-dist/holdfast/internal/pipeline/pins"
)

// A rebase onto a new patch release replaces the pin of its minor: one line
// changes, the default mark and the rest of the file stay.
func ExampleSetPin() {
	file := []byte(`upstream karmada github.com/karmada-io/karmada
	build ./cmd/controller-manager
	pin v1.18.2 h1:B1Eu3055LtTBndD/R2WcaS/bLvGwwVU1/3wXQjkIVN4= series=patches/karmada/1.18 revision=2 default
`)
	out, replaced, err := pins.SetPin("pins.txt", file, "karmada", pins.Pin{
		Version:  "v1.18.1",
		Sum:      "h1:Al+LMpxUA+jujeKtdJV0CxoAXmN6tO52X/f/42QxV+E=",
		Series:   "patches/karmada/1.18",
		Revision: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("replaced", replaced.Version)
	fmt.Print(string(out))
	// Output:
	// replaced v1.18.2
	// upstream karmada github.com/karmada-io/karmada
	// 	build ./cmd/controller-manager
	// 	pin v1.18.1 h1:Al+LMpxUA+jujeKtdJV0CxoAXmN6tO52X/f/42QxV+E= series=patches/karmada/1.18 revision=1 default
}
