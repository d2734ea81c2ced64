package logtail

import (
	"io"
	"os"
	"strings"
)

// maxRead bounds how much of a log is read: the last lines of a
// kube-apiserver log are rarely longer than a few hundred bytes each, and a
// log of a long run can be many megabytes.
const maxRead = 64 << 10

// Last returns the last n lines of the file at path, indented for quoting
// inside an error message, or a note saying why there is nothing to quote.
func Last(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "    (no log: " + err.Error() + ")"
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "    (log unreadable: " + err.Error() + ")"
	}
	off := max(fi.Size()-maxRead, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return "    (log unreadable: " + err.Error() + ")"
	}
	return Lines(string(data), n)
}

// Lines returns the last n non-empty lines of s, each indented by four
// spaces.
func Lines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return "    (log is empty)"
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}
