//go:build race

package sandbox

// raceBuild: the race detector slows JSON decoding about tenfold (600 MiB of results take a
// minute), so the hostile-interpreter test streams less — still past heapBound.
const raceBuild = true
