// Package lint holds Weir's architecture checks. They run as Go tests
// (lint_test.go), so `go test ./...` fails when a package imports against
// the layering in docs/DESIGN.md.
package lint
