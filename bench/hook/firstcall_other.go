//go:build !unix

package main

import "errors"

// runnerEnv marks this program re-run as a small runner (unix only, like the ledger lock).
const runnerEnv = "MCB_BENCH_RUNNER"

// firstCalls needs the peak RSS of a child, which only unix rusage gives.
func firstCalls(hook, home, work, sizes string) error {
	return errors.New("-first: unix only (the ledger lock and peak RSS need it)")
}

func runner(string) {}

func firstAtOnce(map[string]string, string, string, string, int, string, bool) error {
	return errors.New("-first-at-once: unix only")
}
