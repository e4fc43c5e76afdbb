package agent

// Gemini CLI's codec: its BeforeTool, AfterTool and SessionStart command hooks (docs/agents.md).

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Gemini is Gemini CLI's codec. Its MCP tools are named mcp_<server>_<tool>, and every event
// carries the real server and tool names in mcp_context, so no name is ambiguous. One event,
// AfterTool, reports a success and a failure alike: a failure has tool_response.error. Gemini CLI
// honours only a top-level "decision" (Claude Code's permissionDecision is ignored there, and the
// call would run).
var Gemini Codec = gemini{}

type gemini struct{}

func (gemini) Name() string { return "gemini" }

func (gemini) Title() string { return "Gemini CLI" }

// geminiMCPMatcher matches every MCP tool name (a regular expression, tested unanchored).
const geminiMCPMatcher = "mcp_.*"

// FormatGeminiSettings is Gemini CLI's settings.json: "hooks" → event → matcher groups → handlers
// whose "command" is a shell command line and whose "timeout" is in milliseconds.
const FormatGeminiSettings = "gemini-settings"

// geminiNaming is how Gemini CLI names an MCP tool when mcp_context is missing.
var geminiNaming = Naming{Prefix: "mcp_", Sep: "_"}

func (gemini) Setup() Setup {
	return Setup{
		Format: FormatGeminiSettings,
		Hooks: []Hook{
			{"BeforeTool", geminiMCPMatcher},
			{"AfterTool", geminiMCPMatcher},
			{"SessionStart", ""},
		},
		Scopes:      []Scope{projectScope(".gemini/settings.json"), userScope("settings.json")},
		HomeDir:     ".gemini",
		Binaries:    []string{"gemini"},
		Timeout:     hookTimeoutMS,
		TimeoutUnit: "ms",
	}
}

// geminiEvent is the part of a Gemini CLI hook event the gate uses, as Gemini CLI names it.
type geminiEvent struct {
	Name           string // hook_event_name
	SessionID      string
	Cwd            string
	TranscriptPath string
	ToolName       string
	Source         string // SessionStart
	// Server and Tool are mcp_context.server_name and mcp_context.tool_name.
	Server, Tool string
	// HasResponse is set by an AfterTool's tool_response; Error is its error.message, which only
	// a failed call has (HasError).
	HasResponse, HasError bool
	Error                 string
	// ArgsHash identifies tool_input, which BeforeTool and AfterTool both carry; ArgsRaw keeps it
	// on AfterTool, which may be a failure (tool_response, which says so, comes after it).
	ArgsHash string
	ArgsRaw  string
}

func (gemini) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	d := newDecoder(r)
	var ev geminiEvent
	notified := seen == nil
	err := d.objectNotify(func(key string) error {
		switch key {
		case "hook_event_name":
			return d.stringInto(&ev.Name, maxName)
		case "session_id":
			return d.stringInto(&ev.SessionID, maxName)
		case "cwd":
			return d.stringInto(&ev.Cwd, 4*maxName)
		case "transcript_path":
			return d.stringInto(&ev.TranscriptPath, 4*maxName)
		case "tool_name":
			return d.stringInto(&ev.ToolName, maxName)
		case "source":
			return d.stringInto(&ev.Source, maxName)
		case "tool_input":
			return d.argsInto(&ev.ArgsHash, &ev.ArgsRaw, ev.Name != "BeforeTool")
		case "mcp_context":
			ev.Server, ev.Tool = "", ""
			return d.objectOrSkip(func(k string) error {
				switch k {
				case "server_name":
					return d.stringInto(&ev.Server, maxName)
				case "tool_name":
					return d.stringInto(&ev.Tool, maxName)
				}
				return d.skip()
			})
		case "tool_response":
			ev.HasResponse, ev.HasError, ev.Error = true, false, ""
			return d.objectOrSkip(func(k string) error {
				if k != "error" {
					return d.skip()
				}
				c, err := d.nonSpace()
				if err != nil {
					return err
				}
				d.unread()
				if c == 'n' {
					return d.skip() // "error": null is no error
				}
				ev.HasError = true
				return d.objectOrSkip(func(k string) error {
					if k == "message" {
						return d.stringInto(&ev.Error, maxError)
					}
					return d.skip()
				})
			})
		}
		return d.skip()
	}, func() {
		if !notified && ev.Name == "BeforeTool" && (ev.Server != "" && ev.Tool != "" || geminiPlainName(ev.ToolName)) {
			// mcp_context comes after tool_input, which may be large: a name that splits only one
			// way decides at once.
			seen(ev.event(servers))
			notified = true
		}
	})
	return ev.event(servers), err
}

