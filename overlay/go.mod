// This go.mod only fences overlay/ off from holdfast's own module: the glue
// files here compile inside upstream trees (they import upstream packages),
// never in this repository, so `go build ./...` and `go vet ./...` at the
// root must not see them. holdfast apply copies overlay/<upstream>/, not
// this file. They are still gofmt-checked (make fmt-check).
module github.com/holdfast-dist/holdfast/overlay

go 1.25.0
