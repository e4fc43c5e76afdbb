//go:build !unix

package main

import (
	"os/exec"

	"github.com/rogpeppe/go-internal/testscript"
)

func ownGroup(*exec.Cmd) {}

// cmdMkfifo skips the script: there are no named pipes in the file system here.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("mkfifo: no named pipes on this system (guard the script with [!unix] skip)")
}
