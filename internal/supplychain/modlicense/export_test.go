package modlicense

import (
	"github.com/CycloneDX/cyclonedx-gomod/pkg/licensedetect/local"
	"github.com/rs/zerolog"
)

// RawCycloneDX is cyclonedx-gomod's detector without holdfast's
// corrections, for the test that checks they are still needed.
func RawCycloneDX() Detector {
	d := local.NewDetector(zerolog.Nop())
	return func(module, version, dir string) (Result, error) {
		licenses, err := d.Detect(module, version, dir)
		if err != nil || len(licenses) == 0 {
			return Result{}, err
		}
		return Result{ID: licenses[0].ID}, nil
	}
}
