package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/e2e/scale"
	"github.com/holdfast-dist/holdfast/internal/toolcache"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "scale-report:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("scale-report", flag.ContinueOnError)
	dir := fs.String("dir", "", "the folder holding scale.json (default: _output/reports of the repository)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		root, err := toolcache.Root()
		if err != nil {
			return err
		}
		*dir = filepath.Join(root, "_output", "reports")
	}
	path := filepath.Join(*dir, "scale.json")
	r, err := scale.ReadReport(path)
	if os.IsNotExist(err) {
		return fmt.Errorf("no %s: run make scale first", path)
	}
	if err != nil {
		return err
	}
	r.Judge()
	if err := r.Write(*dir); err != nil {
		return err
	}
	fmt.Println(filepath.Join(*dir, "scale.md"))
	return nil
}
