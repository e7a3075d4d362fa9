//go:build !race

package e2b

const raceBuild = false
