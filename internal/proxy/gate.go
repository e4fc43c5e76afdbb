package proxy

import (
	"io"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// Decider decides a call before it goes (gate.Before) and records its outcome (gate.Success,
// gate.Failure), as the hook does for an agent's events; the answer to a Before event says whether
// the call may go.
type Decider func(ev gate.Event) gate.Answer

// HookGate returns the Decider that runs the hook's own gate (gate.Run) for each event, so that the
// proxy denies, grants trials and records exactly as the hook does. config gives a fresh
// gate.Config for each event (its Project, Getenv, Stderr, Probe, Board, CatchUp): a run marks its
// project for the event's agent, so no project is shared between runs. Its Wire, Stdin, Stdout and
// Exit are the proxy's.
func HookGate(config func() gate.Config) Decider {
	return func(ev gate.Event) gate.Answer {
		w := &oneEvent{ev: ev, answer: make(chan gate.Answer, 1)}
		cfg := config()
		cfg.Wire, cfg.Stdin, cfg.Stdout, cfg.First = w, strings.NewReader("{}"), io.Discard, nil
		// The watchdog answers when the budget runs out and then ends a hook's process: here the
		// answer is taken and the run left to finish on its own.
		cfg.Exit = func(int) {}
		cfg.HandOver = nil
		ran := make(chan struct{})
		go func() {
			defer close(ran)
			gate.Run(cfg)
		}()
		select {
		case a := <-w.answer:
			return a
		case <-ran:
			// A run that answered nothing (an event it does not decide) allows.
			select {
			case a := <-w.answer:
				return a
			default:
				return gate.Answer{}
			}
		}
	}
}

// oneEvent is the proxy's wire for one gate run: the event is already decoded, and the answer is
// kept rather than printed.
type oneEvent struct {
	ev     gate.Event
	answer chan gate.Answer
}

// Decode hands the gate the event the proxy built from the JSON-RPC message.
func (w *oneEvent) Decode(_ io.Reader, _ gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	seen(w.ev)
	return w.ev, nil
}

// Encode keeps the answer for the proxy; the gate gives one answer per run.
func (w *oneEvent) Encode(_ gate.Event, a gate.Answer) gate.Reply {
	select {
	case w.answer <- a:
	default:
	}
	return gate.Reply{}
}
