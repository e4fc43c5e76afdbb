package settings

// Flat hook files (Cursor's and Windsurf's hooks.json): "hooks" → event → [handler], each handler
// an object whose "command" is a shell command line, with no matcher groups.

import (
	"fmt"
	"slices"
)

// FlatSpec is a handler to wire in a flat hook file.
type FlatSpec struct {
	Event   string
	Command string
	// Timeout is written when it is not 0.
	Timeout int
	// Extra are further keys of a new handler (Windsurf's "show_output"), set when it is added.
	Extra map[string]*Value
}

// FlatHandlers returns every handler of a flat hook file as Handlers in shell form (Args nil), in
// file order; parts of another shape are skipped.
func (d *Doc) FlatHandlers() []Handler {
	var out []Handler
	hooks := d.root.Get("hooks")
	if hooks == nil || hooks.kind != Object {
		return nil
	}
	for _, ev := range hooks.members {
		for _, h := range ev.value.Elems() {
			if h.kind == Object {
				out = append(out, flatHandler(ev.key, h))
			}
		}
	}
	return out
}

func flatHandler(event string, h *Value) Handler {
	out := Handler{Event: event, Type: "command"}
	if t, ok := h.Get("type").Str(); ok {
		out.Type = t
	}
	out.Command, _ = h.Get("command").Str()
	out.Timeout, _ = h.Get("timeout").Float()
	return out
}

// EnsureFlat wires each spec in a flat hook file: a handler for which ours is true is updated in
// place (its other keys kept), further ones removed, and when there is none one is appended to the
// event's array. top are keys the file must have at its top level (Cursor's "version": 1), added
// when absent. Nothing else is touched.
func (d *Doc) EnsureFlat(specs []FlatSpec, top map[string]*Value, ours func(Handler) bool) ([]Change, error) {
	hooks, err := d.hooksObject(false)
	if err != nil {
		return nil, err
	}
	for _, s := range specs {
		if arr := hooks.Get(s.Event); arr != nil && arr.kind != Array {
			return nil, fmt.Errorf("%s: \"hooks\".%q is %s, want an array of handlers", d.Name, s.Event, arr.TypeName())
		}
	}
	for _, k := range sortedKeys(top) {
		if d.root.Get(k) == nil {
			d.root.Set(k, top[k])
		}
	}
	if hooks == nil {
		hooks, _ = d.hooksObject(true)
	}
	var changes []Change
	for _, s := range specs {
		ch := Change{Event: s.Event, Action: "unchanged"}
		arr := hooks.Get(s.Event)
		var mine []int
		for i, h := range arr.Elems() {
			if h.kind == Object && ours(flatHandler(s.Event, h)) {
				mine = append(mine, i)
			}
		}
		if len(mine) == 0 {
			h := NewObject()
			h.Set("command", String(s.Command))
			if s.Timeout != 0 {
				h.Set("timeout", Int(s.Timeout))
			}
			for _, k := range sortedKeys(s.Extra) {
				h.Set(k, s.Extra[k])
			}
			if arr == nil {
				arr = NewArray()
				hooks.Set(s.Event, arr)
			}
			arr.Append(h)
			ch.Action = "added"
			changes = append(changes, ch)
			continue
		}
		h := arr.Elems()[mine[0]]
		before := h.modified()
		was, _ := h.Get("command").Str()
		if was != s.Command {
			h.Set("command", String(s.Command))
		}
		if t, ok := h.Get("timeout").Float(); s.Timeout != 0 && (!ok || t != float64(s.Timeout)) {
			h.Set("timeout", Int(s.Timeout))
		}
		if h.modified() && !before {
			ch.Action, ch.Was = "updated", was
		}
		for i := len(mine) - 1; i >= 1; i-- {
			arr.RemoveAt(mine[i])
			ch.Duplicates++
		}
		if ch.Duplicates > 0 && ch.Action == "unchanged" {
			ch.Action = "updated"
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// RemoveFlat deletes every handler of a flat hook file for which ours is true, with the event
// arrays and "hooks" object it leaves empty. It returns the events it removed handlers from.
func (d *Doc) RemoveFlat(ours func(Handler) bool) (events []string, n int) {
	hooks := d.root.Get("hooks")
	if hooks == nil || hooks.kind != Object {
		return nil, 0
	}
	for _, k := range hooks.Keys() {
		arr := hooks.Get(k)
		if arr.kind != Array {
			continue
		}
		removed := 0
		for i := arr.Len() - 1; i >= 0; i-- {
			if h := arr.Elems()[i]; h.kind == Object && ours(flatHandler(k, h)) {
				arr.RemoveAt(i)
				removed++
			}
		}
		if removed == 0 {
			continue
		}
		n += removed
		events = append(events, k)
		if arr.Len() == 0 {
			hooks.Delete(k)
		}
	}
	if n > 0 && hooks.Len() == 0 {
		d.root.Delete("hooks")
	}
	return events, n
}

// sortedKeys returns m's keys in a stable order.
func sortedKeys(m map[string]*Value) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Bool is a JSON true or false.
func Bool(b bool) *Value {
	if b {
		return &Value{kind: Scalar, raw: []byte("true")}
	}
	return &Value{kind: Scalar, raw: []byte("false")}
}
