package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/filelock"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// cmdPadLedger appends to the ledger FILE about SIZE bytes of CLOSED successes of other servers
// (mcp__s0__t … mcp__s49__t), none of them a transition, as a long stretch of ordinary calls
// would: padledger FILE SIZE. It writes the file directly, as a fast stand-in for those calls'
// appends: what the gate's own appends would add to the trip index for them is nothing.
func cmdPadLedger(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: padledger FILE SIZE")
	}
	size, err := strconv.Atoi(args[1])
	ts.Check(err)
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var data []byte
	for i := 0; len(data) < size; i++ {
		data = ledger.AppendEncoded(data, ledger.Entry{Tool: fmt.Sprintf("mcp__s%d__t", i%50), State: ledger.Closed,
			Event: ledger.EventSuccess, At: t0.Add(time.Duration(i) * time.Second), Source: ledger.SourceHook})
	}
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	ts.Check(err)
	_, err = f.Write(data)
	ts.Check(err)
	ts.Check(f.Close())
}

// cmdWaitCatchUp waits (at most 2 minutes) until no catch-up runs in the state directory DIR: the
// catch-up's lock free and no provisional snapshot, for a quarter of a second on end (a hook out
// of its budget may exit before it starts one, or start one that takes the lock a moment later):
// waitcatchup DIR. A script waits for it before it changes what a catch-up reads, and before it ends.
func cmdWaitCatchUp(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitcatchup DIR")
	}
	dir := ts.MkAbs(args[0])
	quiet := 0
	for deadline := time.Now().Add(2 * time.Minute); quiet < 12; {
		_, provErr := os.Stat(filepath.Join(dir, states.ProvisionalName))
		free := true
		if unlock, ok, err := filelock.TryExclusive(filepath.Join(dir, ".state.catchup.lock")); err == nil {
			if ok {
				unlock()
			}
			free = ok
		}
		if free && os.IsNotExist(provErr) {
			quiet++
		} else {
			quiet = 0
		}
		if time.Now().After(deadline) {
			ts.Fatalf("a catch-up in %s still runs after 2 minutes", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
