// Package logtail reads the last lines of a log file, so that an error about
// a failed build or a component that would not start can quote what the
// component said instead of only naming the file.
package logtail