// event is ev in the gate's terms.
func (ev geminiEvent) event(servers gate.Servers) gate.Event {
	out := gate.Event{Agent: "gemini", Hook: ev.Name, Tool: ev.ToolName, ArgsHash: ev.ArgsHash, SessionID: ev.SessionID,
		Cwd: ev.Cwd, TranscriptPath: ev.TranscriptPath, Source: ev.Source}
	switch ev.Name {
	case "BeforeTool":
		out.Kind = gate.Before
	case "AfterTool":
		out.Kind = gate.Success
		if ev.HasError {
			out.Kind = gate.Failure
			out.Args = failureArgs(gate.Failure, ev.ArgsRaw)
			out.Error = geminiError(ev.Error)
			if out.Error == "" {
				out.Error = "the tool call failed (Gemini CLI gave no message)"
			}
		}
	case "SessionStart":
		out.Kind = gate.SessionStart
		return out
	default:
		return out
	}
	switch {
	case ev.Server != "" && ev.Tool != "":
		// The real names, as the server and Gemini CLI's MCP configuration spell them.
		out.Key, out.Server = string(ledger.NameKey(ev.Server, ev.Tool)), ev.Server
	default:
		if rs, ok := CanonicalReadings(ev.ToolName, geminiNaming, servers); ok {
			applyReadings(&out, rs, "")
		}
	}
	return out
}

// geminiPlainName reports whether name is mcp_<server>_<tool> with one "_" after the prefix, so
// that it splits into server and tool only one way.
func geminiPlainName(name string) bool {
	rest, ok := strings.CutPrefix(name, geminiNaming.Prefix)
	return ok && strings.Count(rest, "_") == 1 && !strings.HasPrefix(rest, "_") && !strings.HasSuffix(rest, "_")
}

// geminiError is the server's own text inside Gemini CLI's failure message, which wraps it as
// "MCP tool 't' reported tool error for function call: {…} with response: [{"functionResponse":
// {…,"response":{"content":[…],"isError":true}}}]" (an isError result) or with
// "response":{"error":{"message":"MCP error -32603: …"}} (a JSON-RPC error, a timeout, a dead
// connection). The whole message when it has no such tail.
func geminiError(msg string) string {
	const marker = " with response: "
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return msg
	}
	var parts []struct {
		FunctionResponse struct {
			Response struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				Error *struct {
					Message string `json:"message"`
				} `json:"error"`
			} `json:"response"`
		} `json:"functionResponse"`
	}
	if json.Unmarshal([]byte(msg[i+len(marker):]), &parts) != nil {
		return msg
	}
	var texts []string
	for _, p := range parts {
		r := p.FunctionResponse.Response
		if r.Error != nil && r.Error.Message != "" {
			texts = append(texts, r.Error.Message)
		}
		for _, c := range r.Content {
			if c.Type == "text" && c.Text != "" {
				texts = append(texts, c.Text)
			}
		}
	}
	if len(texts) == 0 {
		return msg
	}
	return strings.Join(texts, "\n")
}

// geminiAnswer is what a Gemini CLI hook prints on stdout. "decision": "deny" with a reason blocks
// a BeforeTool call (the model reads "Tool execution blocked: <reason>") and, on an AfterTool,
// replaces what the model reads of the result with the reason.
type geminiAnswer struct {
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	HookSpecificOutput *geminiSpecific `json:"hookSpecificOutput,omitempty"`
	SystemMessage      string          `json:"systemMessage,omitempty"`
}

type geminiSpecific struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// GeminiFailedPrefix starts the reason that replaces a failed result for Gemini CLI: the server's
// error follows it, quoted.
const GeminiFailedPrefix = "The tool failed. Its error, quoted from the server: "

// geminiErrorShown bounds the server's error in that reason, in characters.
const geminiErrorShown = 4000

func (gemini) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	out := geminiAnswer{SystemMessage: a.Notice}
	switch {
	case a.Deny:
		out.Decision, out.Reason = "deny", a.Reason
	case a.Context != "" && ev.Kind == gate.Failure:
		// Gemini CLI drops additionalContext from a failed result, so the model would never read
		// the step-2 message or the trip: the answer replaces the result with the server's error
		// followed by it. The error is the server's words inside our reason, so it is quoted,
		// attributed and redacted, never spliced in as if we said it.
		out.Decision, out.Reason = "deny", GeminiFailedPrefix+redact.QuoteData(ev.Error, geminiErrorShown)+"\n\n"+a.Context
	case a.Context != "":
		// Read on a successful AfterTool (appended to the result) and at SessionStart (put before
		// the prompt); Gemini CLI shows the model nothing of a BeforeTool's context.
		name := ev.Hook
		if name == "" {
			name = "AfterTool"
		}
		out.HookSpecificOutput = &geminiSpecific{HookEventName: name, AdditionalContext: a.Context}
	}
	if out == (geminiAnswer{}) {
		return gate.Reply{}
	}
	return gate.Reply{Stdout: encodeJSON(out)}
}
