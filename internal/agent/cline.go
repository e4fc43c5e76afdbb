package agent

// Cline's codec: the events of the gate's Cline plugin (plugin/cline/mcp-circuit-breaker.js), which
// runs inside Cline and hands each of its hooks to the hook binary (docs/agents.md).

import (
	"crypto/sha1"
	"encoding/hex"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Cline is Cline's codec. Cline's own file hooks cannot deny one call (their only deny ends the
// whole run, and the model never reads why), so the gate runs as a Cline plugin: its beforeTool
// returns {skip, reason}, which skips that one call and gives the model the reason as the tool's
// error. The plugin sends the binary the hook's context as JSON (below) and returns its answer.
// MCP tools are named <server>__<tool>; a failure is an afterTool whose result is an error
// (result.isError) or an MCP isError result (result.output.isError). The plugin never forwards
// the afterTool of a call it skipped itself.
//
// The plugin's event:
//
//	{"hook": "beforeTool" | "afterTool" | "beforeRun", "cwd": DIR, "conversationId": ID,
//	 "toolCall": {"toolCallId": ID, "toolName": NAME}, "result": {"output": …, "isError": BOOL},
//	 "durationMs": N}
var Cline Codec = cline{}

type cline struct {
	// getenv is the environment the gate obeys (gate.Environ); nil reads no user configuration.
	getenv func(string) string
}

// WithGetenv binds the codec to the gate's environment, for Cline's MCP settings.
func (cline) WithGetenv(getenv func(string) string) gate.Wire { return cline{getenv: getenv} }

func (cline) Name() string { return "cline" }

func (cline) Title() string { return "Cline" }

// FormatClinePlugin is a Cline plugin file: install copies the gate's plugin into a plugins
// directory.
const FormatClinePlugin = "cline-plugin"

// clineNaming is how Cline names an MCP tool: <server>__<tool>, with no prefix.
var clineNaming = Naming{Sep: "__"}

func (cline) Setup() Setup {
	return Setup{
		Format:       FormatClinePlugin,
		Hooks:        []Hook{{"beforeTool", ""}, {"afterTool", ""}, {"beforeRun", ""}},
		Scopes:       []Scope{userScope("plugins/mcp-circuit-breaker.js"), projectScope(".cline/plugins/mcp-circuit-breaker.js")},
		ConfigDirEnv: "CLINE_DIR",
		HomeDir:      ".cline",
		Binaries:     []string{"cline"},
		// The plugin's own limit on the hook process, under Cline's 3 s for a plugin hook.
		Timeout:     2900,
		TimeoutUnit: "ms",
	}
}

// clineEvent is the part of the plugin's event the gate uses.
type clineEvent struct {
	Hook, Cwd, Conversation string
	CallID, ToolName        string
	// ArgsHash identifies toolCall.input, which the plugin sends on beforeTool and afterTool;
	// ArgsRaw keeps it on afterTool, which may be a failure.
	ArgsHash   string
	ArgsRaw    string
	DurationMS float64
	out        toolOutput
}

func (cline) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	d := newDecoder(r)
	var ev clineEvent
	err := d.objectNotify(func(key string) error {
		switch key {
		case "hook":
			return d.stringInto(&ev.Hook, maxName)
		case "cwd":
			return d.stringInto(&ev.Cwd, 4*maxName)
		case "conversationId":
			return d.stringInto(&ev.Conversation, maxName)
		case "toolCall":
			ev.CallID, ev.ToolName = "", ""
			return d.objectOrSkip(func(k string) error {
				switch k {
				case "toolCallId":
					return d.stringInto(&ev.CallID, maxName)
				case "toolName":
					return d.stringInto(&ev.ToolName, maxName)
				case "input":
					return d.argsInto(&ev.ArgsHash, &ev.ArgsRaw, ev.Hook != "beforeTool")
				}
				return d.skip()
			})
		case "result":
			ev.out = toolOutput{}
			return d.objectOrSkip(func(k string) error {
				switch k {
				case "isError":
					return d.boolInto(&ev.out.Failed)
				case "output":
					return d.toolOutput(&ev.out)
				}
				return d.skip()
			})
		case "durationMs":
			return d.numberInto(&ev.DurationMS)
		}
		return d.skip()
	}, func() {
		if seen != nil && ev.Hook == "beforeTool" && ev.ToolName != "" {
			seen(ev.event(servers))
			seen = nil
		}
	})
	return ev.event(servers), err
}

// event is ev in the gate's terms.
func (ev clineEvent) event(servers gate.Servers) gate.Event {
	out := gate.Event{Agent: "cline", Hook: ev.Hook, Tool: ev.ToolName, ToolUseID: ev.CallID, ArgsHash: ev.ArgsHash,
		SessionID: ev.Conversation, Cwd: ev.Cwd, Duration: time.Duration(ev.DurationMS * float64(time.Millisecond))}
	switch ev.Hook {
	case "beforeRun":
		out.Kind, out.Source = gate.SessionStart, "startup"
		return out
	case "beforeTool":
		out.Kind = gate.Before
	case "afterTool":
		out.Kind = gate.Success
		if ev.out.failed() {
			out.Kind, out.Error = gate.Failure, ev.out.text("the tool call failed (Cline gave no message)")
			out.Args = failureArgs(gate.Failure, ev.ArgsRaw)
		}
	default:
		return out
	}
	out.Key, out.Server = clineKey(ev.ToolName, servers)
	return out
}

// clineHashed is how Cline names the tools of a server whose name it must change ("fix.v2" has
// fix_v2__echo_<8 hex of sha1("fix.v2__echo")>): Cline 3.0.65's MCP tool naming, read in its
// @cline/core.
var clineHashed = hashedNaming{
	join: func(server, tool string) string { return server + "__" + tool },
	// Every run of characters outside [A-Za-z0-9_-] is one "_".
	sanitize: func(s string) string {
		var b strings.Builder
		bad := false
		for _, r := range s {
			if r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				b.WriteRune(r)
				bad = false
			} else if !bad {
				b.WriteByte('_')
				bad = true
			}
		}
		return b.String()
	},
	sum: func(s string) string {
		h := sha1.Sum([]byte(s))
		return hex.EncodeToString(h[:4])
	},
	sumLen: 8,
	digits: "0123456789abcdef",
}

