// Package lint holds repository-wide checks that run as tests: they read the source tree, not a
// package's API.
package lint
