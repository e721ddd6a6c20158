//go:build race

package framework

// raceEnabled: the race detector allocates of its own (TestProtectedPathIsOneAllocation).
const raceEnabled = true
