package agent

// The payload of agents whose post-call event carries the outcome in tool_response rather than
// in an event of its own (Devin CLI: {success, output, error}; Kiro CLI: {success, result}), and
// Crush's, which has no post-call event but the same fields before the call: one reader for them,
// keeping the fields the gate needs and skipping the result's bulk.

import (
	"io"
	"strings"
)

// respondedEvent is such an event, as the agent names its fields.
type respondedEvent struct {
	Name, SessionID, Cwd, TranscriptPath, ToolName, ToolUseID string
	InputHash, InputArgs                                      string
	// Responded is set when the event has a tool_response object; Success is its success flag
	// (false when absent).
	Responded, Success bool
	// Error is tool_response.error, Output the start of its output (Devin) or result (Kiro):
	// the failure's text, when the call failed.
	Error, Output string
}

// readResponded decodes one event; pre names the agent's pre-call event, for which seen is called
// as soon as the tool is known (a post-call event's kind waits for its tool_response, so seen gets
// it when the object ends).
func readResponded(r io.Reader, pre string, seen func(respondedEvent)) (respondedEvent, error) {
	d := newDecoder(r)
	var ev respondedEvent
	field := func(key string) error {
		switch key {
		case "hook_event_name", "hookEventName", "event": // "event": Crush's name of it
			return d.stringInto(&ev.Name, maxName)
		case "session_id", "sessionId":
			return d.stringInto(&ev.SessionID, maxName)
		case "cwd":
			return d.stringInto(&ev.Cwd, 4*maxName)
		case "transcript_path":
			return d.stringInto(&ev.TranscriptPath, 4*maxName)
		case "tool_name":
			return d.stringInto(&ev.ToolName, maxName)
		case "tool_use_id":
			return d.stringInto(&ev.ToolUseID, maxName)
		case "tool_input":
			return d.argsInto(&ev.InputHash, &ev.InputArgs, ev.Name != pre)
		case "tool_response":
			ev.Responded, ev.Success, ev.Error, ev.Output = false, false, "", ""
			c, err := d.nonSpace()
			if err != nil {
				return err
			}
			d.unread()
			if c != '{' {
				return d.skip()
			}
			ev.Responded = true
			return d.object(func(k string) error {
				switch k {
				case "success":
					return d.boolInto(&ev.Success)
				case "error":
					return d.stringInto(&ev.Error, maxError)
				case "output":
					return d.stringInto(&ev.Output, maxError)
				case "result":
					// Kiro: a list of texts (its documentation's example), or a text.
					c, err := d.nonSpace()
					if err != nil {
						return err
					}
					d.unread()
					if c != '[' {
						return d.stringInto(&ev.Output, maxError)
					}
					var parts []string
					err = d.arrayOrSkip(func() error {
						var s string
						if err := d.stringInto(&s, maxError); err != nil {
							return err
						}
						if s != "" && len(strings.Join(parts, "\n")) < maxError {
							parts = append(parts, s)
						}
						return nil
					})
					ev.Output = strings.Join(parts, "\n")
					return err
				}
				return d.skip()
			})
		}
		return d.skip()
	}
	err := d.objectNotify(field, func() {
		if seen != nil && ev.Name == pre && ev.ToolName != "" {
			seen(ev)
			seen = nil
		}
	})
	if err == nil && seen != nil {
		seen(ev)
	}
	return ev, err
}

// failureText is the text of a failed call's tool_response: its error, else its output, else a
// line saying only that it failed.
func (ev respondedEvent) failureText() string {
	for _, s := range []string{ev.Error, ev.Output} {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return "the tool call failed (the agent gave no error text)"
}

// ownDenyMarks begin the deny reasons the gate writes (message.Notice, LoopReason, StreakReason).
var ownDenyMarks = []string{"⚡ CIRCUIT OPEN — ", "⟲ LOOP GUARD — ", "⊘ CALL ERROR STREAK — "}

// ownDeny reports whether a failure's text is one of the gate's deny reasons coming back: an agent
// known from its documents only may report a call its hook denied as a failed one, and our own
// deny must never count.
func ownDeny(text string) bool {
	for _, m := range ownDenyMarks {
		if strings.Contains(text, m) {
			return true
		}
	}
	return false
}
