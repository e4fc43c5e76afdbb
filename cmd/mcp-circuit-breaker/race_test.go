//go:build race

package main

// raceEnabled scales hostile payloads down: the race detector makes the hook's JSON scan several
// times slower, so a payload sized for a plain build would outrun the hook's 2.5 s watchdog and
// test the detector rather than the gate.
const raceEnabled = true
