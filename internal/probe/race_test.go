//go:build race

package probe

// raceEnabled relaxes timing budgets: the race detector slows everything down several times.
const raceEnabled = true
