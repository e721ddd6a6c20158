//go:build !race

package shared

const raceEnabled = false
