package main

import (
	"context"
	"errors"
	"fmt"
)

// runPins verifies every pin (or one upstream's): the pristine source
// downloads and hashes to the pin, and the series folder parses.
func runPins(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "verify" {
		return fmt.Errorf("%w: want `pins verify`", errUsage)
	}
	fs := e.flags("pins verify")
	only := fs.String("upstream", "", "verify only this upstream")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	f, err := e.pinFile()
	if err != nil {
		return err
	}
	c := e.config("")
	var failed []error
	checked := 0
	for _, up := range f.Upstreams {
		if *only != "" && up.Name != *only {
			continue
		}
		for _, pin := range up.Pins {
			checked++
			in, err := c.LoadInputs(up, pin.Series)
			if err == nil {
				_, err = c.Download.Fetch(ctx, up.Module, pin.Version, pin.Sum)
			}
			if err != nil {
				failed = append(failed, err)
				fmt.Fprintf(e.stdout, "FAIL %s %s\n", up.Name, pin.Version)
				continue
			}
			fmt.Fprintf(e.stdout, "ok   %s %s %s (series %s: %d patches)\n", up.Name, pin.Version, pin.Sum, pin.Series, len(in.Series))
		}
	}
	if checked == 0 {
		_, err := f.Upstream(*only)
		return err
	}
	return errors.Join(failed...)
}
