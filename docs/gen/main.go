// Command gen rewrites the generated sections of the documentation from
// the files they describe (package docs): `make docs`.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/holdfast-dist/holdfast/docs"
)

func main() {
	root := flag.String("root", ".", "the holdfast repository")
	flag.Parse()
	if err := run(context.Background(), *root); err != nil {
		fmt.Fprintln(os.Stderr, "docs:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, root string) error {
	for _, s := range docs.Sections {
		current, generated, err := docs.Generate(ctx, root, s)
		if err != nil {
			return err
		}
		if bytes.Equal(current, generated) {
			fmt.Printf("%s: section %s unchanged\n", s.Page, s.Name)
			continue
		}
		path := filepath.Join(root, filepath.FromSlash(s.Page))
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, generated, 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return err
		}
		fmt.Printf("%s: section %s rewritten\n", s.Page, s.Name)
	}
	return nil
}
