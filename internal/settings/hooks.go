package settings

import (
	"fmt"
	"slices"
)

// Handler is one hook handler of a settings file, as Claude Code reads it: "hooks" → event →
// matcher group → "hooks" → handler.
type Handler struct {
	Event string
	// Matcher is the group's matcher; HasMatcher is false when the group has none (it then
	// matches everything).
	Matcher    string
	HasMatcher bool
	// Type is the handler's "type" ("command", "http", …).
	Type string
	// Command is the program (exec form, Args not nil) or the shell command line (shell form).
	Command string
	// Args is nil when the handler has no "args" key.
	Args []string
	// Timeout is in seconds, 0 when absent.
	Timeout float64
}

// Spec is a command handler to wire for one event.
type Spec struct {
	Event   string
	Matcher string // "" for a group without a matcher
	Command string
	Args    []string
	// Timeout is written when it is not 0; 0 leaves the agent's own default (a handler's timeout
	// already there is kept).
	Timeout int
	// Shell makes Command a shell command line with no "args" key, for agents that run hooks
	// only that way (Codex CLI, Qwen Code).
	Shell bool
}

// Change says what Ensure did for one event.
type Change struct {
	Event string
	// Action is "added", "updated" or "unchanged".
	Action string
	// Was is the previous command of an updated handler.
	Was string
	// KeptMatcher is set when the existing handler sits under another matcher than the spec's,
	// which was left as the user wrote it; "(none)" when that group has no matcher.
	KeptMatcher string
	// Duplicates counts further handlers of ours removed from the event.
	Duplicates int
}

// Handlers returns every handler of the file, in file order. Parts that do not have the documented
// shape are skipped.
func (d *Doc) Handlers() []Handler {
	var out []Handler
	hooks := d.readHooks()
	if hooks == nil {
		return nil
	}
	for _, ev := range hooks.members {
		for _, g := range ev.value.Elems() {
			hs := g.Get("hooks")
			for _, h := range hs.Elems() {
				if h.kind == Object {
					out = append(out, handlerOf(ev.key, g, h))
				}
			}
		}
	}
	return out
}

func handlerOf(event string, group, h *Value) Handler {
	out := Handler{Event: event}
	if m := group.Get("matcher"); m != nil {
		out.Matcher, out.HasMatcher = m.Str()
	}
	out.Type, _ = h.Get("type").Str()
	out.Command, _ = h.Get("command").Str()
	if a := h.Get("args"); a != nil {
		out.Args, _ = a.Strings()
		if out.Args == nil {
			out.Args = []string{}
		}
	}
	out.Timeout, _ = h.Get("timeout").Float()
	return out
}

// hooksObject returns the "hooks" object, creating it at the end of the file when create is set
// and it is absent.
func (d *Doc) hooksObject(create bool) (*Value, error) {
	if d.atRoot {
		return d.root, nil
	}
	hooks := d.root.Get("hooks")
	if hooks == nil {
		if !create {
			return nil, nil
		}
		hooks = NewObject()
		d.root.Set("hooks", hooks)
		return hooks, nil
	}
	if hooks.kind != Object {
		return nil, fmt.Errorf("%s: \"hooks\" is %s, want an object of event names", d.Name, hooks.TypeName())
	}
	return hooks, nil
}

// readHooks returns the "hooks" object for reading, nil when it is absent or not an object.
func (d *Doc) readHooks() *Value {
	if d.atRoot {
		return d.root
	}
	if hooks := d.root.Get("hooks"); hooks != nil && hooks.kind == Object {
		return hooks
	}
	return nil
}

// eventArrays checks, before anything is edited, that the "hooks" object and each event's entry
// in it have the shape Ensure and EnsureFlat write into; want names what an event's array holds.
// It returns the "hooks" object, nil when the file has none yet.
func (d *Doc) eventArrays(events []string, want string) (*Value, error) {
	hooks, err := d.hooksObject(false)
	if err != nil {
		return nil, err
	}
	for _, e := range events {
		if arr := hooks.Get(e); arr != nil && arr.kind != Array {
			return nil, fmt.Errorf("%s: \"hooks\".%q is %s, want an array of %s", d.Name, e, arr.TypeName(), want)
		}
	}
	return hooks, nil
}

// appendHandler appends v to the event's array, creating the array when the event has none.
func appendHandler(hooks *Value, event string, v *Value) {
	arr := hooks.Get(event)
	if arr == nil {
		arr = NewArray()
		hooks.Set(event, arr)
	}
	arr.Append(v)
}

// pruneHooks deletes an event whose array a removal left empty, and the "hooks" object when that
// leaves it empty too; ones that were empty before a removal are not passed here and are kept.
func (d *Doc) pruneHooks(hooks *Value, event string) {
	if hooks.Get(event).Len() == 0 {
		hooks.Delete(event)
	}
	if hooks.Len() == 0 && !d.atRoot {
		d.root.Delete("hooks")
	}
}

