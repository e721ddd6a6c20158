//go:build race

package shared

// raceEnabled: see TestFollowsThroughFaults.
const raceEnabled = true
