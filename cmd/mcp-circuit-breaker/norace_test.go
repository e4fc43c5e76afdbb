//go:build !race

package main

// raceEnabled is false in a plain build: hostile payloads keep their full size.
const raceEnabled = false