// found is one handler of ours: its group's index in the event array and its own index in the
// group's "hooks" array.
type found struct {
	gi, hi int
	group  *Value
	h      *Value
}

func findOurs(event string, arr *Value, ours func(Handler) bool) []found {
	var out []found
	for gi, g := range arr.Elems() {
		for hi, h := range g.Get("hooks").Elems() {
			if h.kind == Object && ours(handlerOf(event, g, h)) {
				out = append(out, found{gi, hi, g, h})
			}
		}
	}
	return out
}

// Ensure wires each spec: a handler for which ours is true is updated in place (its other keys
// and its group's matcher kept), further ones are removed, and when there is none a new matcher
// group holding the handler is appended to the event's array. Nothing else is touched.
func (d *Doc) Ensure(specs []Spec, ours func(Handler) bool) ([]Change, error) {
	events := make([]string, len(specs))
	for i, s := range specs {
		events[i] = s.Event
	}
	hooks, err := d.eventArrays(events, "matcher groups")
	if err != nil {
		return nil, err
	}
	if hooks == nil {
		hooks, _ = d.hooksObject(true)
	}
	var changes []Change
	for _, s := range specs {
		ch := Change{Event: s.Event, Action: "unchanged"}
		arr := hooks.Get(s.Event)
		var mine []found
		if arr != nil {
			mine = findOurs(s.Event, arr, ours)
		}
		if len(mine) == 0 {
			g := NewObject()
			if s.Matcher != "" {
				g.Set("matcher", String(s.Matcher))
			}
			h := NewObject()
			h.Set("type", String("command"))
			h.Set("command", String(s.Command))
			if !s.Shell {
				h.Set("args", StringArray(s.Args))
			}
			if s.Timeout != 0 {
				h.Set("timeout", Int(s.Timeout))
			}
			g.Set("hooks", NewArray(h))
			appendHandler(hooks, s.Event, g)
			changes = append(changes, Change{Event: s.Event, Action: "added"})
			continue
		}
		first := mine[0]
		if was, changed := update(first.h, s); changed {
			ch.Action, ch.Was = "updated", was
		}
		if m := handlerOf(s.Event, first.group, first.h); !sameMatcher(m, s.Matcher) {
			ch.KeptMatcher = "(none)"
			if m.HasMatcher {
				ch.KeptMatcher = m.Matcher
			}
		}
		// Remove duplicates from the last one back, so earlier indices stay valid.
		for i := len(mine) - 1; i >= 1; i-- {
			removeHandler(arr, mine[i])
			ch.Duplicates++
		}
		if ch.Duplicates > 0 && ch.Action == "unchanged" {
			ch.Action = "updated"
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// sameMatcher reports whether a group matches what the spec's matcher matches: for "" (match
// everything) an absent, empty or "*" matcher.
func sameMatcher(h Handler, want string) bool {
	if want == "" {
		return !h.HasMatcher || h.Matcher == "" || h.Matcher == "*"
	}
	return h.HasMatcher && h.Matcher == want
}

// update makes the handler h run s, keeping its other keys. It returns the previous command and
// whether anything changed.
func update(h *Value, s Spec) (was string, changed bool) {
	was, _ = h.Get("command").Str()
	before := h.modified()
	if t, _ := h.Get("type").Str(); t != "command" {
		h.Set("type", String("command"))
	}
	if was != s.Command {
		h.Set("command", String(s.Command))
	}
	if s.Shell {
		if h.Get("args") != nil {
			h.Delete("args")
		}
	} else if args, ok := h.Get("args").Strings(); !ok || !slices.Equal(args, s.Args) {
		h.Set("args", StringArray(s.Args))
	}
	if t, ok := h.Get("timeout").Float(); s.Timeout != 0 && (!ok || t != float64(s.Timeout)) {
		h.Set("timeout", Int(s.Timeout))
	}
	return was, h.modified() && !before
}

// removeHandler removes one handler and the group it leaves empty.
func removeHandler(arr *Value, f found) {
	hs := f.group.Get("hooks")
	hs.RemoveAt(f.hi)
	if hs.Len() == 0 {
		arr.RemoveAt(f.gi)
	}
}

// Remove deletes every handler for which ours is true, in every event, together with the matcher
// groups, event arrays and "hooks" object that it leaves empty (ones that were empty before are
// kept). It returns the events it removed handlers from, in file order, with their counts.
func (d *Doc) Remove(ours func(Handler) bool) (events []string, n int) {
	hooks := d.readHooks()
	if hooks == nil {
		return nil, 0
	}
	for _, ev := range slices.Clone(hooks.members) {
		arr := ev.value
		if arr.kind != Array {
			continue
		}
		mine := findOurs(ev.key, arr, ours)
		if len(mine) == 0 {
			continue
		}
		for i := len(mine) - 1; i >= 0; i-- {
			removeHandler(arr, mine[i])
		}
		n += len(mine)
		events = append(events, ev.key)
		d.pruneHooks(hooks, ev.key)
	}
	return events, n
}
