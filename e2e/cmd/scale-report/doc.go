// Command scale-report judges _output/reports/scale.json again and
// renders scale.md from it, with the charts scale.md links beside it
// (scale-p99.svg, scale-requests.svg; `make scale-report`): after a change of the
// targets' rules (e2e/scale's verdicts) or of the report's layout, the
// figures of the last `make scale` are read again without measuring again,
// which takes the better part of an hour.
package main