// clineKey is the canonical key of Cline's tool name: <server>__<tool>, or a hashed name resolved
// through the configured servers (Cline's own MCP settings first).
func clineKey(name string, servers gate.Servers) (key, server string) {
	if srv, tool, ok := clineHashed.resolve(name, servers); ok {
		return string(ledger.NameKey(srv, tool)), srv
	}
	key, server, _ = Canonical(name, clineNaming, nil)
	return key, server
}

// ServerFiles is Cline's MCP settings file: $CLINE_MCP_SETTINGS_PATH, else
// $CLINE_DATA_DIR/settings/cline_mcp_settings.json, else that under $CLINE_DIR/data or
// ~/.cline/data (Cline 3.0.65), as the gate's environment says.
func (c cline) ServerFiles(dir, home string) []gate.ServerFile {
	if c.getenv == nil {
		return nil
	}
	abs := func(name string) string {
		if p := strings.TrimSpace(c.getenv(name)); filepath.IsAbs(p) {
			return p
		}
		return ""
	}
	if p := abs("CLINE_MCP_SETTINGS_PATH"); p != "" {
		return []gate.ServerFile{{Path: p}}
	}
	data := abs("CLINE_DATA_DIR")
	if data == "" {
		base := userDir(c.getenv, Cline.Setup())
		if base == "" {
			return nil
		}
		data = filepath.Join(base, "data")
	}
	return []gate.ServerFile{{Path: filepath.Join(data, "settings", "cline_mcp_settings.json")}}
}

func (cline) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	var out pluginAnswer
	switch {
	case a.Deny:
		out.Skip, out.Reason = true, a.Reason
	case a.Context != "":
		// Cline appends it after the call's result as a <hook_context> message the model reads
		// with its next request; at beforeRun, after the prompt.
		out.AppendContext = a.Context
	}
	out.Notice = a.Notice
	return out.reply()
}

// pluginAnswer is what the hook binary prints for the gate's plugins (Cline's and opencode's):
// each plugin passes on only these fields, in the shape its agent reads.
type pluginAnswer struct {
	// Cline: skip the call, with the reason the model reads; context to append.
	Skip          bool   `json:"skip,omitempty"`
	Reason        string `json:"reason,omitempty"`
	AppendContext string `json:"appendContext,omitempty"`
	// opencode: deny the call (the plugin throws the reason); context for the model.
	Deny    bool   `json:"deny,omitempty"`
	Context string `json:"context,omitempty"`
	// Notice is for the user: the plugin prints it on the agent's stderr.
	Notice string `json:"notice,omitempty"`
}

func (a pluginAnswer) reply() gate.Reply {
	if a == (pluginAnswer{}) {
		return gate.Reply{}
	}
	return gate.Reply{Stdout: encodeJSON(a)}
}

// toolOutput is what a decoder keeps of a tool's result: whether it failed and its text.
type toolOutput struct {
	// Failed is an error the agent reported for the call; IsError is an MCP result's isError.
	Failed, IsError bool
	// Error is an "error" string of the result; Texts are the text parts of its "content".
	Error string
	Texts []string
	size  int
}

func (o toolOutput) failed() bool { return o.Failed || o.IsError }

// text is the failure's text: the error, else the result's text, else fallback.
func (o toolOutput) text(fallback string) string {
	switch {
	case o.Error != "":
		return o.Error
	case len(o.Texts) > 0:
		return strings.Join(o.Texts, "\n")
	}
	return fallback
}

// toolOutput reads a tool's output: a string (kept as its text), or an object with "error" (a
// string, or an object with "message"), "isError" and "content" (an MCP result, whose text parts are
// kept up to maxError bytes in all). Anything else is skipped.
func (d *decoder) toolOutput(o *toolOutput) error {
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	if c == '"' {
		s, err := d.str(maxError)
		o.Texts = append(o.Texts, s)
		return err
	}
	d.unread()
	return d.objectOrSkip(func(k string) error {
		switch k {
		case "isError":
			return d.boolInto(&o.IsError)
		case "error":
			c, err := d.nonSpace()
			if err != nil {
				return err
			}
			d.unread()
			if c == '{' {
				return d.object(func(k string) error {
					if k == "message" {
						return d.stringInto(&o.Error, maxError)
					}
					return d.skip()
				})
			}
			return d.stringInto(&o.Error, maxError)
		case "content":
			return d.arrayOrSkip(func() error {
				var typ, text string
				err := d.objectOrSkip(func(k string) error {
					switch k {
					case "type":
						return d.stringInto(&typ, maxName)
					case "text":
						return d.stringInto(&text, maxError)
					}
					return d.skip()
				})
				if typ == "text" && text != "" && o.size < maxError {
					o.Texts = append(o.Texts, text)
					o.size += len(text)
				}
				return err
			})
		}
		return d.skip()
	})
}
